// Experiment rows followed through Google Benchmark's runs and written as each completes
// (contract: experiment_reporter.h).
#include "experiment_reporter.h"

#include <algorithm>
#include <iostream>

#include "dashboard_json.h"
#include "experiment_summary.h"
#include "opbench/interrupt.h"
#include "row_csv.h"

namespace opbench {

ExperimentReporter::ExperimentReporter(const RunContext& run, RunInfo info, std::vector<TargetFile> targets,
                                       std::optional<RowFile> output, std::set<std::string> selected,
                                       std::ostream* summary_stream)
    : run_(run), info_(std::move(info)), targets_(std::move(targets)), output_(std::move(output)),
      summary_stream_(summary_stream), selected_(std::move(selected)) {}

bool ExperimentReporter::ReportContext(const Context&) { return true; }

ExperimentReporter::Group& ExperimentReporter::group_for(const Experiment& experiment, const CaseInfo& info) {
  auto it = std::find_if(groups_.begin(), groups_.end(), [&](const Group& g) {
    return g.experiment.name == experiment.name && g.experiment.metric == experiment.metric &&
           g.dtype == info.dtype && g.backend == info.backend;
  });
  if (it != groups_.end()) return *it;
  Group& group = groups_.emplace_back();
  group.experiment = experiment;
  group.dtype = info.dtype;
  group.backend = info.backend;
  for (const auto& name : selected_) {   // the selected cases of this group: when all reported, it is done
    const CaseInfo* other = run_.cases.find(name);
    if (other && other->dtype == info.dtype && other->backend == info.backend &&
        std::any_of(other->experiments.begin(), other->experiments.end(), [&](const Experiment& e) {
          return e.name == experiment.name && e.metric == experiment.metric;
        }))
      group.expected.insert(name);
  }
  return group;
}

void ExperimentReporter::ReportRuns(const std::vector<Run>& runs) {
  std::vector<std::pair<const CaseInfo*, size_t>> reported;   // registered case -> repetitions, in run order
  for (const auto& run : runs) {
    const CaseInfo* info = run.run_type == Run::RT_Iteration ? run_.cases.find(run.run_name.function_name) : nullptr;
    if (!info) continue;
    auto it = std::find_if(reported.begin(), reported.end(), [&](const auto& r) { return r.first == info; });
    if (it == reported.end()) reported.emplace_back(info, 1);
    else ++it->second;
  }
  std::vector<Group*> done;
  for (const auto& [info, count] : reported) {
    for (const auto& experiment : info->experiments) {
      Group& group = group_for(experiment, *info);
      group.repetitions[info->name()] += count;
      if (complete(group) && !group.written && std::find(done.begin(), done.end(), &group) == done.end())
        done.push_back(&group);
    }
  }
  if (!done.empty()) write(done);
}

bool ExperimentReporter::complete(const Group& group) {
  return !group.expected.empty() && std::all_of(group.expected.begin(), group.expected.end(), [&](const std::string& name) {
    return group.repetitions.count(name) > 0;
  });
}

bool ExperimentReporter::kept(const Group& group) { return interrupt_signal() == 0 || complete(group); }

ExperimentRow ExperimentReporter::make_row(const Group& group) const {
  ExperimentCases cases{group.experiment, group.dtype, group.backend, {}};
  for (const auto& [name, count] : group.repetitions) cases.results[name] = run_.results.last(name, count);
  return experiment_row(cases, info_.device, info_.world_size, targets_);
}

std::vector<ExperimentRow> ExperimentReporter::rows() const {
  std::vector<ExperimentRow> rows;
  for (const auto& group : groups_)
    if (kept(group)) rows.push_back(make_row(group));
  return rows;
}

void ExperimentReporter::write(const std::vector<Group*>& groups) {
  if (!output_) return;
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> records;
  for (const Group* group : groups) {
    ExperimentRow row = make_row(*group);
    if (row.measured_nothing_here()) continue;   // the summary shows it; the files keep measurements
    cells.push_back(csv_cells(row, info_));
    records.push_back(dashboard_record(row, info_).dump());
  }
  try {
    output_->append(cells, records);
    for (Group* group : groups) group->written = true;
  } catch (const std::exception& e) {   // the sweep goes on; Finalize tries these rows again
    if (write_error_ != e.what())
      std::cerr << "bench_ops: " << e.what() << (write_error_.empty() ? "; the sweep goes on and tries again at the end" : "") << "\n";
    write_error_ = e.what();
  }
}

bool ExperimentReporter::write_failed() const {
  return output_ && std::any_of(groups_.begin(), groups_.end(), [](const Group& g) { return kept(g) && !g.written; });
}

void ExperimentReporter::Finalize() {
  std::vector<Group*> rest;
  for (auto& group : groups_)
    if (!group.written && kept(group)) rest.push_back(&group);
  if (!rest.empty()) write(rest);
  if (summary_stream_) print_summary(*summary_stream_, rows(), info_, run_.ceilings);
}

}  // namespace opbench
