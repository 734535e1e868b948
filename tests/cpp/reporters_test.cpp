// The experiment reporter's actual output: CSV and dashboard JSON against golden files, header repair
// and append, bad and missing targets, a case's own timer in its row, the console title's wrapping,
// the name and failure handling of the forwarding reporter.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "benchmark_names.h"
#include "compact_console.h"
#include "csv_format.h"
#include "dashboard_json.h"
#include "experiment_reporter.h"
#include "experiment_summary.h"
#include "forwarding_reporter.h"
#include "line_wrap.h"
#include "opbench/family.h"
#include "opbench/check.h"
#include "opbench/gbench_compat.h"
#include "opbench/targets.h"
#include "row_csv.h"
#include "row_file_append.h"
#include "test_files.h"

namespace opbench {
namespace {

namespace fs = std::filesystem;
using BRun = benchmark::BenchmarkReporter::Run;

using opbench::testing::read_text;
using opbench::testing::remove_tree;
using opbench::testing::write_text;

// Compares with tests/cpp/golden/<name>; OPBENCH_UPDATE_GOLDEN=1 rewrites the golden file instead.
void expect_golden(const std::string& actual, const std::string& name) {
  fs::path golden = fs::path(OPBENCH_SOURCE_DIR) / "tests/cpp/golden" / name;
  if (std::getenv("OPBENCH_UPDATE_GOLDEN")) write_text(golden, actual);
  EXPECT_EQ(actual, read_text(golden)) << "differs from " << golden;
}

DeviceInfo h200_device() {
  DeviceInfo device;
  device.is_gpu = true;
  device.name = device.arch_name = "NVIDIA H200";
  device.cpu_count = 16;
  device.memory_bytes = 150'000'000'000;
  device.peaks = lookup_datasheet("NVIDIA H200");
  device.id = "cuda:0";
  return device;
}

RunInfo h200_info() {
  RunInfo info;
  info.device = h200_device();
  info.torch_version = "2.11.0";
  info.cuda_version = "13.0";
  info.opbench_sha = "0123456789ab";
  info.timer = "events";
  info.cache = "cold";
  info.host_cpu = "Test CPU";
  info.host_memory_gb = 128;
  info.run_id = "a1b2c3d4e5f6";
  info.timestamp = "2026-11-23T12:00:00Z";
  return info;
}

// Every case the families register on an H200, as bench_ops would have registered them there.
RunContext& h200_run() {
  static DeviceInfo device = h200_device();
  static RunContext run = [] {
    RunContext r(device);
    for (const auto& family : registered_families())
      for (auto& info : cases_of(family, device)) r.cases.add(std::move(info));
    return r;
  }();
  run.ceilings = {};
  run.ceilings.copy.record(2.0 * (int64_t{1} << 30), 4000);   // as the Ceiling cases would have recorded them
  run.ceilings.gemm_tflops = 800;
  return run;
}

// Records in h200_run() the result CaseContext::time keeps for `name` timed at `seconds` (by `timer`
// with `cache`), and returns the run Google Benchmark reports for it.
BRun timed_run(const std::string& name, double seconds, bool throttled = false, TimerKind timer = TimerKind::kEvents,
               std::optional<CacheMode> cache = CacheMode::kCold, std::map<std::string, double> counters = {}) {
  RunContext& run = h200_run();
  const CaseInfo* info = run.cases.find(name);
  EXPECT_NE(info, nullptr) << name;
  CaseResult& result = run.results.add(name);
  result = timed_result(info->work, seconds, timer, cache, run.device.peaks, run.ceilings);
  result.throttled = throttled;
  result.counters = std::move(counters);
  BRun r;
  r.run_name.function_name = name;
  r.run_type = BRun::RT_Iteration;
  r.iterations = 1;
  r.real_accumulated_time = seconds;
  return r;
}

// A run of `name` whose time makes its registered work reach `gbps` (or `tflops` when given).
BRun case_run(const std::string& name, double gbps, double tflops = 0, bool throttled = false) {
  const CaseInfo* info = h200_run().cases.find(name);
  EXPECT_NE(info, nullptr) << name;
  return timed_run(name, tflops > 0 ? info->work.flops / (tflops * 1e12)
                                    : (info->work.bytes_read + info->work.bytes_written) / (gbps * 1e9),
                   throttled);
}

BRun failed_run(const std::string& name, const std::string& message) {
  h200_run().results.add(name).failure = message;
  BRun run;
  run.run_name.function_name = name;
  run.run_type = BRun::RT_Iteration;
  gbench::mark_skipped(run, message);
  return run;
}

class Reporters : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("opbench_reporters_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    remove_tree(dir_);
    write_text(dir_ / "targets/h200.json", R"json({"devices": ["NVIDIA H200"], "rule": "test rule",
      "targets": [{"experiment": "layer_norm", "metric": "memory_bandwidth(GB/s)", "dtype": "bfloat16",
                   "backend": "aten", "target": 2000},
                  {"experiment": "mlp_layer_norm_gelu", "metric": "flops_utilization", "dtype": "bfloat16",
                   "backend": "aten", "target": 0.5}]})json");
  }
  void TearDown() override { remove_tree(dir_); }

