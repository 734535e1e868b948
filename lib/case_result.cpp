// Case results and the one function that derives their figures (contract: opbench/case_result.h).
#include "opbench/case_result.h"

#include <algorithm>

namespace opbench {

const char* cache_mode_name(const std::optional<CacheMode>& cache) {
  if (!cache) return "none";
  return *cache == CacheMode::kCold ? "cold" : "warm";
}

CaseResult timed_result(const Work& work, double seconds, TimerKind timer, std::optional<CacheMode> cache,
                        const std::optional<DatasheetPeaks>& peaks, const Ceilings& ceilings) {
  CaseResult result;
  result.seconds = seconds;
  result.figures = figures_of(work, seconds, peaks, ceilings);
  result.timer = timer;
  result.cache = cache;
  return result;
}

CaseResult& CaseResults::add(const std::string& case_name) { return by_case_[case_name].emplace_back(); }

std::vector<CaseResult> CaseResults::last(const std::string& case_name, size_t count) const {
  auto it = by_case_.find(case_name);
  if (it == by_case_.end()) return {};
  const std::deque<CaseResult>& all = it->second;
  return {all.end() - static_cast<std::ptrdiff_t>(std::min(count, all.size())), all.end()};
}

}  // namespace opbench
