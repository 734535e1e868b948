// opbench's own GEMV with int4 weights (gemv_args.h: gpt-fast's groups of 128, (q - 8) * scale + zero)
// on the GPU against the float64 product with the dequantized weights (int4_weights.h), under each set of
// launch rules and in an ordinary and a programmatic launch (the vector kernel and, on sm_90, the
// tensor-core kernel): aligned shapes (odd row counts, the decode models' row lengths), x of any
// magnitude and not finite, the scalar path (misaligned x), strided rows, gathers (an index out of
// range giving NaN rows), the decode step's fusions (rms norm prologue with the SwiGLU epilogue,
// add-to-y, RoPE-and-cache), the refusal of layouts int4 cannot take, and PyTorch's own int4 path
// (_weight_int4pack_mm, the aten backends') on the same weights. Skips without a CUDA device.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/gemv/gemv_reference.h"
#include "kernels/gemv/int4_weights.h"
#include "kernels/row_norm/row_norm_reference.h"
#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/reference.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include "kernels/common/launch_rules.h"
#include "kernels/gemv/gemv.h"
#include "tests/cpp/rel_rms.h"

namespace opbench {
namespace {

using kernels::Int4Weights;

// Each test under each rule set, in an ordinary launch (the vector kernel) and a programmatic one (on
// sm_90, the tensor-core kernel).
class GemvInt4 : public ::testing::TestWithParam<std::tuple<kernels::LaunchRules, bool>> {
 protected:
  void SetUp() override {
    if (!current_device().is_gpu) GTEST_SKIP() << "no CUDA device";
    at::manual_seed(2);
    rules_.emplace(std::get<0>(GetParam()));
  }
  std::optional<kernels::ScopedLaunchRules> rules_;
  static at::TensorOptions cuda(c10::ScalarType t) { return at::TensorOptions().device(at::kCUDA).dtype(t); }
  static Int4Weights weights(std::vector<int64_t> shape) { return kernels::random_int4(shape, 0.02, at::kCUDA); }
  static at::Tensor bf16_x(int64_t n) { return at::randn({n}, cuda(c10::kBFloat16)); }
  static cudaStream_t stream() { return c10::cuda::getCurrentCUDAStream().stream(); }
  // The launch of y = W @ x on w's packed bytes as laid out (its last two dimensions a matrix).
  static kernels::GemvArgs args_for(const Int4Weights& w, const at::Tensor& x, const at::Tensor& y) {
    kernels::GemvArgs a;
    a.programmatic = std::get<1>(GetParam());
    a.w = w.packed.data_ptr();
    a.w_type = kernels::WeightType::kInt4;
    a.group_qparams = w.qparams.data_ptr();
    a.rows = w.rows();
    a.cols = w.cols();
    a.row_stride = a.cols;
    a.x = x.data_ptr();
    a.y = y.data_ptr();
    return a;
  }
  static void check(const Int4Weights& w, const at::Tensor& x, bool expect_vectorized) {
    at::Tensor y = at::empty({w.rows()}, cuda(c10::kBFloat16));
    kernels::GemvArgs a = args_for(w, x, y);
    EXPECT_EQ(kernels::gemv_vectorizable(a), expect_vectorized);
    kernels::launch_gemv(a, stream());
    at::Tensor wd = kernels::dequantize_int4(w, at::kDouble);
    expect_close(y, kernels::gemv_reference(wd, x), kernels::gemv_tolerance(wd, x), "own int4 gemv");
  }
};

using test_util::rel_rms;

TEST_P(GemvInt4, MatchesFloat64OnAlignedShapes) {
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
           {256, 256}, {37, 1024}, {8193, 256}, {4096, 4096}, {64, 11008}, {19, 16384},
           // The H200's one-wave grids of 2 and 4 tensor-core tiles a block (gemv_configs.h).
           {12672, 256}, {16899, 256}}) {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
    check(weights({rows, cols}), bf16_x(cols), true);
  }
}

