// Experiment rows (gpt-fast's results table: one row per experiment x dtype x backend, opbench/
// experiment.h) built from what the cases recorded when they were timed (opbench/case_result.h):
//   - actual: the mean over the row's cases (its shapes) of each case's median over repetitions, of the
//     metric's value: GB/s, a share of peak or items/s from the case's figures, or the case's counter
//     for a counter metric (metric_counter);
//   - target: this device's, from targets/*.json; percent of target, of datasheet peak and of the
//     measured ceiling (the metric's resource: metric_shares), each a mean of case medians as well;
//   - status: "meets target", "below target"/"above target", "no target", "incomplete: ...",
//     "no actual: ...", with "; THROTTLED: ..." when a case lost samples to low clocks;
//   - timer and cache: those that measured the row's cases (below).
// Reporters only format rows (CSV cells, dashboard JSON, summaries); nothing else computes them.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "opbench/case_result.h"
#include "opbench/device.h"
#include "opbench/experiment.h"
#include "opbench/targets.h"

namespace opbench {

struct ExperimentRow {
  std::string name, metric;        // "layer_norm", "memory_bandwidth(GB/s)"
  std::optional<double> target;
  std::optional<double> actual;    // empty when it cannot be computed (no case ran, no peak known)
  std::string dtype, device, arch; // "bfloat16", "cuda"|"cpu", arch name
  std::string device_id;           // which device measured it: "cuda:3", "cpu" (DeviceInfo::id)
  int processes = 1;               // how many processes (GPUs) took part: the world size for a
                                   // per-world-size experiment (a collective), else 1
  bool is_model = false;
  std::string backend;
  std::optional<double> pct_of_target, pct_of_peak, pct_of_ceiling;
  int cases = 0;                   // cases with at least one timed repetition
  int failed_cases = 0;            // repetitions that failed or were skipped, but for ...
  int unavailable_cases = 0;       // ... those whose backend cannot run here (kUnavailablePrefix)
  // Every case was unavailable here (e.g. an inductor case without its package): nothing was measured,
  // so the row goes to the summary only, not to the rows CSV or the dashboard records.
  bool measured_nothing_here() const { return unavailable_cases > 0 && cases == 0 && failed_cases == 0; }
  std::string status;              // "meets target", "below target", "no target", "incomplete: ...", ...
  // The timer ("events", "graph", "cupti", "host") and cache mode ("cold", "warm", "none") of the
  // timed cases: the one they share, else every one they used, sorted and joined by ","
  // ("events,host"); "none" when no case was timed.
  std::string timer, cache;
};

// What one row is made of: an experiment, the dtype and backend of its cases, and each case's results
// (the repetitions reported for it, failed ones included).
struct ExperimentCases {
  Experiment experiment;
  std::string dtype, backend;                                // the cases' ("bf16", "aten")
  std::map<std::string, std::vector<CaseResult>> results;    // case name -> its repetitions
};

// The row of `cases`, measured on `device` by a run of `world_size` processes, with its target from
// `targets`.
ExperimentRow experiment_row(const ExperimentCases& cases, const DeviceInfo& device, int world_size,
                             const std::vector<TargetFile>& targets);

}  // namespace opbench
