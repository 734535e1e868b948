#include "opbench/reference.h"

#include <ATen/ATen.h>

#include <sstream>

#include "opbench/check.h"

namespace opbench {

Tolerance tolerance_for(c10::ScalarType output_dtype) {
  switch (output_dtype) {
    case c10::ScalarType::BFloat16: return {1.6e-2, 1e-2};
    case c10::ScalarType::Half: return {1e-3, 1e-3};
    case c10::ScalarType::Float: return {1.3e-6, 1e-5};
    default: return {1e-7, 1e-7};
  }
}

void expect_close(const at::Tensor& actual, const at::Tensor& expected, Tolerance tol,
                  const std::string& what) {
  if (!actual.sizes().equals(expected.sizes()))
    throw Error(what + ": output shape " + c10::str(actual.sizes()) + " differs from the reference's " +
                c10::str(expected.sizes()));
  at::Tensor ref = expected.to(at::kCPU, at::kDouble);
  at::Tensor got = actual.to(at::kCPU, at::kDouble);
  if (ref.numel() > 0 && ref.abs().max().item<double>() == 0)
    throw Error(what + ": the reference output is all zeros; refusing to time zeros");
  at::Tensor excess = (got - ref).abs() - (tol.atol + tol.rtol * ref.abs());
  at::Tensor bad = (excess > 0).logical_or(got.isnan());
  if (bad.any().item<bool>()) {
    int64_t worst = at::where(got.isnan(), at::full_like(excess, INFINITY), excess)
                        .flatten().argmax().item<int64_t>();
    std::ostringstream msg;
    msg << what << ": " << bad.sum().item<int64_t>() << " of " << ref.numel()
        << " elements outside rtol=" << tol.rtol << " atol=" << tol.atol << "; worst at flat index "
        << worst << ": got " << got.flatten()[worst].item<double>() << ", expected "
        << ref.flatten()[worst].item<double>();
    throw Error(msg.str());
  }
}

}  // namespace opbench
