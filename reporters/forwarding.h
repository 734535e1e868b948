// Reporter plumbing: strip Google Benchmark's name suffixes and fan one run out to several reporters.
// Reporters only format: figures come from the cases' counters or, for experiment rows, from the case
// registry (opbench/cases.h) and figures_of (opbench/work.h).
//
// Every case is registered with Iterations(1) and UseManualTime() (the harness does its own sampling),
// and Google Benchmark appends "/iterations:1/manual_time" to such names. CaseNameReporter clears those
// two name fields (BenchmarkName exists for exactly this) so that every output shows the stable
// case name `Family/dtype/shape/backend`.
#pragma once
#include <benchmark/benchmark.h>

#include <optional>
#include <string>
#include <vector>


namespace opbench {

// Removes the suffixes Iterations(1) and UseManualTime() add to a name, wherever they stand
// ("X/iterations:1/manual_time_mean" -> "X_mean"). Used for names printed outside a Run.
std::string strip_harness_suffix(const std::string& name);

// A filter regex as the user meant it against the stable names: a trailing '$' also accepts the
// harness suffix.
std::string filter_for_registered_names(const std::string& filter);

// A filter regex that selects exactly these case names (special characters escaped), as registered.
std::string exact_names_filter(const std::vector<std::string>& names);

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
