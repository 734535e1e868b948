// Everything bench_ops checks of its command line and environment before Google Benchmark sees argv
// and before a family registers: its own flags (cli.h), replay's (replay_flags.h), Google Benchmark's
// and the variables (value_checks.h), and the paths a run reads and writes (path_checks.h). main()
// runs it; the tests run it over tables of hostile input, in-process.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "path_checks.h"
#include "replay/replay_options.h"
#include "value_checks.h"

namespace opbench {

struct Invocation {
  CliOptions cli;
  std::optional<replay::OplogOptions> oplog;   // --oplog and its flags: operator replay instead of the sweep
};

// Parses and checks `args` (args[0]: the program) under `env`. Throws std::invalid_argument or
// opbench::Error with one line naming the flag, variable or file.
Invocation checked_invocation(const std::vector<std::string>& args, const EnvLookup& env);

// The paths a run of `invocation` reads and writes, each with its flag: --output (and its dashboard
// sidecar, for the sweep), --benchmark_out (as rank `rank` writes it), --opbench_markdown,
// --opbench_trace, --opbench_inductor_plan, --opbench_gpu_lock, --targets, --oplog,
// --opbench_shard_times, --opbench_inductor_settings and, with --opbench_inductor_build, the package folder.
std::vector<NamedPath> run_paths(const Invocation& invocation, int rank);

// What bench_ops does with `args` under `env` before running anything: exit code 2 and the line it
// prints ("bench_ops: ..."), or 0 and "" when it goes on.
struct Verdict {
  int exit_code = 0;
  std::string message;
};
Verdict verdict_for(const std::vector<std::string>& args, const EnvLookup& env);

}  // namespace opbench
