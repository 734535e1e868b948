// opbench's own RMSNorm and LayerNorm kernels on the GPU, against float64, for bf16, fp16 and fp32: on
// aligned widths (rows of up to 256 vectors in registers, longer rows in two passes, up to 128 KiB, with
// widths that leave a partial step of the block, rows far from zero mean, where the second kernel's
// statistics need their shift, and rows whose first element is an outlier), on widths that are not a multiple of
// the 16-byte vector and on a misaligned row start (the scalar path), with and without LayerNorm's
// bias; and the refusal of inconsistent arguments. Skips without a CUDA device.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "common/common.h"
#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/reference.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include "layer_norm/layer_norm_kernel.h"
#include "rms_norm/rms_norm_kernel.h"

namespace opbench {
namespace {

enum class Which { kRms, kLayer };

// Each norm and dtype (the norms' block shapes are the same on every GPU: no launch rules).
class NormKernels : public ::testing::TestWithParam<std::tuple<Which, c10::ScalarType>> {
 protected:
  void SetUp() override {
    if (!current_device().is_gpu) GTEST_SKIP() << "no CUDA device";
    at::manual_seed(3);
  }
  Which which() const { return std::get<0>(GetParam()); }
  c10::ScalarType dtype() const { return std::get<1>(GetParam()); }
  at::Tensor randn(std::vector<int64_t> shape) {
    return at::randn(shape, at::TensorOptions().device(at::kCUDA).dtype(dtype()));
  }
  // Runs the kernel on x (a rows x cols view, any row stride and start) and checks it against float64.
  void check(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, bool expect_vectorized) {
    at::Tensor y = at::empty({x.size(0), x.size(1)}, x.options());
    kernels::NormArgs a = families::norm_args(x, w, b, y, 1e-5);
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
    at::Tensor xd = x.to(at::kDouble), expected;
    if (which() == Which::kRms) {
      EXPECT_EQ(kernels::rms_norm_vectorizable(a), expect_vectorized);
      kernels::launch_rms_norm(a, stream);
      expected = xd * at::rsqrt(xd.pow(2).mean({-1}, true) + 1e-5) * w.to(at::kDouble);
    } else {
      EXPECT_EQ(kernels::layer_norm_vectorizable(a), expect_vectorized);
      kernels::launch_layer_norm(a, stream);
      expected = at::layer_norm(xd, {x.size(1)}, w.to(at::kDouble), b.defined() ? b.to(at::kDouble) : at::Tensor(), 1e-5);
    }
    expect_close(y, expected, tolerance_for(dtype()), "own norm kernel");
  }
  at::Tensor bias(int64_t cols) { return which() == Which::kLayer ? randn({cols}) : at::Tensor(); }
};

TEST_P(NormKernels, MatchFloat64OnAlignedWidths) {
  for (int64_t cols : {256, 1024, 1032, 4096, 16384}) {
    SCOPED_TRACE("cols=" + std::to_string(cols));
    check(randn({33, cols}), randn({cols}), bias(cols), true);
  }
}

TEST_P(NormKernels, MatchFloat64OnLongRows) {   // registers to 256 vectors, then two passes up to 8192 (128 KiB)
  const int64_t per = 16 / static_cast<int64_t>(c10::elementSize(dtype()));
  for (int64_t cols : {4104, 16392, 32768, 65536}) {
    SCOPED_TRACE("cols=" + std::to_string(cols));
    check(randn({9, cols}), randn({cols}), bias(cols), cols / per <= 8192);
  }
}

// Rows far from zero mean (fp32: mean 30, spread 1; bf16/fp16: mean 100, spread 0.1): unshifted fp32
// sums of x and x^2 would lose the variance to cancellation; the two-pass kernel sums x - x[0]. (A smaller
// spread in fp32 would fail any fp32 kernel: x - mean, rounded, then exceeds fp32's tolerance.)
TEST_P(NormKernels, MatchFloat64OnRowsFarFromZeroMean) {
  const bool fp32 = dtype() == at::kFloat;
  for (int64_t cols : {512, 8192}) {
    SCOPED_TRACE("cols=" + std::to_string(cols));
    check(randn({9, cols}) * (fp32 ? 1.0 : 0.1) + (fp32 ? 30 : 100), randn({cols}), bias(cols), true);
  }
}

// Rows whose first element lies 8 sigma out. Shifting every sum of a row by that element (as the two-pass
// kernel once did) cancels in the variance: fp32 LayerNorm outputs 2.2x the tolerance off in an fp32
// emulation of that kernel, 0.1x with per-thread shifts
// (results/NVIDIA_H200/launch_rules_e1fd52c/layer_norm_shift_emulation.py).
TEST_P(NormKernels, MatchFloat64WhenARowStartsFarFromItsMean) {
  for (int64_t cols : {8192, 16384}) {
    SCOPED_TRACE("cols=" + std::to_string(cols));
    at::Tensor x = randn({64, cols});
    x.select(1, 0).fill_(8.0);
    check(x, randn({cols}), bias(cols), true);
  }
}

TEST_P(NormKernels, HandleWidthsThatAreNotAVectorMultipleAndMisalignedRows) {
  for (int64_t cols : {1, 7, 1001, 4099}) {
    SCOPED_TRACE("cols=" + std::to_string(cols));
    check(randn({5, cols}), randn({cols}), bias(cols), false);
  }
  at::Tensor wide = randn({17, 1025});
  check(wide.slice(1, 1, 1025), randn({1024}), bias(1024), false);   // rows start one element past alignment
  if (which() == Which::kLayer) check(randn({9, 512}), randn({512}), at::Tensor(), true);   // no bias
}

TEST_P(NormKernels, RejectInconsistentArguments) {
  at::Tensor x = randn({4, 64});
  at::Tensor y = at::empty_like(x);
  kernels::NormArgs a = families::norm_args(x, x, at::Tensor(), y, 1e-5);
  auto launch = [&] {
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
    which() == Which::kRms ? kernels::launch_rms_norm(a, stream) : kernels::launch_layer_norm(a, stream);
  };
  a.y = nullptr;
  EXPECT_THROW(launch(), Error);
  a.y = y.data_ptr();
  a.row_stride = 32;
  EXPECT_THROW(launch(), Error);
}

INSTANTIATE_TEST_SUITE_P(
    NormsAndDtypes, NormKernels,
    ::testing::Combine(::testing::Values(Which::kRms, Which::kLayer),
                       ::testing::Values(c10::kBFloat16, c10::kHalf, c10::kFloat)),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == Which::kRms ? "Rms" : "Layer") + "_" +
             c10::toString(std::get<1>(info.param));
    });

}  // namespace
}  // namespace opbench
#endif
