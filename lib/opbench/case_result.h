// What one timed repetition of a case produced, kept for the whole run: the median time, the figures
// figures_of derived from it (opbench/work.h), the counters the case set, the timer and cache mode that
// measured it, whether it throttled, or why it failed. Experiment rows are built from these results
// (opbench/rows.h), so a case's figures are computed once, when it is timed, and nowhere else.
//
// register_case (opbench/cases.h) adds one result per repetition before the case body runs;
// CaseContext::time fills it through timed_result; after the body, the failure (if any) and every
// counter the case set (a model's startup_s, a collective's busbw_GB/s) are added to it.
#pragma once
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "opbench/device.h"
#include "opbench/timer.h"
#include "opbench/work.h"

namespace opbench {

struct CaseResult {
  double seconds = 0;                        // the median sample: the case's manual time
  Figures figures;                           // figures_of(work, seconds, ...) when the case was timed
  std::map<std::string, double> counters;    // every counter the case set, by name
  TimerKind timer = TimerKind::kHost;        // the timer that measured it (a case may ask for its own)
  std::optional<CacheMode> cache;            // its L2 policy; nullopt: none (the host timer flushes nothing)
  bool throttled = false;                    // over kThrottledShareFlag of its samples were discarded
  std::string failure;                       // why the repetition failed or was skipped; empty: it was timed
  bool timed() const { return failure.empty(); }
};

// "cold", "warm", or "none" for nullopt.
const char* cache_mode_name(const std::optional<CacheMode>& cache);

// The result of a repetition timed at `seconds` by `timer` with `cache`: its figures from figures_of on
// `work`, the device's datasheet peaks and the run's ceilings. The one function that turns a time into
// a case's figures: CaseContext::time calls it as the case is timed, and a recorded run (Google
// Benchmark JSON) becomes results through it with the recorded time.
// REQUIRES: seconds > 0.
CaseResult timed_result(const Work& work, double seconds, TimerKind timer, std::optional<CacheMode> cache,
                        const std::optional<DatasheetPeaks>& peaks, const Ceilings& ceilings);

// Every repetition's result of a run, by case name, in the order they ran. References returned by add
// stay valid while more results are added.
class CaseResults {
 public:
  CaseResult& add(const std::string& case_name);
  // The last `count` results of a case (all of them when it has fewer), oldest first: the repetitions
  // Google Benchmark reported last for it.
  std::vector<CaseResult> last(const std::string& case_name, size_t count) const;

 private:
  std::map<std::string, std::deque<CaseResult>> by_case_;
};

}  // namespace opbench
