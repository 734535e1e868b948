// Registration of the replay cases and their bodies: build the inputs, run once (the graph backend
// also checks its replay against eager), then time with the harness.
//
// Backends and timers: `eager` is timed with CUDA events on a GPU (the launch is not timed: the
// stream is held until the call is enqueued), `graph` with the graph timer (the call captured in a
// CUDA graph, a batch of calls per replay, so per-kernel launch gaps disappear); on CPU only `eager`
// exists, on the host clock. Each backend picks its timer: --opbench_timer does not apply here.
#include "replay/registration.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>

#include "opbench/cases.h"
#include "opbench/check.h"
#include "opbench/fnv1a.h"
#include "replay/graph_capture.h"
#include "replay/operator_call.h"
#include "replay/stacks.h"

namespace opbench::replay {
namespace {

struct CaseSetup {
  std::shared_ptr<const CallPlan> plan;
  ReplayOptions options;
  std::uint64_t seed = 0;
  std::int64_t weight = 1;
  double budget_s = 10;   // the first call may take this long; longer: skipped after it
};

// Runs the first call and times it; false (the case skipped, with the figure) when it exceeds the budget.
bool first_call_within_budget(CaseContext& ctx, const CaseSetup& setup, const std::function<void()>& first_call) {
  auto start = std::chrono::steady_clock::now();
  first_call();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (seconds <= setup.budget_s) return true;
  char text[160];
  std::snprintf(text, sizeof text, "one call took %.1f s, over the %.0f s budget (--oplog_case_budget_s): not timed",
                seconds, setup.budget_s);
  ctx.skip_unavailable(text);
  return false;
}

// FNV-1a: the same inputs for a case whatever else runs (both backends of an input share them).
std::uint64_t case_seed(const std::string& model, const std::string& op, int input) {
  return fnv1a_hash(model + "/" + op + "/" + std::to_string(input));
}

// Bytes: every input tensor read once and every output tensor written once, logical sizes
// (numel * itemsize; an expanded stride-0 input counts its full logical size). No FLOPs.
Work replay_work(const torch::jit::Stack& inputs, const torch::jit::Stack& outputs) {
  Work work;
  work.bytes_read = tensor_bytes(inputs);
  work.bytes_written = tensor_bytes(outputs);
  work.compute_peak = PeakKind::kBandwidth;
  return work;
}

void run_eager(CaseContext& ctx, const CaseSetup& setup) {
  torch::jit::Stack inputs = build_stack(*setup.plan, setup.options, setup.seed);
  torch::jit::Stack outputs;
  if (!first_call_within_budget(ctx, setup, [&] { outputs = call(*setup.plan, inputs); })) return;
  Work work = replay_work(inputs, outputs);
  ctx.state().counters["weight"] = static_cast<double>(setup.weight);
  TimingRequest request;
  request.timer = TimerKind::kEvents;
  ctx.time([&] { outputs = call(*setup.plan, inputs); }, work, request);
}

std::string graph_label(const RunOptions& options) {
  return std::string("timer=graph cache=") + (options.cache == CacheMode::kCold ? "cold" : "warm");
}

// Checks the captured call against eager on copies of the same inputs, then times graph replays.
void run_graph(CaseContext& ctx, const CaseSetup& setup) {
  torch::jit::Stack inputs = build_stack(*setup.plan, setup.options, setup.seed);
  torch::jit::Stack expected;
  if (!first_call_within_budget(ctx, setup, [&] { expected = call(*setup.plan, clone_stack(inputs)); })) return;
  detail::GraphRun graph;
  try {
    graph = detail::call_in_graph(*setup.plan, clone_stack(inputs));
  } catch (const detail::NotCapturable& e) {
    ctx.skip_unavailable(std::string("not capturable in a CUDA graph: ") + e.what());
    return;
  }
  if (graph.nodes == 0) {   // a view: timing an empty graph would report the batch size as speedup
    ctx.skip_unavailable("launches no GPU work (a view or metadata-only op): nothing to replay");
    return;
  }
  torch::jit::Stack replayed = std::move(graph.outputs);
  std::string mismatch = compare_outputs(expected, replayed);
  Work work = replay_work(inputs, replayed);
  expected.clear();
  replayed.clear();
  ctx.state().counters["weight"] = static_cast<double>(setup.weight);
  ctx.state().counters["accuracy_ok"] = mismatch.empty() ? 1 : 0;
  torch::jit::Stack outputs;
  TimingRequest request;
  request.timer = TimerKind::kGraph;
  ctx.time([&] { outputs = call(*setup.plan, inputs); }, work, request);
  if (!mismatch.empty()) ctx.state().SetLabel(graph_label(ctx.options()) + " mismatch: " + mismatch);
}

ReplayOptions replay_options(const OplogOptions& options, c10::Device device) {
  ReplayOptions out;
  out.device = device;
  if (options.dtype) out.dtype = dtype_option(*options.dtype);
  out.channels_last = options.channels_last;
  return out;
}

std::string location(const std::string& file, int line) { return file + ":" + std::to_string(line); }

// Every issue goes to stderr as it is found (so --benchmark_list_tests shows them too); lines that
// were not used are also listed as not run in the summary.
void report_issues(const oplog::OpLog& log, ReplayPlan& plan) {
  for (const auto& issue : log.issues) {
    std::cerr << "bench_ops: " << issue.str() << "\n";
    if (issue.skipped_entry) {
      ++plan.unparsed_lines;
      std::string where = location(issue.file, issue.line) + (issue.column > 0 ? ":" + std::to_string(issue.column) : "");
      plan.not_run.push_back({log.model, "", -1, 1, where, "not parsed: " + issue.message});
    }
  }
}

std::vector<oplog::OpLog> load_logs(const std::string& path, ReplayPlan& plan) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) throw Error("--oplog " + path + ": no such file or folder");
  std::vector<oplog::OpLog> logs;
  if (std::filesystem::is_directory(path, error)) {
    oplog::OpLogDir dir = oplog::load_oplog_dir(path);
    for (const auto& issue : dir.issues) std::cerr << "bench_ops: " << issue.str() << "\n";
    logs = std::move(dir.logs);
  } else {
    logs.push_back(oplog::load_oplog(path));
    const auto& issues = logs.back().issues;
    if (logs.back().ops.empty() && !issues.empty() && issues.front().line == 0)   // the file itself is unusable
      throw Error("--oplog " + path + ": " + issues.front().message);
  }
  std::size_t operators = 0, lines = 0;
  for (const auto& log : logs) {
    report_issues(log, plan);
    operators += log.ops.size();
    lines += static_cast<std::size_t>(log.lines_total - log.lines_blank);
  }
  if (operators > 0) return logs;
  if (logs.empty()) throw Error("--oplog " + path + ": the folder holds no operator log (*.txt)");
  if (lines == 0) throw Error("--oplog " + path + ": the log is empty");
  throw Error("--oplog " + path + ": no line of the log could be parsed (each is listed above with its reason)");
  return logs;
}

