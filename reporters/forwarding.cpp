#include "forwarding.h"

#include <algorithm>

#include "opbench/cases.h"   // kUnavailablePrefix
#include "opbench/gbench_compat.h"

namespace opbench {
namespace {

const std::string kSuffixes[] = {"/iterations:1", "/manual_time"};

}  // namespace

std::string strip_harness_suffix(const std::string& name) {
  std::string out = name;
  for (const auto& suffix : kSuffixes)
    for (size_t at = out.find(suffix); at != std::string::npos; at = out.find(suffix, at))
      out.erase(at, suffix.size());
  return out;
}

std::string filter_for_registered_names(const std::string& filter) {
  if (filter.empty() || filter.back() != '$') return filter;
  return filter.substr(0, filter.size() - 1) + "(/iterations:1)?(/manual_time)?$";
}

std::string exact_names_filter(const std::vector<std::string>& names) {
  std::string alternatives;
  for (const auto& name : names) {
    std::string escaped;
    for (char c : name) {
      if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) escaped += '\\';
      escaped += c;
    }
    alternatives += (alternatives.empty() ? "" : "|") + escaped;
  }
  return filter_for_registered_names("^(" + alternatives + ")$");
}

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
