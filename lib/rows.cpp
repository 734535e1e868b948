// Experiment rows from case results (contract: opbench/rows.h).
#include "opbench/rows.h"

#include <functional>
#include <set>

#include "opbench/cases.h"

namespace opbench {
namespace {

// The timed repetitions of each case that has any, in case-name order.
using TimedCases = std::vector<std::vector<const CaseResult*>>;
using Value = std::function<std::optional<double>(const CaseResult&)>;

// The mean over cases of each case's median over its repetitions; nullopt when there is no case or a
// repetition lacks the value.
std::optional<double> mean_of_case_medians(const TimedCases& cases, const Value& value) {
  if (cases.empty()) return std::nullopt;
  double sum = 0;
  for (const auto& repetitions : cases) {
    std::vector<double> values;
    for (const CaseResult* result : repetitions) {
      std::optional<double> v = value(*result);
      if (!v) return std::nullopt;
      values.push_back(*v);
    }
    sum += median_of(values);
  }
  return sum / static_cast<double>(cases.size());
}

std::optional<double> percent(std::optional<double> share) {
  if (!share) return std::nullopt;
  return 100 * *share;
}

// The one name of `names`, or all of them joined by ","; "none" for no name.
std::string joined(const std::set<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ",") + name;
  return text.empty() ? "none" : text;
}

// The row's target: the file's number, or its bound_fraction of the row's bound (the actual at 100% of
// the measured ceiling: actual / share of ceiling); none without a target or, for a bound_fraction,
// without a measured ceiling share.
std::optional<double> target_value(const std::optional<Target>& target, const ExperimentRow& row) {
  if (!target) return std::nullopt;
  if (!target->bound_fraction) return target->value;
  if (!row.actual || !row.pct_of_ceiling || !(*row.pct_of_ceiling > 0)) return std::nullopt;
  return *target->bound_fraction * *row.actual / (*row.pct_of_ceiling / 100);
}

std::string status_of(const ExperimentRow& row, Metric metric, const std::string& device_name, size_t throttled) {
  std::string status;
  const int all = row.failed_cases + row.unavailable_cases + row.cases;
  if (row.failed_cases > 0)
    status = "incomplete: " + std::to_string(row.failed_cases) + " of " + std::to_string(all) + " cases failed";
  else if (row.unavailable_cases > 0 && row.cases == 0)
    status = "unavailable: no case could run here (the cases say why)";
  else if (row.unavailable_cases > 0)
    status = "incomplete: " + std::to_string(row.unavailable_cases) + " of " + std::to_string(all) +
             " cases unavailable";
  else if (!row.actual && (metric == Metric::kPowerWatts || metric == Metric::kEnergyPerToken))
    status = "no actual: no GPU energy counter here (NVML)";
  else if (!row.actual && metric_counter(metric))
    status = std::string("no actual: not applicable (the cases set no ") + metric_counter(metric) + " counter)";
  else if (!row.actual)
    status = "no actual: no datasheet peak for " + device_name;
  else if (!row.target)
    status = "no target";
  else if (metric_lower_is_better(metric))
    status = *row.actual <= *row.target ? "meets target" : "above target";
  else
    status = *row.actual >= *row.target ? "meets target" : "below target";
  if (throttled > 0)
    status += "; THROTTLED: " + std::to_string(throttled) + " case(s) lost samples to low clocks";
  return status;
}

}  // namespace

ExperimentRow experiment_row(const ExperimentCases& cases, const DeviceInfo& device, int world_size,
                             const std::vector<TargetFile>& targets) {
  const Experiment& experiment = cases.experiment;
  const Metric metric = experiment.metric;
  ExperimentRow row;
  row.name = experiment_row_name(experiment, world_size, device.is_gpu);
  row.metric = metric_name(metric);
  row.dtype = torch_dtype_name(cases.dtype);
  row.device = device.is_gpu ? "cuda" : "cpu";
  row.arch = device.arch_name;
  row.device_id = device.id;
  row.processes = experiment.per_world_size ? world_size : 1;
  row.is_model = experiment.is_model;
  row.backend = cases.backend;
  const std::optional<Target> target = find_target(targets, device.name, row.name, row.metric, row.dtype, row.backend);

  TimedCases timed;
  std::set<std::string> timers, caches, throttled;
  for (const auto& [name, results] : cases.results) {
    std::vector<const CaseResult*> repetitions;
    for (const CaseResult& result : results) {
      if (!result.timed()) {
        ++(result.failure.rfind(kUnavailablePrefix, 0) == 0 ? row.unavailable_cases : row.failed_cases);
        continue;
      }
      repetitions.push_back(&result);
      timers.insert(timer_kind_name(result.timer));
      caches.insert(cache_mode_name(result.cache));
      if (result.throttled) throttled.insert(name);
    }
    if (!repetitions.empty()) timed.push_back(std::move(repetitions));
  }
  row.cases = static_cast<int>(timed.size());
  row.timer = joined(timers);
  row.cache = joined(caches);

  const char* counter = metric_counter(metric);
  row.actual = mean_of_case_medians(timed, [&](const CaseResult& r) -> std::optional<double> {
    if (!counter) return metric_shares(metric, r.figures).actual;
    auto it = r.counters.find(counter);
    if (it == r.counters.end()) return std::nullopt;
    return it->second;
  });
  row.pct_of_peak = percent(mean_of_case_medians(timed, [&](const CaseResult& r) {
    return metric_shares(metric, r.figures).of_peak;
  }));
  row.pct_of_ceiling = percent(mean_of_case_medians(timed, [&](const CaseResult& r) {
    return metric_shares(metric, r.figures).of_ceiling;
  }));
  row.target = target_value(target, row);
  if (row.target && row.actual) row.pct_of_target = 100 * *row.actual / *row.target;
  row.status = status_of(row, metric, device.name, throttled.size());
  if (target && target->bound_fraction && !row.target && row.actual && row.cases > 0 && row.failed_cases == 0 &&
      row.unavailable_cases == 0)
    row.status = "no target: its bound_fraction needs the measured ceiling (run the Ceiling cases first)";
  return row;
}

}  // namespace opbench
