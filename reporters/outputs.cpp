#include "outputs.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "opbench/check.h"

namespace opbench {
namespace {

std::string number(const std::optional<double>& value) {
  if (!value) return "";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6f", *value);
  return buffer;
}

nlohmann::json number_or_null(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

const std::vector<std::string>& csv_header() {
  static const std::vector<std::string> header = {
      "name", "metric", "target", "actual", "dtype", "device", "arch", "is_model",
      "backend", "pct_of_target", "pct_of_peak", "pct_of_ceiling", "cases", "status", "run_id", "timestamp"};
  return header;
}

std::vector<std::string> csv_cells(const ExperimentRow& row, const RunInfo& info) {
  return {row.name, row.metric, number(row.target), number(row.actual), row.dtype, row.device, row.arch,
          row.is_model ? "True" : "False", row.backend, number(row.pct_of_target),
          number(row.pct_of_peak), number(row.pct_of_ceiling), std::to_string(row.cases), row.status,
          info.run_id, info.timestamp};
}

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot be read");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string cell;
  bool quoted = false, any = false;
  for (char c; in.get(c);) {
    any = true;
    if (quoted) {
      if (c == '"' && in.peek() == '"') {
        cell += '"';
        in.get();
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(cell));
      cell.clear();
    } else if (c == '\n') {
      row.push_back(std::move(cell));
      cell.clear();
      rows.push_back(std::move(row));
      row.clear();
      any = false;
    } else if (c != '\r') {
      cell += c;
    }
  }
  if (any) {
    row.push_back(std::move(cell));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string csv_line(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) line += ',';
    const std::string& c = cells[i];
    if (c.find_first_of(",\"\n") == std::string::npos) {
      line += c;
      continue;
    }
    line += '"';
    for (char ch : c) line += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    line += '"';
  }
  return line + "\n";
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
      {"gpu_count", d.is_gpu ? 1 : 0},
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
                     {"extra_info", {{"device", row.device}, {"arch", row.arch}, {"run_id", info.run_id},
                                     {"timestamp", info.timestamp}}}}},
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
