// The work accounting and tolerance rules of the GEMV-like families (Gemv, GatherGemv, MLP, Ceiling),
// in one header so that tests check the same formulas the benchmarks use. docs/families.md explains
// each choice; the family files say what they measure.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "opbench/cases.h"
#include "opbench/reference.h"
#include "opbench/work.h"

namespace opbench::families {

// gpt-fast's MLP hidden size (Linear(D, 14336) -> LayerNorm -> Linear(14336, D) -> LayerNorm).
constexpr int64_t kMlpHidden = 14336;
// GatherGemv: W holds kExperts matrices, kSelected of them are gathered (idx = [3, 5]).
constexpr int64_t kExperts = 8;
constexpr int64_t kSelected = 2;

// Gemv y = W.to(bf16) @ x, W D x D: the seed's count, W read once = D*D*itemsize(W). x and y (2*D
// bytes each) are not counted: < 0.4% at D >= 1024. FLOPs 2*D*D. Held against HBM bandwidth only
// (1 FLOP per byte at bf16, far below any GPU's ridge point).
inline Work gemv_work(int64_t d, c10::ScalarType weight_dtype) {
  Work w;
  w.bytes_read = static_cast<double>(d) * d * c10::elementSize(weight_dtype);
  w.flops = 2.0 * d * d;
  w.compute_peak = PeakKind::kBandwidth;
  return w;
}

// GatherGemv out = W[idx].to(bf16) @ x, idx of kSelected experts: the seed's count, the gathered
// matrices read once = kSelected*D*D*itemsize(W). FLOPs kSelected*2*D*D. x, idx, out not counted.
inline Work gather_gemv_work(int64_t d, c10::ScalarType weight_dtype) {
  Work w;
  w.bytes_read = static_cast<double>(kSelected) * d * d * c10::elementSize(weight_dtype);
  w.flops = kSelected * 2.0 * d * d;
  w.compute_peak = PeakKind::kBandwidth;
  return w;
}

// MLP on x of shape (D,), bf16 parameters. Bytes: every parameter read once, so GB/s is the weight
// bandwidth: 2 * (D*H [W1] + H [b1] + 2H [LN1 weight, bias] + H*D [W2] + D [b2] + 2D [LN2]).
// x and y (2*D bytes each) are not counted. FLOPs: the two matrix-vector products, 2*D*H + 2*H*D,
// the count FlopCounterMode gives the seed; bias adds (H + D) and the LayerNorms (~8 per element)
// are < 0.25% at D >= 1024 and are not counted. Held against the bf16 dense peak, so %peak is the
// roofline maximum of the bandwidth and the FLOP shares (at batch 1 the bandwidth share wins).
inline Work mlp_work(int64_t d, int64_t hidden) {
  Work w;
  w.bytes_read = 2.0 * (2.0 * d * hidden + 3.0 * hidden + 3.0 * d);
  w.flops = 2.0 * d * hidden + 2.0 * hidden * d;
  w.compute_peak = PeakKind::kBf16;
  return w;
}

// Ceiling copy: `elements` of `dtype` read once and written once.
inline Work copy_work(int64_t elements, c10::ScalarType dtype) {
  Work w;
  w.bytes_read = static_cast<double>(elements) * c10::elementSize(dtype);
  w.bytes_written = w.bytes_read;
  w.compute_peak = PeakKind::kBandwidth;
  return w;
}

// Ceiling GEMM C (m x n) = A (m x k) @ B (k x n), bf16: FLOPs 2*m*n*k; A and B read once, C written once.
inline Work gemm_work(int64_t m, int64_t n, int64_t k) {
  Work w;
  w.bytes_read = 2.0 * (static_cast<double>(m) * k + static_cast<double>(k) * n);
  w.bytes_written = 2.0 * m * n;
  w.flops = 2.0 * m * n * k;
  w.compute_peak = PeakKind::kBf16;
  return w;
}

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

// Tolerance of the MLP's output (the second LayerNorm's, bf16) against the float64 chain on the same
// parameters, which rounds nothing in between. Each of the four bf16 intermediates (Linear, LayerNorm,
// Linear, LayerNorm) is rounded by <= 2^-9 relative, and a LayerNorm turns the error of its input into
// an error of a few 2^-9 in the normalized value, which its weight then scales:
//   rtol = 1.6e-2, atol = 2^-5 * max|LN2 weight| (16 half-ulps of a unit-scale output).
// Measured with CPU ATen (torch 2.11, mlp.cpp's parameter distributions, D = 64..16384, H = 14336):
// the worst element used <= 0.27 of this tolerance (max |error| 0.031 at max|weight| ~1.5), while
// leaving out any one bias or LayerNorm affine parameter exceeded it 16-30x.
inline Tolerance mlp_tolerance(double max_abs_final_ln_weight) {
  return {1.6e-2, std::ldexp(1.0, -5) * max_abs_final_ln_weight};
}

// Root mean square of a tensor's elements, computed in float64 where the tensor lives.
inline double rms(const at::Tensor& t) {
  return t.to(at::kDouble).square().mean().sqrt().item<double>();
}

// Random weights on the bench device, never zeros: int8 uniform in [-127, 127], else randn.
inline at::Tensor random_weights(const std::vector<int64_t>& shape, c10::ScalarType dtype) {
  auto options = at::TensorOptions().device(bench_device());
  if (dtype == c10::kChar) return at::randint(-127, 128, shape, options.dtype(c10::kChar));
  return at::randn(shape, options.dtype(dtype));
}

// False (and the case skipped as unavailable) when a non-aten backend cannot run in this build or on
// this device.
inline bool backend_can_run(benchmark::State& state, const std::string& backend) {
  if (backend == "aten") return true;
#ifndef OPBENCH_HAVE_CUDA
  skip_unavailable(state, backend + " backend: opbench was built without CUDA");
  return false;
#else
  if (current_device().is_gpu) return true;
  skip_unavailable(state, backend + " backend needs a CUDA device");
  return false;
#endif
}

// Registers Family/<bf16|int8>/<D>/<backend> for the seed's D (GPU) or small D (CPU, aten only, so CI
// runs the family end to end in seconds). `gpu_backends(dtype)` lists the backends beyond aten.
using GemvRun = void (*)(benchmark::State&, c10::ScalarType, int64_t, const std::string&);
inline void register_gemv_like(const DeviceInfo& device, const char* family,
                               std::vector<std::string> (*gpu_backends)(c10::ScalarType), GemvRun run) {
  std::vector<int64_t> dims = device.is_gpu ? std::vector<int64_t>{1024, 4096, 8192, 16384}
                                            : std::vector<int64_t>{64, 256};
  for (auto dtype : {c10::kBFloat16, c10::kChar}) {
    std::vector<std::string> backends = {"aten"};
    if (device.is_gpu)
      for (auto& backend : gpu_backends(dtype)) backends.push_back(backend);
    for (int64_t d : dims)
      for (const auto& backend : backends)
        register_case(CaseName{family, dtype_name(dtype), shape_name({d}), backend},
                      [=](benchmark::State& state) { run(state, dtype, d, backend); });
  }
}

}  // namespace opbench::families
