// The own streams (stream_kernels.h): they refuse what they cannot stream whole, before any launch (no
// GPU needed; a launch would fail differently): a null or misaligned buffer, a size that is not a whole
// number of chunks; on the GPU, the read's chunk sums against the float64 reference (stream_reference.h)
// and the write's words.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "opbench/check.h"
#include "opbench/device.h"

#ifdef OPBENCH_HAVE_CUDA
#include <ATen/ATen.h>
#include <c10/cuda/CUDAStream.h>

#include "kernels/stream/stream_kernels.h"
#include "kernels/stream/stream_reference.h"
#include "opbench/reference.h"

namespace opbench::kernels {
namespace {

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

TEST(StreamKernels, RefuseBuffersThatAreNotWholeChunks) {
  void* aligned = reinterpret_cast<void*>(uintptr_t{1} << 20);
  void* misaligned = reinterpret_cast<void*>((uintptr_t{1} << 20) + 8);
  float* sums = reinterpret_cast<float*>(uintptr_t{1} << 21);
  const int64_t chunk = kStreamChunkBytes;
  using testing::HasSubstr;
  EXPECT_THAT(refusal([&] { launch_read_stream(aligned, chunk + 16, sums, nullptr); }),
              HasSubstr("launch_read_stream: 32784 bytes is not a positive multiple of 32768"));
  EXPECT_THAT(refusal([&] { launch_read_stream(aligned, 0, sums, nullptr); }),
              HasSubstr("0 bytes is not a positive multiple"));
  EXPECT_THAT(refusal([&] { launch_read_stream(misaligned, chunk, sums, nullptr); }), HasSubstr("not 16-byte aligned"));
  EXPECT_THAT(refusal([&] { launch_read_stream(aligned, chunk, nullptr, nullptr); }), HasSubstr("chunk_sums is null"));
  EXPECT_THAT(refusal([&] { launch_write_stream(nullptr, chunk, 0, nullptr); }),
              HasSubstr("launch_write_stream: data null"));
  EXPECT_THAT(refusal([&] { launch_write_stream(aligned, chunk / 2, 0, nullptr); }),
              HasSubstr("16384 bytes is not a positive multiple"));
}

TEST(StreamKernels, ReadSumsEachChunkAndWriteFillsEveryWord) {
  if (!current_device().is_gpu) GTEST_SKIP() << "no CUDA device";
  at::manual_seed(0);
  auto options = at::TensorOptions().device(at::kCUDA);
  const int64_t chunks = 37, bytes = chunks * kStreamChunkBytes;
  at::Tensor data = at::randn({bytes / 2}, options.dtype(at::kBFloat16));
  at::Tensor sums = at::full({chunks}, std::numeric_limits<float>::quiet_NaN(), options.dtype(at::kFloat));
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  launch_read_stream(data.data_ptr(), bytes, sums.data_ptr<float>(), stream);
  expect_close(sums, read_stream_reference(data, chunks), read_stream_tolerance(data, chunks), "read stream");
  constexpr uint32_t kWord = 0x3F803F80u;
  launch_write_stream(data.data_ptr(), bytes, kWord, stream);
  EXPECT_TRUE(holds_word(data, kWord));
  EXPECT_TRUE(data.eq(1.0).all().item<bool>());   // two bf16 ones a word
}

}  // namespace
}  // namespace opbench::kernels
#endif  // OPBENCH_HAVE_CUDA