  // Feeds runs through a reporter writing `csv`, as bench_ops does, and returns the summary text.
  std::string report(const std::vector<BRun>& runs, const fs::path& csv) {
    std::ostringstream summary;
    std::set<std::string> selected;   // as bench_ops selects them: every case the runs name
    for (const auto& run : runs) selected.insert(run.run_name.function_name);
    ExperimentReporter reporter(h200_run(), h200_info(), load_targets((dir_ / "targets").string()),
                                RowFile(csv.string()), selected, &summary);
    for (const auto& run : runs) reporter.ReportRuns({run});
    reporter.Finalize();
    return summary.str();
  }

  std::vector<BRun> sweep() const {
    return {case_run("LayerNorm/bf16/4096x1024/aten", 1800), case_run("LayerNorm/bf16/4096x4096/aten", 2200),
            case_run("LayerNorm/fp16/4096x1024/aten", 1500), failed_run("LayerNorm/fp16/4096x4096/aten", "CUDA error"),
            case_run("MLP/bf16/4096/aten", 3000, 98.9), case_run("MLP/bf16/8192/aten", 3500, 296.7)};
  }

  fs::path dir_;
};

TEST_F(Reporters, CsvJsonAndSummaryMatchGolden) {
  fs::path csv = dir_ / "out/nested/gpt_fast_benchmark.csv";
  std::string summary = report(sweep(), csv);
  expect_golden(read_text(csv), "sweep.csv");
  expect_golden(read_text(dir_ / "out/nested/gpt_fast_benchmark.json"), "sweep.json");
  expect_golden(summary, "sweep_summary.txt");
  std::istringstream lines(summary);   // a terminal's width: the long status goes below its row
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), kConsoleColumns) << line;
}

TEST_F(Reporters, MarkdownSummaryMatchesGolden) {
  ExperimentReporter reporter(h200_run(), h200_info(), load_targets((dir_ / "targets").string()), std::nullopt,
                              {}, nullptr);
  for (const auto& run : sweep()) reporter.ReportRuns({run});
  std::ostringstream markdown;
  print_markdown_summary(markdown, reporter.rows(), h200_info(), h200_run().ceilings);
  expect_golden(markdown.str(), "sweep_summary.md");
}

TEST_F(Reporters, RowsCarryTheArithmetic) {
  ExperimentReporter reporter(h200_run(), h200_info(), load_targets((dir_ / "targets").string()), std::nullopt,
                              {}, nullptr);
  for (const auto& run : sweep()) reporter.ReportRuns({run});
  auto rows = reporter.rows();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "layer_norm");
  EXPECT_NEAR(*rows[0].actual, 2000, 1e-9);             // mean of 1800 and 2200
  EXPECT_NEAR(*rows[0].pct_of_target, 100, 1e-9);
  EXPECT_NEAR(*rows[0].pct_of_peak, 100 * 2000.0 / 4800, 1e-9);
  EXPECT_NEAR(*rows[0].pct_of_ceiling, 50, 1e-9);       // of the 4000 GB/s copy (R = W: the copy bound)
  EXPECT_EQ(rows[0].status, "meets target");
  EXPECT_EQ(rows[1].dtype, "float16");
  EXPECT_EQ(rows[1].status, "incomplete: 1 of 2 cases failed");
  EXPECT_FALSE(rows[1].target.has_value());
  EXPECT_EQ(rows[2].metric, "flops_utilization");
  EXPECT_NEAR(*rows[2].actual, (98.9 + 296.7) / 2 / 989, 1e-12);   // achieved / peak, not the seed's formula
  EXPECT_NEAR(*rows[2].pct_of_ceiling, 100 * (98.9 + 296.7) / 2 / 800, 1e-9);
  EXPECT_EQ(rows[2].status, "below target");
}

// A case that lost over 5% of its samples to low clocks is flagged on its console line and in its row;
// one that lost fewer is not.
TEST_F(Reporters, ThrottledCasesAreFlaggedInTheConsoleAndTheirRows) {
  BRun hot = case_run("LayerNorm/bf16/4096x1024/aten", 1800, 0, /*throttled=*/true);
  BRun fine = case_run("LayerNorm/bf16/4096x4096/aten", 2200);
  hot.counters["samples"] = 100;
  hot.counters["throttled_samples"] = 20;
  fine.counters["samples"] = 100;
  fine.counters["throttled_samples"] = 5;
  std::ostringstream console;
  CompactConsoleReporter compact("title", true);
  compact.SetOutputStream(&console);
  compact.SetErrorStream(&console);
  compact.ReportRuns({hot, fine});
  EXPECT_NE(console.str().find("THROTTLED(20/120)"), std::string::npos) << console.str();
  EXPECT_EQ(console.str().find("THROTTLED(5/105)"), std::string::npos) << console.str();
  ExperimentReporter reporter(h200_run(), h200_info(), load_targets((dir_ / "targets").string()), std::nullopt,
                              {}, nullptr);
  reporter.ReportRuns({hot});
  reporter.ReportRuns({fine});
  EXPECT_EQ(reporter.rows()[0].status, "meets target; THROTTLED: 1 case(s) lost samples to low clocks");
}

