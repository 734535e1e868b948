// opbench's own GEMV (gemv.h) on the GPU against its float64 reference (gemv_reference.h), bf16 and int8
// weights, under each set of launch rules: aligned shapes (the vector path, one and two rows per warp;
// the exact-fit rows; the paired gathers), odd row counts on the vector path, widths that are not a
// multiple of the vector width, a misaligned x and strided W rows (the scalar path), the optional per-row
// scale, gathering with indices at both ends of the expert range (read on the device, an index out of
// range giving NaN rows), one x and one scale row per expert, and the refusal of inconsistent arguments;
// the decode step's fusions (rms norm prologue, residual add, SwiGLU and RoPE-and-cache epilogues)
// against float64 on every configuration they run in, each in an ordinary and a programmatic launch; int8
// with x of any magnitude, and with an x that is not finite. Skips without a CUDA device.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/gemv/gemv_reference.h"
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

using kernels::gemv_reference;
using kernels::gemv_tolerance;

// Every test under each set of launch rules (launch_rules.h), whichever GPU runs it, in an ordinary and a
// programmatic launch (on sm_90, int8 rows of whole 64-column units then run on tensor cores): the shapes
// below reach every configuration of both.
class GemvKernel : public ::testing::TestWithParam<std::tuple<kernels::LaunchRules, bool>> {
 protected:
  void SetUp() override {
    if (!current_device().is_gpu) GTEST_SKIP() << "no CUDA device";
    at::manual_seed(1);
    rules_.emplace(std::get<0>(GetParam()));
  }
  std::optional<kernels::ScopedLaunchRules> rules_;
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
    args.programmatic = std::get<1>(GetParam());
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
  // against the float64 reference.
  static void check_gemv(const at::Tensor& w, const at::Tensor& x, bool expect_vectorized,
                         const at::Tensor& scale = {}) {
    at::Tensor y = at::empty({w.size(0)}, cuda(c10::kBFloat16));
    kernels::GemvArgs args = args_for(w, x, y);
    if (scale.defined()) args.row_scale = scale.data_ptr();
    EXPECT_EQ(kernels::gemv_vectorizable(args), expect_vectorized);
    kernels::launch_gemv(args, stream());
    expect_close(y, gemv_reference(w, x, scale), gemv_tolerance(w, x, scale), "own gemv");
  }
};

TEST_P(GemvKernel, MatchesFloat64OnAlignedShapes) {
  for (auto dtype : {c10::kBFloat16, c10::kChar}) {
    // 8192 rows: int8 takes two rows per warp.
    for (int64_t d : {256, 1024, 4096, 8192}) {
      SCOPED_TRACE(name(dtype) + " D=" + std::to_string(d));
      check_gemv(weights({d, d}, dtype), bf16_x(d), true);
    }
    // Odd row counts on the vector path (a warp's row group cut short), two rows per warp included.
    check_gemv(weights({37, 1024}, dtype), bf16_x(1024), true);
    check_gemv(weights({8193, 256}, dtype), bf16_x(256), true);
    // The H200's one-wave grids of 2 and 4 tensor-core tiles a block, the last block's tiles cut short.
    check_gemv(weights({12672, 512}, dtype), bf16_x(512), true);
    check_gemv(weights({16899, 512}, dtype), bf16_x(512), true);
  }
}

// The exact-fit kernels (row_kernel: rows of 4096, 8192 or 16384 bf16, 8192 or 16384 int8, a plain GEMV):
// odd row counts, rows of a wider matrix (row stride > cols) and per-row scales.
TEST_P(GemvKernel, ExactFitRowsMatchFloat64) {
  for (auto dtype : {c10::kBFloat16, c10::kChar}) {
    for (int64_t cols : {4096, 8192, 16384}) {
      SCOPED_TRACE(name(dtype) + " cols=" + std::to_string(cols));
      check_gemv(weights({37, cols}, dtype), bf16_x(cols), true);
      at::Tensor wide = weights({19, cols + 64}, dtype);
      at::Tensor scale = (at::rand({19}, cuda(c10::kFloat)) * 0.02 + 0.001).to(c10::kBFloat16);
      check_gemv(wide.slice(1, 0, cols), bf16_x(cols), true, scale);
    }
  }
}

