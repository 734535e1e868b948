// opbench's own row normalizations over the last dim of x (rows x cols), bf16, fp16 or fp32,
// statistics in fp32 (arguments: row_norm_args.h):
//   RMSNorm    y = x * rsqrt(mean(x^2) + eps) * w, as Llama's reference computes it: the normalized
//              value rounded to the dtype, then multiplied by the weight.
//   LayerNorm  y = (x - mean) / sqrt(var + eps) * w + b (b optional), the biased variance, the output
//              computed in fp32 and rounded once, as ATen's kernel.
// x is read from memory once when its width is a multiple of the 16-byte vector and the pointers are
// 16-byte aligned: a short row held in registers (several a block), a longer one read twice, the second
// time from L1 or L2 (a block each); a scalar loop otherwise. The kernels: row_norm_kernels.cuh; the
// configuration a launch runs: the table in row_norm_configs.h. Plain C++ interface (no ATen).
#pragma once
#include <cuda_runtime_api.h>

#include "kernels/row_norm/row_norm_args.h"

namespace opbench::kernels {

// True when a vector path (the row read from memory once) runs. rms_norm ignores args.b.
bool rms_norm_vectorizable(const NormArgs& args);
bool layer_norm_vectorizable(const NormArgs& args);

// Enqueue the kernel on `stream` and check the launch. Throw opbench::Error on invalid arguments (null
// pointers, rows or cols < 1, row_stride < cols) or a failed launch. Do not synchronize.
void launch_rms_norm(const NormArgs& args, cudaStream_t stream);     // args.b is ignored
void launch_layer_norm(const NormArgs& args, cudaStream_t stream);   // args.b may be nullptr (no bias)

}  // namespace opbench::kernels
