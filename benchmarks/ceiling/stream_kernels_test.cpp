// The stream kernels on the GPU: the read checksum is exact (it depends on every word), the write
// stream sets every word, and buffers they cannot stream are refused.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "opbench/check.h"
#include "opbench/device.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include "ceiling/stream_kernels.h"

namespace opbench {
namespace {

class StreamKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!current_device().is_gpu) GTEST_SKIP() << "no CUDA device";
  }
  static cudaStream_t stream() { return c10::cuda::getCurrentCUDAStream().stream(); }
};

TEST_F(StreamKernels, ReadChecksumDependsOnEveryWord) {
  auto options = at::TensorOptions().device(at::kCUDA);
  for (int64_t words : {4, 4 * 1000 + 4, 4 << 20}) {   // one vector, a ragged tail of blocks, 16 MiB
    at::Tensor data = at::randint(0, 1 << 30, {words}, options.dtype(c10::kInt));
    at::Tensor checksum = at::zeros({1}, options.dtype(c10::kInt));
    kernels::launch_read_stream(data.data_ptr(), words * 4, reinterpret_cast<uint32_t*>(checksum.data_ptr()), stream());
    uint64_t expected = static_cast<uint64_t>(data.to(c10::kLong).sum().item<int64_t>()) & 0xffffffffULL;
    EXPECT_EQ(static_cast<uint32_t>(checksum.item<int32_t>()), expected) << words << " words";
  }
}

TEST_F(StreamKernels, WriteSetsEveryWord) {
  at::Tensor data = at::zeros({(4 << 20) + 12}, at::TensorOptions().device(at::kCUDA).dtype(c10::kInt));
  kernels::launch_write_stream(data.data_ptr(), data.numel() * 4, 0x12345678u, stream());
  EXPECT_TRUE(data.eq(0x12345678).all().item<bool>());
}

TEST_F(StreamKernels, RefusesBuffersItCannotStream) {
  at::Tensor data = at::zeros({64}, at::TensorOptions().device(at::kCUDA).dtype(c10::kInt));
  at::Tensor checksum = at::zeros({1}, data.options());
  auto* sum = reinterpret_cast<uint32_t*>(checksum.data_ptr());
  EXPECT_THROW(kernels::launch_read_stream(data.data_ptr(), 100, sum, stream()), Error);              // not 16n
  EXPECT_THROW(kernels::launch_read_stream(data.data_ptr<int32_t>() + 1, 64, sum, stream()), Error);  // misaligned
  EXPECT_THROW(kernels::launch_write_stream(nullptr, 64, 0, stream()), Error);
}

}  // namespace
}  // namespace opbench
#endif
