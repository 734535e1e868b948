// The CUDA timers on a real GPU. Every test skips cleanly where there is no CUDA device (CI).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

#include <chrono>
#include <iostream>
#include <thread>

#include "opbench/cases.h"
#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/reference.h"
#include "opbench/telemetry.h"
#include "opbench/timer.h"

namespace opbench {
namespace {

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!current_device().is_gpu) GTEST_SKIP() << "no CUDA device";
  }
  at::TensorOptions cuda_floats() const { return at::TensorOptions().device(at::kCUDA).dtype(at::kFloat); }
};

TEST_F(Gpu, DeviceInfoIsRead) {
  const DeviceInfo& d = current_device();
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.l2_bytes, 1 << 20);
  EXPECT_GT(d.memory_bytes, int64_t{1} << 30);
  EXPECT_EQ(d.arch_name, d.name);
  EXPECT_GE(d.compute_capability, 70);
}

// The blocking kernel holds the stream while the iteration is enqueued: a host pause between two
// small kernels must not show up in the GPU time.
TEST_F(Gpu, HostLatencyInsideTheIterationIsNotTimed) {
  at::Tensor x = at::ones({1024}, cuda_floats());
  auto sampler = make_event_sampler(CacheMode::kWarm);
  StoppingRule rule;
  rule.max_seconds = 0.5;
  Measurement m = measure(*sampler, [&] {
    x.add_(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    x.add_(1);
  }, rule);
  EXPECT_EQ(m.timer, TimerKind::kEvents);
  EXPECT_GT(m.median, 0);
  EXPECT_LT(m.median, 0.5e-3) << "the 3 ms host pause leaked into the GPU time";
}

// An iteration that synchronizes with the GPU would deadlock against the block: it must time out,
// fall back to unblocked timing, and still measure.
TEST_F(Gpu, SyncInsideTheIterationFallsBackInsteadOfHanging) {
  at::Tensor x = at::ones({1 << 20}, cuda_floats());
  auto sampler = make_event_sampler(CacheMode::kCold);
  auto start = std::chrono::steady_clock::now();
  Measurement m = measure(*sampler, [&] { (void)x.add_(1).sum().item<float>(); }, StoppingRule{});
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(m.samples.size(), 10u);
  EXPECT_LT(m.median, 10e-3);
  EXPECT_LT(wall, 3.0);
}

// Reading 16 MiB that sits in L2 (warm) is faster than reading it after a flush (cold).
TEST_F(Gpu, ColdCacheIsSlowerThanWarm) {
  at::Tensor x = at::rand({4 << 20}, cuda_floats());
  at::Tensor out = at::empty({}, cuda_floats());
  auto iteration = [&] { at::sum_out(out, x); };
  auto cold = make_event_sampler(CacheMode::kCold);
  auto warm = make_event_sampler(CacheMode::kWarm);
  double cold_s = measure(*cold, iteration, StoppingRule{}).median;
  double warm_s = measure(*warm, iteration, StoppingRule{}).median;
  EXPECT_GT(cold_s, 1.1 * warm_s) << "cold " << cold_s << " s, warm " << warm_s << " s";
}

// Graph replay and events agree on a bandwidth-bound copy that launch overhead cannot hide.
TEST_F(Gpu, GraphAndEventTimersAgreeOnALargeCopy) {
  at::Tensor src = at::rand({64 << 20}, cuda_floats());
  at::Tensor dst = at::empty_like(src);
  auto iteration = [&] { dst.copy_(src); };
  auto events = make_event_sampler(CacheMode::kCold);
  auto graph = make_graph_sampler(CacheMode::kCold);
  Measurement e = measure(*events, iteration, StoppingRule{});
  Measurement g = measure(*graph, iteration, StoppingRule{});
  EXPECT_EQ(g.timer, TimerKind::kGraph);
  EXPECT_GT(g.median / e.median, 0.8);
  EXPECT_LT(g.median / e.median, 1.25);
  EXPECT_TRUE(at::equal(dst, src));
}

StoppingRule short_rule() {
  StoppingRule rule;
  rule.max_seconds = 0.5;
  return rule;
}

// A kernel that spins 100 us: cupti reads its duration (no launch processing, no flush), events a
// little more; both within a few percent.
TEST_F(Gpu, CuptiTimesTheIterationsKernelsAlone) {
  if (!cupti_unavailable_reason().empty()) GTEST_SKIP() << cupti_unavailable_reason();
  auto spin = [] { inject_delay(TimerKind::kEvents, 100e-6); };
  auto cupti = make_cupti_sampler(CacheMode::kCold);
  auto events = make_event_sampler(CacheMode::kCold);
  Measurement c = measure(*cupti, spin, short_rule());
  Measurement e = measure(*events, spin, short_rule());
  EXPECT_EQ(c.timer, TimerKind::kCupti);
  EXPECT_NEAR(c.median, 100e-6, 2e-6) << "the 2x-L2 flush before each sample must not be counted";
  EXPECT_GE(e.median, c.median);
  EXPECT_LT(e.median, c.median + 10e-6);
}

#ifdef OPBENCH_HAVE_CUDA
// Kernels of known duration (spinning on globaltimer for 5, 20 and 100 us): cupti reads their length, up
// to the spin's overshoot (it stops at the first globaltimer tick past the length; the H100 ticks ~1 us)
// and the kernel's own start and exit, a fixed cost. So the lengths' differences are known exactly: cupti
// must read them within 0.2 us (issue 39's fidelity goal; H100 2026-11-27: 5.856, 20.832, 100.865 us,
// differences off by -0.024 and +0.009 us). They are also launched plainly first, for
// gpu_checks/gpu_session.sh's ncu_spin step, which runs this test under ncu to show what ncu's
// gpu__time_duration adds to a kernel of known length.
TEST_F(Gpu, SpinKernelsOfKnownLengthReadTheirLengthUnderCupti) {
  const double lengths_us[] = {5, 20, 100};
  for (double us : lengths_us)
    for (int i = 0; i < 20; ++i) inject_delay(TimerKind::kEvents, us * 1e-6);
  c10::cuda::getCurrentCUDAStream().synchronize();
  if (!cupti_unavailable_reason().empty()) GTEST_SKIP() << cupti_unavailable_reason();
  std::vector<double> read_us;
  for (double us : lengths_us) {
    auto cupti = make_cupti_sampler(CacheMode::kCold);
    Measurement m = measure(*cupti, [us] { inject_delay(TimerKind::kEvents, us * 1e-6); }, short_rule());
    std::cerr << "spin " << us << " us: cupti " << m.median * 1e6 << " us\n";
    EXPECT_GE(m.median * 1e6, us);
    EXPECT_LT(m.median * 1e6, us + 1.5);
    read_us.push_back(m.median * 1e6);
  }
  for (size_t i = 1; i < read_us.size(); ++i)
    EXPECT_NEAR(read_us[i] - read_us[0], lengths_us[i] - lengths_us[0], 0.2)
        << "spin " << lengths_us[i] << " us against spin " << lengths_us[0] << " us";
}
#endif

// Two kernels with a 2 ms host pause between them: busy time is their sum, not the span.
TEST_F(Gpu, CuptiCountsKernelsNotTheGapsBetweenThem) {
  if (!cupti_unavailable_reason().empty()) GTEST_SKIP() << cupti_unavailable_reason();
  auto cupti = make_cupti_sampler(CacheMode::kWarm);
  StoppingRule rule = short_rule();
  rule.max_samples = 20;
  Measurement m = measure(*cupti, [] {
    inject_delay(TimerKind::kEvents, 30e-6);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    inject_delay(TimerKind::kEvents, 30e-6);
  }, rule);
  EXPECT_NEAR(m.median, 60e-6, 2e-6);
}

#ifdef OPBENCH_HAVE_CUDA
// memcpy activities are the iteration's too: a 256 MiB device copy reads the same under cupti and events.
TEST_F(Gpu, CuptiCountsMemcpys) {
  if (!cupti_unavailable_reason().empty()) GTEST_SKIP() << cupti_unavailable_reason();
  at::Tensor src = at::rand({64 << 20}, cuda_floats());
  at::Tensor dst = at::empty_like(src);
  auto copy = [&] {
    OPBENCH_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), src.nbytes(), cudaMemcpyDeviceToDevice,
                                       c10::cuda::getCurrentCUDAStream().stream()));
  };
  auto cupti = make_cupti_sampler(CacheMode::kCold);
  auto events = make_event_sampler(CacheMode::kCold);
  double c = measure(*cupti, copy, short_rule()).median, e = measure(*events, copy, short_rule()).median;
  EXPECT_GT(c / e, 0.95);
  EXPECT_LE(c / e, 1.01);
  EXPECT_TRUE(at::equal(dst, src));
}

