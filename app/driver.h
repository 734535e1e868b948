// The sweep's driver: bench_ops' default program. It registers every family's cases for this
// device, runs the selected ones (run_steps.h) and reports them as experiment rows: the summary,
// --output's rows CSV and dashboard records, --opbench_markdown's table.
#pragma once
#include "cli.h"

namespace opbench {

// REQUIRES: benchmark::Initialize has run. Returns the process exit code: 0; 1 when a case failed;
// 2 on a usage error or when experiment rows could not be written.
int run_sweep(const CliOptions& cli, const GbenchFlags& flags);

}  // namespace opbench
