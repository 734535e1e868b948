// opbench's own LayerNorm kernel: y = (x - mean) / sqrt(var + eps) * w + b over the last dim of x
// (rows x cols), bf16, fp16 or fp32; mean and variance in fp32 from the row held in registers (rows of
// up to 256 16-byte vectors: the mean, then the centered sum of squares) or from shifted sums in a first
// pass over longer rows, whose second pass reads x from L2; one read of x from memory either way; the
// output computed in fp32 and rounded once, as ATen's kernel does. Same structure as RMSNorm's
// (common/row_norm.cuh).
#pragma once
#include <cuda_runtime_api.h>

#include "common/norm_args.h"

namespace opbench::kernels {

// True when a vector path (the row read once, held in registers or shared memory) runs.
bool layer_norm_vectorizable(const NormArgs& args);

// Enqueues the kernel on `stream` and checks the launch. Throws opbench::Error on invalid arguments
// (null pointers, rows or cols < 1, row_stride < cols) or a failed launch. Does not synchronize.
// args.b may be nullptr (no bias).
void launch_layer_norm(const NormArgs& args, cudaStream_t stream);

}  // namespace opbench::kernels