#endif

// The clock of every sample is estimated from SM 0's cycle counter against globaltimer: near the rated
// clock on an idle, unthrottled GPU; a threshold above 1 makes every sample "throttled" (a forced low
// reading on real hardware), and the case fails instead of reporting a time.
TEST_F(Gpu, SampleClocksAreReadAndAForcedThrottleDiscardsEverySample) {
  const DeviceInfo& d = current_device();
  ASSERT_GT(d.rated_sm_clock_mhz, 500);
  at::Tensor x = at::rand({16 << 20}, cuda_floats());
  auto iteration = [&] { x.mul_(1.0001); };
  auto events = make_event_sampler(CacheMode::kCold);
  ThrottleRule rule;
  rule.expected_sm_clock_mhz = d.rated_sm_clock_mhz;
  Measurement m = measure(*events, iteration, short_rule(), rule);
  ASSERT_EQ(m.sm_clock_mhz.size(), m.samples.size());
  const double clock = median_of(m.sm_clock_mhz);
  std::cerr << "rated " << d.rated_sm_clock_mhz << " MHz, estimated " << clock << " MHz, "
            << m.throttled_samples << " throttled of " << m.samples.size() + m.throttled_samples << "\n";
  EXPECT_GT(clock, 0.5 * d.rated_sm_clock_mhz);
  EXPECT_LT(clock, 1.05 * d.rated_sm_clock_mhz);
  rule.threshold = 1.5;
  rule.recovery_seconds = 0;
  StoppingRule capped = short_rule();
  capped.max_samples = 30;
  EXPECT_THROW(measure(*events, iteration, capped, rule), Error);
}