// The dashboard record of each row `reporter` wrote to `csv`'s sidecar, by row name and backend.
std::map<std::string, nlohmann::json> records_by_backend(const fs::path& csv) {
  std::map<std::string, nlohmann::json> records;
  std::istringstream lines(read_text(csv.parent_path() / (csv.stem().string() + ".json")));
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json record = nlohmann::json::parse(line);
    records[record["model"]["backend"].get<std::string>()] = record;
  }
  return records;
}

// A case timed with its own timer (TimingRequest::timer = kHost, as the decode models and collectives
// ask) names that timer in its row and dashboard record, while the run's timer is events: cases
// registered and run through Google Benchmark as bench_ops runs them. Backend "own": one case that
// asks for the host timer. Backend "mixed": that and a case on the run's timer (events on a GPU, where
// the row names both; the host clock on a CPU, where every case is timed so).
TEST_F(Reporters, ACasesOwnTimerReachesItsRowAndDashboardRecord) {
  const DeviceInfo& device = current_device();
  RunOptions options;
  options.gpu_timer = TimerKind::kEvents;
  options.cache = CacheMode::kCold;
  options.rule = StoppingRule{.warmup_iterations = 0, .min_samples = 3, .max_samples = 3, .max_noise = 1,
                              .max_seconds = 1};
  static RunContext run(device, options);   // outlives the registered cases
  const std::vector<std::string> names = {"TimerTest/bf16/1/own", "TimerTest/bf16/1/mixed", "TimerTest/bf16/2/mixed"};
  static bool registered = [&] {
    const std::pair<const char*, const char*> shape_and_backend[] = {{"1", "own"}, {"1", "mixed"}, {"2", "mixed"}};
    for (const auto& [shape, backend] : shape_and_backend) {
      CaseInfo info;
      info.family = "TimerTest";
      info.dtype = "bf16";
      info.shape = shape;
      info.backend = backend;
      info.scalar_type = c10::kBFloat16;
      info.work.bytes_read = 1e6;
      info.experiments = {Experiment{.name = "timer_test"}};
      const bool own_timer = info.shape == "1";
      register_case(run, info, [own_timer](CaseContext& ctx) {
        TimingRequest request;
        if (own_timer) request.timer = TimerKind::kHost;
        ctx.time([] { std::this_thread::sleep_for(std::chrono::microseconds(50)); }, request);
      });
    }
    return true;
  }();
  (void)registered;
  RunInfo info = h200_info();
  info.device = device;
  ASSERT_EQ(info.timer, "events");
  ASSERT_EQ(info.cache, "cold");
  fs::path csv = dir_ / "timers.csv";
  ExperimentReporter reporter(run, info, {}, RowFile(csv.string()), {names.begin(), names.end()}, nullptr);
  benchmark::RunSpecifiedBenchmarks(&reporter, exact_names_filter(names));
  reporter.Finalize();

  auto rows = reporter.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].backend, "own");
  EXPECT_EQ(rows[0].status, "no target");
  EXPECT_EQ(rows[0].timer, "host");
  EXPECT_EQ(rows[0].cache, "none");   // the host timer flushes nothing
  EXPECT_EQ(rows[1].backend, "mixed");
  EXPECT_EQ(rows[1].cases, 2);
  EXPECT_EQ(rows[1].timer, device.is_gpu ? "events,host" : "host");
  EXPECT_EQ(rows[1].cache, device.is_gpu ? "cold,none" : "none");
  auto records = records_by_backend(csv);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records["own"]["metric"]["extra_info"]["timer"], "host");
  EXPECT_EQ(records["own"]["metric"]["extra_info"]["cache"], "none");
  EXPECT_EQ(records["mixed"]["metric"]["extra_info"]["timer"], rows[1].timer);
  EXPECT_EQ(records["mixed"]["metric"]["extra_info"]["cache"], rows[1].cache);
}

