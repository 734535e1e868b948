// The harness without a GPU: work arithmetic, names, the stopping rule, the host timer, device info.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <thread>

#include "benchmark_names.h"
#include "opbench/cases.h"
#include "opbench/check.h"
#include "cli.h"
#include "opbench/activity_span.h"
#include "opbench/device.h"
#include "opbench/kernel_breakdown.h"
#include "opbench/telemetry.h"
#include "opbench/timer.h"
#include "opbench/trace.h"
#include "opbench/work.h"

namespace opbench {
namespace {

DatasheetPeaks test_peaks() { return {"test", 1000, 50, 2000, 4000}; }

Work work(double bytes_read, double bytes_written, double flops, PeakKind peak = PeakKind::kBandwidth) {
  Work w;
  w.bytes_read = bytes_read;
  w.bytes_written = bytes_written;
  w.flops = flops;
  w.compute_peak = peak;
  return w;
}

TEST(Work, BandwidthCountsReadAndWrittenBytes) {
  Figures f = figures_of(work(3e9, 1e9, 0), 2e-3, std::nullopt, {});
  EXPECT_DOUBLE_EQ(f.gbps, 2000);   // 4e9 bytes in 2 ms
  EXPECT_DOUBLE_EQ(f.tflops, 0);
  EXPECT_FALSE(f.percent_of_peak().has_value());
  EXPECT_FALSE(f.percent_of_ceiling().has_value());
}

TEST(Work, PercentOfPeakTakesTheLimitingResource) {
  // 2 TB/s of 4 -> 50%; 1 TFLOP/s of 1000
  EXPECT_DOUBLE_EQ(*figures_of(work(1e9, 1e9, 1e9, PeakKind::kBf16), 1e-3, test_peaks(), {}).percent_of_peak(), 50);
  Figures compute_bound = figures_of(work(1e6, 0, 8e11, PeakKind::kBf16), 1e-3, test_peaks(), {});
  EXPECT_DOUBLE_EQ(compute_bound.tflops, 800);   // 800 TFLOP/s of 1000 -> 80%
  EXPECT_DOUBLE_EQ(*compute_bound.percent_of_peak(), 80);
  // 25 TFLOP/s of 50 -> 50%
  EXPECT_DOUBLE_EQ(*figures_of(work(0, 0, 2.5e10, PeakKind::kFp32), 1e-3, test_peaks(), {}).percent_of_peak(), 50);
}

// The bandwidth bound of a traffic mix: the balanced part at the copy ceiling, the rest of the reads
// at the read ceiling and the rest of the writes at the write ceiling (H100-like figures, each stream
// measured at one size: its GB/s then holds at every size).
TEST(Work, CeilingBoundMatchesTheTrafficMix) {
  constexpr double kGiB = double(int64_t{1} << 30);
  Ceilings c;
  c.record(CeilingKind::kRead, kGiB, 3000);
  c.record(CeilingKind::kWrite, kGiB, 3300);
  c.record(CeilingKind::kCopy, 2 * kGiB, 2900);
  EXPECT_DOUBLE_EQ(*bandwidth_bound_seconds(3e9, 0, c), 1e-3);        // read-only: 3 GB at 3000 GB/s
  EXPECT_DOUBLE_EQ(*bandwidth_bound_seconds(0, 3.3e9, c), 1e-3);      // write-only
  EXPECT_DOUBLE_EQ(*bandwidth_bound_seconds(1.45e9, 1.45e9, c), 1e-3);   // a copy: 2.9 GB at 2900
  // 4 GB read + 1 GB written: 2 GB balanced at 2900, 3 GB more read at 3000.
  EXPECT_DOUBLE_EQ(*bandwidth_bound_seconds(4e9, 1e9, c), 2e9 / 2900e9 + 3e9 / 3000e9);
  // A read-only case exactly at the read ceiling is 100% of it, not 103% of the copy.
  Figures at_read = figures_of(work(3e9, 0, 0), 1e-3, std::nullopt, c);
  EXPECT_DOUBLE_EQ(*at_read.percent_of_ceiling(), 100);
  // Streams not measured are replaced by the nearest measured one.
  Ceilings copy_only;
  copy_only.record(CeilingKind::kCopy, 2 * kGiB, 2900);
  EXPECT_DOUBLE_EQ(*bandwidth_bound_seconds(2.9e9, 0, copy_only), 1e-3);
  Ceilings read_write;
  read_write.record(CeilingKind::kRead, kGiB, 3000);
  read_write.record(CeilingKind::kWrite, kGiB, 3000);
  EXPECT_DOUBLE_EQ(*bandwidth_bound_seconds(1.5e9, 1.5e9, read_write), 1e-3);
  EXPECT_FALSE(bandwidth_bound_seconds(1e9, 1e9, Ceilings{}).has_value());
  // The compute share uses the measured GEMM; %ceiling is the larger share.
  Ceilings gemm;
  gemm.record(CeilingKind::kGemm, 0, 800);
  gemm.record(CeilingKind::kCopy, 2 * kGiB, 4000);
  Figures both = figures_of(work(1e9, 1e9, 4e11, PeakKind::kBf16), 1e-3, std::nullopt, gemm);
  EXPECT_DOUBLE_EQ(*both.compute_of_ceiling, 0.5);     // 400 of 800 TFLOP/s
  EXPECT_DOUBLE_EQ(*both.bandwidth_of_ceiling, 0.5);   // 2000 of 4000 GB/s
  EXPECT_DOUBLE_EQ(*both.percent_of_ceiling(), 50);
}

// Two streams of one kind and size (ATen's and our own): the ceiling is the faster, whatever the order.
TEST(Work, CeilingOfAKindIsItsFastestStream) {
  constexpr double kGiB = double(int64_t{1} << 30);
  Ceilings c;
  c.record(CeilingKind::kRead, kGiB, 3030);
  c.record(CeilingKind::kRead, kGiB, 3174);
  c.record(CeilingKind::kRead, kGiB, 3100);
  EXPECT_DOUBLE_EQ(*c.read.gbps_at(kGiB), 3174);
  c.record(CeilingKind::kWrite, kGiB, 4629);
  c.record(CeilingKind::kWrite, kGiB, 3372);
  EXPECT_DOUBLE_EQ(*c.write.gbps_at(kGiB), 4629);
  EXPECT_TRUE(c.copy.empty());
  c.record(CeilingKind::kGemm, 0, 700);
  c.record(CeilingKind::kGemm, 0, 650);
  EXPECT_DOUBLE_EQ(*c.gemm_tflops, 700);
  // A read-only case at the faster stream's figure is 100% of the read bound, not 105%.
  EXPECT_DOUBLE_EQ(*figures_of(work(3.174e9, 0, 0), 1e-3, std::nullopt, c).percent_of_ceiling(), 100);
}

// A case is held to the stream of its own size (the H200's read streams at 64 MiB, 256 MiB and 1 GiB):
// a 256 MiB read at the 256 MiB stream's speed is 100%, not 93% of the 1 GiB figure.
TEST(Work, CeilingFollowsTheBytesOfTheCase) {
  constexpr double kMiB = double(int64_t{1} << 20);
  Ceilings c;
  c.record(CeilingKind::kRead, 1024 * kMiB, 4611);
  c.record(CeilingKind::kRead, 64 * kMiB, 3507);
  c.record(CeilingKind::kRead, 256 * kMiB, 4304);
  auto seconds = [](double mib, double gbps) { return mib * kMiB / (gbps * 1e9); };
  EXPECT_DOUBLE_EQ(*c.read.gbps_at(256 * kMiB), 4304);
  EXPECT_DOUBLE_EQ(*figures_of(work(256 * kMiB, 0, 0), seconds(256, 4304), std::nullopt, c).percent_of_ceiling(), 100);
  // Between two sizes the time is interpolated: 512 MiB a third of the way from 256 MiB to 1 GiB.
  const double t512 = seconds(256, 4304) + (seconds(1024, 4611) - seconds(256, 4304)) / 3;
  EXPECT_NEAR(*c.read.gbps_at(512 * kMiB), 512 * kMiB / t512 / 1e9, 1e-9);
  EXPECT_GT(*c.read.gbps_at(512 * kMiB), 4304);
  EXPECT_LT(*c.read.gbps_at(512 * kMiB), 4611);
  // Below the smallest: its GB/s. Beyond the largest: the last segment's marginal rate (faster still).
  EXPECT_DOUBLE_EQ(*c.read.gbps_at(16 * kMiB), 3507);
  const double marginal = 768 * kMiB / (seconds(1024, 4611) - seconds(256, 4304)) / 1e9;
  const double t2048 = seconds(1024, 4611) + 1024 * kMiB / (marginal * 1e9);
  EXPECT_NEAR(*c.read.gbps_at(2048 * kMiB), 2048 * kMiB / t2048 / 1e9, 1e-9);
  EXPECT_GT(*c.read.gbps_at(2048 * kMiB), 4611);
  // A slower stream of a recorded size changes nothing; a faster one replaces it.
  c.record(CeilingKind::kRead, 256 * kMiB, 4200);
  EXPECT_DOUBLE_EQ(*c.read.gbps_at(256 * kMiB), 4304);
  c.record(CeilingKind::kRead, 256 * kMiB, 4400);
  EXPECT_DOUBLE_EQ(*c.read.gbps_at(256 * kMiB), 4400);
  // A mix takes each stream at the case's total bytes: 64 MiB read + 64 MiB written is a 128 MiB copy.
  c.record(CeilingKind::kCopy, 128 * kMiB, 3000);
  c.record(CeilingKind::kCopy, 2048 * kMiB, 4000);
  EXPECT_DOUBLE_EQ(*bandwidth_bound_seconds(64 * kMiB, 64 * kMiB, c), seconds(128, 3000));
}

TEST(Names, CaseNameJoinsFourParts) {
  CaseInfo info;
  info.family = "LayerNorm";
  info.dtype = "bf16";
  info.shape = "4096x8192";
  info.backend = "aten";
  EXPECT_EQ(info.name(), "LayerNorm/bf16/4096x8192/aten");
  CaseRegistry registry;
  registry.add(info);
  EXPECT_EQ(registry.find("LayerNorm/bf16/4096x8192/aten")->shape, "4096x8192");
  EXPECT_EQ(registry.find("LayerNorm/bf16/4096x8192"), nullptr);
  EXPECT_THROW(registry.add(info), Error);
}

TEST(Names, DtypesAndShapes) {
  EXPECT_EQ(dtype_name(c10::kBFloat16), "bf16");
  EXPECT_EQ(dtype_name(c10::kHalf), "fp16");
  EXPECT_EQ(dtype_name(c10::kFloat), "fp32");
  EXPECT_EQ(dtype_name(c10::kChar), "int8");
  EXPECT_EQ(shape_name({4096, 8192}), "4096x8192");
  EXPECT_EQ(shape_name({16384}), "16384");
}

TEST(Names, HarnessSuffixIsStrippedAndFiltersStillMatch) {
  EXPECT_EQ(strip_harness_suffix("Gemv/int8/1024/cuda/iterations:1/manual_time"), "Gemv/int8/1024/cuda");
  EXPECT_EQ(strip_harness_suffix("A/b/c/d/iterations:1/manual_time_median"), "A/b/c/d_median");
  EXPECT_EQ(filter_for_registered_names("LayerNorm/.*"), "LayerNorm/.*");
  EXPECT_EQ(filter_for_registered_names("aten$"), "aten(/iterations:1)?(/manual_time)?$");
  EXPECT_EQ(filter_for_registered_names("^a/cuda$|^b/aten$"),
            "^a/cuda(/iterations:1)?(/manual_time)?$|^b/aten(/iterations:1)?(/manual_time)?$");
  EXPECT_EQ(filter_for_registered_names("x[$]\\$"), "x[$]\\$");   // a literal '$' is not an anchor
}

TEST(Cli, OwnFlagsAreTakenAndTheRestPassesThrough) {
  CliOptions cli = parse_cli({"bench_ops", "--output", "r/x.csv", "--benchmark_filter=LayerNorm/.*",
                              "--opbench_cache=warm", "--opbench_timer=graph",
                              "--opbench_max_noise=0.01", "--opbench_max_time=2",
                              "--opbench_min_samples=20"});
  EXPECT_EQ(cli.output.value_or(""), "r/x.csv");
  EXPECT_EQ(cli.run.cache, CacheMode::kWarm);
  EXPECT_EQ(cli.run.gpu_timer, TimerKind::kGraph);
  EXPECT_DOUBLE_EQ(cli.run.rule.max_noise, 0.01);
  EXPECT_DOUBLE_EQ(cli.run.rule.max_seconds, 2);
  EXPECT_EQ(cli.run.rule.min_samples, 20);
  EXPECT_EQ(cli.passthrough, (std::vector<std::string>{"bench_ops", "--benchmark_filter=LayerNorm/.*"}));
}

TEST(Cli, TraceFlags) {
  CliOptions cli = parse_cli({"b", "--opbench_trace", "traces", "--opbench_trace_iters=5"});
  EXPECT_EQ(cli.trace.dir, "traces");
  EXPECT_EQ(cli.trace.iterations, 5);
  EXPECT_EQ(parse_cli({"b", "--opbench_cpu_threads=2"}).cpu_threads, 2);
  EXPECT_EQ(parse_cli({"b"}).cpu_threads, 1);
  EXPECT_TRUE(parse_cli({"b"}).trace.dir.empty());
}

TEST(Trace, BusyTimeIsTheUnionOfIntervals) {
  // disjoint [0,10) [20,25); nested [30,40) inside [30,50); overlapping [60,70) [65,80); touching [90,95) [95,100)
  std::vector<GpuInterval> intervals{{20, 5, "b"},  {0, 10, "a"},  {30, 20, "c"}, {32, 8, "d"},
                                     {60, 10, "e"}, {65, 15, "f"}, {95, 5, "h"},   {90, 5, "g"}};
  EXPECT_DOUBLE_EQ(busy_us(intervals), 10 + 5 + 20 + 20 + 10);
  EXPECT_DOUBLE_EQ(busy_us({}), 0);
}

TEST(Trace, GpuEventsOfASavedTrace) {
  std::string path = ::testing::TempDir() + "opbench_trace_test.json";
  std::ofstream(path) << R"({"traceEvents": [
    {"ph": "M", "name": "process_labels", "pid": 7, "args": {"labels": "GPU 0"}},
    {"ph": "M", "name": "process_labels", "pid": 1, "args": {"labels": "CPU"}},
    {"ph": "X", "name": "sm90_xmma_gemm", "pid": 7, "ts": 100.5, "dur": 10},
    {"ph": "X", "name": "elementwise", "pid": 7, "ts": 105, "dur": 20},
    {"ph": "X", "name": "aten::mm", "pid": 1, "ts": 90, "dur": 100},
    {"ph": "i", "name": "marker", "pid": 7, "ts": 1}]})";
  auto intervals = gpu_intervals_of_trace(path);
  ASSERT_EQ(intervals.size(), 2u);
  EXPECT_DOUBLE_EQ(busy_us(intervals), 24.5);   // [100.5, 125)
  EXPECT_THROW(gpu_intervals_of_trace("/nonexistent/trace.json"), Error);
}

