#include "opbench/trace.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "opbench/check.h"
#include "opbench/device.h"

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

std::string file_name_for(const std::string& case_name) {
  std::string name = case_name;
  std::replace(name.begin(), name.end(), '/', '_');
  return name + ".trace.json";
}

double wall_us_of(const std::function<void()>& iteration, int iterations) {
  synchronize();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) iteration();
  synchronize();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TraceOptions& trace_options() {
  static TraceOptions options;
  return options;
}

double busy_us(std::vector<GpuInterval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const GpuInterval& a, const GpuInterval& b) { return a.start_us < b.start_us; });
  double busy = 0, covered_until = -1e300;
  for (const auto& i : intervals) {
    double from = std::max(i.start_us, covered_until);
    if (i.end_us > from) busy += i.end_us - from;
    covered_until = std::max(covered_until, i.end_us);
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

TraceFigures record_trace(const std::string& case_name, const std::function<void()>& iteration) {
  const TraceOptions& options = trace_options();
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
  figures.path = (std::filesystem::path(options.dir) / file_name_for(case_name)).string();
  result->save(figures.path);
  if (!std::filesystem::exists(figures.path)) throw Error("the profiler did not write " + figures.path);
  std::vector<GpuInterval> all, mm;
  for (const auto& e : result->events()) {
    if (e.deviceType() != c10::DeviceType::CUDA) continue;
    GpuInterval interval{e.startNs() / 1e3, e.endNs() / 1e3, e.name()};
    all.push_back(interval);
    if (is_mm_kernel(interval.name)) mm.push_back(interval);
  }
  figures.gpu_events = static_cast<int>(all.size());
  figures.busy_us = busy_us(all);
  figures.mm_busy_us = busy_us(mm);
  return figures;
}

}  // namespace opbench
