// MLP: Linear(D, H) -> LayerNorm(H) -> Linear(H, D) -> LayerNorm(D) on one token x of shape (D,), all
// bf16, H = 14336 -- the gpt-fast `mlp_layer_norm_gelu` micro-benchmark (SimpleMLP; despite the name
// there is no GELU): a decoder MLP block at batch 1. Backends: `aten` (eager: at::linear with bias,
// at::layer_norm with affine parameters, eps 1e-5) and `inductor` (SimpleMLP as mlp.py spells it,
// compiled by AOTInductor, with this case's parameters loaded into the package by name).
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
// the bf16 dense peak so %peak is the roofline maximum (here the bandwidth share).
// Inputs: x = randn; Linear weight uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)) (nn.Linear's
// initialization, so every Linear output is O(1)); every bias uniform in [-0.5, 0.5) and LayerNorm
// weight in [0.5, 1.5) -- random, and large enough that a missing bias or affine step fails the check
// by > 10x (nn.Linear's +-1/sqrt(fan_in) biases would hide inside the tolerance).
// Check: against the same chain in float64 on the same device, rtol 1.6e-2 and atol
// 2^-5 * max|LN2 weight| (mlp::output_tolerance below explains the rule and how much of it CPU ATen uses).
// Shapes: GPU D in {1024, 4096, 8192, 16384} with H = 14336, named `MLP/bf16/<D>/aten`; CPU D = 64
// with H = 256, named `MLP/bf16/64x256/aten` (the hidden size appears in the name whenever it is not
// gpt-fast's 14336).
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randn.h>

#include <cmath>
#include <string>
#include <unordered_map>

#include "mlp/mlp.h"
#include "opbench/family.h"
#include "opbench/inductor.h"
#include "opbench/reference.h"

namespace opbench {
namespace {

constexpr double kMlpLayerNormEps = 1e-5;
constexpr int64_t kHidden = 14336;   // gpt-fast's MLP hidden size

}  // namespace

// Tolerance of the MLP's output (the second LayerNorm's, bf16) against the float64 chain on the same
// parameters, which rounds nothing in between. Each of the four bf16 intermediates (Linear, LayerNorm,
// Linear, LayerNorm) is rounded by <= 2^-9 relative, and a LayerNorm turns the error of its input into
// an error of a few 2^-9 in the normalized value, which its weight then scales:
//   rtol = 1.6e-2, atol = 2^-5 * max|LN2 weight| (16 half-ulps of a unit-scale output).
// Measured with CPU ATen (torch 2.11, this file's parameter distributions, D = 64..16384, H = 14336):
// the worst element used <= 0.27 of this tolerance (max |error| 0.031 at max|weight| ~1.5), while
// leaving out any one bias or LayerNorm affine parameter exceeded it 16-30x.
Tolerance mlp::output_tolerance(double max_abs_final_ln_weight) {
  return {1.6e-2, std::ldexp(1.0, -5) * max_abs_final_ln_weight};
}

namespace {

// Uniform in [low, high), in bf16 on `device`.
at::Tensor uniform(std::vector<int64_t> shape, double low, double high, c10::Device device) {
  auto options = at::TensorOptions().device(device).dtype(c10::kFloat);
  return at::rand(shape, options).mul_(high - low).add_(low).to(c10::kBFloat16);
}

struct MlpParams {
  at::Tensor w1, b1, g1, be1, w2, b2, g2, be2;

