#include "run_identity.h"

#include <benchmark/benchmark.h>
#include <torch/headeronly/version.h>

#include <cstdio>
#include <ctime>
#include <iostream>
#include <random>

#include "opbench/gbench_compat.h"
#include "opbench/telemetry.h"
#include "opbench/world.h"

#ifdef OPBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#ifndef OPBENCH_GIT_SHA
#define OPBENCH_GIT_SHA "unknown"
#endif

namespace opbench {
namespace {

std::string cuda_runtime_version() {
#ifdef OPBENCH_HAVE_CUDA
  int version = 0;
  if (cudaRuntimeGetVersion(&version) == cudaSuccess)
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
#endif
  return "";
}

std::string new_run_id() {
  std::random_device random;
  char id[16];
  std::snprintf(id, sizeof id, "%06x%06x", random() & 0xffffff, random() & 0xffffff);
  return id;
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

// The run's identity in Google Benchmark's JSON context: the same RunInfo the rows and summary use.
void add_context(const RunInfo& info) {
  benchmark::AddCustomContext("opbench_device", info.device.name);
  benchmark::AddCustomContext("opbench_arch", info.device.arch_name);
  benchmark::AddCustomContext("opbench_peaks", info.device.peaks ? info.device.peaks->model : "none");
  benchmark::AddCustomContext("opbench_timer", info.timer);
  benchmark::AddCustomContext("opbench_cache", info.cache);
  benchmark::AddCustomContext("torch_version", info.torch_version);
  benchmark::AddCustomContext("cuda_version", info.cuda_version);
  benchmark::AddCustomContext("opbench_sha", info.opbench_sha);
  benchmark::AddCustomContext("opbench_run_id", info.run_id);
}

// How this run judged clocks, and what it injected: in the JSON context and said on stderr.
void add_measurement_context(const DeviceInfo& device, const RunOptions& options) {
  if (device.is_gpu) {
    benchmark::AddCustomContext("opbench_rated_sm_clock_mhz", std::to_string(device.rated_sm_clock_mhz));
    benchmark::AddCustomContext("opbench_throttle_threshold", std::to_string(options.throttle_threshold));
    const std::string& nvml = Nvml::instance().unavailable_reason();
    benchmark::AddCustomContext("opbench_nvml", nvml.empty() ? "available" : "unavailable: " + nvml);
    if (!nvml.empty()) std::cerr << "bench_ops: no power or NVML clock readings: " << nvml << "\n";
  }
  if (!options.inject) return;
  char pct[32];
  std::snprintf(pct, sizeof pct, "%g%%", 100 * options.inject->fraction);
  std::string what = pct + std::string(" on ") +
                     (options.inject->pattern.empty() ? std::string("every case") : "cases matching " + options.inject->pattern);
  benchmark::AddCustomContext("opbench_injected_slowdown", what);
  std::cerr << "bench_ops: INJECTING a slowdown of " << what
            << " (--opbench_inject_slowdown): these times are made slower on purpose\n";
}

}  // namespace

BuildInfo build_info() {
  return {std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
              std::to_string(TORCH_VERSION_PATCH),
          cuda_runtime_version(), OPBENCH_GIT_SHA};
}

void print_version(std::ostream& out, const BuildInfo& build) {
  out << "bench_ops (opbench " << build.opbench_sha << ") torch " << build.torch_version << ", "
      << (build.cuda_version.empty() ? std::string("no CUDA runtime") : "CUDA " + build.cuda_version)
      << ", Google Benchmark " << gbench::kVersionName << "\n";
}

RunInfo run_info(const DeviceInfo& device, const CliOptions& cli) {
  BuildInfo build = build_info();
  const RunOptions& run = cli.run;
  return {device, build.torch_version, build.cuda_version, build.opbench_sha,
          timer_kind_name(device.is_gpu ? run.gpu_timer : TimerKind::kHost),
          !device.is_gpu ? "none" : run.cache == CacheMode::kCold ? "cold" : "warm",
          host_cpu_model(), static_cast<double>(host_memory_bytes()) / 1e9, cli.run_id.value_or(new_run_id()),
          utc_now(), current_world().size};
}

void add_run_context(const RunInfo& info, const CliOptions& cli, const std::string& launch_rules) {
  const DeviceInfo& device = info.device;
  const World& world = current_world();
  add_context(info);
  add_measurement_context(device, cli.run);
  if (!launch_rules.empty()) benchmark::AddCustomContext("opbench_launch_rules", launch_rules);
  benchmark::AddCustomContext("opbench_device_id", device.id);
  if (world.launched)
    benchmark::AddCustomContext("opbench_world", "rank " + std::to_string(world.rank) + " of " + std::to_string(world.size));
  if (cli.shard)
    benchmark::AddCustomContext("opbench_shard", std::to_string(cli.shard->index) + "/" + std::to_string(cli.shard->count));
}

}  // namespace opbench
