// LayerNorm: y = (x - mean) / sqrt(var + eps) * weight + bias over the last dim of x (BS x D).
// The gpt-fast `layer_norm` micro-benchmark (experiment layer_norm). Backends: `aten` (at::layer_norm,
// eager), `cuda` (opbench's own kernel, kernels/row_norm/row_norm.h: x read from memory once) and
// `inductor` (F.layer_norm as layer_norm.py spells it, compiled by AOTInductor: opbench/inductor.h).
// A bandwidth-bound op: its figure of merit is GB/s against the device's HBM bandwidth.
//
// Bytes per iteration: x read once + y written once = 2 * BS * D * itemsize (the seed's count).
// weight and bias (2 * D * itemsize) are read too but not counted: < 0.05% at BS=4096, and leaving
// them out keeps the figures comparable with the seed's. FLOPs are not counted (not a FLOP-bound op).
// Check: against the kernel's float64 reference (at::layer_norm in float64,
// kernels/row_norm/row_norm_reference.h) on the same (rounded) inputs, per-dtype tolerances.
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/randn.h>
#include <benchmark/benchmark.h>

#include <ATen/ops/empty_like.h>

#include "common/common.h"
#include "kernels/row_norm/row_norm_reference.h"
#include "opbench/check.h"
#include "opbench/family.h"
#include "opbench/inductor.h"
#include "opbench/reference.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include "kernels/row_norm/row_norm.h"
#endif

namespace opbench {
namespace {

constexpr double kLayerNormEps = 1e-5;

void run_layer_norm(CaseContext& ctx) {
  const CaseInfo& c = ctx.info();
  int64_t batch = c.dims[0], dim = c.dims[1];
  auto options = at::TensorOptions().dtype(c.scalar_type).device(ctx.device());
  at::Tensor x = at::randn({batch, dim}, options);
  at::Tensor weight = at::randn({dim}, options);
  at::Tensor bias = at::randn({dim}, options);
  at::Tensor y = at::empty_like(x);
  std::function<void()> iteration;
  if (c.backend == "aten") {
    iteration = [&] { y = at::layer_norm(x, {dim}, weight, bias, kLayerNormEps); };
  } else if (c.backend == "inductor") {
    auto package = inductor::Package::open(ctx);
    iteration = [&, package] { y = package->run({x, weight, bias})[0]; };
  }
#ifdef OPBENCH_HAVE_CUDA
  else if (c.backend == "cuda") {
    kernels::NormArgs args = kernels::norm_args(x, weight, bias, y, kLayerNormEps);
    iteration = [&, args] { kernels::launch_layer_norm(args, c10::cuda::getCurrentCUDAStream().stream()); };
  }
#endif
  else {
    throw Error("LayerNorm: unknown backend " + c.backend);
  }

  ctx.check_and_time(iteration, [&] {
    expect_close(y, kernels::layer_norm_reference(x, weight, bias, kLayerNormEps), tolerance_for(c.scalar_type),
                 "LayerNorm output");
  });
}

}  // namespace

OPBENCH_FAMILY(LayerNorm) {
  return families::norm_family("LayerNorm", "y = layer_norm(x) over the last dim of x (BS x D): gpt-fast's layer_norm, GB/s",
                               "layer_norm", run_layer_norm, "layer_norm/layer_norm.py");
}

}  // namespace opbench