// The paired gathers (gather_pair_kernel: two slices sharing x, rows of 8192 or 16384 bf16, 16384 int8):
// an odd row count, indices at both ends and twice the same, per-expert row scales, and one slice's index
// out of range (NaN for that slice alone).
TEST_P(GemvKernel, PairedGathersMatchFloat64) {
  for (auto dtype : {c10::kBFloat16, c10::kChar}) {
    for (int64_t cols : {8192, 16384}) {
      SCOPED_TRACE(name(dtype) + " cols=" + std::to_string(cols));
      const int64_t experts = 8, rows = 37;
      at::Tensor w = weights({experts, rows, cols}, dtype), x = bf16_x(cols);
      at::Tensor scale = (at::rand({experts, rows}, cuda(c10::kFloat)) * 0.02 + 0.001).to(c10::kBFloat16);
      at::Tensor out = at::empty({2, rows}, cuda(c10::kBFloat16));
      kernels::GemvArgs args = args_for(w, x, out);
      args.num_selected = 2;
      args.expert_stride = rows * cols;
      args.num_experts = experts;
      args.row_scale = scale.data_ptr();
      args.row_scale_expert_stride = rows;
      for (std::vector<int64_t> chosen : {std::vector<int64_t>{experts - 1, 0}, std::vector<int64_t>{3, 3}}) {
        at::Tensor idx = at::tensor(chosen, cuda(c10::kLong));
        args.expert_idx = idx.data_ptr<int64_t>();
        kernels::launch_gemv(args, stream());
        at::Tensor selected = w.index_select(0, idx), selected_scale = scale.index_select(0, idx);
        expect_close(out, gemv_reference(selected, x, selected_scale), gemv_tolerance(selected, x, selected_scale),
                     "paired gather");
      }
      at::Tensor idx = at::tensor(std::vector<int64_t>{2, experts}, cuda(c10::kLong));
      args.expert_idx = idx.data_ptr<int64_t>();
      kernels::launch_gemv(args, stream());
      EXPECT_TRUE(out[1].isnan().all().item<bool>());
      EXPECT_FALSE(out[0].isnan().any().item<bool>());
    }
  }
}

TEST_P(GemvKernel, FallsBackToScalarLoadsWhenUnaligned) {
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

TEST_P(GemvKernel, ScalesEachRowByItsBf16Scale) {
  for (auto dtype : {c10::kBFloat16, c10::kChar}) {
    SCOPED_TRACE(name(dtype));
    at::Tensor scale = (at::rand({8192}, cuda(c10::kFloat)) * 0.02 + 0.001).to(c10::kBFloat16);
    check_gemv(weights({512, 1024}, dtype), bf16_x(1024), true, scale.slice(0, 0, 512));
    check_gemv(weights({8192, 256}, dtype), bf16_x(256), true, scale);
    check_gemv(weights({37, 1003}, dtype), bf16_x(1003), false, scale.slice(0, 0, 37));
  }
}

TEST_P(GemvKernel, GathersWithTheIndexReadOnTheDevice) {
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
      at::Tensor selected = w.index_select(0, idx);
      expect_close(out, gemv_reference(selected, x), gemv_tolerance(selected, x), "own gather gemv");

      // An index out of range yields NaN rows (never an out-of-bounds read).
      idx.fill_(experts);
      kernels::launch_gemv(args, stream());
      EXPECT_TRUE(out.isnan().all().item<bool>());
    }
  }
}

// int8's tensor-core kernel stages x in fp16 scaled by a power of two (gemv_mma.cuh): x far below and far
// above fp16's normal range (2^-14 .. 65504), and one outlier among small values, match float64 as well
// as x of unit size. Unscaled, 1e5 overflows fp16 and 1e-7 falls into its subnormals.
TEST_P(GemvKernel, Int8TakesXOfAnyMagnitude) {
  for (double magnitude : {1e-7, 1.0, 1e5}) {
    for (bool outlier : {false, true}) {
      SCOPED_TRACE("|x| ~ " + std::to_string(magnitude) + (outlier ? " with an outlier 1e4 times larger" : ""));
      at::Tensor w = weights({64, 4096}, c10::kChar);
      at::Tensor x = (at::randn({4096}, cuda(c10::kFloat)) * magnitude);
      if (outlier) x[77] = 1e4 * magnitude;
      x = x.to(c10::kBFloat16);
      at::Tensor scale = (at::rand({64}, cuda(c10::kFloat)) * 0.02 + 0.001).to(c10::kBFloat16);
      check_gemv(w, x, true, scale);
    }
  }
}

