// LayerNorm: y = (x - mean) / sqrt(var + eps) * weight + bias over the last dim of x (BS x D).
// The gpt-fast `layer_norm` micro-benchmark (experiment layer_norm), measured with ATen eager.
// A bandwidth-bound op: its figure of merit is GB/s against the device's HBM bandwidth.
//
// Bytes per iteration: x read once + y written once = 2 * BS * D * itemsize (the seed's count).
// weight and bias (2 * D * itemsize) are read too but not counted: < 0.05% at BS=4096, and leaving
// them out keeps the figures comparable with the seed's. FLOPs are not counted (not a FLOP-bound op).
// Check: against at::layer_norm in float64 on the same (rounded) inputs, per-dtype tolerances.
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/randn.h>
#include <benchmark/benchmark.h>

#include "common/common.h"
#include "opbench/family.h"
#include "opbench/reference.h"

namespace opbench {
namespace {

constexpr double kEps = 1e-5;

void run_layer_norm(CaseContext& ctx) {
  const CaseInfo& c = ctx.info();
  int64_t batch = c.dims[0], dim = c.dims[1];
  auto options = at::TensorOptions().dtype(c.scalar_type).device(ctx.device());
  at::Tensor x = at::randn({batch, dim}, options);
  at::Tensor weight = at::randn({dim}, options);
  at::Tensor bias = at::randn({dim}, options);
  at::Tensor y;
  auto iteration = [&] { y = at::layer_norm(x, {dim}, weight, bias, kEps); };

  ctx.check_and_time(iteration, [&] {
    at::Tensor expected = at::layer_norm(x.to(at::kDouble), {dim}, weight.to(at::kDouble),
                                         bias.to(at::kDouble), kEps);
    expect_close(y, expected, tolerance_for(c.scalar_type), "LayerNorm output");
  });
}

}  // namespace

OPBENCH_FAMILY(LayerNorm) {
  return {.name = "LayerNorm", .summary = "y = layer_norm(x) over the last dim of x (BS x D): gpt-fast's layer_norm, GB/s",
          .experiments = {{"layer_norm", Metric::kMemoryBandwidth}}, .dtypes = families::norm_dtypes(),
          .gpu_shapes = families::norm_gpu_shapes(), .cpu_shapes = families::norm_cpu_shapes(),
          .backends = {{"aten"}}, .work = families::norm_work, .run = run_layer_norm};
}

}  // namespace opbench
