// An experiment row as a dashboard (v3) record (contract: dashboard_json.h).
#include "dashboard_json.h"

namespace opbench {
namespace {

nlohmann::json number_or_null(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

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
                                 {"failed_cases", row.failed_cases}, {"timer", row.timer},
                                 {"cache", row.cache}};
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
