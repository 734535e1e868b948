// Replay of operator-input logs (replay/): its flags, operator resolution, matching recorded
// values against schemas, input materialization with valid indices, boxed calls, output comparison,
// and the reporter's quantiles, rows and CSV. Runs on CPU.
#include <ATen/ops/arange.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/full.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>

#include <optional>
#include <sstream>

#include "cli.h"
#include "opbench/gbench_compat.h"
#include "replay_flags.h"
#include "replay/index_rules.h"
#include "replay/oplog/oplog.h"
#include "replay/operator_call.h"
#include "replay/reporter.h"
#include "replay/stacks.h"

namespace opbench::replay {
namespace {

// One operator entry parsed from log text, e.g. entry("aten.add.Tensor", "((T([2], f32), ...), {})").
oplog::OpEntry entry(const std::string& op, const std::string& input) {
  oplog::OpLog log = oplog::parse_oplog("Operator: " + op + "\ncnt: 1, " + input + "\n", "t.txt");
  EXPECT_TRUE(log.issues.empty()) << log.issues.front().str();
  return log.ops.at(0);
}

struct Planned {
  oplog::OpEntry entry;
  std::optional<CallPlan> plan;
  std::string why;
};

Planned plan_for(const std::string& op, const std::string& input, ReplayOptions options = {}) {
  Planned out{entry(op, input), std::nullopt, ""};
  auto handle = find_operator(out.entry, &out.why);
  if (handle) out.plan = plan_call(*handle, out.entry, out.entry.inputs.at(0), options, &out.why);
  return out;
}

torch::jit::Stack stack_for(const std::string& op, const std::string& input, ReplayOptions options = {}) {
  Planned p = plan_for(op, input, options);
  if (!p.plan) throw std::runtime_error(op + ": " + p.why);
  return build_stack(*p.plan, options, 7);
}

// bench_ops' command line as main parses it: replay's flags into *oplog, then their check.
CliOptions parse_with_replay(const std::vector<std::string>& args, std::optional<OplogOptions>& oplog) {
  CliOptions cli = parse_cli(args, [&](const std::vector<std::string>& all, std::size_t& i) {
    return parse_replay_flag(all, i, oplog);
  });
  if (oplog) check_replay_flags(*oplog, cli.shard.has_value());
  return cli;
}

TEST(ReplayFlags, AreTakenBesideTheSweepsFlagsAndCheckedTogether) {
  std::optional<OplogOptions> oplog;
  CliOptions cli = parse_with_replay({"b", "--oplog", "logs/", "--oplog_dtype=bf16", "--oplog_max_inputs=3",
                                      "--channels_last", "--output", "r.csv", "--benchmark_list_tests"}, oplog);
  ASSERT_TRUE(oplog.has_value());
  EXPECT_EQ(oplog->path, "logs/");
  EXPECT_EQ(oplog->dtype.value_or(""), "bf16");
  EXPECT_EQ(oplog->max_inputs, 3);
  EXPECT_TRUE(oplog->channels_last);
  EXPECT_EQ(cli.output.value_or(""), "r.csv");
  EXPECT_EQ(cli.passthrough, (std::vector<std::string>{"b", "--benchmark_list_tests"}));
  std::optional<OplogOptions> none, without_log, bad_dtype, sharded;
  parse_with_replay({"b"}, none);
  EXPECT_FALSE(none.has_value());
  EXPECT_THROW(parse_with_replay({"b", "--oplog_max_inputs=3"}, without_log), std::invalid_argument);
  EXPECT_THROW(parse_with_replay({"b", "--oplog=x", "--oplog_dtype=f64"}, bad_dtype), std::invalid_argument);
  EXPECT_THROW(parse_with_replay({"b", "--oplog=x", "--opbench_shard=0/2"}, sharded), std::invalid_argument);
}

TEST(ReplayFlags, HelpListsEveryFlagTheParserTakes) {
  const std::string help = cli_help(replay_help());
  for (const char* flag : {"--oplog", "--oplog_dtype", "--oplog_max_inputs", "--channels_last", "--oplog_case_budget_s",
                           "--oplog_max_input_mb"}) {
    std::vector<std::string> args{flag, "1"};
    std::size_t i = 0;
    std::optional<OplogOptions> oplog;
    if (std::string(flag) == "--oplog_dtype") args[1] = "f16";
    EXPECT_TRUE(parse_replay_flag(args, i, oplog)) << flag;
    EXPECT_NE(help.find(std::string("\n  ") + flag), std::string::npos) << flag;
  }
}

TEST(ReplayResolve, FindsOverloadsAndDefaultMeansTheEmptyOverload) {
  std::string why;
  auto add = find_operator(entry("aten.add.Tensor", "((T([2], f32), T([2], f32)), {})"), &why);
  ASSERT_TRUE(add);
  EXPECT_EQ(add->schema().overload_name(), "Tensor");
  auto mm = find_operator(entry("aten.mm.default", "((T([2, 2], f32), T([2, 2], f32)), {})"), &why);
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->schema().overload_name(), "");
  EXPECT_FALSE(find_operator(entry("aten.no_such_op.default", "((1,), {})"), &why));
  EXPECT_NE(why.find("no operator aten::no_such_op in this LibTorch"), std::string::npos) << why;
}

TEST(ReplayPlan, MatchesPositionalKwargsAndDefaults) {
  Planned p = plan_for("aten._to_copy.default", "((T([4, 1, 1, 8], f32),), {'dtype': f16})");
  ASSERT_TRUE(p.plan) << p.why;
  torch::jit::Stack stack = build_stack(*p.plan, {}, 1);
  const auto& schema = p.plan->op.schema();
  ASSERT_EQ(stack.size(), schema.arguments().size());
  EXPECT_EQ(stack[*schema.argumentIndexWithName("dtype")].toScalarType(), c10::kHalf);
  EXPECT_TRUE(stack[*schema.argumentIndexWithName("layout")].isNone());   // schema default
  torch::jit::Stack out = call(*p.plan, stack);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].toTensor().scalar_type(), c10::kHalf);
}

