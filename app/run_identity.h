// What a run is, as every output records it: the build (torch, CUDA runtime, opbench sha), the run's
// RunInfo (device, timer, cache, host, run id, start time) and Google Benchmark's JSON context.
#pragma once
#include <ostream>
#include <string>

#include "cli.h"
#include "experiment_reporter.h"
#include "opbench/device.h"

namespace opbench {

// Versions and identity recorded in every output: torch, CUDA runtime ("" on CPU), opbench git sha.
struct BuildInfo {
  std::string torch_version;
  std::string cuda_version;
  std::string opbench_sha;
};
BuildInfo build_info();

// --version: "bench_ops (opbench <sha>) torch <v>, CUDA <v>|no CUDA, Google Benchmark <1.7|1.8>".
void print_version(std::ostream& out, const BuildInfo& build);

// This run on `device`: the timer and cache mode the flags choose, the host, --opbench_run_id or a new
// id, the time now and the world's size.
RunInfo run_info(const DeviceInfo& device, const CliOptions& cli);

// Records the run in Google Benchmark's JSON context (opbench_device, opbench_timer, ..., the launch
// rules of the own kernels unless `launch_rules` is empty, the world and the shard) and says on stderr
// what would surprise a reader of the numbers: no NVML readings, an injected slowdown.
void add_run_context(const RunInfo& info, const CliOptions& cli, const std::string& launch_rules);

}  // namespace opbench
