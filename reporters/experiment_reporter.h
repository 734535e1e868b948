// The experiment reporter: follows Google Benchmark's runs to learn when each experiment row's cases
// are done, and then writes the row (CSV cells and a dashboard record, appended to the rows file) at
// once, so a crash later loses no finished row; the rest at Finalize, then the summary table.
// After SIGINT or SIGTERM (opbench/interrupt.h) only the rows whose cases all finished are written and
// summarised. A row that cannot be written is said once per reason, however many rows fail.
// A row is one experiment x dtype x backend, as each case's family declared them. Its numbers come
// from experiment_row (opbench/rows.h) on the results the cases recorded when they were timed
// (RunContext::results): this reporter computes nothing, it groups cases and formats. A row none of
// whose cases could run here (ExperimentRow::measured_nothing_here) is in the summary only.
#pragma once
#include <benchmark/benchmark.h>

#include <deque>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "opbench/cases.h"
#include "opbench/rows.h"
#include "opbench/targets.h"
#include "row_file_append.h"
#include "run_info.h"

namespace opbench {

class ExperimentReporter : public benchmark::BenchmarkReporter {
 public:
  // `run` (the registry, the cases' results and the ceilings) must outlive the reporter. `output`:
  // where rows go (none: summary only). `selected`: the cases this run will report (the filter's
  // matches); an experiment's row is written as soon as its last selected case has reported, the rest
  // at Finalize.
  ExperimentReporter(const RunContext& run, RunInfo info, std::vector<TargetFile> targets,
                     std::optional<RowFile> output, std::set<std::string> selected, std::ostream* summary_stream);
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  std::vector<ExperimentRow> rows() const;
  // After Finalize: true when a row could not be written (the reason went to stderr); bench_ops then
  // exits 2.
  bool write_failed() const;

 private:
  struct Group {                   // one row: an experiment x dtype x backend
    Experiment experiment;
    std::string dtype, backend;
    std::set<std::string> expected;              // its selected cases
    std::map<std::string, size_t> repetitions;   // case name -> repetitions reported
    bool written = false;
  };
  Group& group_for(const Experiment& experiment, const CaseInfo& info);
  void write(const std::vector<Group*>& groups);
  ExperimentRow make_row(const Group& group) const;
  static bool complete(const Group& group);   // every selected case of the row has reported
  static bool kept(const Group& group);       // written and summarised: complete, or the run was not interrupted

  const RunContext& run_;
  RunInfo info_;
  std::vector<TargetFile> targets_;
  std::optional<RowFile> output_;
  std::ostream* summary_stream_;
  std::deque<Group> groups_;       // in first-seen order; a Group's address stays valid as more are added
  std::set<std::string> selected_;
  std::string write_error_;        // the last failure to write rows; "" when none failed
};

}  // namespace opbench
