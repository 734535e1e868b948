// opbench's own RMSNorm kernel: y = x * rsqrt(mean(x^2) + eps) * w over the last dim of x (rows x cols),
// x, w and y of one dtype (bf16, fp16 or fp32), statistics in fp32 (as Llama's reference computes them
// in float). One block per row; when cols is a multiple of the 16-byte vector and x, w, y are 16-byte
// aligned, each thread keeps its share of the row in registers (x is read once from memory), else a
// scalar two-pass loop (x read twice; correct for any shape and alignment).
// Plain C++ interface (no ATen) so that .cpp files and tests can call it.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace opbench::kernels {

enum class NormType { kBf16, kFp16, kFp32 };

struct RmsNormArgs {
  const void* x = nullptr;   // rows x cols, contiguous rows of `row_stride` elements
  const void* w = nullptr;   // cols
  void* y = nullptr;         // rows x cols, contiguous (row stride cols)
  int64_t rows = 0, cols = 0, row_stride = 0;
  float eps = 1e-5f;
  NormType type = NormType::kBf16;
};

// True when the register-resident vector path runs (see above).
bool rms_norm_vectorizable(const RmsNormArgs& args);

// Enqueues the kernel on `stream` and checks the launch. Throws opbench::Error on invalid arguments
// (null pointers, rows or cols < 1, row_stride < cols) or a failed launch. Does not synchronize.
void launch_rms_norm(const RmsNormArgs& args, cudaStream_t stream);

}  // namespace opbench::kernels
