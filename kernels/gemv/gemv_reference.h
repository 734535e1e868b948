// The GEMV's float64 reference and its tolerance: the Gemv and GatherGemv families' checks, the GPU
// test (gemv_test.cpp) and the tuner (gemv_tune.cu) hold the kernel's output to them.
#pragma once
#include <ATen/core/Tensor.h>

#include "opbench/reference.h"

namespace opbench::kernels {

// W @ x in float64 on W's device. W [rows, cols], or [slices, rows, cols] (the experts a gather
// selects, in order); x [cols] (one for every slice) or [slices, cols]; row_scale (optional) [rows] or
// [slices, rows], multiplying each output row. Returns [rows] or [slices, rows].
at::Tensor gemv_reference(const at::Tensor& w, const at::Tensor& x, const at::Tensor& row_scale = {});

// The tolerance of a bf16 output of that GEMV against gemv_reference: dot_tolerance(cols,
// rms(W) * rms(row_scale), rms(x)) (kernels/common/dot_tolerance.h).
Tolerance gemv_tolerance(const at::Tensor& w, const at::Tensor& x, const at::Tensor& row_scale = {});

}  // namespace opbench::kernels