TEST(ReplayPlan, MapsSymbolsDevicesIntListsAndAliases) {
  auto stack = stack_for("aten.new_zeros.default",
                         "((T([4], f32), [2, 3]), {'dtype': f32, 'layout': torch.strided, 'device': 'cuda', "
                         "'pin_memory': False})");
  EXPECT_EQ(stack[1].toIntVector(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(stack[3].toInt(), static_cast<int64_t>(c10::kStrided));
  EXPECT_EQ(stack[4].toDevice(), c10::Device(c10::kCPU));   // the recorded device is the replay's
  Planned sum = plan_for("aten.sum.SymInt", "((T([6, 4], f32), [0], True), {})");
  ASSERT_TRUE(sum.plan) << sum.why;
  EXPECT_EQ(sum.plan->op.schema().overload_name(), "dim_IntList");
  auto out = call(*sum.plan, build_stack(*sum.plan, {}, 1));
  EXPECT_EQ(out[0].toTensor().sizes(), (c10::IntArrayRef{1, 4}));
}

TEST(ReplayPlan, PythonNumberForATensorIsAWrappedScalar) {
  Planned div = plan_for("aten.div.Tensor", "((T([4, 8], f16), 8.0), {})");
  ASSERT_TRUE(div.plan) << div.why;
  auto stack = build_stack(*div.plan, {}, 1);
  EXPECT_TRUE(stack[1].toTensor().unsafeGetTensorImpl()->is_wrapped_number());
  auto out = call(*div.plan, stack);
  EXPECT_EQ(out[0].toTensor().scalar_type(), c10::kHalf);   // f16 / 8.0 stays f16, as in Python
}

TEST(ReplayPlan, RejectsWhatCannotBeMappedWithTheArgument) {
  Planned bad = plan_for("aten.add.Tensor", "((T([4], f32), 'x'), {})");
  EXPECT_FALSE(bad.plan);
  EXPECT_NE(bad.why.find("argument 'other' (Tensor): expected a Tensor, got a str"), std::string::npos) << bad.why;
  Planned kw = plan_for("aten.add.Tensor", "((T([4], f32), T([4], f32)), {'beta': 2})");
  EXPECT_FALSE(kw.plan);
  EXPECT_NE(kw.why.find("no argument 'beta'"), std::string::npos) << kw.why;
  Planned many = plan_for("aten.relu.default", "((T([4], f32), 1, 2), {})");
  EXPECT_FALSE(many.plan);
  EXPECT_NE(many.why.find("3 positional arguments, the schema takes 1"), std::string::npos) << many.why;
  Planned missing = plan_for("aten.mm.default", "((T([4, 4], f32),), {})");
  EXPECT_FALSE(missing.plan);
  EXPECT_NE(missing.why.find("argument 'mat2' is missing"), std::string::npos) << missing.why;
}

TEST(ReplayBuild, KeepsRecordedStridesDtypesAndChannelsLast) {
  auto stack = stack_for("aten.addmm.default", "((T([8], f16), T([16, 12], f16), T([12, 8], f16, stride=(1, 12))), {})");
  at::Tensor mat2 = stack[2].toTensor();
  EXPECT_EQ(mat2.strides(), (c10::IntArrayRef{1, 12}));
  EXPECT_EQ(mat2.scalar_type(), c10::kHalf);
  ReplayOptions bf16;
  bf16.dtype = c10::kBFloat16;
  bf16.channels_last = true;
  auto recast = stack_for("aten.add.Tensor", "((T([2, 3, 4, 5], f16), T([2, 3, 4, 5], f32)), {})", bf16);
  EXPECT_EQ(recast[0].toTensor().scalar_type(), c10::kBFloat16);   // f16 becomes --oplog_dtype
  EXPECT_EQ(recast[1].toTensor().scalar_type(), c10::kFloat);      // f32 stays, as the seed does
  EXPECT_TRUE(recast[0].toTensor().is_contiguous(c10::MemoryFormat::ChannelsLast));
}

TEST(ReplayBuild, RandomButDeterministicPerSeed) {
  Planned p = plan_for("aten.relu.default", "((T([64], f32),), {})");
  ASSERT_TRUE(p.plan);
  at::Tensor a = build_stack(*p.plan, {}, 3)[0].toTensor();
  at::Tensor b = build_stack(*p.plan, {}, 3)[0].toTensor();
  at::Tensor c = build_stack(*p.plan, {}, 4)[0].toTensor();
  EXPECT_TRUE(at::equal(a, b));
  EXPECT_FALSE(at::equal(a, c));
  EXPECT_GT(a.abs().sum().item<double>(), 0);   // never zeros
}

TEST(ReplayIndices, EmbeddingIndicesAreValidAlsoWhenExpanded) {
  auto stack = stack_for("aten.embedding.default", "((T([3, 16], f32), T([64, 128], i64, stride=(0, 1))), {})");
  at::Tensor indices = stack[1].toTensor();
  EXPECT_EQ(indices.strides(), (c10::IntArrayRef{0, 1}));
  EXPECT_GE(indices.min().item<int64_t>(), 0);
  EXPECT_LT(indices.max().item<int64_t>(), 3);
  Planned p = plan_for("aten.embedding.default", "((T([3, 16], f32), T([64, 128], i64, stride=(0, 1))), {})");
  auto out = call(*p.plan, stack);
  EXPECT_EQ(out[0].toTensor().sizes(), (c10::IntArrayRef{64, 128, 16}));
}

TEST(ReplayIndices, NllLossGatherEmbeddingBackwardAndMaxPoolIndices) {
  auto nll = stack_for("aten.nll_loss_forward.default", "((T([32, 5], f32), T([32], i64), None, 1, -100), {})");
  EXPECT_LT(nll[1].toTensor().max().item<int64_t>(), 5);
  auto gather = stack_for("aten.gather.default", "((T([8, 3], f32), -1, T([8, 40], i64)), {})");
  EXPECT_LT(gather[2].toTensor().max().item<int64_t>(), 3);
  auto backward = stack_for("aten.embedding_dense_backward.default",
                            "((T([4, 8, 16], f32), T([4, 8], i64), 2, -1, False), {})");
  EXPECT_LT(backward[1].toTensor().max().item<int64_t>(), 2);
  auto pool = stack_for("aten.max_pool2d_with_indices_backward.default",
                        "((T([1, 2, 4, 4], f32), T([1, 2, 3, 3], f32), [2, 2], [2, 2], [0, 0], [1, 1], False, "
                        "T([1, 2, 4, 4], i64)), {})");
  EXPECT_LT(pool[7].toTensor().max().item<int64_t>(), 9);
  for (const auto& rule : index_rules()) EXPECT_FALSE(rule.bound.empty()) << rule.op;
}

TEST(ReplayIndices, EmptyBoundIsAnErrorNotAnInvalidCall) {
  Planned p = plan_for("aten.embedding.default", "((T([0, 16], f32), T([4], i64)), {})");
  ASSERT_TRUE(p.plan) << p.why;
  EXPECT_THROW(build_stack(*p.plan, {}, 1), std::exception);
}

TEST(ReplayStack, CloneKeepsLayoutAndOwnsStorage) {
  auto stack = stack_for("aten.embedding.default", "((T([3, 16], f32), T([4, 8], i64, stride=(0, 1))), {})");
  auto copy = clone_stack(stack);
  at::Tensor a = stack[1].toTensor(), b = copy[1].toTensor();
  EXPECT_EQ(b.strides(), a.strides());
  EXPECT_TRUE(at::equal(a, b));
  EXPECT_NE(a.data_ptr(), b.data_ptr());
  EXPECT_DOUBLE_EQ(tensor_bytes(stack), (3 * 16) * 4 + (4 * 8) * 8);
}

TEST(ReplayCompare, EqualWithinToleranceElseNamesTheOutput) {
  at::Tensor x = at::randn({16});
  EXPECT_EQ(compare_outputs({x}, {x.clone()}), "");
  EXPECT_EQ(compare_outputs({x, c10::IValue()}, {x.add(1e-7), c10::IValue()}), "");
  std::string diff = compare_outputs({x}, {x.add(1)});
  EXPECT_NE(diff.find("output 0: max |error| 1"), std::string::npos) << diff;
  at::Tensor nan = at::full({2}, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(compare_outputs({nan}, {nan.clone()}), "");
  at::Tensor ints = at::arange(4);
  EXPECT_NE(compare_outputs({ints}, {ints.add(1)}), "");
  EXPECT_NE(compare_outputs({x}, {x, x}), "");
}

// ---- reporter ------------------------------------------------------------------------------------

TEST(ReplayQuantile, LinearInterpolationAsNumpy) {
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.2), 1.6);   // numpy.quantile([1,2,3,4], 0.2)
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.8), 3.4);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.8), 7);
}

