#include "experiments.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>

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

// The mean over cases of each case's median over repetitions; nullopt when any case lacks the value.
template <typename Value>
std::optional<double> mean_of_case_medians(const std::vector<std::vector<Figures>>& per_case, Value value) {
  double sum = 0;
  for (const auto& repetitions : per_case) {
    std::vector<double> values;
    for (const auto& figures : repetitions) {
      std::optional<double> v = value(figures);
      if (!v) return std::nullopt;
      values.push_back(*v);
    }
    sum += median_of(values);
  }
  return sum / static_cast<double>(per_case.size());
}

}  // namespace

ExperimentReporter::ExperimentReporter(const RunContext& run, RunInfo info, std::vector<TargetFile> targets,
                                       std::string output_csv, std::ostream* summary_stream)
    : run_(run), info_(std::move(info)), targets_(std::move(targets)), output_csv_(std::move(output_csv)),
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
    const CaseInfo* info = run_.cases.find(run.run_name.function_name);
    if (!info || info->experiments.empty()) continue;
    std::string family_dtype = info->family + "/" + info->dtype;
    // Cases run family by family: a new family/dtype means the previous experiments are complete.
    if (!last_family_dtype_.empty() && family_dtype != last_family_dtype_) write_outputs();
    last_family_dtype_ = family_dtype;
    add_run(*info, run);
  }
}

void ExperimentReporter::add_run(const CaseInfo& info, const Run& run) {
  for (const auto& experiment : info.experiments) {
    auto it = std::find_if(groups_.begin(), groups_.end(), [&](const Group& g) {
      return g.experiment.name == experiment.name && g.experiment.metric == experiment.metric &&
             g.dtype == info.dtype && g.backend == info.backend;
    });
    if (it == groups_.end()) it = groups_.insert(groups_.end(), Group{experiment, info.dtype, info.backend, {}, {}});
    if (gbench::run_skipped(run))
      it->failed.push_back(info.name() + ": " + gbench::skip_message(run));
    else   // manual time: the case's median, once per iteration
      it->seconds[info.name()].push_back(run.real_accumulated_time / static_cast<double>(run.iterations));
  }
}

ExperimentRow ExperimentReporter::make_row(const Group& group) const {
  const Experiment& experiment = group.experiment;
  const DeviceInfo& d = info_.device;
  ExperimentRow row;
  row.name = experiment.name;
  row.metric = metric_name(experiment.metric);
  row.dtype = torch_dtype_name(group.dtype);
  row.device = d.is_gpu ? "cuda" : "cpu";
  row.arch = d.arch_name;
  row.is_model = experiment.is_model;
  row.backend = group.backend;
  row.failed_cases = static_cast<int>(group.failed.size());
  row.cases = static_cast<int>(group.seconds.size());
  if (auto t = find_target(targets_, d.name, row.name, row.metric, row.dtype, row.backend)) row.target = t->value;
  if (!group.seconds.empty()) {
    std::vector<std::vector<Figures>> per_case;
    for (const auto& [name, seconds] : group.seconds) {
      const Work& work = run_.cases.find(name)->work;
      per_case.emplace_back();
      for (double s : seconds) per_case.back().push_back(figures_of(work, s, d.peaks, run_.ceilings));
    }
    auto shares = [&](const Figures& f) { return metric_shares(experiment.metric, f); };
    auto percent = [](std::optional<double> share) -> std::optional<double> {
      if (!share) return std::nullopt;
      return 100 * *share;
    };
    row.actual = mean_of_case_medians(per_case, [&](const Figures& f) { return shares(f).actual; });
    row.pct_of_peak = percent(mean_of_case_medians(per_case, [&](const Figures& f) { return shares(f).of_peak; }));
    row.pct_of_ceiling =
        percent(mean_of_case_medians(per_case, [&](const Figures& f) { return shares(f).of_ceiling; }));
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
  if (summary_stream_) print_summary(*summary_stream_, rows(), info_, run_.ceilings);
}

}  // namespace opbench
