// What bench_ops shows and writes beside a program's own results: the console display of this process
// (the compact view, Google Benchmark's format, or a rank's errors), the reporter of a Google
// Benchmark format (--benchmark_out's file) and the case list.
#pragma once
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "cli.h"
#include "experiment_reporter.h"

namespace opbench {

// Google Benchmark's reporter for "json", "csv" or "console" (tabular when stdout is not a terminal).
std::unique_ptr<benchmark::BenchmarkReporter> make_format_reporter(const std::string& format);

// The display of this process: rank 0 (or a single process) shows the compact view, titled with what
// ran where, or --benchmark_format's; a rank other than 0 of a distributed launch shows only its
// failed cases, on stderr, with the rank (a failure still counts for its exit code).
std::unique_ptr<benchmark::BenchmarkReporter> make_display(const CliOptions& cli, const GbenchFlags& flags,
                                                           const RunInfo& info);

// --benchmark_list_tests: prints the cases Google Benchmark's filter selects, without the harness
// suffix. Returns the exit code: 0, or 2 when the filter selects no case (said on stderr).
int list_cases();

}  // namespace opbench
