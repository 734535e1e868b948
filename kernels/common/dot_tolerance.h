// The tolerance of a bf16 output that is a length-k dot product accumulated in fp32, against float64
// on the same (already rounded) inputs: the GEMV's check (kernels/gemv/gemv_reference.h) and every
// other dot-product output's (cuBLAS, the stream sums).
#pragma once
#include <ATen/core/Tensor.h>

#include <cmath>
#include <cstdint>

#include "opbench/reference.h"

namespace opbench {

// rtol = 1.6e-2 (torch.testing's bf16 rtol; the output rounding alone is <= 2^-9 = 0.2%), and
// atol = 1.6e-2 * sqrt(k) * rms(a) * rms(b), i.e. 1.6e-2 of the typical |output| of a random dot
// product, so an output that cancels to near zero is held to the error scale of its terms, not to its
// own tiny value. fp32 accumulation errs by ~sqrt(k) * 6e-8 of that scale; a bf16 running sum errs by
// ~sqrt(k) * 2e-3 of it (0.25 at k = 16384) and a wrong row, column or index by ~1, so both fail.
constexpr double kDotRtol = 1.6e-2;
inline Tolerance dot_tolerance(int64_t k, double rms_a, double rms_b) {
  return {kDotRtol, kDotRtol * std::sqrt(static_cast<double>(k)) * rms_a * rms_b};
}

// Root mean square of a tensor's elements, computed in float64 where the tensor lives.
inline double rms(const at::Tensor& t) { return t.to(at::kDouble).square().mean().sqrt().item<double>(); }

}  // namespace opbench
