// The row norms from ATen's side: their float64 references, which the RMSNorm and LayerNorm families'
// checks, the GPU test (row_norm_test.cpp) and the tuner (row_norm_tune.cu) hold the kernels' outputs
// to (with tolerance_for(dtype)), and the kernels' arguments for tensors.
#pragma once
#include <ATen/core/Tensor.h>

#include "kernels/row_norm/row_norm_args.h"

namespace opbench::kernels {

// Over the last dim of x, in float64 on x's device: x * rsqrt(mean(x^2) + eps) * w.
at::Tensor rms_norm_reference(const at::Tensor& x, const at::Tensor& w, double eps);
// Over the last dim of x, in float64 on x's device: (x - mean) / sqrt(var + eps) * w + b, the biased
// variance (at::layer_norm); b undefined: no bias.
at::Tensor layer_norm_reference(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double eps);

// The kernels' arguments for x (rows x cols, any row stride), w, b (undefined: none) and a contiguous y.
NormArgs norm_args(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, at::Tensor& y, double eps);

}  // namespace opbench::kernels