// x holding an infinity or a NaN gives rows that are not finite, as a float64 product would: the
// tensor-core kernel scales x into integers from its largest |x|, which must not turn them finite.
TEST_P(GemvKernel, Int8XNotFiniteGivesRowsNotFinite) {
  for (float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    SCOPED_TRACE("x[100] = " + std::to_string(bad));
    at::Tensor w = weights({64, 4096}, c10::kChar), x = bf16_x(4096), y = at::empty({64}, cuda(c10::kBFloat16));
    x[100] = bad;
    kernels::launch_gemv(args_for(w, x, y), stream());
    EXPECT_FALSE(y.isfinite().any().item<bool>());
  }
}

using test_util::rel_rms;

// Per-row bf16 scales for int8 weights (rows x experts), none for bf16.
at::Tensor scales_for(c10::ScalarType dtype, std::vector<int64_t> shape) {
  if (dtype != c10::kChar) return {};
  return (at::rand(shape, at::TensorOptions().device(at::kCUDA)) * 0.02 + 0.001).to(c10::kBFloat16);
}

// (cols, rows), by the configuration table's rows (gemv_configs.h). H100's: bf16 rows of up to 4 KB (and the paired epilogues) on
// groups of 4 warps, longer rows a row per 8-warp block, or per 16-warp block from 8192 rows
// (4608 x 8193); int8 groups of 2 warps under 8 KB rows, of 4 beyond. H200's: bf16 rows past 4 KB a row
// per 4-warp block (8192, 4608 cols; a plain GEMV per 8-warp block), past 16 KB per 8-warp block
// (16384); int8 a warp a block from 4 KB rows and 4097 rows (4608 x 8193), else groups of 2 warps. Odd
// row counts cut a group short.
// (cols, rows): with two rows a pair (SwiGLU) 10000 and 17000 rows reach the H200's one-wave grids of 2
// and 4 tensor-core tiles a block (gemv_configs.h), as 8500 rows do alone.
const std::vector<std::pair<int64_t, int64_t>> kFusionShapes = {{1024, 37}, {8192, 64},  {16384, 19},
                                                                {4608, 8193}, {1024, 5000}, {512, 8500}};

TEST_P(GemvKernel, NormPrologueNormalizesTheResidualStream) {
  for (auto dtype : {c10::kBFloat16, c10::kChar})
    for (auto [cols, rows] : kFusionShapes) {
      SCOPED_TRACE(name(dtype) + " " + std::to_string(rows) + "x" + std::to_string(cols));
      at::Tensor w = weights({rows, cols}, dtype), h = bf16_x(cols) * 3, g = bf16_x(cols);
      at::Tensor scale = scales_for(dtype, {rows}), y = at::empty({rows}, cuda(c10::kBFloat16));
      kernels::GemvArgs args = args_for(w, h, y);
      if (scale.defined()) args.row_scale = scale.data_ptr();
      args.fusion.norm_w = g.data_ptr();
      args.fusion.norm_eps = 1e-5f;
      kernels::launch_gemv(args, stream());
      at::Tensor xn = kernels::rms_norm_reference(h, g, 1e-5);
      expect_close(y, gemv_reference(w, xn, scale), gemv_tolerance(w, xn, scale), "gemv with rms norm prologue");
    }
}

TEST_P(GemvKernel, AddToYEpilogueUpdatesTheResidualInPlace) {
  for (auto dtype : {c10::kBFloat16, c10::kChar})
    for (auto [cols, rows] : kFusionShapes) {
      SCOPED_TRACE(name(dtype) + " " + std::to_string(rows) + "x" + std::to_string(cols));
      at::Tensor w = weights({rows, cols}, dtype), x = bf16_x(cols), scale = scales_for(dtype, {rows});
      at::Tensor before = bf16_x(rows) * 100, y = before.clone();   // the residual dominates: a lost add shows
      kernels::GemvArgs args = args_for(w, x, y);
      if (scale.defined()) args.row_scale = scale.data_ptr();
      args.fusion.epilogue = kernels::GemvEpilogue::kAddToY;
      kernels::launch_gemv(args, stream());
      at::Tensor delta = gemv_reference(w, x, scale), got_delta = y.to(at::kDouble) - before.to(at::kDouble);
      // bf16(before + delta) rounds by up to 2^-9 of |before| (~100): the sum checked to bf16's
      // tolerance plus the dot's, the delta alone loosely
      Tolerance tol = gemv_tolerance(w, x, scale);
      tol.rtol = 1e-2;
      expect_close(y, before.to(at::kDouble) + delta, tol, "gemv add-to-y");
      EXPECT_LT(rel_rms(got_delta, delta), 0.25);
    }
}

