#include "experiments.h"

#include <algorithm>
#include <iostream>

#include "opbench/cases.h"
#include "opbench/check.h"
#include "opbench/gbench_compat.h"
#include "opbench/timer.h"
#include "outputs.h"
#include "run_flags.h"
#include "summary.h"

namespace opbench {
namespace {

// The mean over cases of each case's median over repetitions; nullopt when any case lacks the value.
template <typename Value>
std::optional<double> mean_of_case_medians(const std::vector<std::vector<Figures>>& per_case, Value value) {
  double sum = 0;
  for (const auto& repetitions : per_case) {
    std::vector<double> values;
    for (const auto& figures : repetitions) {
      std::optional<double> v = value(figures);
      if (!v) return std::nullopt;
      values.push_back(*v);
    }
    sum += median_of(values);
  }
  return sum / static_cast<double>(per_case.size());
}

}  // namespace

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
  std::vector<Group*> done;
  for (const auto& run : runs) {
    if (run.run_type != Run::RT_Iteration) continue;
    const CaseInfo* info = run_.cases.find(run.run_name.function_name);
    if (!info) continue;
    add_run(*info, run);
    for (const auto& experiment : info->experiments) {
      Group& group = group_for(experiment, *info);
      bool complete = !group.expected.empty() &&
                      std::includes(group.reported.begin(), group.reported.end(), group.expected.begin(),
                                    group.expected.end());
      if (complete && !group.written && std::find(done.begin(), done.end(), &group) == done.end())
        done.push_back(&group);
    }
  }
  if (!done.empty()) write(done);
}

void ExperimentReporter::add_run(const CaseInfo& info, const Run& run) {
  for (const auto& experiment : info.experiments) {
    Group& group = group_for(experiment, info);
    group.reported.insert(info.name());
    if (gbench::run_skipped(run))
      group.failed.push_back(info.name() + ": " + gbench::skip_message(run));
    else {   // manual time: the case's median, once per iteration
      group.seconds[info.name()].push_back(run.real_accumulated_time / static_cast<double>(run.iterations));
      const char* counter = metric_counter(experiment.metric);
      auto it = counter ? run.counters.find(counter) : run.counters.end();
      if (it != run.counters.end()) group.counted[info.name()].push_back(it->second.value);
      if (run_throttled(run)) group.throttled.insert(info.name());
    }
  }
}

ExperimentRow ExperimentReporter::make_row(const Group& group) const {
  const Experiment& experiment = group.experiment;
  const DeviceInfo& d = info_.device;
  ExperimentRow row;
  row.name = experiment_row_name(experiment, info_.world_size);
  row.metric = metric_name(experiment.metric);
  row.dtype = torch_dtype_name(group.dtype);
  row.device = d.is_gpu ? "cuda" : "cpu";
  row.arch = d.arch_name;
  row.device_id = d.id;
  row.processes = experiment.per_world_size ? info_.world_size : 1;
  row.is_model = experiment.is_model;
  row.backend = group.backend;
  row.failed_cases = static_cast<int>(group.failed.size());
  row.cases = static_cast<int>(group.seconds.size());
  if (auto t = find_target(targets_, d.name, row.name, row.metric, row.dtype, row.backend)) row.target = t->value;
  if (metric_counter(experiment.metric)) {   // read from the cases' counters: mean of their medians
    if (!group.counted.empty() && group.counted.size() == group.seconds.size()) {
      double sum = 0;
      for (const auto& [name, values] : group.counted) sum += median_of(values);
      row.actual = sum / static_cast<double>(group.counted.size());
    }
  } else if (!group.seconds.empty()) {
    std::vector<std::vector<Figures>> per_case;
    for (const auto& [name, seconds] : group.seconds) {
      const Work& work = run_.cases.find(name)->work;
      per_case.emplace_back();
      for (double s : seconds) per_case.back().push_back(figures_of(work, s, d.peaks, run_.ceilings));
    }
    auto shares = [&](const Figures& f) { return metric_shares(experiment.metric, f); };
    auto percent = [](std::optional<double> share) -> std::optional<double> {
      if (!share) return std::nullopt;
      return 100 * *share;
    };
    row.actual = mean_of_case_medians(per_case, [&](const Figures& f) { return shares(f).actual; });
    row.pct_of_peak = percent(mean_of_case_medians(per_case, [&](const Figures& f) { return shares(f).of_peak; }));
    row.pct_of_ceiling =
        percent(mean_of_case_medians(per_case, [&](const Figures& f) { return shares(f).of_ceiling; }));
  }
  if (row.target && row.actual) row.pct_of_target = 100 * *row.actual / *row.target;
  const bool lower_is_better = metric_lower_is_better(experiment.metric);
  if (row.failed_cases > 0)
    row.status = "incomplete: " + std::to_string(row.failed_cases) + " of " +
                 std::to_string(row.failed_cases + row.cases) + " cases failed";
  else if (!row.actual && metric_counter(experiment.metric))
    row.status = std::string("no actual: the cases set no ") + metric_counter(experiment.metric) + " counter";
  else if (!row.actual)
    row.status = "no actual: no datasheet peak for " + d.name;
  else if (!row.target)
    row.status = "no target";
  else
    row.status = (lower_is_better ? *row.actual <= *row.target : *row.actual >= *row.target) ? "meets target"
                 : lower_is_better ? "above target" : "below target";
  if (!group.throttled.empty())
    row.status += "; THROTTLED: " + std::to_string(group.throttled.size()) + " case(s) lost samples to low clocks";
  return row;
}

std::vector<ExperimentRow> ExperimentReporter::rows() const {
  std::vector<ExperimentRow> rows;
  for (const auto& group : groups_) rows.push_back(make_row(group));
  return rows;
}

void ExperimentReporter::write(const std::vector<Group*>& groups) {
  if (!output_) return;
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> records;
  for (const Group* group : groups) {
    ExperimentRow row = make_row(*group);
    cells.push_back(csv_cells(row, info_));
    records.push_back(dashboard_record(row, info_).dump());
  }
  try {
    output_->append(cells, records);
    for (Group* group : groups) group->written = true;
  } catch (const std::exception& e) {   // the sweep goes on; Finalize tries these rows again
    std::cerr << "bench_ops: " << e.what() << "\n";
    write_failed_ = true;
  }
}

void ExperimentReporter::Finalize() {
  std::vector<Group*> rest;
  for (auto& group : groups_)
    if (!group.written) rest.push_back(&group);
  if (!rest.empty()) write(rest);
  if (summary_stream_) print_summary(*summary_stream_, rows(), info_, run_.ceilings);
}

}  // namespace opbench
