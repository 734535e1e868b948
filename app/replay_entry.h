// Operator replay's entry: what bench_ops does with --oplog (app/main.cpp dispatches here instead of
// the sweep). It registers one case per (operator, input, backend) of the log instead of the families
// (registration.h), runs them with the steps it shares with the sweep (app/run_steps.h) and reports
// them per operator with ReplayReporter (reporter.h): the summary, a progress line, --output's CSV.
// Compiled into bench_ops with the program's shell (app/), whose flags and steps it uses.
#pragma once
#include "cli.h"
#include "replay_flags.h"

namespace opbench::replay {

// REQUIRES: benchmark::Initialize has run. Returns the process exit code: 0; 1 when a case failed or a
// line of the log did not parse; 2 on a usage error or when no input of the log can run here.
int run_replay(const CliOptions& cli, const OplogOptions& oplog, const GbenchFlags& flags);

}  // namespace opbench::replay