TEST_P(GemvKernel, SwigluEpiloguePairsRowOWithRowNPlusO) {
  for (auto dtype : {c10::kBFloat16, c10::kChar})
    for (auto [cols, n] : kFusionShapes)
      for (bool gather : {false, true}) {
        SCOPED_TRACE(name(dtype) + " n=" + std::to_string(n) + " cols=" + std::to_string(cols) +
                     (gather ? " gather" : ""));
        const int64_t experts = gather ? 4 : 1;
        at::Tensor w = weights({experts, 2 * n, cols}, dtype), x = bf16_x(cols);
        at::Tensor scale = scales_for(dtype, {experts, 2 * n});
        at::Tensor idx = at::tensor(std::vector<int64_t>{experts - 1, 0}, cuda(c10::kLong));
        const int64_t selected = gather ? 2 : 1;
        at::Tensor y = at::empty({selected, n}, cuda(c10::kBFloat16));
        kernels::GemvArgs args = args_for(w, x, y);
        if (scale.defined()) args.row_scale = scale.data_ptr();
        if (gather) {
          args.expert_idx = idx.data_ptr<int64_t>();
          args.num_selected = 2;
          args.num_experts = experts;
          args.expert_stride = 2 * n * cols;
          if (scale.defined()) args.row_scale_expert_stride = 2 * n;
        }
        args.fusion.epilogue = kernels::GemvEpilogue::kSwiglu;
        kernels::launch_gemv(args, stream());
        at::Tensor sel = gather ? idx : idx.narrow(0, 1, 1);   // expert 0 without gathering
        at::Tensor ab = gemv_reference(w.index_select(0, sel), x,
                                       scale.defined() ? scale.index_select(0, sel) : at::Tensor());   // [selected, 2n]
        at::Tensor a = ab.narrow(1, 0, n), b = ab.narrow(1, n, n);
        EXPECT_LT(rel_rms(y, a * at::sigmoid(a) * b), 0.02);
      }
}

TEST_P(GemvKernel, RopeCacheEpilogueRotatesQAndKAndStoresKAndVAtThePosition) {
  const int64_t head_dim = 64, heads = 4, kv_heads = 2, max_len = 8, pos = 5, cols = 512;
  const int64_t q_rows = heads * head_dim, kv_rows = kv_heads * head_dim;
  for (auto dtype : {c10::kBFloat16, c10::kChar}) {
    SCOPED_TRACE(name(dtype));
    at::Tensor w = weights({q_rows + 2 * kv_rows, cols}, dtype), x = bf16_x(cols);
    at::Tensor scale = scales_for(dtype, {q_rows + 2 * kv_rows});
    at::Tensor angle = at::rand({max_len, head_dim / 2}, cuda(c10::kFloat)) * 6.3;
    at::Tensor cos = angle.cos(), sin = angle.sin(), where = at::tensor(std::vector<int64_t>{pos}, cuda(c10::kLong));
    at::Tensor k_cache = at::zeros({kv_heads, max_len, head_dim}, cuda(c10::kBFloat16)), v_cache = at::zeros_like(k_cache);
    at::Tensor q = at::empty({q_rows}, cuda(c10::kBFloat16));
    kernels::GemvArgs args = args_for(w, x, q);
    if (scale.defined()) args.row_scale = scale.data_ptr();
    args.fusion.epilogue = kernels::GemvEpilogue::kRopeCache;
    args.fusion.rope = {where.data_ptr<int64_t>(), cos.data_ptr<float>(), sin.data_ptr<float>(), k_cache.data_ptr(),
                        v_cache.data_ptr(), q_rows, kv_rows, head_dim, max_len};
    kernels::launch_gemv(args, stream());
    at::Tensor qkv = gemv_reference(w, x, scale);
    auto rotated = [&](const at::Tensor& t, int64_t n_heads) {   // pairs (2i, 2i+1) of each head
      at::Tensor pairs = t.view({n_heads, head_dim / 2, 2});
      at::Tensor c = cos[pos].to(at::kDouble), s = sin[pos].to(at::kDouble);
      at::Tensor x0 = pairs.select(2, 0), x1 = pairs.select(2, 1);
      return at::stack({x0 * c - x1 * s, x1 * c + x0 * s}, 2).view({n_heads, head_dim});
    };
    EXPECT_LT(rel_rms(q.view({heads, head_dim}), rotated(qkv.narrow(0, 0, q_rows), heads)), 0.02);
    EXPECT_LT(rel_rms(k_cache.select(1, pos), rotated(qkv.narrow(0, q_rows, kv_rows), kv_heads)), 0.02);
    EXPECT_LT(rel_rms(v_cache.select(1, pos), qkv.narrow(0, q_rows + kv_rows, kv_rows).view({kv_heads, head_dim})), 0.02);
    EXPECT_EQ(k_cache.ne(0).sum().item<int64_t>(), k_cache.select(1, pos).ne(0).sum().item<int64_t>());   // only pos written
    EXPECT_EQ(v_cache.ne(0).sum().item<int64_t>(), v_cache.select(1, pos).ne(0).sum().item<int64_t>());
  }
}

