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

#include "opbench/cases.h"
#include "opbench/reference.h"

namespace opbench {
namespace {

constexpr double kEps = 1e-5;

struct LayerNormShape {
  int64_t batch;
  int64_t dim;
};

void run_layer_norm(benchmark::State& state, c10::ScalarType dtype, LayerNormShape shape) {
  auto options = at::TensorOptions().dtype(dtype).device(bench_device());
  at::Tensor x = at::randn({shape.batch, shape.dim}, options);
  at::Tensor weight = at::randn({shape.dim}, options);
  at::Tensor bias = at::randn({shape.dim}, options);
  at::Tensor y;
  auto iteration = [&] { y = at::layer_norm(x, {shape.dim}, weight, bias, kEps); };

  iteration();
  at::Tensor expected = at::layer_norm(x.to(at::kDouble), {shape.dim}, weight.to(at::kDouble),
                                       bias.to(at::kDouble), kEps);
  expect_close(y, expected, tolerance_for(dtype), "LayerNorm output");

  Work work;
  double bytes = static_cast<double>(shape.batch * shape.dim) * c10::elementSize(dtype);
  work.bytes_read = bytes;
  work.bytes_written = bytes;
  work.compute_peak = PeakKind::kBandwidth;
  time_iterations(state, iteration, work);
}

void register_layer_norm(const DeviceInfo& device) {
  // GPU: the seed's shapes. CPU: small ones so CI runs the family end to end in seconds.
  std::vector<LayerNormShape> shapes;
  if (device.is_gpu)
    shapes = {{4096, 1024}, {4096, 4096}, {4096, 8192}, {4096, 16384}};
  else
    shapes = {{64, 256}, {64, 1024}};
  for (auto dtype : {c10::kBFloat16, c10::kHalf, c10::kFloat}) {
    for (auto shape : shapes) {
      CaseName name{"LayerNorm", dtype_name(dtype), shape_name({shape.batch, shape.dim}), "aten"};
      register_case(name, [=](benchmark::State& state) { run_layer_norm(state, dtype, shape); });
    }
  }
}

}  // namespace

OPBENCH_FAMILY(LayerNorm, register_layer_norm);

}  // namespace opbench
