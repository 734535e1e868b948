#include "forwarding.h"

#include <algorithm>

#include "opbench/cases.h"
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

std::optional<double> counter_value(const benchmark::BenchmarkReporter::Run& run, const char* name) {
  auto it = run.counters.find(name);
  if (it == run.counters.end()) return std::nullopt;
  return static_cast<double>(it->second);
}

bool Ceilings::record(const CaseName& name, const benchmark::BenchmarkReporter::Run& run) {
  if (name.family != "Ceiling") return false;
  if (gbench::run_skipped(run)) return true;
  if (name.backend == "copy") copy_gbps = counter_value(run, "GB/s");
  if (name.backend == "cublas") gemm_tflops = counter_value(run, "TFLOP/s");
  return true;
}

std::optional<double> Ceilings::percent_of(const benchmark::BenchmarkReporter::Run& run) const {
  double share = 0;
  if (copy_gbps && *copy_gbps > 0) share = std::max(share, counter_value(run, "GB/s").value_or(0) / *copy_gbps);
  if (gemm_tflops && *gemm_tflops > 0)
    share = std::max(share, counter_value(run, "TFLOP/s").value_or(0) / *gemm_tflops);
  if (share <= 0) return std::nullopt;
  return 100 * share;
}

std::string filter_for_registered_names(const std::string& filter) {
  if (filter.empty() || filter.back() != '$') return filter;
  return filter.substr(0, filter.size() - 1) + "(/iterations:1)?(/manual_time)?$";
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
      continue;
    }
    annotate_ceiling(run);
  }
  for (auto* target : targets_) target->ReportRuns(renamed);
}

void ForwardingReporter::annotate_ceiling(Run& run) {
  auto name = CaseName::parse(run.benchmark_name());
  if (!name || run.run_type != Run::RT_Iteration || ceilings_.record(*name, run)) return;
  if (auto percent = ceilings_.percent_of(run)) run.counters["%ceiling"] = *percent;
}

void ForwardingReporter::Finalize() {
  for (auto* target : targets_) target->Finalize();
}

}  // namespace opbench
