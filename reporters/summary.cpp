#include "summary.h"

#include <cstdio>
#include <string>

namespace opbench {
namespace {

std::string cell(const std::optional<double>& value, const char* format) {
  if (!value) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, format, *value);
  return buffer;
}

}  // namespace

void print_summary(std::ostream& out, const std::vector<ExperimentRow>& rows, const RunInfo& info,
                   const Ceilings& ceilings) {
  if (rows.empty()) return;
  char line[256];
  out << "\nExperiments on " << info.device.name << " (timer " << info.timer << ", cache " << info.cache
      << "; peaks: " << (info.device.peaks ? info.device.peaks->model : std::string("unknown"))
      << "; measured ceilings: copy " << cell(ceilings.copy_gbps, "%.0f") << " GB/s, gemm "
      << cell(ceilings.gemm_tflops, "%.0f") << " TFLOP/s)\n";
  std::snprintf(line, sizeof line, "%-20s %-9s %-7s %-24s %10s %10s %8s %7s %7s  %s\n", "experiment", "dtype",
                "backend", "metric", "target", "actual", "%target", "%peak", "%ceil", "status");
  out << line;
  for (const auto& r : rows) {
    // flops_utilization is a fraction: 4 significant digits; the rest are GB/s-like: 2 decimals.
    const char* value_format = r.metric == "flops_utilization" ? "%.4g" : "%.2f";
    std::snprintf(line, sizeof line, "%-20s %-9s %-7s %-24s %10s %10s %8s %7s %7s  %s\n", r.name.c_str(),
                  r.dtype.c_str(), r.backend.c_str(), r.metric.c_str(), cell(r.target, value_format).c_str(),
                  cell(r.actual, value_format).c_str(), cell(r.pct_of_target, "%.1f").c_str(),
                  cell(r.pct_of_peak, "%.1f").c_str(), cell(r.pct_of_ceiling, "%.1f").c_str(),
                  r.status.c_str());
    out << line;
  }
  out.flush();
}

}  // namespace opbench
