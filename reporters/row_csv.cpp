// An experiment row as CSV cells (contract: row_csv.h).
#include "row_csv.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace opbench {
namespace {

// A CSV number: six decimals (gpt-fast's style) where that keeps the value; outside [1e-3, 1e15) the
// shortest %g form that reads back to the same double (1e308 stays 1e+308, 1e-9 does not become 0).
std::string number(const std::optional<double>& value) {
  if (!value) return "";
  double v = *value, magnitude = std::fabs(v);
  char buffer[64];
  if (magnitude == 0 || (magnitude >= 1e-3 && magnitude < 1e15)) {
    std::snprintf(buffer, sizeof buffer, "%.6f", v);
    return buffer;
  }
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, v);
    if (std::strtod(buffer, nullptr) == v) break;
  }
  return buffer;
}

}  // namespace

const std::vector<std::string>& csv_header() {
  static const std::vector<std::string> header = {
      "name", "metric", "target", "actual", "dtype", "device", "arch", "is_model",
      "backend", "pct_of_target", "pct_of_peak", "pct_of_ceiling", "cases", "status", "run_id", "timestamp",
      "device_id"};
  return header;
}

std::vector<std::string> csv_cells(const ExperimentRow& row, const RunInfo& info) {
  return {row.name, row.metric, number(row.target), number(row.actual), row.dtype, row.device, row.arch,
          row.is_model ? "True" : "False", row.backend, number(row.pct_of_target),
          number(row.pct_of_peak), number(row.pct_of_ceiling), std::to_string(row.cases), row.status,
          info.run_id, info.timestamp, row.device_id};
}

}  // namespace opbench
