// Profiler traces of a case (--opbench_trace DIR): after timing, N iterations are recorded with the
// LibTorch (Kineto) profiler to DIR/<case>.trace.json, a Chrome trace that opens in Perfetto and in
// opbench-trace; the same N iterations are timed without the profiler for the wall time; and
// gpu_util = GPU busy time / wall time, mm_util = mm/conv kernel busy time / wall time.
// The figures are computed from the saved trace file, exactly as opbench-trace and the seed do:
// GPU processes are those whose process_labels say "GPU"; their complete ("X") events are merged.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

struct TraceOptions {
  std::string dir;                 // empty: tracing off
  int iterations = 20;
};

// A GPU activity: its start and duration in microseconds (the trace's ts and dur), and its name.
struct GpuInterval {
  double start_us, duration_us;
  std::string name;
};

// The complete events of the GPU processes of a Chrome trace file. Throws opbench::Error.
std::vector<GpuInterval> gpu_intervals_of_trace(const std::string& path);
// Union length of the intervals (overlapping and nested ones counted once), in microseconds, summed in
// start order as the seed does (so the figure matches it to the last bit).
double busy_us(std::vector<GpuInterval> intervals);
// The seed's mm/conv substrings (gemm, conv, cutlass, wgrad) and today's kernel names (nvjet, xmma,
// cublas, gemv, scudnn, dgrad, fprop), as opbench-trace --modern-patterns.
bool is_mm_kernel(const std::string& name);

struct TraceFigures {
  std::string path;
  double wall_us = 0, busy_us = 0, mm_busy_us = 0;
  int gpu_events = 0;
  int iterations = 0;
  std::vector<GpuInterval> intervals;   // the GPU events of the saved trace
};

// The trace's file name in the trace directory: the case name with '/' as '_', ".trace.json"; in a
// distributed launch (world_size > 1) ".rank<rank>.trace.json", so that the ranks' traces sit side by side.
std::string trace_file_name(const std::string& case_name, int rank, int world_size);

// REQUIRES: options.dir is set. Records and saves the trace of `options.iterations` runs of
// `iteration`; throws opbench::Error if the trace cannot be written.
TraceFigures record_trace(const TraceOptions& options, const std::string& case_name,
                          const std::function<void()>& iteration);

}  // namespace opbench
