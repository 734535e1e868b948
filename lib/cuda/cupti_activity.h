// Internal: the process's one CUPTI activity subscription (cupti_activity.cpp), used by the cupti timer.
// Kernels (concurrent kind: recording them does not serialize them), memcpys, memsets, and the runtime
// and driver API records that external correlation needs. CUPTI allows one activity client per
// process, so the profiler (Kineto, --opbench_trace) cannot run beside it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "opbench/activity_span.h"

namespace opbench::detail {

class CuptiActivity {
 public:
  // Enables the subscription on first use. Throws opbench::Error naming the failing CUPTI call.
  static CuptiActivity& instance();
  // Activities of the CUDA calls made between begin(id) and end() on this thread are tagged `id`.
  void begin(uint64_t id);
  void end();
  // Flushes CUPTI's buffers (call it once the device has finished the tagged work) and returns the
  // spans of the activities tagged `id`. Throws when CUPTI dropped records (the figure would be short).
  std::vector<ActivitySpan> take(uint64_t id);

 private:
  CuptiActivity();
};

}  // namespace opbench::detail
