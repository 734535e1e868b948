// The experiment reporter: turns case runs into experiment rows (one per experiment x dtype x backend,
// as each case's family declared them), with targets for this arch, percent of target, of datasheet
// peak and of the measured ceiling, and writes them as CSV + dashboard JSON as soon as each
// experiment's cases are done, then prints a summary table. Each run is looked up in the case
// registry by its registered name; its figures come from figures_of (opbench/work.h) on the case's
// work and the run's manual time, so rows and counters share one formula. A row's shares of peak and
// ceiling are those of its metric's resource (metric_shares in opbench/experiment.h).
#pragma once
#include <benchmark/benchmark.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "opbench/cases.h"
#include "opbench/device.h"
#include "opbench/targets.h"
#include "row_file.h"

namespace opbench {

// Identity of the run, recorded in every row and dashboard record.
struct RunInfo {
  DeviceInfo device;
  std::string torch_version, cuda_version, opbench_sha;
  std::string timer, cache;        // "events"/"graph"/"cupti"/"host", "cold"/"warm"/"none"
  std::string host_cpu;            // CPU model of the host
  double host_memory_gb = 0;
  std::string run_id;              // 12 hex digits, new for every bench_ops run: tells appended runs apart
  std::string timestamp;           // when the run started, ISO 8601 UTC ("2026-11-23T20:50:00Z")
  int world_size = 1;              // processes of a distributed launch (opbench/world.h); 1 otherwise
};

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
  int cases = 0, failed_cases = 0;
  std::string status;              // "meets target", "below target", "no target", "incomplete: ...", ...
};

class ExperimentReporter : public benchmark::BenchmarkReporter {
 public:
  // `run` (the registry and the ceilings) must outlive the reporter. `output`: where rows go (none:
  // summary only). `selected`: the cases this run will report (the filter's matches); an experiment's
  // row is written as soon as its last selected case has reported, the rest at Finalize.
  ExperimentReporter(const RunContext& run, RunInfo info, std::vector<TargetFile> targets,
                     std::optional<RowFile> output, std::set<std::string> selected, std::ostream* summary_stream);
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  std::vector<ExperimentRow> rows() const;
  // True when a row could not be written (the message went to stderr); bench_ops then exits 2.
  bool write_failed() const { return write_failed_; }

 private:
  struct Group {                   // one experiment x dtype x backend
    Experiment experiment;
    std::string dtype, backend;
    std::map<std::string, std::vector<double>> seconds;   // case name -> per-repetition medians (s)
    std::map<std::string, std::vector<double>> counted;   // case name -> the metric's counter per repetition
    std::vector<std::string> failed;
    std::set<std::string> expected, reported, throttled;
    bool written = false;
  };
  Group& group_for(const Experiment& experiment, const CaseInfo& info);
  void add_run(const CaseInfo& info, const Run& run);
  void write(const std::vector<Group*>& groups);
  ExperimentRow make_row(const Group& group) const;

  const RunContext& run_;
  RunInfo info_;
  std::vector<TargetFile> targets_;
  std::optional<RowFile> output_;
  std::ostream* summary_stream_;
  std::vector<Group> groups_;      // in first-seen order
  std::set<std::string> selected_;
  bool write_failed_ = false;
};

}  // namespace opbench
