#include "outputs.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "opbench/check.h"

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

nlohmann::json number_or_null(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
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

void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path());
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw Error(tmp + ": cannot be written");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw Error(path + ": cannot replace it with " + tmp);
}

std::string dashboard_path(const std::string& csv_path) {
  std::filesystem::path p(csv_path);
  return (p.parent_path() / p.stem()).string() + ".json";
}

nlohmann::json dashboard_record(const ExperimentRow& row, const RunInfo& info) {
  const DeviceInfo& d = info.device;
  nlohmann::json runner = {
      {"name", d.is_gpu ? d.name : info.host_cpu},
      {"type", d.is_gpu ? "cuda" : "cpu"},
      {"gpu_count", d.is_gpu ? row.processes : 0},
      {"gpu_mem_info", d.is_gpu ? static_cast<double>(d.memory_bytes) / 1e9 : 0.0},
      {"cpu_info", info.host_cpu},
      {"cpu_count", d.cpu_count},
      {"avail_mem_in_gb", info.host_memory_gb}};
  nlohmann::json metric_extra = {{"status", row.status}, {"cases", row.cases},
                                 {"failed_cases", row.failed_cases}, {"timer", info.timer},
                                 {"cache", info.cache}};
  if (row.pct_of_target) metric_extra["pct_of_target"] = *row.pct_of_target;
  if (row.pct_of_peak) metric_extra["pct_of_peak"] = *row.pct_of_peak;
  if (row.pct_of_ceiling) metric_extra["pct_of_ceiling"] = *row.pct_of_ceiling;
  nlohmann::json values = nlohmann::json::array();
  if (row.actual) values.push_back(*row.actual);
  return {
      {"benchmark", {{"name", "opbench gpt-fast micro-benchmarks"}, {"mode", "inference"},
                     {"dtype", row.dtype},
                     {"extra_info", {{"device", row.device}, {"arch", row.arch}, {"device_id", row.device_id},
                                     {"run_id", info.run_id}, {"timestamp", info.timestamp}}}}},
      {"model", {{"name", row.name}, {"type", row.is_model ? "OSS model" : "micro-benchmark"},
                 {"backend", row.backend}, {"origins", {"pytorch"}}}},
      {"metric", {{"name", row.metric}, {"benchmark_values", values},
                  {"target_value", number_or_null(row.target)}, {"extra_info", metric_extra}}},
      {"runners", nlohmann::json::array({runner})},
      {"dependencies", {{"torch", {{"version", info.torch_version}}},
                        {"cuda", {{"version", info.cuda_version}}},
                        {"opbench", {{"sha", info.opbench_sha}}}}}};
}

}  // namespace opbench
