// Ceiling's declaration: the read and write streams (ATen's at 1 GiB, our own at four sizes) count their
// one direction, a copy (four sizes) read + write, the GEMM 2*M*N*K FLOPs, each backend says which ceiling it measures, nothing is
// registered on the CPU, and ceilings register first.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "opbench/family.h"

namespace opbench {
namespace {

TEST(Ceiling, CopyCountsReadPlusWriteAndGemmCountsFlops) {
  DeviceInfo gpu;
  gpu.is_gpu = true;
  const auto cases = cases_of(family_named("Ceiling"), gpu);
  std::map<std::string, const CaseInfo*> by_name;
  for (const auto& c : cases) by_name[c.name()] = &c;
  // Our streams and the copy at four sizes, ATen's two streams at 1 GiB, the GEMM: 3 x 4 + 2 + 1.
  ASSERT_EQ(cases.size(), 15u);
  ASSERT_EQ(by_name.size(), cases.size());
  const std::pair<const char*, double> sizes[] = {{"2048x4096", 16.0}, {"4096x8192", 64.0},
                                                  {"8192x16384", 256.0}, {"32768x16384", 1024.0}};
  for (const auto& [shape, mib] : sizes) {
    const double bytes = mib * (int64_t{1} << 20);
    for (const char* stream : {"read_cuda", "write_cuda", "copy"}) {
      const std::string name = std::string("Ceiling/bf16/") + shape + "/" + stream;
      ASSERT_TRUE(by_name.count(name)) << name;
      const CaseInfo& c = *by_name[name];
      const bool read = stream[0] == 'r', write = stream[0] == 'w';
      EXPECT_EQ(c.measures, read ? CeilingKind::kRead : write ? CeilingKind::kWrite : CeilingKind::kCopy) << name;
      EXPECT_DOUBLE_EQ(c.work.bytes_read, write ? 0 : bytes) << name;
      EXPECT_DOUBLE_EQ(c.work.bytes_written, read ? 0 : bytes) << name;
      EXPECT_DOUBLE_EQ(c.work.flops, 0) << name;
    }
  }
  // ATen's streams measure the same kinds, at 1 GiB only.
  const CaseInfo& aten_read = *by_name.at("Ceiling/bf16/32768x16384/read");
  EXPECT_EQ(aten_read.measures, CeilingKind::kRead);
  EXPECT_DOUBLE_EQ(aten_read.work.bytes_read, double(int64_t{1} << 30));
  EXPECT_DOUBLE_EQ(aten_read.work.bytes_written, 0);
  const CaseInfo& aten_write = *by_name.at("Ceiling/bf16/32768x16384/write");
  EXPECT_EQ(aten_write.measures, CeilingKind::kWrite);
  EXPECT_DOUBLE_EQ(aten_write.work.bytes_written, double(int64_t{1} << 30));
  EXPECT_DOUBLE_EQ(aten_write.work.bytes_read, 0);
  const CaseInfo& gemm = *by_name.at("Ceiling/bf16/8192x8192x8192/cublas");
  EXPECT_EQ(gemm.measures, CeilingKind::kGemm);
  EXPECT_DOUBLE_EQ(gemm.work.flops, 2.0 * 8192 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(gemm.work.bytes_read, 2.0 * 2 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(gemm.work.bytes_written, 2.0 * 8192 * 8192);
  EXPECT_EQ(gemm.work.compute_peak, PeakKind::kBf16);
}

TEST(Ceiling, NothingOnTheCpuAndRegisteredBeforeEveryOtherFamily) {
  EXPECT_TRUE(cases_of(family_named("Ceiling"), DeviceInfo{}).empty());
  EXPECT_EQ(registered_families().front().name, "Ceiling");
}

}  // namespace
}  // namespace opbench