TEST(Trace, MmKernelNames) {
  EXPECT_TRUE(is_mm_kernel("ampere_bf16_s16816gemm_bf16_128x128"));
  EXPECT_TRUE(is_mm_kernel("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT"));
  EXPECT_TRUE(is_mm_kernel("sm90_xmma_gemm_bf16bf16_bf16f32"));
  EXPECT_FALSE(is_mm_kernel("vectorized_layer_norm_kernel"));
  EXPECT_FALSE(is_mm_kernel("elementwise_kernel"));
}

// Each instant of the window goes to one kernel, the first-started of those running, so the kinds and
// the idle time add up to the window: a residual add launched (programmatically) 2 us into a gemv waits
// for it and then runs 2 us, an all-reduce after a gap, a copy nested in a gemv, the wall time past the
// last kernel.
TEST(Trace, BreakdownGivesEachInstantToTheFirstStartedKernel) {
  std::vector<GpuInterval> intervals{{0, 10, "gemv_vector<bf16>"},   {2, 10, "residual_add"},
                                     {15, 5, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"},
                                     {30, 10, "gemv_int8"}, {32, 2, "Memcpy DtoD (Device -> Device)"}};
  KernelBreakdown b = kernel_breakdown(intervals, 50);
  std::map<std::string, std::pair<double, int>> kinds;
  double total = b.idle_us;
  for (const KindTime& k : b.kinds) {
    kinds[k.kind] = {k.us, k.kernels};
    total += k.us;
  }
  EXPECT_EQ(kinds["gemv"], std::make_pair(10.0 + 10.0, 2));   // [0,10) and [30,40), the copy inside included
  EXPECT_EQ(kinds["elementwise"], std::make_pair(2.0, 1));    // [10,12): not the 8 us it waited
  EXPECT_EQ(kinds["all_reduce"], std::make_pair(5.0, 1));
  EXPECT_EQ(kinds["copy"], std::make_pair(0.0, 1));
  EXPECT_DOUBLE_EQ(b.window_us, 50);
  EXPECT_DOUBLE_EQ(b.idle_us, 50 - busy_us(intervals));   // 50 - 27
  EXPECT_DOUBLE_EQ(total, b.window_us);
  EXPECT_EQ(b.kinds.front().kind, "gemv");                 // largest first
  EXPECT_DOUBLE_EQ(kernel_breakdown(intervals, 10).window_us, busy_us(intervals));   // never below busy
}

TEST(Trace, KernelKindsOfTodaysNames) {
  const auto& kinds = default_kernel_kinds();
  EXPECT_EQ(kind_of("void opbench::kernels::gemv::gemv_vector<2, 8, false>", kinds), "gemv");
  EXPECT_EQ(kind_of("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", kinds), "all_reduce");
  EXPECT_EQ(kind_of("decode_attention_kernel", kinds), "attention");
  EXPECT_EQ(kind_of("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", kinds), "gemm");
  EXPECT_EQ(kind_of("Memset (Device)", kinds), "copy");
  EXPECT_EQ(kind_of("void at::native::reduce_kernel<512, 1, ArgMaxOps<float>>", kinds), "sampling");
  EXPECT_EQ(kind_of("triton_red_fused_mm_0", kinds), "other");
}

TEST(Trace, KindShareCountersNameTheirKind) {
  EXPECT_EQ(kind_counter("gemv", KindFigure::kSharePct), "time_gemv_%");
  EXPECT_EQ(kind_counter("gemv", KindFigure::kGbps), "GB/s_gemv");
  EXPECT_EQ(kind_counter("gemv", KindFigure::kPctOfReadCeiling), "%read_ceiling_gemv");
  EXPECT_EQ(kind_counter_of("time_all_reduce_%")->kind, "all_reduce");
  EXPECT_EQ(kind_counter_of(kind_counter("idle", KindFigure::kSharePct))->kind, "idle");
  for (KindFigure f : {KindFigure::kSharePct, KindFigure::kGbps, KindFigure::kPctOfReadCeiling}) {
    const auto parsed = kind_counter_of(kind_counter("all_reduce", f));
    ASSERT_TRUE(parsed);
    EXPECT_EQ(parsed->kind, "all_reduce");
    EXPECT_EQ(parsed->figure, f);
  }
  EXPECT_FALSE(kind_counter_of("time_%"));
  EXPECT_FALSE(kind_counter_of("GB/s"));
  EXPECT_FALSE(kind_counter_of("trace_busy_us"));
  EXPECT_FALSE(kind_counter_of("allreduce_%token"));
}

TEST(Trace, EachRankOfALaunchWritesItsOwnTrace) {
  EXPECT_EQ(trace_file_name("Llama2TP/bf16/7b-32L-tp2/graph", 0, 1), "Llama2TP_bf16_7b-32L-tp2_graph.trace.json");
  EXPECT_EQ(trace_file_name("Llama2TP/bf16/7b-32L-tp2/graph", 1, 2), "Llama2TP_bf16_7b-32L-tp2_graph.rank1.trace.json");
  EXPECT_NE(trace_file_name("A/b/c/d", 0, 2), trace_file_name("A/b/c/d", 1, 2));
}

TEST(Trace, BreakdownCsvSitsBesideTheTrace) {
  KernelBreakdown b{.window_us = 40, .idle_us = 10,
                    .kinds = {{.kind = "gemv", .us = 30, .kernels = 4, .bytes_read = 60e6, .read_ceiling_gbps = 2500},
                              {.kind = "norm", .us = 0.5, .kernels = 2}}};
  std::string trace = ::testing::TempDir() + "Llama2_bf16_7b-32L_graph.trace.json";
  std::string path = write_breakdown_csv(b, 2, trace);
  EXPECT_EQ(path, ::testing::TempDir() + "Llama2_bf16_7b-32L_graph.breakdown.csv");
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "kind,us_per_iteration,share_pct,kernels_per_iteration,gbps,pct_of_read_ceiling\n"
                  "gemv,15,75,2,2000,80\nnorm,0.25,1.25,1,,\nidle,5,25,0,,\n");
  std::remove(path.c_str());
}