TEST_F(Gpu, NvmlReadsThisDevicesClockAndPower) {
  Nvml& nvml = Nvml::instance();
  if (!nvml.unavailable_reason().empty()) GTEST_SKIP() << nvml.unavailable_reason();
  GpuTelemetry t = nvml.read(current_device().pci_bus_id);
  ASSERT_TRUE(t.sm_clock_mhz.has_value()) << "NVML found no device at " << current_device().pci_bus_id;
  EXPECT_GT(*t.sm_clock_mhz, 100);
  EXPECT_LT(*t.sm_clock_mhz, 4000);
  ASSERT_TRUE(t.power_w.has_value());
  EXPECT_GT(*t.power_w, 10);
  EXPECT_LT(*t.power_w, 2000);
}

TEST_F(Gpu, ReferenceCheckCatchesAWrongResult) {
  at::Tensor x = at::randn({256, 512}, cuda_floats().dtype(at::kBFloat16));
  at::Tensor y = at::layer_norm(x, {512});
  at::Tensor expected = at::layer_norm(x.to(at::kDouble), {512});
  EXPECT_NO_THROW(expect_close(y, expected, tolerance_for(at::kBFloat16), "layer_norm"));
  at::Tensor wrong = y.clone();
  wrong[3][7] = wrong[3][7] + 1;
  EXPECT_THROW(expect_close(wrong, expected, tolerance_for(at::kBFloat16), "layer_norm"), Error);
  EXPECT_THROW(expect_close(at::zeros_like(y), at::zeros_like(expected), tolerance_for(at::kBFloat16), "zeros"), Error);
}

}  // namespace
}  // namespace opbench