// x of any magnitude, with and without one entry 1e4 times the others: the tensor-core kernel turns x into
// integers scaled by the block's largest |x|, which must keep tiny, huge and outlying x alike.
TEST_P(GemvInt4, TakesXOfAnyMagnitude) {
  for (double magnitude : {1e-7, 1.0, 1e5}) {
    for (bool outlier : {false, true}) {
      SCOPED_TRACE("|x| ~ " + std::to_string(magnitude) + (outlier ? " with an outlier 1e4 times larger" : ""));
      at::Tensor x = at::randn({4096}, cuda(c10::kFloat)) * magnitude;
      if (outlier) x[77] = 1e4 * magnitude;
      check(weights({64, 4096}), x.to(c10::kBFloat16), true);
    }
  }
}

// x holding an infinity or a NaN gives rows that are not finite, as a float64 product would.
TEST_P(GemvInt4, XNotFiniteGivesRowsNotFinite) {
  for (float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    SCOPED_TRACE("x[100] = " + std::to_string(bad));
    Int4Weights w = weights({64, 4096});
    at::Tensor x = bf16_x(4096), y = at::empty({64}, cuda(c10::kBFloat16));
    x[100] = bad;
    kernels::launch_gemv(args_for(w, x, y), stream());
    EXPECT_FALSE(y.isfinite().any().item<bool>());
  }
}

TEST_P(GemvInt4, FallsBackToTheScalarLoopOnAMisalignedX) {
  check(weights({64, 1024}), bf16_x(1025).slice(0, 1), false);
}

// Rows of a wider matrix: row_stride > cols, the qparams of a row at (row * row_stride + col) / 128.
TEST_P(GemvInt4, ReadsStridedRowsAndTheirGroups) {
  Int4Weights wide = weights({48, 1024});
  at::Tensor x = bf16_x(512), y = at::empty({48}, cuda(c10::kBFloat16));
  kernels::GemvArgs a = args_for(wide, x, y);
  a.cols = 512;
  a.row_stride = 1024;
  kernels::launch_gemv(a, stream());
  at::Tensor wd = kernels::dequantize_int4(wide, at::kDouble).slice(1, 0, 512);
  expect_close(y, kernels::gemv_reference(wd, x), kernels::gemv_tolerance(wd, x), "strided int4 rows");
}

TEST_P(GemvInt4, GathersExpertsAndGivesNaNForAnIndexOutOfRange) {
  const int64_t experts = 8, d = 1024;
  Int4Weights w = weights({experts, d, d});
  at::Tensor x = bf16_x(d), out = at::empty({2, d}, cuda(c10::kBFloat16));
  at::Tensor idx = at::tensor(std::vector<int64_t>{experts - 1, 0}, cuda(c10::kLong));
  kernels::GemvArgs a = args_for(w, x, out);
  a.expert_idx = idx.data_ptr<int64_t>();
  a.num_selected = 2;
  a.expert_stride = d * d;
  a.num_experts = experts;
  kernels::launch_gemv(a, stream());
  at::Tensor selected = kernels::dequantize_int4(w, at::kDouble).index_select(0, idx);
  expect_close(out, kernels::gemv_reference(selected, x), kernels::gemv_tolerance(selected, x), "int4 gather");
  idx.fill_(experts);
  kernels::launch_gemv(a, stream());
  EXPECT_TRUE(out.isnan().all().item<bool>());
}

// A slice of Llama-2-7B's w13 (2n rows), and the whole of it: on the H200 a one-wave grid of 4 tiles.
TEST_P(GemvInt4, NormPrologueWithSwigluEpilogue) {
  for (int64_t n : {1376, 11008}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const int64_t cols = 4096;
    Int4Weights w = weights({2 * n, cols});
    at::Tensor h = bf16_x(cols) * 3, g = bf16_x(cols), y = at::empty({n}, cuda(c10::kBFloat16));
    kernels::GemvArgs a = args_for(w, h, y);
    a.fusion.norm_w = g.data_ptr();
    a.fusion.epilogue = kernels::GemvEpilogue::kSwiglu;
    kernels::launch_gemv(a, stream());
    at::Tensor ab = kernels::gemv_reference(kernels::dequantize_int4(w, at::kDouble), kernels::rms_norm_reference(h, g, 1e-5));
    at::Tensor p = ab.narrow(0, 0, n), q = ab.narrow(0, n, n);
    EXPECT_LT(rel_rms(y, p * at::sigmoid(p) * q), 0.02);
  }
}

