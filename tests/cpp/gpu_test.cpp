// The CUDA timers on a real GPU. Every test skips cleanly where there is no CUDA device (CI).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "opbench/cases.h"
#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/reference.h"
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
