#include "experiments.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "forwarding.h"
#include "opbench/cases.h"
#include "opbench/check.h"
#include "opbench/gbench_compat.h"
#include "opbench/timer.h"
#include "outputs.h"
#include "summary.h"

namespace opbench {
namespace {

bool is_prefix(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
}

double mean_of_case_medians(const std::map<std::string, std::vector<double>>& per_case) {
  double sum = 0;
  for (const auto& [name, values] : per_case) sum += median_of(values);
  return sum / static_cast<double>(per_case.size());
}

}  // namespace

ExperimentReporter::ExperimentReporter(RunInfo info, std::vector<TargetFile> targets,
                                       std::string output_csv, std::ostream* summary_stream)
    : info_(std::move(info)), targets_(std::move(targets)), output_csv_(std::move(output_csv)),
      summary_stream_(summary_stream) {
  if (output_csv_.empty()) return;
  if (std::filesystem::exists(output_csv_)) {
    auto rows = read_csv(output_csv_);
    if (!rows.empty()) {
      const auto& ours = csv_header();
      prior_header_ = rows[0];
      std::vector<std::string> seed_columns(ours.begin(), ours.begin() + 8);
      if (!is_prefix(seed_columns, prior_header_) && !is_prefix(prior_header_, seed_columns))
        throw Error(output_csv_ + ": its header is not the gpt-fast/opbench header (name,metric,target,"
                    "actual,dtype,device,arch,is_model,...); refusing to append to it");
      prior_csv_rows_.assign(rows.begin() + 1, rows.end());
    }
  }
  std::ifstream json_in(dashboard_path(output_csv_));
  for (std::string line; std::getline(json_in, line);)
    if (!line.empty()) prior_json_lines_.push_back(line);
}

bool ExperimentReporter::ReportContext(const Context&) { return true; }

void ExperimentReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const auto& run : runs) {
    if (run.run_type != Run::RT_Iteration) continue;
    auto name = CaseName::parse(strip_harness_suffix(run.benchmark_name()));
    if (!name) continue;
    std::string family_dtype = name->family + "/" + name->dtype;
    // Cases run family by family: a new family/dtype means the previous experiments are complete.
    if (!last_family_dtype_.empty() && family_dtype != last_family_dtype_) write_outputs();
    last_family_dtype_ = family_dtype;
    add_run(*name, run);
  }
}

void ExperimentReporter::add_run(const CaseName& name, const Run& run) {
  if (ceilings_.record(name, run) || !experiment_for_family(name.family)) return;
  bool skipped = gbench::run_skipped(run);
  auto it = std::find_if(groups_.begin(), groups_.end(), [&](const Group& g) {
    return g.family == name.family && g.dtype == name.dtype && g.backend == name.backend;
  });
  if (it == groups_.end()) it = groups_.insert(groups_.end(), Group{name.family, name.dtype, name.backend, {}, {}, {}});
  std::string key = name.str();
  if (skipped) {
    it->failed.push_back(key + ": " + gbench::skip_message(run));
    return;
  }
  if (auto v = counter_value(run, "GB/s")) it->gbps[key].push_back(*v);
  if (auto v = counter_value(run, "TFLOP/s")) it->tflops[key].push_back(*v);
}

ExperimentRow ExperimentReporter::make_row(const Group& group) const {
  ExperimentKind kind = *experiment_for_family(group.family);
  const DeviceInfo& d = info_.device;
  ExperimentRow row;
  row.name = kind.name;
  row.metric = kind.metric;
  row.dtype = torch_dtype_name(group.dtype);
  row.device = d.is_gpu ? "cuda" : "cpu";
  row.arch = d.arch_name;
  row.backend = group.backend;
  row.failed_cases = static_cast<int>(group.failed.size());
  bool bandwidth = kind.metric == "memory_bandwidth(GB/s)";
  const auto& per_case = bandwidth ? group.gbps : group.tflops;
  row.cases = static_cast<int>(per_case.size());
  if (auto t = find_target(targets_, d.name, kind.name, kind.metric, row.dtype, row.backend)) row.target = t->value;
  if (!per_case.empty()) {
    double mean = mean_of_case_medians(per_case);
    if (bandwidth) {
      row.actual = mean;
      if (d.peaks) row.pct_of_peak = 100 * mean / d.peaks->hbm_gbps;
      if (ceilings_.copy_gbps) row.pct_of_ceiling = 100 * mean / *ceilings_.copy_gbps;
    } else if (d.peaks) {
      row.actual = mean / d.peaks->bf16_dense_tflops;   // achieved FLOP/s / peak FLOP/s
      row.pct_of_peak = 100 * *row.actual;
      if (ceilings_.gemm_tflops) row.pct_of_ceiling = 100 * mean / *ceilings_.gemm_tflops;
    }
  }
  if (row.target && row.actual) row.pct_of_target = 100 * *row.actual / *row.target;
  if (row.failed_cases > 0)
    row.status = "incomplete: " + std::to_string(row.failed_cases) + " of " +
                 std::to_string(row.failed_cases + row.cases) + " cases failed";
  else if (!row.actual)
    row.status = "no actual: no datasheet peak for " + d.name;
  else if (!row.target)
    row.status = "no target";
  else
    row.status = *row.actual >= *row.target ? "meets target" : "below target";
  return row;
}

std::vector<ExperimentRow> ExperimentReporter::rows() const {
  std::vector<ExperimentRow> rows;
  for (const auto& group : groups_) rows.push_back(make_row(group));
  return rows;
}

void ExperimentReporter::write_outputs() {
  if (output_csv_.empty()) return;
  std::vector<std::string> header = csv_header();
  if (prior_header_.size() > header.size()) header = prior_header_;
  std::string csv = csv_line(header);
  auto padded = [&](std::vector<std::string> cells) {
    cells.resize(header.size());
    return csv_line(cells);
  };
  for (const auto& cells : prior_csv_rows_) csv += padded(cells);
  std::string json;
  for (const auto& line : prior_json_lines_) json += line + "\n";
  for (const auto& row : rows()) {
    csv += padded(csv_cells(row));
    json += dashboard_record(row, info_).dump() + "\n";
  }
  write_file_atomically(output_csv_, csv);
  write_file_atomically(dashboard_path(output_csv_), json);
}

void ExperimentReporter::Finalize() {
  write_outputs();
  if (summary_stream_) print_summary(*summary_stream_, rows(), info_, ceilings_);
}

}  // namespace opbench
