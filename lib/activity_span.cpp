#include "opbench/activity_span.h"

#include <algorithm>

namespace opbench {

uint64_t busy_ns(std::vector<ActivitySpan> spans) {
  std::sort(spans.begin(), spans.end(),
            [](const ActivitySpan& a, const ActivitySpan& b) { return a.start_ns < b.start_ns; });
  uint64_t busy = 0;
  uint64_t covered_until = 0;   // end of the union so far
  for (const ActivitySpan& s : spans) {
    const uint64_t from = std::max(s.start_ns, covered_until);
    if (s.end_ns > from) busy += s.end_ns - from;
    covered_until = std::max(covered_until, s.end_ns);
  }
  return busy;
}

void ActivityLog::add_correlation(uint32_t correlation_id, uint64_t external_id) {
  external_of_[correlation_id] = external_id;
}

void ActivityLog::add_activity(uint32_t correlation_id, ActivitySpan span) {
  activities_.emplace_back(correlation_id, span);
}

std::vector<ActivitySpan> ActivityLog::take(uint64_t external_id) {
  std::vector<ActivitySpan> mine;
  for (const auto& [correlation_id, span] : activities_) {
    auto it = external_of_.find(correlation_id);
    if (it != external_of_.end() && it->second == external_id) mine.push_back(span);
  }
  activities_.clear();
  external_of_.clear();
  return mine;
}

}  // namespace opbench
