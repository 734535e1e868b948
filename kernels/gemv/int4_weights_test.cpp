// The int4 weights' helpers (int4_weights.h) on the CPU: packing (the even column in the high nibble) and
// back, gpt-fast's group quantization (the formula, the round trip within half a step, the qparams'
// layout), dequantization's exact values, and PyTorch's int4 matmul on the CPU through the layout
// conversion against the float64 product with the dequantized weights. No GPU needed.
#include "kernels/gemv/int4_weights.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "kernels/common/dot_tolerance.h"
#include "kernels/gemv/gemv_reference.h"
#include "opbench/check.h"
#include "opbench/reference.h"

namespace opbench::kernels {
namespace {

TEST(Int4Weights, PacksTheEvenColumnInTheHighNibble) {
  at::Tensor q = at::tensor({1, 2, 15, 0, 7, 8}, at::kInt).view({1, 6});
  at::Tensor packed = pack_int4(q);
  EXPECT_EQ(packed.scalar_type(), at::kByte);
  EXPECT_TRUE(at::equal(packed, at::tensor({0x12, 0xF0, 0x78}, at::kByte).view({1, 3})));
  EXPECT_TRUE(at::equal(unpack_int4(packed), q));
  at::Tensor random = at::randint(0, 16, {3, 5, 256}, at::kInt);
  EXPECT_TRUE(at::equal(unpack_int4(pack_int4(random)), random));
  EXPECT_THROW(pack_int4(at::zeros({4, 3}, at::kInt)), Error);
}

TEST(Int4Weights, QuantizesGroupsOf128AsGptFast) {
  at::manual_seed(3);
  at::Tensor w = at::randn({6, 384}, at::kFloat);
  Int4Weights q = quantize_int4(w);
  ASSERT_EQ(q.packed.sizes(), (at::IntArrayRef{6, 192}));
  ASSERT_EQ(q.qparams.sizes(), (at::IntArrayRef{6, 3, 2}));
  EXPECT_EQ(q.qparams.scalar_type(), at::kBFloat16);
  // Group (row 4, group 1): scale = (max - min) / 15, zero = min + 8 scale, in bf16.
  at::Tensor g = w[4].slice(0, 128, 256);
  const double scale = ((g.max() - g.min()) / 15).to(at::kBFloat16).item<double>();
  EXPECT_DOUBLE_EQ(q.qparams[4][1][0].item<double>(), scale);
  EXPECT_DOUBLE_EQ(q.qparams[4][1][1].item<double>(),
                   (g.min() + scale * 8).to(at::kBFloat16).item<double>());
  // Every weight comes back within half a step (plus the bf16 rounding of scale and zero), and the
  // values span [0, 15].
  at::Tensor back = dequantize_int4(q, at::kDouble);
  at::Tensor step = q.qparams.select(-1, 0).to(at::kDouble).repeat_interleave(128, -1);
  EXPECT_TRUE(((back - w.to(at::kDouble)).abs() <= step * 0.52 + 1e-3).all().item<bool>());
  at::Tensor values = unpack_int4(q.packed);
  EXPECT_EQ(values.min().item<int>(), 0);
  EXPECT_EQ(values.max().item<int>(), 15);
  EXPECT_THROW(quantize_int4(at::randn({4, 100})), Error);
}

TEST(Int4Weights, DequantizesAsQMinus8TimesScalePlusZero) {
  Int4Weights w;
  at::Tensor q = at::full({2, 128}, 3, at::kInt);
  q[1][5] = 12;
  w.packed = pack_int4(q);
  w.qparams = at::tensor({0.5, -1.0, 0.25, 2.0}, at::kFloat).view({2, 1, 2}).to(at::kBFloat16);
  at::Tensor d = dequantize_int4(w, at::kDouble);
  EXPECT_DOUBLE_EQ(d[0][0].item<double>(), (3 - 8) * 0.5 - 1.0);
  EXPECT_DOUBLE_EQ(d[1][5].item<double>(), (12 - 8) * 0.25 + 2.0);
  EXPECT_DOUBLE_EQ(d[1][6].item<double>(), (3 - 8) * 0.25 + 2.0);
}

TEST(Int4Weights, RandomWeightsAreNeverAllZeroAndHaveTheirScale) {
  at::manual_seed(4);
  Int4Weights w = random_int4({2, 64, 256}, 0.01, at::kCPU);
  EXPECT_EQ(w.packed.sizes(), (at::IntArrayRef{2, 64, 128}));
  EXPECT_EQ(w.qparams.sizes(), (at::IntArrayRef{2, 64, 2, 2}));
  const double r = rms(dequantize_int4(w, at::kDouble));
  EXPECT_GT(r, 0.03);
  EXPECT_LT(r, 0.07);
  EXPECT_DOUBLE_EQ(int4_weight_bytes(64, 256), 64 * 256 * 0.5 + 64 * 2 * 4.0);
}

// PyTorch's int4 path on the CPU (what the aten backends run there) against the float64 reference.
TEST(Int4Weights, AtenInt4MatmulOnTheCpuMatchesFloat64) {
  at::manual_seed(5);
  for (int64_t cols : {128, 256, 1024}) {
    SCOPED_TRACE(cols);
    Int4Weights w = random_int4({64, cols}, 0.02, at::kCPU);
    at::Tensor x = at::randn({1, cols}, at::kBFloat16);
    AtenInt4 packed = aten_int4_layout(w);
    EXPECT_EQ(packed.scales_and_zeros.sizes(), (at::IntArrayRef{cols / 128, 64, 2}));
    at::Tensor y = aten_int4_mm(x, packed);
    ASSERT_EQ(y.sizes(), (at::IntArrayRef{1, 64}));
    at::Tensor wd = dequantize_int4(w, at::kDouble);
    expect_close(y[0], gemv_reference(wd, x[0]), gemv_tolerance(wd, x[0]), "aten int4 on the cpu");
  }
}

}  // namespace
}  // namespace opbench::kernels
