#include "kernels/row_norm/row_norm_reference.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/rsqrt.h>

namespace opbench::kernels {
namespace {

NormType norm_type(c10::ScalarType dtype) {
  if (dtype == c10::kBFloat16) return NormType::kBf16;
  if (dtype == c10::kHalf) return NormType::kFp16;
  return NormType::kFp32;
}

}  // namespace

at::Tensor rms_norm_reference(const at::Tensor& x, const at::Tensor& w, double eps) {
  at::Tensor xd = x.to(at::kDouble);
  return xd * at::rsqrt(xd.pow(2).mean({-1}, true) + eps) * w.to(at::kDouble);
}

at::Tensor layer_norm_reference(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double eps) {
  const at::Tensor bias = b.defined() ? b.to(at::kDouble) : at::Tensor();
  return at::layer_norm(x.to(at::kDouble), {x.size(-1)}, w.to(at::kDouble), bias, eps);
}

NormArgs norm_args(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, at::Tensor& y, double eps) {
  NormArgs a;
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

}  // namespace opbench::kernels
