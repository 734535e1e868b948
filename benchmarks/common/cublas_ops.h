// cuBLAS called directly (not through ATen), for the `cublas` backends and the GEMM ceiling.
// One cuBLAS handle per process, created on first use and destroyed at exit (RAII), with its own
// 32 MiB workspace so that no call allocates (which keeps the calls CUDA-graph capturable). Every call
// binds the handle to the given stream (pass the current ATen stream) and is checked with
// OPBENCH_CUBLAS_CHECK. bf16 inputs and outputs, fp32 compute (CUBLAS_COMPUTE_32F), default algorithm
// selection. Not thread-safe: the benchmarks call it from one thread.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace opbench::kernels {

// y[rows] = W @ x. W row-major rows x cols with leading dimension `ld` (elements, >= cols); x and y
// contiguous. Runs cublasGemmEx with n = 1 (cuBLAS has no bf16 gemv), as ATen does for a bf16 mv.
void cublas_gemv_bf16(const void* w, int64_t rows, int64_t cols, int64_t ld, const void* x, void* y,
                      cudaStream_t stream);

// C = A @ B, all row-major and contiguous: A m x k, B k x n, C m x n (cublasGemmEx).
void cublas_gemm_bf16(const void* a, const void* b, void* c, int64_t m, int64_t n, int64_t k,
                      cudaStream_t stream);

}  // namespace opbench::kernels
