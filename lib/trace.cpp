#include "opbench/trace.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/world.h"

#ifdef OPBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace opbench {
namespace {

namespace prof = torch::profiler::impl;

void synchronize() {
#ifdef OPBENCH_HAVE_CUDA
  if (current_device().is_gpu) OPBENCH_CUDA_CHECK(cudaDeviceSynchronize());
#endif
}

double wall_us_of(const std::function<void()>& iteration, int iterations) {
  synchronize();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) iteration();
  synchronize();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::string trace_file_name(const std::string& case_name, int rank, int world_size) {
  std::string name = case_name;
  std::replace(name.begin(), name.end(), '/', '_');
  if (world_size > 1) name += ".rank" + std::to_string(rank);
  return name + ".trace.json";
}

std::vector<GpuInterval> gpu_intervals_of_trace(const std::string& path) {
  std::ifstream in(path);
  nlohmann::json trace = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (trace.is_discarded()) throw Error(path + ": the profiler wrote a trace that is not valid JSON");
  const nlohmann::json& events = trace.is_array() ? trace : trace["traceEvents"];
  std::set<nlohmann::json> gpu_pids;
  for (const auto& e : events) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "process_labels" && e.contains("args") &&
        e["args"].value("labels", "").find("GPU") != std::string::npos)
      gpu_pids.insert(e["pid"]);
  }
  std::vector<GpuInterval> intervals;
  for (const auto& e : events) {
    if (e.value("ph", "") != "X" || !e.contains("pid") || !gpu_pids.count(e["pid"])) continue;
    intervals.push_back({e["ts"].get<double>(), e["dur"].get<double>(), e.value("name", "")});
  }
  return intervals;
}

double busy_us(std::vector<GpuInterval> intervals) {
  std::stable_sort(intervals.begin(), intervals.end(),
                   [](const GpuInterval& a, const GpuInterval& b) { return a.start_us < b.start_us; });
  if (intervals.empty()) return 0;
  // The seed's order of operations: the first event's duration, then each later event's part past
  // the furthest end so far.
  double busy = intervals[0].duration_us;
  double furthest = intervals[0].start_us + intervals[0].duration_us;
  for (size_t i = 1; i < intervals.size(); ++i) {
    double end = intervals[i].start_us + intervals[i].duration_us;
    busy += std::max(end - std::max(intervals[i].start_us, furthest), 0.0);
    furthest = std::max(furthest, end);
  }
  return busy;
}

bool is_mm_kernel(const std::string& name) {
  static const char* patterns[] = {"gemm", "conv", "cutlass", "wgrad", "nvjet", "xmma",
                                   "cublas", "gemv", "scudnn", "dgrad", "fprop"};
  for (const char* p : patterns)
    if (name.find(p) != std::string::npos) return true;
  return false;
}

TraceFigures record_trace(const TraceOptions& options, const std::string& case_name,
                          const std::function<void()>& iteration) {
  TraceFigures figures;
  figures.wall_us = wall_us_of(iteration, options.iterations);
  std::set<prof::ActivityType> activities{prof::ActivityType::CPU};
  if (current_device().is_gpu) activities.insert(prof::ActivityType::CUDA);
  prof::ProfilerConfig config(prof::ProfilerState::KINETO);
  torch::autograd::profiler::prepareProfiler(config, activities);
  torch::autograd::profiler::enableProfiler(config, activities);
  for (int i = 0; i < options.iterations; ++i) iteration();
  synchronize();
  auto result = torch::autograd::profiler::disableProfiler();
  std::filesystem::create_directories(options.dir);
  const World& world = current_world();
  figures.path = (std::filesystem::path(options.dir) / trace_file_name(case_name, world.rank, world.size)).string();
  result->save(figures.path);
  if (!std::filesystem::exists(figures.path)) throw Error("the profiler did not write " + figures.path);
  std::vector<GpuInterval> all = gpu_intervals_of_trace(figures.path), mm;
  for (const auto& interval : all)
    if (is_mm_kernel(interval.name)) mm.push_back(interval);
  figures.gpu_events = static_cast<int>(all.size());
  figures.iterations = options.iterations;
  figures.busy_us = busy_us(all);
  figures.mm_busy_us = busy_us(mm);
  figures.intervals = std::move(all);
  return figures;
}

}  // namespace opbench