TEST_P(GemvKernel, FusionsRefuseLayoutsTheyCannotRun) {
  at::Tensor w = weights({64, 1024}, c10::kBFloat16), x = bf16_x(1025), y = bf16_x(64);
  kernels::GemvArgs args = args_for(w, x.slice(0, 1), y);   // misaligned x: the scalar path
  args.fusion.epilogue = kernels::GemvEpilogue::kAddToY;
  EXPECT_THROW(kernels::launch_gemv(args, stream()), Error);
  args = args_for(w, x.slice(0, 0, 1024), y);
  args.fusion.epilogue = kernels::GemvEpilogue::kRopeCache;   // no tables, rows not q + 2 kv
  EXPECT_THROW(kernels::launch_gemv(args, stream()), Error);
  at::Tensor odd = weights({63, 1024}, c10::kBFloat16);
  args = args_for(odd, x.slice(0, 0, 1024), y);
  args.fusion.epilogue = kernels::GemvEpilogue::kSwiglu;   // rows must pair up
  EXPECT_THROW(kernels::launch_gemv(args, stream()), Error);
}

TEST_P(GemvKernel, LaunchRejectsInconsistentArguments) {
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

// The decode step's expert GEMV: int8 experts gathered by a device index, one x and one scale row per
// selected expert (x_stride, row_scale_expert_stride).
TEST_P(GemvKernel, GatherTakesOneInputAndOneScaleRowPerExpert) {
  const int64_t experts = 4, rows = 48, cols = 128;
  at::Tensor w = weights({experts, rows, cols}, c10::kChar);
  at::Tensor scale = (at::rand({experts, rows}, cuda(c10::kFloat)) + 0.5).to(c10::kBFloat16);
  at::Tensor x = at::randn({2, cols}, cuda(c10::kBFloat16));
  at::Tensor idx = at::tensor(std::vector<int64_t>{3, 1}, cuda(c10::kLong));
  at::Tensor y = at::empty({2, rows}, cuda(c10::kBFloat16));
  kernels::GemvArgs args = args_for(w, x, y);
  args.x_stride = cols;
  args.expert_idx = idx.data_ptr<int64_t>();
  args.num_selected = 2;
  args.num_experts = experts;
  args.expert_stride = rows * cols;
  args.row_scale = scale.data_ptr();
  args.row_scale_expert_stride = rows;
  kernels::launch_gemv(args, stream());
  at::Tensor selected = w.index_select(0, idx), selected_scale = scale.index_select(0, idx);
  expect_close(y, gemv_reference(selected, x, selected_scale), gemv_tolerance(selected, x, selected_scale),
               "gather with one x per expert");
}

INSTANTIATE_TEST_SUITE_P(Rules, GemvKernel,
                         ::testing::Combine(::testing::Values(kernels::LaunchRules::kH100, kernels::LaunchRules::kH200),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(kernels::launch_rules_name(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) ? "_programmatic" : "_ordinary");
                         });

}  // namespace
}  // namespace opbench
#endif  // OPBENCH_HAVE_CUDA
