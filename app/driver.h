// Runs the registered cases: device notice, Google Benchmark context, reporters.
#pragma once
#include <string>
#include <vector>

#include "cli.h"

namespace opbench {

// Versions and identity recorded in every output: torch, CUDA runtime ("" on CPU), opbench git sha.
struct BuildInfo {
  std::string torch_version;
  std::string cuda_version;
  std::string opbench_sha;
};
BuildInfo build_info();

// The Google Benchmark flags bench_ops must know to build its reporters (GB takes `--flag=value`).
struct GbenchFlags {
  std::string format = "console";     // --benchmark_format
  std::string out;                    // --benchmark_out
  std::string out_format = "json";    // --benchmark_out_format
  bool list_tests = false;            // --benchmark_list_tests
  std::string time_unit = "us";       // --benchmark_time_unit: ns, us, ms or s
  bool time_unit_given = false;
};
GbenchFlags gbench_flags(const std::vector<std::string>& args);

// REQUIRES: benchmark::Initialize has run. Returns the process exit code.
int run_benchmarks(const CliOptions& cli, const GbenchFlags& flags);

}  // namespace opbench
