// opbench's own GEMV kernel (common/gemv_kernel.cu) on the GPU against float64, bf16 and int8 weights:
// aligned shapes (the vector path, one and two rows per warp), odd row counts on the vector path,
// widths that are not a multiple of the vector width, a misaligned x and strided W rows (the scalar
// path), the optional per-row scale, gathering with indices at both ends of the expert range (read on
// the device, an index out of range giving NaN rows) and the refusal of inconsistent arguments.
// Skips without a CUDA device.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/common.h"
#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/reference.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include "common/gemv_kernel.h"

namespace opbench {
namespace {

using families::dot_tolerance;
using families::rms;

class GemvKernel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!current_device().is_gpu) GTEST_SKIP() << "no CUDA device";
    at::manual_seed(1);
  }
  static at::TensorOptions cuda(c10::ScalarType dtype) { return at::TensorOptions().device(at::kCUDA).dtype(dtype); }
  static at::Tensor weights(std::vector<int64_t> shape, c10::ScalarType dtype) {
    if (dtype == c10::kChar) return at::randint(-128, 128, shape, cuda(c10::kChar));
    return at::randn(shape, cuda(dtype));
  }
  static at::Tensor bf16_x(int64_t n) { return at::randn({n}, cuda(c10::kBFloat16)); }
  static cudaStream_t stream() { return c10::cuda::getCurrentCUDAStream().stream(); }
  static std::string name(c10::ScalarType dtype) { return dtype == c10::kChar ? "int8" : "bf16"; }
  static kernels::GemvArgs args_for(const at::Tensor& w, const at::Tensor& x, const at::Tensor& y) {
    kernels::GemvArgs args;
    args.w = w.data_ptr();
    args.w_type = w.scalar_type() == c10::kChar ? kernels::WeightType::kInt8 : kernels::WeightType::kBf16;
    args.rows = w.size(-2);
    args.cols = w.size(-1);
    args.row_stride = w.stride(-2);
    args.x = x.data_ptr();
    args.y = y.data_ptr();
    return args;
  }
  // Runs the own GEMV on w (a 2-D view, any row stride) and x, optionally scaled per row; checks
  // against float64.
  static void check_gemv(const at::Tensor& w, const at::Tensor& x, bool expect_vectorized,
                         const at::Tensor& scale = {}) {
    at::Tensor y = at::empty({w.size(0)}, cuda(c10::kBFloat16));
    kernels::GemvArgs args = args_for(w, x, y);
    if (scale.defined()) args.row_scale = scale.data_ptr();
    EXPECT_EQ(kernels::gemv_vectorizable(args), expect_vectorized);
    kernels::launch_gemv(args, stream());
    at::Tensor wd = w.to(at::kDouble), xd = x.to(at::kDouble), expected = at::matmul(wd, xd);
    double scale_rms = 1.0;
    if (scale.defined()) {
      expected = expected * scale.to(at::kDouble);
      scale_rms = rms(scale.to(at::kDouble));
    }
    expect_close(y, expected, dot_tolerance(w.size(1), rms(wd) * scale_rms, rms(xd)), "own gemv");
  }
};

TEST_F(GemvKernel, MatchesFloat64OnAlignedShapes) {
  for (auto dtype : {c10::kBFloat16, c10::kChar}) {
    // 8192 rows: int8 takes two rows per warp.
    for (int64_t d : {256, 1024, 4096, 8192}) {
      SCOPED_TRACE(name(dtype) + " D=" + std::to_string(d));
      check_gemv(weights({d, d}, dtype), bf16_x(d), true);
    }
    // Odd row counts on the vector path (a warp's row group cut short), two rows per warp included.
    check_gemv(weights({37, 1024}, dtype), bf16_x(1024), true);
    check_gemv(weights({8193, 256}, dtype), bf16_x(256), true);
  }
}

TEST_F(GemvKernel, FallsBackToScalarLoadsWhenUnaligned) {
  for (auto dtype : {c10::kBFloat16, c10::kChar}) {
    SCOPED_TRACE(name(dtype));
    // cols not a multiple of the vector width; rows not a multiple of the warps per block.
    check_gemv(weights({37, 1003}, dtype), bf16_x(1003), false);
    // x starting one element past a 16-byte boundary.
    check_gemv(weights({64, 1024}, dtype), bf16_x(1025).slice(0, 1), false);
    // W rows of a wider matrix (row stride > cols), vectorizable and not; W's base misaligned.
    at::Tensor wide = weights({64, 1024 + 64}, dtype);
    check_gemv(wide.slice(1, 0, 512), bf16_x(512), true);
    check_gemv(wide.slice(1, 3, 515), bf16_x(512), false);
  }
}

TEST_F(GemvKernel, ScalesEachRowByItsBf16Scale) {
  for (auto dtype : {c10::kBFloat16, c10::kChar}) {
    SCOPED_TRACE(name(dtype));
    at::Tensor scale = (at::rand({8192}, cuda(c10::kFloat)) * 0.02 + 0.001).to(c10::kBFloat16);
    check_gemv(weights({512, 1024}, dtype), bf16_x(1024), true, scale.slice(0, 0, 512));
    check_gemv(weights({8192, 256}, dtype), bf16_x(256), true, scale);
    check_gemv(weights({37, 1003}, dtype), bf16_x(1003), false, scale.slice(0, 0, 37));
  }
}

TEST_F(GemvKernel, GathersWithTheIndexReadOnTheDevice) {
  for (auto dtype : {c10::kBFloat16, c10::kChar}) {
    for (int64_t d : {512, 1003}) {   // vector and scalar paths
      SCOPED_TRACE(name(dtype) + " D=" + std::to_string(d));
      const int64_t experts = 8;
      at::Tensor w = weights({experts, d, d}, dtype);
      at::Tensor x = bf16_x(d);
      at::Tensor idx = at::tensor(std::vector<int64_t>{experts - 1, 0}, cuda(c10::kLong));   // both ends
      at::Tensor out = at::empty({2, d}, cuda(c10::kBFloat16));
      kernels::GemvArgs args = args_for(w, x, out);
      args.expert_idx = idx.data_ptr<int64_t>();
      args.num_selected = 2;
      args.expert_stride = d * d;
      args.num_experts = experts;
      kernels::launch_gemv(args, stream());
      at::Tensor wd = w.index_select(0, idx).to(at::kDouble), xd = x.to(at::kDouble);
      expect_close(out, at::matmul(wd, xd), dot_tolerance(d, rms(wd), rms(xd)), "own gather gemv");

      // An index out of range yields NaN rows (never an out-of-bounds read).
      idx.fill_(experts);
      kernels::launch_gemv(args, stream());
      EXPECT_TRUE(out.isnan().all().item<bool>());
    }
  }
}

TEST_F(GemvKernel, LaunchRejectsInconsistentArguments) {
  kernels::GemvArgs args;
  EXPECT_THROW(kernels::launch_gemv(args, stream()), Error);
  at::Tensor w = weights({8, 8}, c10::kBFloat16), x = bf16_x(8);
  args = args_for(w, x, x);
  args.row_stride = 4;   // < cols
  EXPECT_THROW(kernels::launch_gemv(args, stream()), Error);
  args.row_stride = 8;
  args.num_selected = 2;   // > 1 without expert_idx
  EXPECT_THROW(kernels::launch_gemv(args, stream()), Error);
}

}  // namespace
}  // namespace opbench
#endif  // OPBENCH_HAVE_CUDA
