// The arithmetic of the cupti timer, free of CUDA so that CI tests it: which activity records belong to
// a timed iteration, and how much GPU time they took.
//
// CUPTI delivers, for every CUDA API call made while an external correlation id is pushed, a record
// (correlation id -> external id), and for every kernel, memcpy and memset a record with its GPU
// [start, end) in ns and the correlation id of the API call that launched it. The timer pushes a fresh
// external id around the iteration's enqueue only, so the stream hold and the L2 flush, launched
// outside it, are never the iteration's.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace opbench {

struct ActivitySpan {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;   // REQUIRES: end_ns >= start_ns
};

// GPU busy time of `spans`: the length of their union. For kernels that run one after another this is
// the sum of their durations (ncu's gpu__time_duration summed over the iteration); gaps between them
// (launch processing, a host wait) are not counted; kernels that overlap on several streams count once.
uint64_t busy_ns(std::vector<ActivitySpan> spans);

// Records as CUPTI delivers them, in any order, joined by correlation id.
class ActivityLog {
 public:
  void add_correlation(uint32_t correlation_id, uint64_t external_id);
  void add_activity(uint32_t correlation_id, ActivitySpan span);
  // The spans of the activities whose launching call was correlated with `external_id`. Forgets every
  // record (the timer takes one id per sample, after the device has finished it).
  std::vector<ActivitySpan> take(uint64_t external_id);
  size_t pending() const { return activities_.size(); }

 private:
  std::unordered_map<uint32_t, uint64_t> external_of_;   // correlation id -> external id
  std::vector<std::pair<uint32_t, ActivitySpan>> activities_;
};

}  // namespace opbench
