// Ceiling's declaration: the read and write streams count their one direction, a copy read + write, the
// GEMM 2*M*N*K FLOPs, each backend says
// which ceiling it measures, nothing is registered on the CPU, and ceilings register first.
#include <gtest/gtest.h>

#include "opbench/family.h"

namespace opbench {
namespace {

TEST(Ceiling, CopyCountsReadPlusWriteAndGemmCountsFlops) {
  DeviceInfo gpu;
  gpu.is_gpu = true;
  auto cases = cases_of(family_named("Ceiling"), gpu);
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(cases[0].name(), "Ceiling/bf16/32768x16384/read");
  EXPECT_EQ(cases[0].measures, CeilingKind::kRead);
  EXPECT_DOUBLE_EQ(cases[0].work.bytes_read, double(int64_t{1} << 30));
  EXPECT_DOUBLE_EQ(cases[0].work.bytes_written, 0);
  EXPECT_EQ(cases[1].name(), "Ceiling/bf16/32768x16384/write");
  EXPECT_EQ(cases[1].measures, CeilingKind::kWrite);
  EXPECT_DOUBLE_EQ(cases[1].work.bytes_read, 0);
  EXPECT_DOUBLE_EQ(cases[1].work.bytes_written, double(int64_t{1} << 30));
  cases.erase(cases.begin(), cases.begin() + 2);
  EXPECT_EQ(cases[0].name(), "Ceiling/bf16/32768x16384/copy");
  EXPECT_EQ(cases[0].measures, CeilingKind::kCopy);
  EXPECT_DOUBLE_EQ(cases[0].work.bytes_read, double(int64_t{1} << 30));
  EXPECT_DOUBLE_EQ(cases[0].work.bytes_written, double(int64_t{1} << 30));
  EXPECT_DOUBLE_EQ(cases[0].work.flops, 0);
  EXPECT_EQ(cases[1].name(), "Ceiling/bf16/8192x8192x8192/cublas");
  EXPECT_EQ(cases[1].measures, CeilingKind::kGemm);
  EXPECT_DOUBLE_EQ(cases[1].work.flops, 2.0 * 8192 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(cases[1].work.bytes_read, 2.0 * 2 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(cases[1].work.bytes_written, 2.0 * 8192 * 8192);
  EXPECT_EQ(cases[1].work.compute_peak, PeakKind::kBf16);
}

TEST(Ceiling, NothingOnTheCpuAndRegisteredBeforeEveryOtherFamily) {
  EXPECT_TRUE(cases_of(family_named("Ceiling"), DeviceInfo{}).empty());
  EXPECT_EQ(registered_families().front().name, "Ceiling");
}

}  // namespace
}  // namespace opbench
