// The steps of a run of registered cases that both of bench_ops' programs take: the sweep of the
// families (driver.h) and operator replay (app/replay_entry.h). Each program registers its cases,
// builds its results reporter and decides its exit code; these steps list, select this process's
// cases, record the run, display it, take the GPU lock and run Google Benchmark. In run order:
//   cupti_usable, list_instead_of_running, cases_of_this_process, launch_rules_in_force,
//   nothing_to_run, run_cases, failures_exit_code.
#pragma once
#include <benchmark/benchmark.h>

#include <optional>
#include <ostream>
#include <set>
#include <string>

#include "cli.h"
#include "experiment_reporter.h"
#include "opbench/cases.h"
#include "opbench/check.h"
#include "opbench/device.h"

namespace opbench {

// Says `error` on stderr ("bench_ops: ..."); returns 2, the exit code of a run stopped before its cases.
int error_exit(const Error& error);

// --opbench_timer=cupti where CUPTI cannot run: on a GPU false, said on stderr; on the CPU a note, and
// true (the CPU cases use the host clock).
bool cupti_usable(const DeviceInfo& device, const RunOptions& options);

// Listing instead of running: --benchmark_list_tests without --opbench_shard lists the registered cases
// the filter selects (a filter that is invalid or selects none: exit 2), --opbench_list the families.
// Returns the exit code, or nullopt to go on.
std::optional<int> list_instead_of_running(const CliOptions& cli, const GbenchFlags& flags, const RunContext& run);

// The cases of `selected` (what --benchmark_filter selected) this process runs: its rank's
// (rank_selection.h), then its shard's (shard_selection.h); Google Benchmark's filter is narrowed to
// exactly them when that is fewer. Throws opbench::Error when `selected` is empty.
std::set<std::string> cases_of_this_process(const RunContext& run, std::set<std::string> selected,
                                            const CliOptions& cli);

// The own kernels' launch rules on a GPU, "" on the CPU. Throws opbench::Error for a bad
// OPBENCH_LAUNCH_RULES, so that the run stops before any case.
std::string launch_rules_in_force(const DeviceInfo& device);

// A shard or a rank with nothing of the selection to run: says so unless listing; returns 0.
int nothing_to_run(const CliOptions& cli, const GbenchFlags& flags);

// Where a program prints its summary: stdout under the console format, else stderr; nowhere on a rank
// other than 0 of a distributed launch.
std::ostream* summary_stream(const GbenchFlags& flags);

// Runs the selected cases: notes on a CPU run, the run's context (run_identity.h), this process's
// display (displays.h) with `before_display` ahead of it and `results` after it, --benchmark_out's
// file, --opbench_gpu_lock, then Google Benchmark. Returns how many cases failed, or nullopt when the
// lock could not be taken (said on stderr; no case ran).
std::optional<int> run_cases(const CliOptions& cli, const GbenchFlags& flags, const RunInfo& info,
                             const std::string& launch_rules, benchmark::BenchmarkReporter* results,
                             benchmark::BenchmarkReporter* before_display = nullptr);

// The exit code after the run: 128 + the signal when SIGINT or SIGTERM stopped it (130, 143), 1 when a
// case failed, else 0; said on stderr unless 0.
int failures_exit_code(int failed_cases);

}  // namespace opbench
