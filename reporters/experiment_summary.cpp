// The console and markdown tables of a run's rows (contract: experiment_summary.h).
#include "experiment_summary.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "line_wrap.h"

namespace opbench {
namespace {

std::string cell(const std::optional<double>& value, const char* format) {
  if (!value) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, format, *value);
  return buffer;
}

// "read 3056, write 3296, copy 3025 GB/s; gemm 785 TFLOP/s" (the measured ones only), or "none". A kind
// measured at several sizes shows its range, smallest stream first: "read 3507-4611".
std::string ceilings_text(const Ceilings& c) {
  std::string text;
  auto add = [&](const char* name, const StreamCurve& curve) {
    if (curve.empty()) return;
    const double first = curve.points().begin()->second, last = curve.points().rbegin()->second;
    text += (text.empty() ? "" : ", ") + std::string(name) + " " + cell(first, "%.0f");
    if (curve.points().size() > 1) text += "-" + cell(last, "%.0f");
  };
  add("read", c.read);
  add("write", c.write);
  add("copy", c.copy);
  if (!text.empty()) text += " GB/s";
  if (c.gemm_tflops) text += (text.empty() ? "" : "; ") + std::string("gemm ") + cell(c.gemm_tflops, "%.0f") + " TFLOP/s";
  return text.empty() ? "none" : text;
}

const char* value_format(const ExperimentRow& r) {
  // flops_utilization is a fraction: 4 significant digits; the rest are GB/s-like: 2 decimals.
  return r.metric == "flops_utilization" ? "%.4g" : "%.2f";
}

}  // namespace

void print_markdown_summary(std::ostream& out, const std::vector<ExperimentRow>& rows, const RunInfo& info,
                            const Ceilings& ceilings) {
  out << "### opbench on " << info.device.name << "\n\n"
      << "timer " << info.timer << ", cache " << info.cache << "; opbench `" << info.opbench_sha << "`, torch "
      << info.torch_version << "; measured ceilings: " << ceilings_text(ceilings) << "\n\n"
      << "| experiment | dtype | backend | metric | target | actual | % target | % peak | % ceiling | status |\n"
      << "|---|---|---|---|---:|---:|---:|---:|---:|---|\n";
  for (const auto& r : rows)
    out << "| " << r.name << " | " << r.dtype << " | " << r.backend << " | " << r.metric << " | "
        << cell(r.target, value_format(r)) << " | " << cell(r.actual, value_format(r)) << " | "
        << cell(r.pct_of_target, "%.1f") << " | " << cell(r.pct_of_peak, "%.1f") << " | "
        << cell(r.pct_of_ceiling, "%.1f") << " | " << r.status << " |\n";
}

void print_summary(std::ostream& out, const std::vector<ExperimentRow>& rows, const RunInfo& info,
                   const Ceilings& ceilings) {
  if (rows.empty()) return;
  char line[256];
  out << "\n"
      << wrap_line("Experiments on " + info.device.name + " (timer " + info.timer + ", cache " + info.cache +
                   "; peaks: " + (info.device.peaks ? info.device.peaks->model : std::string("unknown")) +
                   "; measured ceilings: " + ceilings_text(ceilings) + ")")
      << "\n";
  int backend_width = 7;   // "backend"; wider for a longer name ("reduce_scatter")
  for (const auto& r : rows) backend_width = std::max(backend_width, static_cast<int>(r.backend.size()));
  std::snprintf(line, sizeof line, "%-20s %-9s %-*s %-24s %10s %10s %8s %7s %7s  %s\n", "experiment", "dtype",
                backend_width, "backend", "metric", "target", "actual", "%target", "%peak", "%ceil", "status");
  out << line;
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "%-20s %-9s %-*s %-24s %10s %10s %8s %7s %7s  %s\n", r.name.c_str(),
                  r.dtype.c_str(), backend_width, r.backend.c_str(), r.metric.c_str(), cell(r.target, value_format(r)).c_str(),
                  cell(r.actual, value_format(r)).c_str(), cell(r.pct_of_target, "%.1f").c_str(),
                  cell(r.pct_of_peak, "%.1f").c_str(), cell(r.pct_of_ceiling, "%.1f").c_str(),
                  r.status.c_str());
    out << line;
  }
  out.flush();
}

}  // namespace opbench
