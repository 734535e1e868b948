#include "kernels/gemv/gemv_reference.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/matmul.h>

#include "kernels/common/dot_tolerance.h"

namespace opbench::kernels {

at::Tensor gemv_reference(const at::Tensor& w, const at::Tensor& x, const at::Tensor& row_scale) {
  const at::Tensor wd = w.to(at::kDouble), xd = x.to(at::kDouble);
  at::Tensor y = xd.dim() == 1 ? at::matmul(wd, xd) : at::matmul(wd, xd.unsqueeze(-1)).squeeze(-1);
  return row_scale.defined() ? y * row_scale.to(at::kDouble) : y;
}

Tolerance gemv_tolerance(const at::Tensor& w, const at::Tensor& x, const at::Tensor& row_scale) {
  const double scale_rms = row_scale.defined() ? rms(row_scale) : 1.0;
  return dot_tolerance(w.size(-1), rms(w) * scale_rms, rms(x));
}

}  // namespace opbench::kernels