TEST(Cli, BadValuesNameTheFlag) {
  auto message_of = [](std::vector<std::string> args) {
    try {
      parse_cli(args);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of({"b", "--opbench_cache=lukewarm"}).find("--opbench_cache=lukewarm"), std::string::npos);
  EXPECT_NE(message_of({"b", "--opbench_max_noise=abc"}).find("--opbench_max_noise"), std::string::npos);
  EXPECT_NE(message_of({"b", "--opbench_max_noise=2"}).find("[0"), std::string::npos);
  EXPECT_NE(message_of({"b", "--output"}).find("needs a value"), std::string::npos);
}

TEST(Stopping, NoiseIsRobustRelativeSpread) {
  EXPECT_DOUBLE_EQ(median_of({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(relative_noise({10, 10, 10, 10}), 0);
  // Under 10 samples nothing is trimmed: {9, 11} has stdev sqrt(2) around 10.
  EXPECT_NEAR(relative_noise({9, 11}), std::sqrt(2.0) / 10, 1e-12);
  EXPECT_DOUBLE_EQ(relative_noise({7}), 0);
  // From 10 samples on, one sample per tail goes: the outlier 100 does not count.
  std::vector<double> one_outlier(9, 10.0);
  one_outlier.push_back(100);
  EXPECT_DOUBLE_EQ(relative_noise(one_outlier), 0);
  // A bimodal 9/11 split stays noisy: {9 x4, 11 x4} after trimming -> stdev sqrt(8/7), mean 10.
  std::vector<double> bimodal{9, 11, 9, 11, 9, 11, 9, 11, 9, 11};
  EXPECT_NEAR(relative_noise(bimodal), std::sqrt(8.0 / 7.0) / 10, 1e-12);
}

TEST(Stopping, MedianNoiseShrinksWithSqrtOfSamples) {
  std::vector<double> ten{9, 11, 9, 11, 9, 11, 9, 11, 9, 11};
  EXPECT_NEAR(median_noise(ten), 1.2533 * relative_noise(ten) / std::sqrt(10.0), 1e-15);
  std::vector<double> forty;
  for (int i = 0; i < 4; ++i) forty.insert(forty.end(), ten.begin(), ten.end());
  EXPECT_LT(median_noise(forty), 0.6 * median_noise(ten));
}

TEST(Stopping, RuleNeedsMinSamplesAndLowNoiseOrACap) {
  StoppingRule rule;   // 10 samples, median noise < 0.5 %, 1 s
  std::vector<double> quiet(9, 1.0);
  EXPECT_FALSE(rule_satisfied(quiet, 0.1, rule));
  quiet.push_back(1.0);
  EXPECT_TRUE(rule_satisfied(quiet, 0.1, rule));
  std::vector<double> noisy;   // ~5% spread: the median's noise is ~0.6% at 100 samples
  for (int i = 0; i < 100; ++i) noisy.push_back(i % 2 ? 1.0 : 1.1);
  EXPECT_FALSE(rule_satisfied(noisy, 0.5, rule));
  EXPECT_TRUE(rule_satisfied(noisy, 1.0, rule));   // the time cap
  std::vector<double> jittery;  // ~2% spread: median noise 0.83% at 10 samples, 0.39% at 40
  for (int i = 0; i < 10; ++i) jittery.push_back(i % 2 ? 1.0 : 1.04);
  EXPECT_FALSE(rule_satisfied(jittery, 0.1, rule));
  for (int i = 0; i < 30; ++i) jittery.push_back(i % 2 ? 1.0 : 1.04);
  EXPECT_TRUE(rule_satisfied(jittery, 0.1, rule));
}

// A sampler that replays a scripted sequence of sample times.
class ScriptedSampler : public Sampler {
 public:
  explicit ScriptedSampler(std::function<double(int)> script) : script_(std::move(script)) {}
  double time_one(const std::function<void()>& iteration) override {
    iteration();
    return script_(calls_++);
  }
  TimerKind kind() const override { return TimerKind::kHost; }
  int calls_ = 0;

 private:
  std::function<double(int)> script_;
};

TEST(Stopping, QuietCaseStopsAtMinSamples) {
  ScriptedSampler sampler([](int i) { return 1e-3 * (1 + 1e-4 * (i % 3)); });
  int iterations = 0;
  Measurement m = measure(sampler, [&] { ++iterations; }, StoppingRule{});
  EXPECT_EQ(m.samples.size(), 10u);
  EXPECT_EQ(iterations, 13);   // 3 warmup + 10 timed
  EXPECT_TRUE(m.converged);
  EXPECT_NEAR(m.median, 1e-3, 1e-6);
}

TEST(Stopping, NoisyCaseRunsToTheSampleCapUnconverged) {
  ScriptedSampler sampler([](int i) { return i % 2 ? 1e-3 : 2e-3; });
  StoppingRule rule;
  rule.max_samples = 500;
  Measurement m = measure(sampler, [] {}, rule);
  EXPECT_EQ(m.samples.size(), 500u);
  EXPECT_FALSE(m.converged);
  EXPECT_GT(m.noise, 0.05);
  EXPECT_GT(m.median_noise, rule.max_noise);
}

TEST(Stopping, OneOutlierDoesNotPreventConvergence) {
  ScriptedSampler sampler([](int i) { return i == 4 ? 5e-3 : 1e-3; });
  Measurement m = measure(sampler, [] {}, StoppingRule{});
  EXPECT_TRUE(m.converged);
  EXPECT_EQ(m.samples.size(), 10u);
  EXPECT_DOUBLE_EQ(m.median, 1e-3);
}

// A sampler whose clock readings are scripted too: the synthetic clock source of the throttle tests.
class ClockedSampler final : public Sampler {
 public:
  ClockedSampler(std::function<double(int)> seconds, std::function<std::optional<double>(int)> clock)
      : seconds_(std::move(seconds)), clock_(std::move(clock)) {}
  double time_one(const std::function<void()>& iteration) override {
    iteration();
    last_ = calls_;
    return seconds_(calls_++);
  }
  TimerKind kind() const override { return TimerKind::kEvents; }
  std::optional<double> last_sm_clock_mhz() const override { return clock_(last_); }

 private:
  std::function<double(int)> seconds_;
  std::function<std::optional<double>(int)> clock_;
  int calls_ = 0, last_ = 0;
};

ThrottleRule rated_1980(double threshold = 0.75) {
  ThrottleRule rule;
  rule.expected_sm_clock_mhz = 1980;
  rule.threshold = threshold;
  rule.recovery_seconds = 0;
  return rule;
}

// Every third sample runs at 900 MHz and takes twice as long: those are dropped and counted, and the
// median is that of the full-clock samples.
TEST(Throttle, SamplesBelowTheThresholdAreDiscardedAndCounted) {
  ClockedSampler sampler([](int i) { return i % 3 == 2 ? 2e-3 : 1e-3; },
                         [](int i) -> std::optional<double> { return i % 3 == 2 ? 900.0 : 1980.0; });
  Measurement m = measure(sampler, [] {}, StoppingRule{}, rated_1980());
  EXPECT_EQ(m.samples.size(), 10u);
  EXPECT_GE(m.throttled_samples, 4);
  EXPECT_DOUBLE_EQ(m.median, 1e-3);
  for (double s : m.samples) EXPECT_DOUBLE_EQ(s, 1e-3);
  ASSERT_EQ(m.sm_clock_mhz.size(), m.samples.size());
  for (double mhz : m.sm_clock_mhz) EXPECT_EQ(mhz, 1980.0);
}

TEST(Throttle, AClockJustAboveTheThresholdIsKeptAndZeroThresholdKeepsEverything) {
  ClockedSampler above([](int) { return 1e-3; }, [](int) -> std::optional<double> { return 0.76 * 1980; });
  EXPECT_EQ(measure(above, [] {}, StoppingRule{}, rated_1980()).throttled_samples, 0);
  ClockedSampler slow([](int) { return 1e-3; }, [](int) -> std::optional<double> { return 100.0; });
  Measurement kept = measure(slow, [] {}, StoppingRule{}, rated_1980(0));
  EXPECT_EQ(kept.throttled_samples, 0);
  EXPECT_EQ(kept.samples.size(), 10u);
}

TEST(Throttle, SamplersWithoutAClockAreNeverJudged) {
  ClockedSampler blind([](int) { return 1e-3; }, [](int) -> std::optional<double> { return std::nullopt; });
  Measurement m = measure(blind, [] {}, StoppingRule{}, rated_1980());
  EXPECT_EQ(m.throttled_samples, 0);
  EXPECT_TRUE(m.sm_clock_mhz.empty());
}

TEST(Throttle, ACaseWhoseEverySampleThrottlesFailsWithTheClocksNamed) {
  ClockedSampler stuck([](int) { return 1e-3; }, [](int) -> std::optional<double> { return 600.0; });
  StoppingRule rule;
  rule.max_samples = 50;
  try {
    measure(stuck, [] {}, rule, rated_1980());
    FAIL() << "a case with no kept sample must not report a time";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("every sample (50)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1485 MHz"), std::string::npos) << e.what();
  }
}

TEST(Throttle, NvmlReasonBitsAreNamedAndIdleIsNotASlowdown) {
  EXPECT_TRUE(slowdown_reason_names(0x1 | 0x2).empty());
  EXPECT_EQ(slowdown_reason_names(0x4), std::vector<std::string>{"sw_power_cap"});
  EXPECT_EQ(slowdown_reason_names(0x40 | 0x1), std::vector<std::string>{"hw_thermal"});
  EXPECT_EQ(slowdown_reason_names(uint64_t{1} << 40), std::vector<std::string>{"bit40"});
}

TEST(Throttle, WithoutTheDriverNvmlSaysWhyAndReadsNothing) {
  Nvml& nvml = Nvml::instance();
  if (nvml.unavailable_reason().empty()) GTEST_SKIP() << "NVML is present here (a GPU machine)";
  EXPECT_NE(nvml.unavailable_reason().find("libnvidia-ml"), std::string::npos);
  GpuTelemetry t = nvml.read("0000:00:00.0");
  EXPECT_FALSE(t.sm_clock_mhz || t.power_w || t.temperature_c || t.clock_reasons);
}

// The cupti timer's arithmetic: busy time is the union of the spans.
TEST(Cupti, BusyTimeAddsSerialKernelsAndCountsOverlapOnce) {
  EXPECT_EQ(busy_ns({}), 0u);
  EXPECT_EQ(busy_ns({{100, 150}, {200, 260}}), 110u);            // a 50 ns launch gap is not counted
  EXPECT_EQ(busy_ns({{200, 260}, {100, 150}}), 110u);            // any order
  EXPECT_EQ(busy_ns({{100, 200}, {150, 250}}), 150u);            // two streams overlapping
  EXPECT_EQ(busy_ns({{100, 400}, {150, 250}, {300, 350}}), 300u); // nested
  EXPECT_EQ(busy_ns({{100, 100}, {100, 130}}), 30u);
}

// Only activities launched by calls tagged with the sample's id count: the stream hold and the L2
// flush (enqueued before the tag) are never part of the sample, nor are another sample's.
TEST(Cupti, OnlyActivitiesOfTheSamplesCallsCount) {
  ActivityLog log;
  log.add_activity(10, {0, 1000});       // the flush memset, its call untagged
  log.add_correlation(11, 7);            // the iteration's two kernel launches, tagged 7
  log.add_correlation(12, 7);
  log.add_activity(12, {2000, 2300});    // records may come before or after their correlation
  log.add_activity(11, {1500, 1900});
  log.add_correlation(13, 6);            // a call of an earlier sample
  log.add_activity(13, {100, 200});
  std::vector<ActivitySpan> mine = log.take(7);
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(busy_ns(mine), 700u);
  EXPECT_EQ(log.pending(), 0u);
  EXPECT_TRUE(log.take(7).empty());
}

TEST(Cli, TimerThrottleAndInjectionFlags) {
  CliOptions cli = parse_cli({"bench_ops", "--opbench_timer=cupti", "--opbench_throttle_threshold=0.8",
                              "--opbench_inject_slowdown=5:^Gemv/bf16/"});
  EXPECT_EQ(cli.run.gpu_timer, TimerKind::kCupti);
  EXPECT_DOUBLE_EQ(cli.run.throttle_threshold, 0.8);
  ASSERT_TRUE(cli.run.inject.has_value());
  EXPECT_DOUBLE_EQ(cli.run.inject->fraction, 0.05);
  EXPECT_EQ(cli.run.inject->pattern, "^Gemv/bf16/");
  EXPECT_FALSE(parse_cli({"bench_ops"}).run.inject.has_value());   // never on by default
  EXPECT_EQ(parse_cli({"bench_ops", "--opbench_inject_slowdown=10"}).run.inject->pattern, "");
  EXPECT_THROW(parse_cli({"bench_ops", "--opbench_inject_slowdown=5:(["}), std::invalid_argument);
  EXPECT_THROW(parse_cli({"bench_ops", "--opbench_inject_slowdown=lots"}), std::invalid_argument);
  EXPECT_THROW(parse_cli({"bench_ops", "--opbench_timer=ncu"}), std::invalid_argument);
  EXPECT_THROW(parse_cli({"bench_ops", "--opbench_timer=cupti", "--opbench_trace=t"}), std::invalid_argument);
}

TEST(HostTimer, InjectedDelayBusyWaitsOnTheHost) {
  auto start = std::chrono::steady_clock::now();
  inject_delay(TimerKind::kHost, 2e-3);
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2e-3);
}

TEST(HostTimer, MeasuresWallTimeOfTheIteration) {
  auto sampler = make_host_sampler();
  StoppingRule rule;
  rule.warmup_iterations = 1;
  rule.max_noise = 0.2;
  Measurement m = measure(*sampler, [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }, rule);
  EXPECT_EQ(m.timer, TimerKind::kHost);
  EXPECT_GE(m.median, 2e-3);
  EXPECT_LT(m.median, 20e-3);
}

TEST(Device, DatasheetMatchesNamesAndRefusesUnknownGpus) {
  EXPECT_EQ(lookup_datasheet("NVIDIA H100 80GB HBM3")->model, "H100 SXM");
  EXPECT_EQ(lookup_datasheet("NVIDIA H100 PCIe")->model, "H100 PCIe");
  EXPECT_EQ(lookup_datasheet("NVIDIA H100 NVL")->model, "H100 NVL");
  EXPECT_EQ(lookup_datasheet("NVIDIA H200")->model, "H200 SXM");
  EXPECT_EQ(lookup_datasheet("NVIDIA A100-SXM4-40GB")->model, "A100 SXM4 40GB");
  EXPECT_EQ(lookup_datasheet("NVIDIA A100-SXM4-80GB")->hbm_gbps, 2039);
  EXPECT_EQ(lookup_datasheet("NVIDIA A100 80GB PCIe")->model, "A100 PCIe 80GB");
  EXPECT_EQ(lookup_datasheet("NVIDIA L4")->bf16_dense_tflops, 121);
  EXPECT_FALSE(lookup_datasheet("NVIDIA L40S").has_value());
  EXPECT_FALSE(lookup_datasheet("NVIDIA GeForce RTX 4090").has_value());
  EXPECT_FALSE(lookup_datasheet("x86_64").has_value());
}

TEST(Device, CpuRunDescribesTheHost) {
  const DeviceInfo& d = current_device();
  if (d.is_gpu) GTEST_SKIP() << "a GPU is present; the CPU description is not used";
  EXPECT_EQ(d.arch_name, host_machine());
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.memory_bytes, 0);
  EXPECT_GT(d.cpu_count, 0);
  EXPECT_FALSE(d.peaks.has_value());
  EXPECT_EQ(RunContext(d).torch_device().type(), c10::DeviceType::CPU);
}

}  // namespace
}  // namespace opbench
