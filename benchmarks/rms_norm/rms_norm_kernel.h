// opbench's own RMSNorm kernel: y = x * rsqrt(mean(x^2) + eps) * w over the last dim of x (rows x cols),
// bf16, fp16 or fp32, statistics in fp32 (as Llama's reference computes them in float). The row held in
// registers (short rows, several a block) or read twice, the second time from L2 (long rows, a block
// each), so x is read from memory once when its width is a multiple of the 16-byte vector and the pointers are 16-byte aligned; a
// scalar loop otherwise (common/row_norm.cuh).
#pragma once
#include <cuda_runtime_api.h>

#include "common/norm_args.h"

namespace opbench::kernels {

// True when a vector path (the row read once, held in registers or shared memory) runs.
bool rms_norm_vectorizable(const NormArgs& args);

// Enqueues the kernel on `stream` and checks the launch. Throws opbench::Error on invalid arguments
// (null pointers, rows or cols < 1, row_stride < cols) or a failed launch. Does not synchronize.
// args.b is ignored.
void launch_rms_norm(const NormArgs& args, cudaStream_t stream);

}  // namespace opbench::kernels
