// The replay reporter (bench_ops --oplog): per operator, the speedup of each backend over eager as
// 20/50/80th percentiles across the operator's inputs, absolute times, the accuracy check, a CSV
// like operatorbench's, a progress line with ETA, and the summary with everything that did not run.
// Docs: docs/oplog.md, "Replay".
#pragma once
#include <benchmark/benchmark.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "replay/replay_plan.h"

namespace opbench {

// numpy.quantile's default ("linear"): on the sorted values x[0..n-1], h = q * (n - 1) and the
// result is x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]).
// REQUIRES: values not empty, 0 <= q <= 1.
double quantile(std::vector<double> values, double q);

inline constexpr double kReplayQuantiles[] = {0.2, 0.5, 0.8};

// Whether Google Benchmark runs a case of this name under --benchmark_filter=`filter` (as Google
// Benchmark decides: "" and "all" select everything, a leading '-' negates, an extended regex is
// searched in the registered name, which carries the harness suffix "/iterations:1/manual_time").
bool filter_selects(const std::string& filter, const std::string& case_name);

struct ReplayBackendStats {
  std::optional<double> q20, q50, q80;   // speedup over eager (eager / backend) across inputs
  std::optional<double> median_seconds;  // median over inputs of the per-input time ("abs")
  std::optional<double> weighted_seconds;  // sum over inputs of cnt * time: seconds per model step
  int inputs = 0;                        // inputs timed on this backend
};

struct ReplayRow {
  std::string model, op;
  int recorded = 0, selected = 0, run = 0;   // inputs in the log, replayed, timed on every backend
  std::int64_t weight = 0;                   // sum of cnt over the inputs timed on eager
  std::map<std::string, ReplayBackendStats> backends;
  double elapsed = 0;                        // wall seconds of its cases
  int mismatches = 0;                        // inputs whose graph output differs from eager
  std::string accuracy;                      // "ok", "2 mismatches", "" (nothing compared)
  std::string status;                        // "ok", or what did not run / failed, "; "-joined
};

class ReplayReporter : public benchmark::BenchmarkReporter {
 public:
  // `filter`: the --benchmark_filter in force (to know which cases will run); `output_csv` empty:
  // no file; `progress` with `tty`: one updating line, else one line per case. An existing
  // `output_csv` with the replay header keeps its rows (this run's follow them); one with any other
  // header is refused (opbench::Error), never overwritten.
  ReplayReporter(replay::ReplayPlan plan, std::string filter, std::string output_csv,
                 std::ostream* summary, std::ostream* progress, bool tty);
  ~ReplayReporter() override;
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;

  // Put it before the console reporter in the fan-out: it erases the progress line before the
  // console prints a result (only does anything on a terminal).
  benchmark::BenchmarkReporter* line_clearer();

  // Before a case runs (RunContext::on_case_start): the progress line names it, with the ETA of what
  // is left including it.
  void case_started(const std::string& name);

  static std::vector<std::string> csv_header(const std::vector<std::string>& backends);
  std::vector<std::vector<std::string>> csv_rows() const;   // finished operators, log order
  std::vector<ReplayRow> rows() const;                      // every selected operator, log order
  int selected_cases() const { return selected_; }

 private:
  struct CaseResult;
  struct OperatorState;
  void record(const Run& run);
  ReplayRow make_row(const OperatorState& op) const;
  void write_csv() const;
  void show_progress(const std::string& text);
  void clear_progress();
  void print_summary() const;

  replay::ReplayPlan plan_;
  std::string output_csv_;
  std::vector<std::vector<std::string>> prior_rows_;   // rows already in output_csv_
  std::ostream* summary_;
  std::ostream* progress_;
  bool tty_;
  int selected_ = 0, done_ = 0;
  bool progress_shown_ = false;
  std::vector<OperatorState> operators_;        // plan_.operators order
  std::map<std::string, std::size_t> case_index_;   // case name -> index into plan_.cases
  std::vector<CaseResult> results_;             // parallel to plan_.cases
  std::chrono::steady_clock::time_point start_, last_;
  std::unique_ptr<benchmark::BenchmarkReporter> clearer_;
};

}  // namespace opbench