// A model case feeds seven rows (tok/s and GB/s from its time; startup, the two token latencies, power
// and energy per token from its counters): all seven are written as soon as it reports, each naming the
// host timer that timed its generations although the run's timer is events.
TEST_F(Reporters, AModelCaseWritesItsSevenRowsAtOnceWithItsHostTimer) {
  const CaseInfo* model = nullptr;
  for (const CaseInfo* info : h200_run().cases.all())
    if (!model && info->family == "Llama2" && info->dtype == "bf16" && info->backend == "graph") model = info;
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->experiments.size(), 7u);
  fs::path csv = dir_ / "model.csv";
  ExperimentReporter reporter(h200_run(), h200_info(), {}, RowFile(csv.string()), {model->name()}, nullptr);
  reporter.ReportRuns({timed_run(model->name(), 2.0, false, TimerKind::kHost, std::nullopt,
                                 {{"startup_s", 12.5}, {"token_p50_ms", 9.75}, {"token_p90_ms", 10.25},
                                  {"avg_power_W", 480.0}, {"J/token", 4.75}})});
  auto rows = read_csv(csv.string());
  ASSERT_EQ(rows.size(), 8u);                            // the header and seven rows, before Finalize
  EXPECT_EQ(rows[1][1], "token_per_sec");
  EXPECT_EQ(rows[1][3], "100.000000");                   // 200 tokens in 2 s
  EXPECT_EQ(rows[3][1], "startup_time(s)");
  EXPECT_EQ(rows[3][3], "12.500000");
  EXPECT_EQ(rows[5][3], "10.250000");
  EXPECT_EQ(rows[6][1], "power(W)");
  EXPECT_EQ(rows[6][3], "480.000000");
  EXPECT_EQ(rows[7][1], "energy_per_token(J)");
  EXPECT_EQ(rows[7][3], "4.750000");
  std::istringstream records(read_text(dir_ / "model.json"));
  int host = 0;
  for (std::string line; std::getline(records, line);) {
    auto extra = nlohmann::json::parse(line)["metric"]["extra_info"];
    host += extra["timer"] == "host" && extra["cache"] == "none";
  }
  EXPECT_EQ(host, 7);
}

// A row's timer and cache are those its cases recorded, not the run's: a model row whose cases the
// host clock timed says "host" in its dashboard record although the run's timer is events.
TEST(Rows, NameTheTimerAndCacheTheirCasesRecorded) {
  Experiment experiment{.name = "model", .metric = Metric::kTokensPerSecond, .is_model = true};
  Work work;
  work.bytes_read = 1e9;
  work.items = 100;
  CaseResult host = timed_result(work, 0.5, TimerKind::kHost, std::nullopt, std::nullopt, {});
  CaseResult graph = timed_result(work, 0.25, TimerKind::kGraph, CacheMode::kWarm, std::nullopt, {});
  CaseResult failed;
  failed.failure = "out of memory";
  ExperimentCases cases{experiment, "bf16", "graph", {{"M/bf16/1/graph", {host, host}}}};
  ExperimentRow row = experiment_row(cases, h200_device(), 1, {});
  EXPECT_EQ(row.timer, "host");
  EXPECT_EQ(row.cache, "none");
  EXPECT_DOUBLE_EQ(*row.actual, 200);   // 100 tokens in 0.5 s
  nlohmann::json record = dashboard_record(row, h200_info());
  EXPECT_EQ(record["metric"]["extra_info"]["timer"], "host");
  EXPECT_EQ(record["metric"]["extra_info"]["cache"], "none");
  cases.results = {{"M/bf16/1/graph", {host}}, {"M/bf16/2/graph", {graph, failed}}};
  row = experiment_row(cases, h200_device(), 1, {});
  EXPECT_EQ(row.timer, "graph,host");   // sorted, whatever order the cases ran in
  EXPECT_EQ(row.cache, "none,warm");
  EXPECT_EQ(row.failed_cases, 1);       // the failed repetition names no timer
  cases.results = {{"M/bf16/1/graph", {failed}}};
  row = experiment_row(cases, h200_device(), 1, {});
  EXPECT_EQ(row.timer, "none");
  EXPECT_EQ(row.status, "incomplete: 1 of 1 cases failed");
}

// A bound_fraction target is that share of the row's bound, the actual at 100% of the measured ceiling;
// without a ceiling share the row has no target and says why.
TEST(Rows, ABoundFractionTargetFollowsTheMeasuredCeiling) {
  Experiment experiment{.name = "model", .metric = Metric::kTokensPerSecond, .is_model = true};
  CaseResult result;
  result.seconds = 1;
  result.figures.items_per_second = 180;
  result.figures.bandwidth_of_ceiling = 0.8;   // the bound: 225 tok/s
  ExperimentCases cases{experiment, "bf16", "graph", {{"M/bf16/1/graph", {result}}}};
  Target target{"model", "token_per_sec", "bfloat16", "graph"};
  target.bound_fraction = 0.9;
  TargetFile file{"t.json", {h200_device().name}, "r", {target}};
  ExperimentRow row = experiment_row(cases, h200_device(), 1, {file});
  ASSERT_TRUE(row.target);
  EXPECT_DOUBLE_EQ(*row.target, 0.9 * 225);   // 202.5: 180 misses it
  EXPECT_EQ(row.status, "below target");
  result.figures.bandwidth_of_ceiling.reset();
  cases.results = {{"M/bf16/1/graph", {result}}};
  row = experiment_row(cases, h200_device(), 1, {file});
  EXPECT_FALSE(row.target);
  EXPECT_NE(row.status.find("bound_fraction needs the measured ceiling"), std::string::npos) << row.status;
}

