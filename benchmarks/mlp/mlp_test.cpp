// MLP's declaration: every parameter read once, the two matrix-vector products as FLOPs held against
// the bf16 peak (so at batch 1 its %peak is the bandwidth share), and its shape names.
#include <gtest/gtest.h>

#include "mlp/mlp.h"
#include "opbench/family.h"

namespace opbench {
namespace {

TEST(Mlp, CountsEveryParameterAndTheTwoMatmuls) {
  const Family& mlp = family_named("MLP");
  const double d = 4096, h = 14336;
  Work w = mlp.work(c10::kBFloat16, {4096, 14336});
  // W1 + b1 + LN1 (weight, bias) + W2 + b2 + LN2, all bf16.
  EXPECT_DOUBLE_EQ(w.bytes_read, 2 * (d * h + h + 2 * h + h * d + d + 2 * d));
  EXPECT_DOUBLE_EQ(w.flops, 2 * d * h + 2 * h * d);
  EXPECT_EQ(mlp.peak, PeakKind::kBf16);
  // 1 FLOP per weight byte: at H100 SXM's 3350 GB/s that is 0.34% of its 989 TFLOP/s.
  DatasheetPeaks h100{"H100 SXM", 989, 67, 1979, 3350};
  w.compute_peak = mlp.peak;
  Figures f = figures_of(w, w.bytes_read / 3350e9, h100, {});
  EXPECT_NEAR(*f.compute_of_peak, 0.0034, 0.0001);
  EXPECT_NEAR(*f.percent_of_peak(), 100, 1e-9);   // the roofline maximum: the bandwidth share
}

TEST(Mlp, ToleranceIsSixteenHalfUlpsOfTheFinalWeight) {
  EXPECT_DOUBLE_EQ(mlp::output_tolerance(1.5).atol, 1.5 / 32);
  EXPECT_DOUBLE_EQ(mlp::output_tolerance(1.5).rtol, 1.6e-2);
}

TEST(Mlp, ShapeNamesCarryTheHiddenSizeOnlyWhenItIsNotGptFasts) {
  DeviceInfo gpu, cpu;
  gpu.is_gpu = true;
  EXPECT_EQ(cases_of(family_named("MLP"), gpu)[2].name(), "MLP/bf16/4096/aten");
  EXPECT_EQ(cases_of(family_named("MLP"), gpu)[3].name(), "MLP/bf16/4096/inductor");
  EXPECT_EQ(cases_of(family_named("MLP"), cpu)[0].name(), "MLP/bf16/64x256/aten");
}

}  // namespace
}  // namespace opbench