void register_input(RunContext& run, ReplayPlan& plan, const std::string& model, const oplog::OpEntry& entry, int index,
                    CallPlan call_plan, const ReplayOptions& options, double budget_s) {
  const oplog::OpInput& input = entry.inputs[index];
  CaseSetup setup{std::make_shared<const CallPlan>(std::move(call_plan)), options,
                  case_seed(model, entry.qualified(), index), input.count, budget_s};
  for (const auto& backend : plan.backends) {
    ReplayCase replay_case{case_name(model, entry.qualified(), index, backend), model, entry.qualified(),
                           index, backend, input.count};
    // The name's four parts: "Replay/<model>", the operator, the input index, the backend.
    CaseInfo info;
    info.family = "Replay/" + model;
    info.dtype = entry.qualified();
    info.shape = std::to_string(index);
    info.backend = backend;
    if (backend == kEager)
      register_case(run, std::move(info), [setup](CaseContext& ctx) { run_eager(ctx, setup); });
    else
      register_case(run, std::move(info), [setup](CaseContext& ctx) { run_graph(ctx, setup); });
    plan.cases.push_back(std::move(replay_case));
  }
}

// Inputs that cannot fit are refused before anything is allocated: the graph backend keeps a second
// copy of them and each backend its outputs, so twice the inputs must be available.
bool fits_in_memory(const CallPlan& plan, const DeviceInfo& device, const OplogOptions& options, std::string* why) {
  double limit_mb = options.max_input_mb.value_or(device.is_gpu ? 0 : 256);
  if (limit_mb > 0 && plan.input_bytes > limit_mb * 1e6) {
    char text[200];
    std::snprintf(text, sizeof text, "its inputs take %.0f MB, over --oplog_max_input_mb=%.0f%s", plan.input_bytes / 1e6,
                  limit_mb, options.max_input_mb ? "" : " (the CPU default; raise it to replay them)");
    *why = text;
    return false;
  }
  double needed = 2 * plan.input_bytes, available = static_cast<double>(available_memory_bytes(device));
  if (needed <= available) return true;
  char text[160];
  std::snprintf(text, sizeof text, "its inputs need %.2f GB (twice %.2f GB: inputs and a copy), %.2f GB is available on %s",
                needed / 1e9, plan.input_bytes / 1e9, available / 1e9, device.is_gpu ? "the GPU" : "this host");
  *why = text;
  return false;
}

void register_operator(RunContext& run, ReplayPlan& plan, const std::string& model, const std::string& file,
                       const oplog::OpEntry& entry, const ReplayOptions& options, const OplogOptions& oplog_options) {
  const int max_inputs = oplog_options.max_inputs;
  int recorded = static_cast<int>(entry.inputs.size());
  int selected = max_inputs > 0 ? std::min(recorded, max_inputs) : recorded;
  plan.operators.push_back({model, entry.qualified(), recorded, selected});
  std::string why;
  auto op = find_operator(entry, &why);
  if (!op) {
    plan.not_run.push_back({model, entry.qualified(), -1, selected, location(file, entry.line), why});
    return;
  }
  for (int i = 0; i < selected; ++i) {
    auto call_plan = plan_call(*op, entry, entry.inputs[i], options, &why);
    if (call_plan && !fits_in_memory(*call_plan, run.device, oplog_options, &why)) call_plan.reset();
    if (call_plan)
      register_input(run, plan, model, entry, i, std::move(*call_plan), options,
                     oplog_options.case_budget_s.value_or(run.device.is_gpu ? 60 : 10));
    else
      plan.not_run.push_back({model, entry.qualified(), i, 1, location(file, entry.inputs[i].line), why});
  }
}

}  // namespace

std::vector<std::string> replay_backends(const DeviceInfo& device) {
  std::vector<std::string> backends{kEager};
  if (device.is_gpu && detail::graph_backend_built()) backends.push_back(kGraph);
  return backends;
}

ReplayPlan register_replay(RunContext& run, const OplogOptions& options) {
  ReplayPlan plan;
  plan.backends = replay_backends(run.device);
  ReplayOptions replay = replay_options(options, run.torch_device());
  for (const auto& log : load_logs(options.path, plan))
    for (const auto& entry : log.ops) register_operator(run, plan, log.model, log.file, entry, replay, options);
  return plan;
}

}  // namespace opbench::replay
