#include "driver.h"

#include <benchmark/benchmark.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "case_filter.h"
#include "displays.h"
#include "experiment_reporter.h"
#include "opbench/check.h"
#include "opbench/family.h"
#include "opbench/interrupt.h"
#include "opbench/kernel_breakdown.h"
#include "opbench/targets.h"
#include "opbench/world.h"
#include "atomic_file.h"
#include "row_file_append.h"
#include "run_identity.h"
#include "run_steps.h"
#include "experiment_summary.h"
#include "inductor_packages.h"

namespace opbench {
namespace {

// The targets of --targets (or the source tree's targets/), every name in them one a family declares.
std::vector<TargetFile> targets_for(const CliOptions& cli) {
  std::string bundled = std::string(OPBENCH_SOURCE_DIR) + "/targets";
  if (!cli.targets && !std::filesystem::is_directory(bundled)) {
    std::cerr << "bench_ops: no targets folder at " << bundled << "; rows get no targets\n";
    return {};
  }
  std::vector<TargetFile> files = load_targets(cli.targets.value_or(bundled));
  KnownNames known;
  for (const auto& family : registered_families()) {
    for (const auto& e : family.experiments) {
      (e.per_world_size ? known.per_world_experiments : known.experiments).insert(e.name);
      known.metrics.insert(metric_name(e.metric));
    }
    for (const auto& b : family.backends) known.backends.insert(b.name);
  }
  std::vector<std::string> problems = unknown_target_names(files, known);
  if (problems.empty()) return files;
  for (size_t i = 0; i + 1 < problems.size(); ++i) std::cerr << "bench_ops: " << problems[i] << "\n";
  throw Error(problems.back());
}

// The traced cases' time by kernel kind: their last repetition's kind counters (kernel_breakdown.h).
std::vector<CaseBreakdown> traced_breakdowns(const RunContext& run) {
  std::vector<CaseBreakdown> traced;
  for (const CaseInfo* info : run.cases.all()) {
    CaseBreakdown b{.case_name = info->name()};
    for (const CaseResult& r : run.results.last(info->name(), 1))
      for (const auto& [name, value] : r.counters) {
        const std::optional<KindCounter> counter = kind_counter_of(name);
        if (!counter) continue;
        switch (counter->figure) {
          case KindFigure::kSharePct: b.percent_by_kind[counter->kind] = value; break;
          case KindFigure::kGbps: b.gbps_by_kind[counter->kind] = value; break;
          case KindFigure::kPctOfReadCeiling: b.pct_of_read_ceiling_by_kind[counter->kind] = value; break;
        }
      }
    if (!b.percent_by_kind.empty()) traced.push_back(std::move(b));
  }
  return traced;
}

// --opbench_markdown: the summary table for a pull-request comment (and, for traced cases, where the time
// goes); a failure is reported, not fatal.
void write_markdown(const std::string& path, const ExperimentReporter& experiments, const RunInfo& info,
                    const RunContext& run) {
  std::ostringstream text;
  print_markdown_summary(text, experiments.rows(), info, run.ceilings);
  print_markdown_breakdown(text, traced_breakdowns(run));
  try {
    write_file_atomically(path, text.str());
    std::cerr << "bench_ops: markdown summary in " << path << "\n";
  } catch (const Error& e) {
    std::cerr << "bench_ops: " << e.what() << "\n";
  }
}

}  // namespace

int run_sweep(const CliOptions& cli, const GbenchFlags& flags) {
  const DeviceInfo& device = current_device();
  if (!cupti_usable(device, cli.run)) return 2;
  const World& world = current_world();
  RunContext run(device, cli.run, cli.trace);
  run.options.inductor = package_cache(cli);
  try {
    register_families(run);
  } catch (const Error& e) {
    return error_exit(e);
  }
  if (auto listed = list_instead_of_running(cli, flags, run)) return *listed;
  std::set<std::string> selected;
  std::optional<RowFile> rows;
  std::optional<std::string> rows_path = cli.output;
  std::string launch_rules;
  try {
    selected = cases_of_this_process(run, selected_cases(run.cases, benchmark::GetBenchmarkFilter()), cli);
    if (!world.is_root()) rows_path.reset();   // rank 0 writes the rows
    if (rows_path) rows = RowFile(*rows_path);   // its path was checked against the others (invocation.h)
    launch_rules = launch_rules_in_force(device);
  } catch (const Error& e) {
    return error_exit(e);
  }
  if (selected.empty()) return nothing_to_run(cli, flags);   // a shard or a rank; the filter matched cases
  if (auto planned = plan_or_build_packages(cli, run, selected)) return *planned;
  if (flags.list_tests) return list_cases();
  const RunInfo info = run_info(device, cli);
  std::unique_ptr<ExperimentReporter> experiments;
  try {
    experiments = std::make_unique<ExperimentReporter>(run, info, targets_for(cli), std::move(rows),
                                                       std::move(selected), summary_stream(flags));
  } catch (const Error& e) {
    return error_exit(e);
  }
  std::optional<int> failed = run_cases(cli, flags, info, launch_rules, experiments.get());
  if (!failed) return interrupt_signal() ? failures_exit_code(0) : 2;
  if (world.is_root()) advise_package_builds(run, flags.filter);
  if (cli.markdown && world.is_root()) write_markdown(*cli.markdown, *experiments, info, run);
  if (rows_path && !experiments->write_failed())
    std::cerr << "bench_ops: experiment rows in " << *rows_path << " and dashboard records (JSON Lines) in "
              << dashboard_path(*rows_path) << "\n";
  if (experiments->write_failed()) {
    std::cerr << "bench_ops: some experiment rows could not be written to " << *cli.output << " (messages above)\n";
    return 2;
  }
  return failures_exit_code(*failed);
}

}  // namespace opbench
