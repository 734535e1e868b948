// MLP: Linear(D, H) -> LayerNorm(H) -> Linear(H, D) -> LayerNorm(D) on one token x of shape (D,), all
// bf16, H = 14336 -- the gpt-fast `mlp_layer_norm_gelu` micro-benchmark (SimpleMLP; despite the name
// there is no GELU), measured with ATen eager (at::linear with bias, at::layer_norm with affine
// parameters, eps 1e-5): a decoder MLP block at batch 1.
//
// At batch 1 this is memory-bound: every weight is read once per token and used for 2 FLOPs, so the
// figure that says how good it is is the weight bandwidth (GB/s, all parameters counted as bytes read)
// against HBM bandwidth. The experiment's metric is flops_utilization = achieved FLOP/s / this arch's
// dense bf16 peak (the reporter computes it from TFLOP/s); at batch 1 it is necessarily tiny (~0.3%
// at full HBM bandwidth on an H100). The seed's formula, us_per_iter * flops / 1e9 / 312, multiplies
// time by work instead of dividing work by time and is not a utilization: it is not used.
//
// Bytes: 2 * (2*D*H + 3*H + 3*D) -- W1, W2, the biases and both LayerNorms' weight and bias, each read
// once; x and y (2*D bytes each) are not counted. FLOPs: 4*D*H (the two matrix-vector products, as
// FlopCounterMode counts the seed; bias adds and LayerNorms, < 0.25%, are not counted). Held against
// the bf16 dense peak so %peak is the roofline maximum (here the bandwidth share). See common/common.h.
// Inputs: x = randn; Linear weight uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)) (nn.Linear's
// initialization, so every Linear output is O(1)); every bias uniform in [-0.5, 0.5) and LayerNorm
// weight in [0.5, 1.5) -- random, and large enough that a missing bias or affine step fails the check
// by > 10x (nn.Linear's +-1/sqrt(fan_in) biases would hide inside the tolerance).
// Check: against the same chain in float64 on the same device, rtol 1.6e-2 and atol
// 2^-5 * max|LN2 weight| (families.h explains the rule and how much of it CPU ATen uses).
// Shapes: GPU D in {1024, 4096, 8192, 16384} with H = 14336, named `MLP/bf16/<D>/aten`; CPU D = 64
// with H = 256, named `MLP/bf16/64x256/aten` (the hidden size appears in the name whenever it is not
// gpt-fast's 14336).
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randn.h>
#include <benchmark/benchmark.h>

#include <cmath>

#include "common/common.h"
#include "opbench/cases.h"
#include "opbench/reference.h"

namespace opbench {
namespace {

constexpr double kEps = 1e-5;

struct MlpShape {
  int64_t dim;
  int64_t hidden;
};

// Uniform in [low, high), in bf16 on the bench device.
at::Tensor uniform(std::vector<int64_t> shape, double low, double high) {
  auto options = at::TensorOptions().device(bench_device()).dtype(c10::kFloat);
  return at::rand(shape, options).mul_(high - low).add_(low).to(c10::kBFloat16);
}

struct MlpParams {
  at::Tensor w1, b1, g1, be1, w2, b2, g2, be2;

  static MlpParams random(MlpShape s) {
    double bound1 = 1.0 / std::sqrt(static_cast<double>(s.dim));
    double bound2 = 1.0 / std::sqrt(static_cast<double>(s.hidden));
    return {uniform({s.hidden, s.dim}, -bound1, bound1), uniform({s.hidden}, -0.5, 0.5),
            uniform({s.hidden}, 0.5, 1.5),               uniform({s.hidden}, -0.5, 0.5),
            uniform({s.dim, s.hidden}, -bound2, bound2), uniform({s.dim}, -0.5, 0.5),
            uniform({s.dim}, 0.5, 1.5),                  uniform({s.dim}, -0.5, 0.5)};
  }
  MlpParams to(c10::ScalarType dtype) const {
    return {w1.to(dtype), b1.to(dtype), g1.to(dtype), be1.to(dtype),
            w2.to(dtype), b2.to(dtype), g2.to(dtype), be2.to(dtype)};
  }
};

at::Tensor mlp_forward(const at::Tensor& x, const MlpParams& p) {
  at::Tensor h = at::linear(x, p.w1, p.b1);
  h = at::layer_norm(h, {p.w1.size(0)}, p.g1, p.be1, kEps);
  at::Tensor z = at::linear(h, p.w2, p.b2);
  return at::layer_norm(z, {p.w2.size(0)}, p.g2, p.be2, kEps);
}

void run_mlp(benchmark::State& state, MlpShape shape) {
  MlpParams params = MlpParams::random(shape);
  at::Tensor x =
      at::randn({shape.dim}, at::TensorOptions().device(bench_device()).dtype(c10::kBFloat16));
  at::Tensor y;
  auto iteration = [&] { y = mlp_forward(x, params); };

  iteration();
  at::Tensor expected = mlp_forward(x.to(at::kDouble), params.to(at::kDouble));
  double max_g2 = params.g2.abs().max().item<double>();
  expect_close(y, expected, families::mlp_tolerance(max_g2), "MLP output");
  expected.reset();

  time_iterations(state, iteration, families::mlp_work(shape.dim, shape.hidden));
}

void register_mlp(const DeviceInfo& device) {
  std::vector<MlpShape> shapes;
  if (device.is_gpu)
    for (int64_t d : {1024, 4096, 8192, 16384}) shapes.push_back({d, families::kMlpHidden});
  else
    shapes = {{64, 256}};   // CPU: seconds in CI; the name carries the hidden size (64x256)
  for (auto shape : shapes) {
    std::string shape_str = shape.hidden == families::kMlpHidden
                                ? shape_name({shape.dim})
                                : shape_name({shape.dim, shape.hidden});
    CaseName name{"MLP", dtype_name(c10::kBFloat16), shape_str, "aten"};
    register_case(name, [=](benchmark::State& state) { run_mlp(state, shape); });
  }
}

}  // namespace

OPBENCH_FAMILY(MLP, register_mlp);

}  // namespace opbench
