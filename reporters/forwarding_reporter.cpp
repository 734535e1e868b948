// One Google Benchmark reporter fanned out to several (contract: forwarding_reporter.h).
#include "forwarding_reporter.h"

#include "opbench/cases.h"   // kUnavailablePrefix
#include "opbench/gbench_compat.h"
#include "opbench/interrupt.h"

namespace opbench {

ForwardingReporter::ForwardingReporter(std::vector<benchmark::BenchmarkReporter*> targets)
    : targets_(std::move(targets)) {}

bool ForwardingReporter::ReportContext(const Context& context) {
  bool ok = true;
  for (auto* target : targets_) {
    // Google Benchmark points this reporter's streams at the console or the --benchmark_out file.
    target->SetOutputStream(&GetOutputStream());
    target->SetErrorStream(&GetErrorStream());
    ok = target->ReportContext(context) && ok;
  }
  return ok;
}

void ForwardingReporter::ReportRuns(const std::vector<Run>& runs) {
  if (interrupt_signal() != 0) return;   // the case in flight when SIGINT or SIGTERM came, and every later one
  std::vector<Run> renamed = runs;
  for (auto& run : renamed) {
    run.run_name.iterations.clear();
    run.run_name.time_type.clear();
    if (gbench::run_skipped(run)) {
      if (gbench::skip_message(run).rfind(kUnavailablePrefix, 0) != 0) ++failed_runs_;
    }
  }
  for (auto* target : targets_) target->ReportRuns(renamed);
}

void ForwardingReporter::Finalize() {
  for (auto* target : targets_) target->Finalize();
}

}  // namespace opbench