// The console title and the summary's header fit a 100-column terminal whatever the device's name:
// what does not fit goes onto an indented second line, broken after a "; ".
TEST(ConsoleTitle, ALongDeviceNameWrapsOntoASecondLine) {
  RunInfo info = h200_info();
  info.device.is_gpu = false;
  info.device.name = "Intel(R) Xeon(R) Processor";
  info.device.peaks = std::nullopt;
  info.timer = "host";
  info.cache = "none";
  info.opbench_sha = "7eb12e5abcde";
  info.torch_version = "2.11.0+cu130";
  std::string title = run_title(info);
  std::string first = title.substr(0, title.find('\n'));
  EXPECT_EQ(first, "bench_ops on Intel(R) Xeon(R) Processor (CPU; timer host, cache none;");
  EXPECT_EQ(title.substr(first.size() + 1, 38), "  opbench 7eb12e5abcde, torch 2.11.0+c");
  std::ostringstream summary;
  ExperimentRow row;
  print_summary(summary, {row}, info, {});
  std::istringstream lines(summary.str());
  std::string line;
  std::getline(lines, line);   // the blank line before the table
  std::getline(lines, line);
  EXPECT_EQ(line, "Experiments on Intel(R) Xeon(R) Processor (timer host, cache none; peaks: unknown;");
  std::getline(lines, line);
  EXPECT_EQ(line, "  measured ceilings: none)");
  EXPECT_EQ(wrap_line("short; enough"), "short; enough");
  EXPECT_EQ(wrap_line("aaaa; bbbb; cccc", 11), "aaaa; bbbb;\n  cccc");
  EXPECT_EQ(wrap_line("aaaaaaaaaaaa; bb", 5), "aaaaaaaaaaaa;\n  bb");   // no separator fits: the first
}

TEST_F(Reporters, SeedHeaderIsRepairedAndRowsAppend) {
  fs::path csv = dir_ / "old.csv";
  write_text(csv, "name,metric,target,actual,dtype,device,arch,is_model\n"
                  "gemv,memory_bandwidth(GB/s),990,1000.00,bfloat16,cuda,NVIDIA A100-SXM4-40GB,False\n");
  report({case_run("LayerNorm/bf16/4096x1024/aten", 1800)}, csv);
  report({case_run("LayerNorm/bf16/4096x1024/aten", 1900)}, csv);
  auto rows = read_csv(csv.string());
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], csv_header());
  EXPECT_EQ(rows[1].size(), csv_header().size());
  EXPECT_EQ(rows[1][0], "gemv");
  EXPECT_EQ(rows[1][8], "");                             // padded with empty cells, not the seed's "0"
  EXPECT_EQ(rows[2][3], "1800.000000");
  EXPECT_EQ(rows[3][3], "1900.000000");
  std::string json = read_text(dir_ / "old.json");
  EXPECT_EQ(std::count(json.begin(), json.end(), '\n'), 2);
}

// A file written before rows named their device (16 columns, run_id and timestamp last) gets the
// device_id column; its rows an empty cell there, the new rows this run's device.
TEST_F(Reporters, AHeaderWithoutDeviceIdIsRepaired) {
  fs::path csv = dir_ / "before.csv";
  std::vector<std::string> before(csv_header().begin(), csv_header().end() - 1);
  ASSERT_EQ(before.back(), "timestamp");
  write_text(csv, csv_line(before) + "gemv,memory_bandwidth(GB/s),,1000.00,bfloat16,cuda,A,False,aten,,,,1,no target,ab,T\n");
  report({case_run("LayerNorm/bf16/4096x1024/aten", 1800)}, csv);
  auto rows = read_csv(csv.string());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], csv_header());
  EXPECT_EQ(rows[1].back(), "");
  EXPECT_EQ(rows[2].back(), "cuda:0");
}

