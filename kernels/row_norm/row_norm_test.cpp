// opbench's own RMSNorm and LayerNorm (row_norm.h) on the GPU, against their float64 references
// (row_norm_reference.h), for bf16, fp16 and fp32: on aligned widths (rows of up to 256 vectors in
// registers, longer rows in two passes, up to 128 KiB, with widths that leave a partial step of the
// block, rows far from zero mean, where the two-pass kernel's statistics need their shifts, and rows
// whose first element is an outlier), on widths that are not a multiple of the 16-byte vector and on a
// misaligned row start (the scalar path), with and without LayerNorm's bias; and the refusal of
// inconsistent arguments. Skips without a CUDA device.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/reference.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include "kernels/row_norm/row_norm.h"
#include "kernels/row_norm/row_norm_reference.h"

namespace opbench {
namespace {

enum class Which { kRms, kLayer };

// Each norm and dtype, under the device's launch rules (the norms' rule sets hold the same rows).
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
    kernels::NormArgs a = kernels::norm_args(x, w, b, y, 1e-5);
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
    at::Tensor expected;
    if (which() == Which::kRms) {
      EXPECT_EQ(kernels::rms_norm_vectorizable(a), expect_vectorized);
      kernels::launch_rms_norm(a, stream);
      expected = kernels::rms_norm_reference(x, w, 1e-5);
    } else {
      EXPECT_EQ(kernels::layer_norm_vectorizable(a), expect_vectorized);
      kernels::launch_layer_norm(a, stream);
      expected = kernels::layer_norm_reference(x, w, b, 1e-5);
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
// sums of x and x^2 would lose the variance to cancellation; the two-pass kernel sums x - s for a shift s
// of each thread's own. (A smaller
// spread in fp32 would fail any fp32 kernel: x - mean, rounded, then exceeds fp32's tolerance.)
TEST_P(NormKernels, MatchFloat64OnRowsFarFromZeroMean) {
  const bool fp32 = dtype() == at::kFloat;
  for (int64_t cols : {512, 8192}) {
    SCOPED_TRACE("cols=" + std::to_string(cols));
    check(randn({9, cols}) * (fp32 ? 1.0 : 0.1) + (fp32 ? 30 : 100), randn({cols}), bias(cols), true);
  }
}

// Rows whose first element lies 8 sigma out. Shifting every sum of a row by that element cancels in the
// variance: in an fp32 emulation, fp32 LayerNorm outputs 2.2x the tolerance off; with per-thread shifts,
// 0.1x.
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
  kernels::NormArgs a = kernels::norm_args(x, x, at::Tensor(), y, 1e-5);
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
