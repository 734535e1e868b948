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

// The console table's column widths: each at least its header's, wide enough for every row's cell.
struct ConsoleWidths {
  int name = 10, dtype = 5, backend = 7, metric = 6;
};

ConsoleWidths console_widths(const std::vector<ExperimentRow>& rows) {
  ConsoleWidths w;
  auto widen = [](int& width, const std::string& text) { width = std::max(width, static_cast<int>(text.size())); };
  for (const auto& r : rows) {
    widen(w.name, r.name);
    widen(w.dtype, r.dtype);
    widen(w.backend, r.backend);
    widen(w.metric, r.metric);
  }
  return w;
}

std::string console_line(const ConsoleWidths& w, const std::string& name, const std::string& dtype,
                         const std::string& backend, const std::string& metric, const std::string& target,
                         const std::string& actual, const std::string& of_ceiling, const std::string& status) {
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %-*s %-*s %-*s %9s %9s %6s", w.name, name.c_str(), w.dtype, dtype.c_str(),
                w.backend, backend.c_str(), w.metric, metric.c_str(), target.c_str(), actual.c_str(),
                of_ceiling.c_str());
  std::string text = line;
  if (text.size() + 1 + status.size() <= kConsoleColumns) return text + " " + status + "\n";
  return text + "\n" + wrap_line("  " + status) + "\n";
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

namespace {
void print_markdown_kind_bandwidth(std::ostream& out, const std::vector<CaseBreakdown>& cases) {
  bool any = false;
  for (const auto& c : cases) any = any || !c.gbps_by_kind.empty();
  if (!any) return;
  out << "\n| case | kind | GB/s | % of read ceiling |\n|---|---|---:|---:|\n";
  for (const auto& c : cases)
    for (const auto& [kind, gbps] : c.gbps_by_kind) {
      auto pct = c.pct_of_read_ceiling_by_kind.find(kind);
      out << "| " << c.case_name << " | " << kind << " | " << cell(gbps, "%.0f") << " | "
          << (pct == c.pct_of_read_ceiling_by_kind.end() ? std::string("-") : cell(pct->second, "%.1f")) << " |\n";
    }
}
}  // namespace

void print_markdown_breakdown(std::ostream& out, const std::vector<CaseBreakdown>& cases) {
  if (cases.empty()) return;
  std::map<std::string, double> total;
  for (const auto& c : cases)
    for (const auto& [kind, percent] : c.percent_by_kind) total[kind] += percent;
  std::vector<std::string> kinds;
  for (const auto& [kind, sum] : total)
    if (kind != "idle") kinds.push_back(kind);
  std::sort(kinds.begin(), kinds.end(), [&](const std::string& a, const std::string& b) {
    return total[a] != total[b] ? total[a] > total[b] : a < b;
  });
  if (total.count("idle")) kinds.push_back("idle");
  out << "\n### Where the time goes (% of the traced window, --opbench_trace)\n\n| case |";
  for (const auto& kind : kinds) out << " " << kind << " |";
  out << "\n|---|";
  for (size_t i = 0; i < kinds.size(); ++i) out << "---:|";
  out << "\n";
  for (const auto& c : cases) {
    out << "| " << c.case_name << " |";
    for (const auto& kind : kinds) {
      auto it = c.percent_by_kind.find(kind);
      out << " " << (it == c.percent_by_kind.end() ? std::string("-") : cell(it->second, "%.1f")) << " |";
    }
    out << "\n";
  }
  print_markdown_kind_bandwidth(out, cases);
}

void print_summary(std::ostream& out, const std::vector<ExperimentRow>& rows, const RunInfo& info,
                   const Ceilings& ceilings) {
  if (rows.empty()) return;
  out << "\n"
      << wrap_line("Experiments on " + info.device.name + " (timer " + info.timer + ", cache " + info.cache +
                   "; peaks: " + (info.device.peaks ? info.device.peaks->model : std::string("unknown")) +
                   "; measured ceilings: " + ceilings_text(ceilings) + ")")
      << "\n";
  const ConsoleWidths w = console_widths(rows);
  out << console_line(w, "experiment", "dtype", "backend", "metric", "target", "actual", "%ceil", "status");
  for (const auto& r : rows)
    out << console_line(w, r.name, r.dtype, r.backend, r.metric, cell(r.target, value_format(r)),
                        cell(r.actual, value_format(r)), cell(r.pct_of_ceiling, "%.1f"), r.status);
  out.flush();
}

}  // namespace opbench