TEST(ReplayFilter, AsGoogleBenchmarkSelects) {
  std::string name = case_name("m", "aten.add.Tensor", 0, "eager");
  EXPECT_EQ(name, "Replay/m/aten.add.Tensor/0/eager");
  EXPECT_TRUE(filter_selects("", name));
  EXPECT_TRUE(filter_selects("all", name));
  EXPECT_TRUE(filter_selects("aten.add", name));
  EXPECT_FALSE(filter_selects("aten.mm", name));
  EXPECT_FALSE(filter_selects("-aten.add", name));
  EXPECT_TRUE(filter_selects("eager(/iterations:1)?(/manual_time)?$", name));
}

benchmark::BenchmarkReporter::Run run_of(const std::string& name, double seconds) {
  benchmark::BenchmarkReporter::Run run;
  run.run_name.function_name = name;
  run.iterations = 1;
  run.real_accumulated_time = seconds;
  return run;
}

TEST(ReplayReporterTest, SpeedupQuantilesAbsTimesWeightsAndNotRun) {
  ReplayPlan plan;
  plan.backends = {kEager, kGraph};
  plan.operators = {{"m", "aten.add.Tensor", 4, 3}, {"m", "aten.nope.default", 1, 1}};
  for (int i = 0; i < 2; ++i)
    for (const char* backend : {kEager, kGraph})
      plan.cases.push_back({case_name("m", "aten.add.Tensor", i, backend), "m", "aten.add.Tensor", i, backend, i + 1});
  plan.not_run = {{"m", "aten.add.Tensor", 2, 1, "m.txt:9", "argument 'other': expected a Tensor"},
                  {"m", "aten.nope.default", -1, 1, "m.txt:11", "no operator aten::nope"}};
  std::ostringstream summary;
  ReplayReporter reporter(plan, "", "", &summary, nullptr, false);
  EXPECT_EQ(reporter.selected_cases(), 4);
  reporter.ReportContext({});
  reporter.ReportRuns({run_of(plan.cases[0].name, 4e-6)});
  auto graph0 = run_of(plan.cases[1].name, 2e-6);
  graph0.counters["accuracy_ok"] = 1;
  reporter.ReportRuns({graph0});
  reporter.ReportRuns({run_of(plan.cases[2].name, 9e-6)});
  auto graph1 = run_of(plan.cases[3].name, 3e-6);
  graph1.counters["accuracy_ok"] = 0;
  graph1.report_label = "timer=graph cache=cold mismatch: output 0: max |error| 1";
  reporter.ReportRuns({graph1});
  reporter.Finalize();

  auto rows = reporter.rows();
  ASSERT_EQ(rows.size(), 2u);
  const ReplayRow& add = rows[0];
  EXPECT_EQ(add.run, 2);
  EXPECT_EQ(add.weight, 3);
  const auto& graph = add.backends.at(kGraph);
  EXPECT_DOUBLE_EQ(*graph.q20, 2.0 + 0.2 * (3.0 - 2.0));   // speedups {2, 3}
  EXPECT_DOUBLE_EQ(*graph.q50, 2.5);
  EXPECT_DOUBLE_EQ(*add.backends.at(kEager).median_seconds, 6.5e-6);
  EXPECT_DOUBLE_EQ(*add.backends.at(kEager).weighted_seconds, 1 * 4e-6 + 2 * 9e-6);
  EXPECT_EQ(add.accuracy, "1 of 2 mismatch");
  EXPECT_NE(add.status.find("input 2 not run: argument 'other'"), std::string::npos) << add.status;
  EXPECT_NE(rows[1].status.find("not run: no operator aten::nope"), std::string::npos);

  auto header = ReplayReporter::csv_header(plan.backends);
  std::vector<std::string> seed_part(header.begin(), header.begin() + 7);
  EXPECT_EQ(seed_part, (std::vector<std::string>{"operator", "graph_speedup_p20", "graph_speedup_p50",
                                                 "graph_speedup_p80", "elapsed_s", "eager_median_s", "graph_median_s"}));
  auto csv = reporter.csv_rows();
  ASSERT_EQ(csv.size(), 2u);
  EXPECT_EQ(csv[0].size(), header.size());
  EXPECT_EQ(csv[0][2], "2.500000");
  EXPECT_EQ(csv[1][1], "");   // an operator that did not run has no numbers
  EXPECT_NE(summary.str().find("Not run (2)"), std::string::npos) << summary.str();
  EXPECT_NE(summary.str().find("Mismatch: Replay/m/aten.add.Tensor/1/graph"), std::string::npos);
}

TEST(ReplayReporterTest, FilterLimitsTheCasesAndOperators) {
  ReplayPlan plan;
  plan.backends = {kEager};
  plan.operators = {{"m", "aten.add.Tensor", 1, 1}, {"m", "aten.mm.default", 1, 1}};
  plan.cases = {{case_name("m", "aten.add.Tensor", 0, kEager), "m", "aten.add.Tensor", 0, kEager, 1},
                {case_name("m", "aten.mm.default", 0, kEager), "m", "aten.mm.default", 0, kEager, 1}};
  ReplayReporter reporter(plan, "aten.mm", "", nullptr, nullptr, false);
  EXPECT_EQ(reporter.selected_cases(), 1);
  auto failed = run_of(plan.cases[1].name, 0);
  gbench::mark_skipped(failed, "boom");
  reporter.ReportContext({});
  reporter.ReportRuns({failed});
  reporter.Finalize();
  auto rows = reporter.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].op, "aten.mm.default");
  EXPECT_EQ(rows[0].run, 0);
  EXPECT_NE(rows[0].status.find("1 case failed (eager: boom)"), std::string::npos) << rows[0].status;
}

}  // namespace
}  // namespace opbench::replay
