// What several families share: random weights, the dot-product tolerance rule, the norm and GEMV sweeps.
// Each family's own work formula and tolerances live in its folder (benchmarks/<family>/);
// docs/families.md explains each choice.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/norm_args.h"
#include "opbench/family.h"
#include "opbench/reference.h"
#include "opbench/work.h"

namespace opbench::families {

// The row-normalization families (LayerNorm, RMSNorm): gpt-fast's BS = 4096 and D sweep on a GPU, small
// shapes on the CPU; x read once and y written once, 2 * BS * D * itemsize (the seed's count; the
// D-sized weight and bias, < 0.05% at BS = 4096, are not counted, which keeps the figures comparable).
inline std::vector<c10::ScalarType> norm_dtypes() { return {c10::kBFloat16, c10::kHalf, c10::kFloat}; }
inline std::vector<std::vector<int64_t>> norm_gpu_shapes() { return {{4096, 1024}, {4096, 4096}, {4096, 8192}, {4096, 16384}}; }
inline std::vector<std::vector<int64_t>> norm_cpu_shapes() { return {{64, 256}, {64, 1024}}; }
inline Work norm_work(c10::ScalarType dtype, const std::vector<int64_t>& dims) {
  const double bytes = static_cast<double>(dims[0] * dims[1]) * c10::elementSize(dtype);
  return {bytes, bytes};
}

// The kernel dtype of a norm family's case.
inline kernels::NormType norm_type(c10::ScalarType dtype) {
  if (dtype == c10::kBFloat16) return kernels::NormType::kBf16;
  if (dtype == c10::kHalf) return kernels::NormType::kFp16;
  return kernels::NormType::kFp32;
}

// A row-normalization family (LayerNorm, RMSNorm): the norm sweep and byte count, backends aten and
// cuda (an own kernel), one memory-bandwidth experiment.
inline Family norm_family(const char* name, const char* summary, const char* experiment,
                          void (*run)(CaseContext&)) {
  return {.name = name, .summary = summary, .experiments = {{experiment, Metric::kMemoryBandwidth}},
          .dtypes = norm_dtypes(), .gpu_shapes = norm_gpu_shapes(), .cpu_shapes = norm_cpu_shapes(),
          .backends = {{"aten"}, {"cuda", true}}, .work = norm_work, .run = run};
}

// A norm kernel's arguments for contiguous x (rows x cols), w, b (undefined: none) and y.
inline kernels::NormArgs norm_args(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, at::Tensor& y,
                                   double eps) {
  kernels::NormArgs a;
  a.x = x.data_ptr();
  a.w = w.data_ptr();
  a.b = b.defined() ? b.data_ptr() : nullptr;
  a.y = y.data_ptr();
  a.rows = x.size(0);
  a.cols = x.size(1);
  a.row_stride = x.stride(0);
  a.eps = static_cast<float>(eps);
  a.type = norm_type(x.scalar_type());
  return a;
}

// The GEMV-like families' D sweep: gpt-fast's on a GPU, small ones on the CPU (seconds in CI).
inline std::vector<std::vector<int64_t>> gemv_gpu_shapes() { return {{1024}, {4096}, {8192}, {16384}}; }
inline std::vector<std::vector<int64_t>> gemv_cpu_shapes() { return {{64}, {256}}; }

// Tolerance of a bf16 output element that is a length-k dot product of a and b accumulated in fp32,
// against float64 on the same (already rounded) inputs:
//   rtol = 1.6e-2 (torch.testing's bf16 rtol; the output rounding alone is <= 2^-9 = 0.2%), and
//   atol = 1.6e-2 * sqrt(k) * rms(a) * rms(b), i.e. 1.6e-2 of the typical |output| of a random dot
//   product, so an output that cancels to near zero is held to the error scale of its terms, not to
//   its own tiny value. fp32 accumulation errs by ~sqrt(k) * 6e-8 of that scale; a bf16 running sum
//   errs by ~sqrt(k) * 2e-3 of it (0.25 at k = 16384) and a wrong row, column or index by ~1, so
//   both fail.
constexpr double kDotRtol = 1.6e-2;
inline Tolerance dot_tolerance(int64_t k, double rms_a, double rms_b) {
  return {kDotRtol, kDotRtol * std::sqrt(static_cast<double>(k)) * rms_a * rms_b};
}

// Root mean square of a tensor's elements, computed in float64 where the tensor lives.
inline double rms(const at::Tensor& t) {
  return t.to(at::kDouble).square().mean().sqrt().item<double>();
}

// Random weights on `device`, never zeros: int8 uniform in [-127, 127], else randn.
inline at::Tensor random_weights(const std::vector<int64_t>& shape, c10::ScalarType dtype, c10::Device device) {
  auto options = at::TensorOptions().device(device);
  if (dtype == c10::kChar) return at::randint(-127, 128, shape, options.dtype(c10::kChar));
  return at::randn(shape, options.dtype(dtype));
}

}  // namespace opbench::families
