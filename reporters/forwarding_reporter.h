// The reporter Google Benchmark is given: it passes every call on to several reporters (the display,
// the experiment rows), each run with the harness suffix cleared from its name (benchmark_names.h:
// BenchmarkName has fields for exactly this), and counts the cases that failed. After SIGINT or SIGTERM
// (opbench/interrupt.h) it passes no more runs on, only Finalize: every output holds the cases that
// finished before the signal, and Google Benchmark's JSON is closed as usual.
#pragma once
#include <benchmark/benchmark.h>

#include <vector>

namespace opbench {

// Passes every call to the wrapped reporters, in order, with the harness suffix cleared from names.
// The wrapped reporters write to the streams Google Benchmark gives this one. Not owning.
class ForwardingReporter : public benchmark::BenchmarkReporter {
 public:
  explicit ForwardingReporter(std::vector<benchmark::BenchmarkReporter*> targets);
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;
  // Runs skipped with an error, except backends skipped as unavailable (skip_unavailable()).
  int failed_runs() const { return failed_runs_; }

 private:
  std::vector<benchmark::BenchmarkReporter*> targets_;
  int failed_runs_ = 0;
};

}  // namespace opbench