TEST(Csv, NumbersKeepTheirValueAndAnUnclosedQuoteIsRefusedWithItsLine) {
  ExperimentRow row;
  row.target = 1e308;
  row.actual = 1e-9;
  row.pct_of_peak = 41.666666666;
  auto cells = csv_cells(row, RunInfo{});
  EXPECT_EQ(cells[2], "1e+308");           // not a 63-digit rendering of a truncated buffer
  EXPECT_EQ(cells[3], "1e-09");            // not 0.000000
  EXPECT_EQ(cells[10], "41.666667");       // ordinary magnitudes keep gpt-fast's six decimals
  EXPECT_EQ(std::stod(cells[2]), 1e308);
  try {
    parse_csv("a,b\n1,\"open\n2,3\n", "rows.csv");
    ADD_FAILURE() << "an unclosed quote was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "rows.csv:2: a quoted cell opened here is never closed");
  }
  EXPECT_EQ(parse_csv("a,\"b,\"\"c\"\"\"\n", "ok.csv"), (std::vector<std::vector<std::string>>{{"a", "b,\"c\""}}));
}

// The message RowFile refuses `path` with, or "no error".
std::string row_file_error(const fs::path& path) {
  try {
    RowFile rows(path.string());
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST_F(Reporters, ForeignCsvIsRefusedAndLeftAlone) {
  fs::path csv = dir_ / "foreign.csv";
  write_text(csv, "a,b,c\n1,2,3\n");
  EXPECT_NE(row_file_error(csv).find("its header is not opbench's"), std::string::npos);
  EXPECT_EQ(read_text(csv), "a,b,c\n1,2,3\n");
  // The seed's 8 columns followed by columns that are not opbench's: refused, not rewritten under our header.
  fs::path other = dir_ / "other.csv";
  write_text(other, "name,metric,target,actual,dtype,device,arch,is_model,commit,runner\nx,m,1,2,d,cuda,a,False,abc,r1\n");
  EXPECT_NE(row_file_error(other).find("its header is not opbench's"), std::string::npos);
  EXPECT_EQ(read_csv(other.string())[0].size(), 10u);
}

TEST_F(Reporters, UnusableOutputPathsAreRefusedBeforeAnythingRuns) {
  EXPECT_NE(row_file_error(dir_ / "rows.json").find("expected a .csv file"), std::string::npos);
  fs::create_directories(dir_ / "folder.csv");
  EXPECT_NE(row_file_error(dir_ / "folder.csv").find("is a folder"), std::string::npos);
  write_text(dir_ / "plain", "a file\n");
  EXPECT_NE(row_file_error(dir_ / "plain" / "x.csv").find("cannot be created"), std::string::npos);
  EXPECT_NE(row_file_error("/proc/opbench_rows.csv").find("cannot be written"), std::string::npos);
  EXPECT_EQ(row_file_error(dir_ / "fresh" / "ok.csv"), "no error");
  EXPECT_FALSE(fs::exists(dir_ / "fresh" / "ok.csv"));   // checking created no file
}

TEST_F(Reporters, ASidecarThatIsNotDashboardRecordsIsRefused) {
  write_text(dir_ / "run.json", "{\"ok\": 1}\nnot json\n");
  EXPECT_NE(row_file_error(dir_ / "run.csv").find("run.json:2: not a dashboard record"), std::string::npos);
}

TEST_F(Reporters, EachExperimentIsWrittenWhenItsLastCaseIsDone) {
  fs::path csv = dir_ / "progress.csv";
  ExperimentReporter reporter(h200_run(), h200_info(), {}, RowFile(csv.string()),
                              {"LayerNorm/bf16/4096x1024/aten", "LayerNorm/bf16/4096x4096/aten",
                               "LayerNorm/fp16/4096x1024/aten"},
                              nullptr);
  reporter.ReportRuns({case_run("LayerNorm/bf16/4096x1024/aten", 1800)});
  EXPECT_FALSE(fs::exists(csv));                         // bf16 has a case to come
  reporter.ReportRuns({case_run("LayerNorm/bf16/4096x4096/aten", 2200)});
  EXPECT_EQ(read_csv(csv.string()).size(), 2u);          // header + the bf16 row, before any fp16 case ran
  reporter.ReportRuns({case_run("LayerNorm/fp16/4096x1024/aten", 1500)});
  EXPECT_EQ(read_csv(csv.string()).size(), 3u);
  reporter.Finalize();
  EXPECT_EQ(read_csv(csv.string()).size(), 3u);          // nothing written twice
}

// Writers that append to one file at once keep every row (each append re-reads under a lock).
TEST_F(Reporters, ConcurrentAppendsKeepEveryRow) {
  fs::path csv = dir_ / "shared.csv";
  constexpr int kWriters = 8, kRowsEach = 20;
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      RowFile rows(csv.string());   // each writer its own, as separate processes would have
      for (int r = 0; r < kRowsEach; ++r)
        rows.append({{"w" + std::to_string(w), "m", "", std::to_string(r)}}, {"{\"w\": " + std::to_string(w) + "}"});
    });
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(read_csv(csv.string()).size(), 1u + kWriters * kRowsEach);
  std::string json = read_text(dir_ / "shared.json");
  EXPECT_EQ(std::count(json.begin(), json.end(), '\n'), kWriters * kRowsEach);
}

