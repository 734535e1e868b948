// The summary of a run's experiment rows: experiment x dtype x backend with target, actual, percent of
// target, of datasheet peak and of the measured ceiling, and status, headed by the device, the run's
// timer and cache, the peaks and the measured ceilings; as markdown (every column) or as a console table
// within kConsoleColumns (line_wrap.h): the header wrapped, no % target and % peak columns (the
// markdown, the rows CSV and the dashboard carry them), and a status that does not fit the line on a
// line of its own below its row, indented. Formats only.
#pragma once
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "opbench/rows.h"
#include "opbench/work.h"
#include "run_info.h"

namespace opbench {
void print_summary(std::ostream& out, const std::vector<ExperimentRow>& rows, const RunInfo& info,
                   const Ceilings& ceilings);
// The same table as GitHub-flavoured markdown, headed by the device, run and ceilings (for PR comments).
void print_markdown_summary(std::ostream& out, const std::vector<ExperimentRow>& rows, const RunInfo& info,
                            const Ceilings& ceilings);

// A traced case's time by kernel kind: its counters "time_<kind>_%", "GB/s_<kind>" and
// "%read_ceiling_<kind>" (kernel_breakdown.h) by kind.
struct CaseBreakdown {
  std::string case_name;
  std::map<std::string, double> percent_by_kind;   // "gemv" -> 61.2, ..., "idle" -> 3.1
  std::map<std::string, double> gbps_by_kind;      // the kinds whose bytes the case counts
  std::map<std::string, double> pct_of_read_ceiling_by_kind;
};
// "Where the time goes": one markdown row per traced case, one column per kind any case has (the
// largest overall first, idle last), "-" where a case has none of a kind; then, where any case has a
// kind's GB/s, a row per case and kind: GB/s and % of the read ceiling. Nothing without cases.
void print_markdown_breakdown(std::ostream& out, const std::vector<CaseBreakdown>& cases);
}  // namespace opbench
