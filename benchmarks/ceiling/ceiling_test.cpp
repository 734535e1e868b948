// Ceiling's declaration: the read and write streams (ATen's and our own) count their one direction, a
// copy read + write, the GEMM 2*M*N*K FLOPs, each backend says which ceiling it measures, nothing is
// registered on the CPU, and ceilings register first.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "opbench/check.h"
#include "opbench/family.h"

#ifdef OPBENCH_HAVE_CUDA
#include "ceiling/stream_kernels.h"
#endif

namespace opbench {
namespace {

TEST(Ceiling, CopyCountsReadPlusWriteAndGemmCountsFlops) {
  DeviceInfo gpu;
  gpu.is_gpu = true;
  const auto cases = cases_of(family_named("Ceiling"), gpu);
  ASSERT_EQ(cases.size(), 6u);
  // ATen's stream and our own for each direction: both measure its ceiling, each counts its one direction.
  const char* streams[] = {"read", "read_cuda", "write", "write_cuda"};
  for (int i = 0; i < 4; ++i) {
    const bool read = i < 2;
    EXPECT_EQ(cases[i].name(), std::string("Ceiling/bf16/32768x16384/") + streams[i]);
    EXPECT_EQ(cases[i].measures, read ? CeilingKind::kRead : CeilingKind::kWrite) << streams[i];
    EXPECT_DOUBLE_EQ(cases[i].work.bytes_read, read ? double(int64_t{1} << 30) : 0) << streams[i];
    EXPECT_DOUBLE_EQ(cases[i].work.bytes_written, read ? 0 : double(int64_t{1} << 30)) << streams[i];
  }
  EXPECT_EQ(cases[4].name(), "Ceiling/bf16/32768x16384/copy");
  EXPECT_EQ(cases[4].measures, CeilingKind::kCopy);
  EXPECT_DOUBLE_EQ(cases[4].work.bytes_read, double(int64_t{1} << 30));
  EXPECT_DOUBLE_EQ(cases[4].work.bytes_written, double(int64_t{1} << 30));
  EXPECT_DOUBLE_EQ(cases[4].work.flops, 0);
  EXPECT_EQ(cases[5].name(), "Ceiling/bf16/8192x8192x8192/cublas");
  EXPECT_EQ(cases[5].measures, CeilingKind::kGemm);
  EXPECT_DOUBLE_EQ(cases[5].work.flops, 2.0 * 8192 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(cases[5].work.bytes_read, 2.0 * 2 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(cases[5].work.bytes_written, 2.0 * 8192 * 8192);
  EXPECT_EQ(cases[5].work.compute_peak, PeakKind::kBf16);
}

TEST(Ceiling, NothingOnTheCpuAndRegisteredBeforeEveryOtherFamily) {
  EXPECT_TRUE(cases_of(family_named("Ceiling"), DeviceInfo{}).empty());
  EXPECT_EQ(registered_families().front().name, "Ceiling");
}

#ifdef OPBENCH_HAVE_CUDA
// The message of the opbench::Error that `launch` throws ("" if none).
template <typename Launch>
std::string refusal(Launch launch) {
  try {
    launch();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The own streams refuse what they cannot stream whole, before any launch (no GPU needed; a launch
// would fail differently): a null or misaligned buffer, a size that is not a whole number of chunks.
TEST(Ceiling, OwnStreamsRefuseBuffersThatAreNotWholeChunks) {
  void* aligned = reinterpret_cast<void*>(uintptr_t{1} << 20);
  void* misaligned = reinterpret_cast<void*>((uintptr_t{1} << 20) + 8);
  float* sums = reinterpret_cast<float*>(uintptr_t{1} << 21);
  const int64_t chunk = kernels::kStreamChunkBytes;
  using testing::HasSubstr;
  EXPECT_THAT(refusal([&] { kernels::launch_read_stream(aligned, chunk + 16, sums, nullptr); }),
              HasSubstr("launch_read_stream: 32784 bytes is not a positive multiple of 32768"));
  EXPECT_THAT(refusal([&] { kernels::launch_read_stream(aligned, 0, sums, nullptr); }),
              HasSubstr("0 bytes is not a positive multiple"));
  EXPECT_THAT(refusal([&] { kernels::launch_read_stream(misaligned, chunk, sums, nullptr); }),
              HasSubstr("not 16-byte aligned"));
  EXPECT_THAT(refusal([&] { kernels::launch_read_stream(aligned, chunk, nullptr, nullptr); }),
              HasSubstr("chunk_sums is null"));
  EXPECT_THAT(refusal([&] { kernels::launch_write_stream(nullptr, chunk, 0, nullptr); }),
              HasSubstr("launch_write_stream: data null"));
  EXPECT_THAT(refusal([&] { kernels::launch_write_stream(aligned, chunk / 2, 0, nullptr); }),
              HasSubstr("16384 bytes is not a positive multiple"));
}
#endif

}  // namespace
}  // namespace opbench