std::string target_error(const std::string& text) {
  fs::path path = fs::temp_directory_path() / ("opbench_bad_targets_" + std::to_string(::getpid()) + ".json");
  write_text(path, text);
  try {
    load_target_file(path.string());
  } catch (const Error& e) {
    fs::remove(path);
    return e.what();
  }
  fs::remove(path);
  return "no error";
}

TEST(Targets, BadFilesNameTheFileAndTheEntry) {
  std::string entry = R"({"experiment": "gemv", "metric": "m", "dtype": "int8", "target": )";
  EXPECT_NE(target_error("{\n  \"devices\": [\"X\"],\n  oops\n}").find(".json: 3:3: invalid JSON"), std::string::npos);
  EXPECT_NE(target_error(R"({"devices": ["X"], "rule": "r", "targets": [)" + entry + "-5}]}")
                .find("targets[0].target: expected a positive number, got -5"), std::string::npos);
  EXPECT_NE(target_error(R"({"devices": ["X"], "rule": "r", "targets": [)" + entry + "\"fast\"}]}")
                .find("targets[0].target"), std::string::npos);
  EXPECT_NE(target_error(R"({"devices": ["X"], "targets": []})").find("missing \"rule\""), std::string::npos);
  EXPECT_NE(target_error(R"({"devices": [], "rule": "r", "targets": []})").find("devices"), std::string::npos);
  EXPECT_NE(target_error(R"({"devices": ["X"], "rule": "r", "targets": [)" + entry + "1}, " + entry + "2}]}")
                .find("targets[1]: duplicate"), std::string::npos);
}

TEST(Targets, OverflowUnknownKeysAndDtypesAreRefusedNamingTheEntry) {
  std::string head = R"({"devices": ["X"], "rule": "r", "targets": [)";
  std::string entry = R"({"experiment": "gemv", "metric": "m", "dtype": "int8", "target": )";
  EXPECT_NE(target_error(head + entry + "1e400}]}").find("unusable number"), std::string::npos);
  EXPECT_NE(target_error(head + entry + "1, \"backnd\": \"cuda\"}]}").find("targets[0]: unknown key \"backnd\""),
            std::string::npos);
  EXPECT_NE(target_error(R"({"devices": ["X"], "rule": "r", "targts": []})").find("unknown key \"targts\""),
            std::string::npos);
  std::string bad_dtype = R"({"experiment": "gemv", "metric": "m", "dtype": "bf16", "target": 1})";
  EXPECT_NE(target_error(head + bad_dtype + "]}").find("targets[0].dtype: unknown dtype \"bf16\""), std::string::npos);
}

TEST(Targets, NamesNoFamilyDeclaresAreListedAndAnEmptyFolderIsAnError) {
  TargetFile file{"t.json", {"X"}, "r", {{"gemv", "memory_bandwidth(GB/s)", "int8", "aten", 1},
                                          {"gemvv", "memory_bandwidth(GB/s)", "int8", "cuda", 1}}};
  KnownNames known{{"gemv"}, {"memory_bandwidth(GB/s)"}, {"aten"}};
  auto problems = unknown_target_names({file}, known);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("targets[1].experiment: \"gemvv\" is not a registered experiment"), std::string::npos);
  EXPECT_NE(problems[1].find("targets[1].backend: \"cuda\""), std::string::npos);
  fs::path empty = fs::temp_directory_path() / ("opbench_empty_targets_" + std::to_string(::getpid()));
  fs::create_directories(empty);
  EXPECT_THROW(load_targets(empty.string()), Error);
  fs::remove(empty);
}

TEST(Targets, MissingTargetMeansNoneAndUnknownDevicesGetNone) {
  auto files = load_targets(std::string(OPBENCH_SOURCE_DIR) + "/targets");
  // gpt-fast's A100 numbers were set for torch.compile'd code: they hold the inductor backend only
  EXPECT_TRUE(find_target(files, "NVIDIA A100-SXM4-40GB", "layer_norm", "memory_bandwidth(GB/s)", "bfloat16", "inductor"));
  EXPECT_FALSE(find_target(files, "NVIDIA A100-SXM4-40GB", "layer_norm", "memory_bandwidth(GB/s)", "bfloat16", "aten"));
  EXPECT_EQ(find_target(files, "NVIDIA A100-SXM4-40GB", "gemv", "memory_bandwidth(GB/s)", "int8", "inductor")->value, 870);
  EXPECT_FALSE(find_target(files, "NVIDIA A100-SXM4-40GB", "layer_norm", "memory_bandwidth(GB/s)", "float32", "inductor"));
  EXPECT_FALSE(find_target(files, "NVIDIA GeForce RTX 4090", "layer_norm", "memory_bandwidth(GB/s)", "bfloat16", "aten"));
}

