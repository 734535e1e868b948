// The correctness check every case runs once before timing: its output against a float64 (or ATen)
// reference, with per-dtype tolerances, and a guard against timing zeros.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>

namespace opbench {

// |actual - expected| <= atol + rtol * |expected| elementwise (as torch.testing.assert_close).
struct Tolerance {
  double rtol;
  double atol;
};

// Documented defaults by the dtype of the op's output: bf16 rtol 1.6e-2 atol 1e-2; fp16 rtol 1e-3
// atol 1e-3; fp32 rtol 1.3e-6 atol 1e-5; fp64 rtol 1e-7 atol 1e-7. Reductions over long rows widen
// these per family (documented there).
Tolerance tolerance_for(c10::ScalarType output_dtype);

// Throws opbench::Error naming `what`, the worst element, its error and the tolerance when the
// check fails, or when `expected` is all zeros (a benchmark must never time zeros).
// REQUIRES: same shapes; `expected` in float64 (or any floating dtype); any devices.
void expect_close(const at::Tensor& actual, const at::Tensor& expected, Tolerance tol,
                  const std::string& what);

}  // namespace opbench
