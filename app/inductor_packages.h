// The sweep's inductor steps, before any case runs: --opbench_inductor_plan writes the plan of the
// selected inductor cases (which packages they need, each current, missing or stale) and exits;
// --opbench_inductor_build builds the packages of the plan that are not current with
// inductor/build_packages.py, then the sweep goes on (a package that failed to build skips its case).
#pragma once
#include <optional>
#include <set>
#include <string>

#include "cli.h"
#include "opbench/cases.h"

namespace opbench {

// The package cache of this run: the flags' values, else $OPBENCH_INDUCTOR_CACHE or
// <bench_ops' folder>/inductor-packages, and the source tree's inductor/settings.json.
inductor::PackageCache package_cache(const CliOptions& cli);

// Before the cases run: checks --opbench_inductor_settings, then plans or builds when asked. Returns
// the exit code when the run ends here (the plan written: 0; an unusable settings file or plan
// destination: 2), nullopt to go on with the sweep.
std::optional<int> plan_or_build_packages(const CliOptions& cli, const RunContext& run,
                                          const std::set<std::string>& selected);

// After the cases ran: when inductor cases were skipped for want of a current package, says once how
// to build them (the rerun flag, and the builder's command for this run's filter).
void advise_package_builds(const RunContext& run, const std::string& filter);

}  // namespace opbench