// Where the time goes in the markdown: a column per kind any traced case has, the largest first and idle
// last, "-" where a case has none; nothing at all without a traced case.
TEST(MarkdownSummary, BreakdownHasAColumnPerKind) {
  std::ostringstream none;
  print_markdown_breakdown(none, {});
  EXPECT_EQ(none.str(), "");
  std::ostringstream out;
  print_markdown_breakdown(out, {{"Llama2/bf16/7b-32L/graph", {{"gemv", 80}, {"attention", 12}, {"idle", 8}}},
                                 {"Llama2TP/bf16/7b-32L-tp2/graph", {{"gemv", 45}, {"all_reduce", 50}, {"idle", 5}}}});
  EXPECT_EQ(out.str(),
            "\n### Where the time goes (% of the traced window, --opbench_trace)\n\n"
            "| case | gemv | all_reduce | attention | idle |\n|---|---:|---:|---:|---:|\n"
            "| Llama2/bf16/7b-32L/graph | 80.0 | - | 12.0 | 8.0 |\n"
            "| Llama2TP/bf16/7b-32L-tp2/graph | 45.0 | 50.0 | - | 5.0 |\n");
}

// A kind whose bytes a case counts gets a row of its achieved GB/s and share of the read ceiling.
TEST(MarkdownSummary, BreakdownGivesTheBandwidthOfCountedKinds) {
  CaseBreakdown model{.case_name = "Llama2/bf16/7b-32L/graph", .percent_by_kind = {{"gemv", 90}, {"idle", 10}},
                      .gbps_by_kind = {{"gemv", 2950.4}}, .pct_of_read_ceiling_by_kind = {{"gemv", 97.53}}};
  CaseBreakdown no_ceiling{.case_name = "Llama2/int8/7b-32L/graph", .percent_by_kind = {{"gemv", 85}},
                           .gbps_by_kind = {{"gemv", 2100}}};
  std::ostringstream out;
  print_markdown_breakdown(out, {model, no_ceiling});
  const std::string text = out.str();
  EXPECT_NE(text.find("| case | kind | GB/s | % of read ceiling |\n|---|---|---:|---:|\n"
                      "| Llama2/bf16/7b-32L/graph | gemv | 2950 | 97.5 |\n"
                      "| Llama2/int8/7b-32L/graph | gemv | 2100 | - |\n"), std::string::npos) << text;
}

TEST(Targets, ABoundFractionIsAShareOfABandwidthOrTokenRowInsteadOfANumber) {
  std::string head = R"({"devices": ["X"], "rule": "r", "targets": [)";
  std::string entry = R"({"experiment": "m", "metric": "token_per_sec", "dtype": "int8", )";
  EXPECT_EQ(target_error(head + entry + R"("bound_fraction": 0.85}]})"), "no error");
  EXPECT_NE(target_error(head + entry + R"("bound_fraction": 1.5}]})").find("targets[0].bound_fraction: expected a number in (0, 1]"),
            std::string::npos);
  EXPECT_NE(target_error(head + entry + R"("bound_fraction": 0.5, "target": 3}]})").find("expected one of"),
            std::string::npos);
  EXPECT_NE(target_error(head + R"({"experiment": "m", "metric": "m", "dtype": "int8"}]})").find("expected one of"),
            std::string::npos);
  EXPECT_NE(target_error(head + R"x({"experiment": "m", "metric": "startup_time(s)", "dtype": "int8", "bound_fraction": 0.5}]})x")
                .find("applies to token_per_sec and memory_bandwidth(GB/s) rows"), std::string::npos);
}

// The forwarding reporter strips the harness suffix and counts failures (not unavailable backends).
class Capture : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<BRun>& runs) override { seen.insert(seen.end(), runs.begin(), runs.end()); }
  std::vector<BRun> seen;
};

TEST(Forwarding, CleansNamesAndCountsFailures) {
  Capture capture;
  ForwardingReporter forward({&capture});
  auto suffixed = [](BRun run) {
    run.run_name.iterations = "iterations:1";
    run.run_name.time_type = "manual_time";
    return run;
  };
  forward.ReportRuns({suffixed(case_run("Ceiling/bf16/32768x16384/copy", 4000))});
  forward.ReportRuns({suffixed(case_run("LayerNorm/bf16/4096x1024/aten", 1000))});
  forward.ReportRuns({failed_run("Gemv/int8/1024/cuda", std::string(kUnavailablePrefix) + "no CUDA device")});
  forward.ReportRuns({failed_run("Gemv/int8/1024/aten", "check failed")});
  ASSERT_EQ(capture.seen.size(), 4u);
  EXPECT_EQ(capture.seen[1].benchmark_name(), "LayerNorm/bf16/4096x1024/aten");
  EXPECT_EQ(forward.failed_runs(), 1);
}

}  // namespace
}  // namespace opbench
