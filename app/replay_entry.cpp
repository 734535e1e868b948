#include "replay_entry.h"

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <optional>
#include <set>

#include "case_filter.h"
#include "displays.h"
#include "opbench/check.h"
#include "opbench/interrupt.h"
#include "replay/registration.h"
#include "replay/reporter.h"
#include "run_identity.h"
#include "run_steps.h"

namespace opbench::replay {
namespace {

// A log of which nothing can run: every reason on stderr, then the error.
void require_a_runnable_input(const ReplayPlan& plan, const RunContext& run, const OplogOptions& oplog) {
  if (!run.cases.all().empty()) return;
  for (const auto& n : plan.not_run)
    std::cerr << "bench_ops: " << n.where << ": " << (n.op.empty() ? "" : n.op + ": ") << n.reason << "\n";
  throw Error("--oplog " + oplog.path + ": no input of the log can run here (each is listed above with its reason)");
}

}  // namespace

int run_replay(const CliOptions& cli, const OplogOptions& oplog, const GbenchFlags& flags) {
  const DeviceInfo& device = current_device();
  if (!cupti_usable(device, cli.run)) return 2;
  RunContext run(device, cli.run, cli.trace);
  ReplayPlan plan;
  try {
    plan = register_replay(run, oplog);
  } catch (const Error& e) {
    return error_exit(e);
  }
  if (auto listed = list_instead_of_running(cli, flags, run)) return *listed;
  std::set<std::string> selected;
  std::string launch_rules;
  try {
    selected = selected_cases(run.cases, benchmark::GetBenchmarkFilter());
    require_a_runnable_input(plan, run, oplog);
    selected = cases_of_this_process(run, std::move(selected), cli);
    launch_rules = launch_rules_in_force(device);
  } catch (const Error& e) {
    return error_exit(e);
  }
  if (selected.empty()) return nothing_to_run(cli, flags);   // a rank other than 0 of a distributed launch
  if (flags.list_tests) return list_cases();
  const int unparsed_lines = plan.unparsed_lines;
  const RunInfo info = run_info(device, cli);
  std::unique_ptr<ReplayReporter> replay;
  try {
    replay = std::make_unique<ReplayReporter>(std::move(plan), benchmark::GetBenchmarkFilter(), cli.output.value_or(""),
                                              summary_stream(flags), &std::cerr, isatty(STDERR_FILENO) != 0);
  } catch (const Error& e) {
    return error_exit(e);
  }
  ReplayReporter* reporter = replay.get();
  run.on_case_start = [reporter](const CaseInfo& info) { reporter->case_started(info.name()); };
  // The progress line's clearer goes ahead of the display: it erases the line before a result prints.
  std::optional<int> failed = run_cases(cli, flags, info, launch_rules, replay.get(), replay->line_clearer());
  if (!failed || interrupt_signal()) return interrupt_signal() ? failures_exit_code(0) : 2;
  if (unparsed_lines > 0) {
    std::cerr << "bench_ops: " << unparsed_lines << " line(s) of the log could not be parsed (listed above)\n";
    return 1;
  }
  return failures_exit_code(*failed);
}

}  // namespace opbench::replay