TEST_P(GemvInt4, AddToYEpilogue) {
  Int4Weights w = weights({4096, 11008});
  at::Tensor x = bf16_x(11008), before = bf16_x(4096), y = before.clone();
  kernels::GemvArgs a = args_for(w, x, y);
  a.fusion.epilogue = kernels::GemvEpilogue::kAddToY;
  kernels::launch_gemv(a, stream());
  at::Tensor delta = kernels::gemv_reference(kernels::dequantize_int4(w, at::kDouble), x);
  EXPECT_LT(rel_rms(y.to(at::kDouble) - before.to(at::kDouble), delta), 0.05);
}

TEST_P(GemvInt4, RopeCacheEpilogueStoresVAtThePosition) {
  const int64_t hd = 128, heads = 2, max_len = 4, pos = 3, cols = 1024, q_rows = heads * hd;
  Int4Weights w = weights({3 * q_rows, cols});
  at::Tensor x = bf16_x(cols), q = at::empty({q_rows}, cuda(c10::kBFloat16));
  at::Tensor cos = at::ones({max_len, hd / 2}, cuda(c10::kFloat)), sin = at::zeros_like(cos);   // no rotation
  at::Tensor where = at::tensor(std::vector<int64_t>{pos}, cuda(c10::kLong));
  at::Tensor k_cache = at::zeros({heads, max_len, hd}, cuda(c10::kBFloat16)), v_cache = at::zeros_like(k_cache);
  kernels::GemvArgs a = args_for(w, x, q);
  a.fusion.epilogue = kernels::GemvEpilogue::kRopeCache;
  a.fusion.rope = {where.data_ptr<int64_t>(), cos.data_ptr<float>(), sin.data_ptr<float>(), k_cache.data_ptr(),
                   v_cache.data_ptr(), q_rows, q_rows, hd, max_len};
  kernels::launch_gemv(a, stream());
  at::Tensor qkv = kernels::gemv_reference(kernels::dequantize_int4(w, at::kDouble), x);
  EXPECT_LT(rel_rms(q, qkv.narrow(0, 0, q_rows)), 0.02);
  EXPECT_LT(rel_rms(k_cache.select(1, pos).flatten(), qkv.narrow(0, q_rows, q_rows)), 0.02);
  EXPECT_LT(rel_rms(v_cache.select(1, pos).flatten(), qkv.narrow(0, 2 * q_rows, q_rows)), 0.02);
}

TEST_P(GemvInt4, RefusesLayoutsInt4CannotTake) {
  Int4Weights w = weights({64, 256});
  at::Tensor x = bf16_x(256), y = at::empty({64}, cuda(c10::kBFloat16));
  kernels::GemvArgs a = args_for(w, x, y);
  a.group_qparams = nullptr;
  EXPECT_THROW(kernels::launch_gemv(a, stream()), Error);
  a = args_for(w, x, y);
  a.cols = 192;   // not whole groups
  EXPECT_THROW(kernels::launch_gemv(a, stream()), Error);
  a = args_for(w, x, y);
  a.row_scale = x.data_ptr();
  EXPECT_THROW(kernels::launch_gemv(a, stream()), Error);
}

// PyTorch's int4 path on the same weights (the aten backends' and the ATen decode step's).
TEST_P(GemvInt4, AtenInt4PackMmMatchesFloat64) {
  Int4Weights w = weights({4096, 4096});
  at::Tensor x = at::randn({1, 4096}, cuda(c10::kBFloat16));
  at::Tensor y = kernels::aten_int4_mm(x, kernels::aten_int4_layout(w));
  at::Tensor wd = kernels::dequantize_int4(w, at::kDouble);
  expect_close(y[0], kernels::gemv_reference(wd, x[0]), kernels::gemv_tolerance(wd, x[0]), "aten int4 on the gpu");
}

INSTANTIATE_TEST_SUITE_P(Rules, GemvInt4,
                         ::testing::Combine(::testing::Values(kernels::LaunchRules::kH100, kernels::LaunchRules::kH200),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(kernels::launch_rules_name(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_programmatic" : "_ordinary");
                         });

}  // namespace
}  // namespace opbench
#endif  // OPBENCH_HAVE_CUDA
