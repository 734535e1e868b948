// RMSNorm: its declaration (bytes, shapes, backends) and, on a GPU, the own kernel against float64 on
// aligned shapes, on widths that are not a multiple of the 16-byte vector, and on a misaligned row
// start (both fall back to the scalar path), for every dtype.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/family.h"
#include "opbench/reference.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include "rms_norm/rms_norm_kernel.h"
#endif

namespace opbench {
namespace {

TEST(RmsNorm, CountsXReadAndYWrittenOnce) {
  const Family& f = family_named("RMSNorm");
  Work w = f.work(c10::kBFloat16, {4096, 8192});
  EXPECT_DOUBLE_EQ(w.bytes_read, 4096.0 * 8192 * 2);
  EXPECT_DOUBLE_EQ(w.bytes_written, 4096.0 * 8192 * 2);
  EXPECT_DOUBLE_EQ(w.flops, 0);
  DeviceInfo gpu;
  gpu.is_gpu = true;
  auto cases = cases_of(f, gpu);
  ASSERT_EQ(cases.size(), 3u * 4 * 2);   // {bf16, fp16, fp32} x 4 shapes x {aten, cuda}
  EXPECT_EQ(cases[0].name(), "RMSNorm/bf16/4096x1024/aten");
  EXPECT_EQ(cases[1].name(), "RMSNorm/bf16/4096x1024/cuda");
  EXPECT_EQ(cases_of(f, DeviceInfo{}).size(), 3u * 2);   // CPU: aten only, two small shapes
}

#ifdef OPBENCH_HAVE_CUDA

class RmsNormGpu : public ::testing::TestWithParam<c10::ScalarType> {
 protected:
  void SetUp() override {
    if (!current_device().is_gpu) GTEST_SKIP() << "no CUDA device";
    at::manual_seed(3);
  }
  // Runs the kernel on x (rows x cols view with any row stride and start) and checks it.
  void check(const at::Tensor& x, const at::Tensor& w, bool expect_vectorized) {
    c10::ScalarType dtype = GetParam();
    at::Tensor y = at::empty({x.size(0), x.size(1)}, x.options());
    kernels::RmsNormArgs args;
    args.x = x.data_ptr();
    args.w = w.data_ptr();
    args.y = y.data_ptr();
    args.rows = x.size(0);
    args.cols = x.size(1);
    args.row_stride = x.stride(0);
    args.type = dtype == c10::kBFloat16 ? kernels::NormType::kBf16
                : dtype == c10::kHalf  ? kernels::NormType::kFp16
                                       : kernels::NormType::kFp32;
    EXPECT_EQ(kernels::rms_norm_vectorizable(args), expect_vectorized);
    kernels::launch_rms_norm(args, c10::cuda::getCurrentCUDAStream().stream());
    at::Tensor xd = x.to(at::kDouble);
    at::Tensor expected = xd * at::rsqrt(xd.pow(2).mean({-1}, true) + 1e-5) * w.to(at::kDouble);
    expect_close(y, expected, tolerance_for(dtype), "own rms_norm");
  }
  at::Tensor randn(std::vector<int64_t> shape) {
    return at::randn(shape, at::TensorOptions().device(at::kCUDA).dtype(GetParam()));
  }
};

TEST_P(RmsNormGpu, MatchesFloat64OnAlignedShapes) {
  for (int64_t cols : {256, 1024, 4096, 16384}) {
    SCOPED_TRACE("cols=" + std::to_string(cols));
    check(randn({33, cols}), randn({cols}), true);
  }
}

TEST_P(RmsNormGpu, HandlesWidthsThatAreNotAVectorMultipleAndMisalignedRows) {
  for (int64_t cols : {1, 7, 1001, 4099}) {
    SCOPED_TRACE("cols=" + std::to_string(cols));
    check(randn({5, cols}), randn({cols}), false);
  }
  at::Tensor wide = randn({17, 1025});
  check(wide.slice(1, 1, 1025), randn({1024}), false);   // rows start one element past the alignment
}

TEST_P(RmsNormGpu, RejectsInconsistentArguments) {
  at::Tensor x = randn({4, 64});
  kernels::RmsNormArgs args;
  args.x = x.data_ptr();
  args.w = x.data_ptr();
  args.y = nullptr;
  args.rows = 4;
  args.cols = 64;
  args.row_stride = 64;
  EXPECT_THROW(kernels::launch_rms_norm(args, nullptr), Error);
  args.y = x.data_ptr();
  args.row_stride = 32;
  EXPECT_THROW(kernels::launch_rms_norm(args, nullptr), Error);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, RmsNormGpu, ::testing::Values(c10::kBFloat16, c10::kHalf, c10::kFloat),
                         [](const auto& info) { return std::string(c10::toString(info.param)); });

#endif

}  // namespace
}  // namespace opbench