  static MlpParams random(int64_t dim, int64_t hidden, c10::Device device) {
    double bound1 = 1.0 / std::sqrt(static_cast<double>(dim));
    double bound2 = 1.0 / std::sqrt(static_cast<double>(hidden));
    auto u = [&](std::vector<int64_t> shape, double low, double high) { return uniform(shape, low, high, device); };
    return {u({hidden, dim}, -bound1, bound1), u({hidden}, -0.5, 0.5), u({hidden}, 0.5, 1.5),
            u({hidden}, -0.5, 0.5),           u({dim, hidden}, -bound2, bound2), u({dim}, -0.5, 0.5),
            u({dim}, 0.5, 1.5),               u({dim}, -0.5, 0.5)};
  }
  MlpParams to(c10::ScalarType dtype) const {
    return {w1.to(dtype), b1.to(dtype), g1.to(dtype), be1.to(dtype),
            w2.to(dtype), b2.to(dtype), g2.to(dtype), be2.to(dtype)};
  }
};

at::Tensor mlp_forward(const at::Tensor& x, const MlpParams& p) {
  at::Tensor h = at::linear(x, p.w1, p.b1);
  h = at::layer_norm(h, {p.w1.size(0)}, p.g1, p.be1, kMlpLayerNormEps);
  at::Tensor z = at::linear(h, p.w2, p.b2);
  return at::layer_norm(z, {p.w2.size(0)}, p.g2, p.be2, kMlpLayerNormEps);
}

// The parameters under the names mlp.py's SimpleMLP gives them (the package leaves them out).
std::unordered_map<std::string, at::Tensor> simple_mlp_parameters(const MlpParams& p) {
  return {{"layers.0.weight", p.w1}, {"layers.0.bias", p.b1}, {"layers.1.weight", p.g1}, {"layers.1.bias", p.be1},
          {"layers.2.weight", p.w2}, {"layers.2.bias", p.b2}, {"layers.3.weight", p.g2}, {"layers.3.bias", p.be2}};
}

void run_mlp(CaseContext& ctx) {
  const int64_t dim = ctx.info().dims[0], hidden = ctx.info().dims[1];
  MlpParams params = MlpParams::random(dim, hidden, ctx.device());
  at::Tensor x = at::randn({dim}, at::TensorOptions().device(ctx.device()).dtype(c10::kBFloat16));
  at::Tensor y;
  std::function<void()> iteration = [&] { y = mlp_forward(x, params); };
  std::unordered_map<std::string, at::Tensor> parameters;
  if (ctx.info().backend == "inductor") {
    auto package = inductor::Package::open(ctx);
    parameters = simple_mlp_parameters(params);
    package->set_constants(parameters);
    iteration = [&, package] { y = package->run({x})[0]; };
  }

  ctx.check_and_time(iteration, [&] {
    at::Tensor expected = mlp_forward(x.to(at::kDouble), params.to(at::kDouble));
    double max_g2 = params.g2.abs().max().item<double>();
    expect_close(y, expected, mlp::output_tolerance(max_g2), "MLP output");
  });
}

// Every parameter read once (so GB/s is the weight bandwidth): 2 * (D*H [W1] + H [b1] + 2H [LN1] +
// H*D [W2] + D [b2] + 2D [LN2]); x and y (2*D bytes each) are not counted. FLOPs: the two
// matrix-vector products, 2*D*H + 2*H*D (bias adds and the LayerNorms, < 0.25%, are not counted).
Work mlp_work(c10::ScalarType, const Dims& dims) {
  const double d = static_cast<double>(dims[0]), h = static_cast<double>(dims[1]);
  return {2.0 * (2.0 * d * h + 3.0 * h + 3.0 * d), 0, 2.0 * d * h + 2.0 * h * d};
}

// `MLP/bf16/<D>/aten` at gpt-fast's hidden size, `<D>x<H>` otherwise (the CPU shape).
std::string mlp_shape_name(const Dims& dims) {
  return dims[1] == kHidden ? shape_name({dims[0]}) : shape_name(dims);
}

}  // namespace

OPBENCH_FAMILY(MLP) {
  return {.name = "MLP", .summary = "Linear(D,14336) -> LayerNorm -> Linear(14336,D) -> LayerNorm on x (D,): gpt-fast's mlp_layer_norm_gelu",
          .experiments = {{"mlp_layer_norm_gelu", Metric::kFlopsUtilization}}, .dtypes = {c10::kBFloat16},
          .gpu_shapes = {{1024, kHidden}, {4096, kHidden}, {8192, kHidden}, {16384, kHidden}}, .cpu_shapes = {{64, 256}},
          .backends = {{"aten"}, {"inductor"}}, .peak = PeakKind::kBf16, .work = mlp_work, .run = run_mlp,
          .name_shape = mlp_shape_name, .python_module = "mlp/mlp.py"};
}

}  // namespace opbench
