// Gemv's declaration: the seed's byte count (W read once), 2*D*D FLOPs held against no compute peak,
// gpt-fast's shapes on a GPU, and which backends run which dtype.
#include <gtest/gtest.h>

#include "opbench/family.h"

namespace opbench {
namespace {

TEST(Gemv, CountsTheSeedsWeightBytes) {
  const Family& gemv = family_named("Gemv");
  Work bf16 = gemv.work(c10::kBFloat16, {4096});
  EXPECT_DOUBLE_EQ(bf16.bytes_read, 4096.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(bf16.bytes_written, 0);
  EXPECT_DOUBLE_EQ(bf16.flops, 2.0 * 4096 * 4096);
  Work int8 = gemv.work(c10::kChar, {16384});
  EXPECT_DOUBLE_EQ(int8.bytes_read, 16384.0 * 16384);
  EXPECT_DOUBLE_EQ(int8.flops, 2.0 * 16384 * 16384);
  EXPECT_EQ(gemv.peak, PeakKind::kBandwidth);
}

TEST(Gemv, GpuCasesAreTheSeedsShapesWithCublasForBf16Only) {
  DeviceInfo gpu;
  gpu.is_gpu = true;
  std::vector<std::string> names;
  for (const auto& c : cases_of(family_named("Gemv"), gpu)) names.push_back(c.name());
  // D in {1024, 4096, 8192, 16384}; bf16: aten cublas cuda inductor; int8: aten cuda inductor; int4: aten
  // cuda (no inductor spelling of int4)
  ASSERT_EQ(names.size(), 4u * 9);
  EXPECT_EQ(names[0], "Gemv/bf16/1024/aten");
  EXPECT_EQ(names[1], "Gemv/bf16/1024/cublas");
  EXPECT_EQ(names[2], "Gemv/bf16/1024/cuda");
  EXPECT_EQ(names[3], "Gemv/bf16/1024/inductor");
  EXPECT_EQ(std::count(names.begin(), names.end(), "Gemv/int8/16384/cublas"), 0);
  EXPECT_EQ(names[27], "Gemv/int8/16384/inductor");
  EXPECT_EQ(names.back(), "Gemv/int4/16384/cuda");
  EXPECT_EQ(std::count(names.begin(), names.end(), "Gemv/int4/1024/inductor"), 0);
}

}  // namespace
}  // namespace opbench
