// cuBLAS calls for the families: see cublas_ops.h. Host code only; a .cu file so that it is built
// only in CUDA builds (CMake globs benchmarks/*/*.cu into the families there).
#include <cublas_v2.h>

#include <climits>
#include <string>

#include "cublas_ops.h"
#include "opbench/check.h"

namespace opbench::kernels {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;   // cuBLAS's recommendation for Hopper

// The process's cuBLAS handle and its workspace. Created once, on first use, on the current device.
class CublasContext {
 public:
  CublasContext() {
    OPBENCH_CUBLAS_CHECK(cublasCreate(&handle_));
    cudaError_t status = cudaMalloc(&workspace_, kWorkspaceBytes);
    if (status != cudaSuccess) {
      cublasDestroy(handle_);
      OPBENCH_CUDA_CHECK(status);
    }
  }
  ~CublasContext() {
    // At exit; errors are ignored (the CUDA runtime may already be shutting down).
    cublasDestroy(handle_);
    cudaFree(workspace_);
  }
  CublasContext(const CublasContext&) = delete;
  CublasContext& operator=(const CublasContext&) = delete;

  // cublasSetStream resets the workspace to cuBLAS's own pool, so the workspace is set after it.
  cublasHandle_t bind(cudaStream_t stream) {
    OPBENCH_CUBLAS_CHECK(cublasSetStream(handle_, stream));
    OPBENCH_CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace_, kWorkspaceBytes));
    return handle_;
  }

 private:
  cublasHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
};

cublasHandle_t handle_on(cudaStream_t stream) {
  static CublasContext context;
  return context.bind(stream);
}

int to_int(int64_t v, const char* what) {
  if (v <= 0 || v > INT_MAX) throw Error(std::string("cuBLAS: ") + what + " outside [1, INT_MAX]");
  return static_cast<int>(v);
}

}  // namespace

void cublas_gemv_bf16(const void* w, int64_t rows, int64_t cols, int64_t ld, const void* x, void* y,
                      cudaStream_t stream) {
  if (ld < cols) throw Error("cublas_gemv_bf16: ld < cols");
  // y^T (1 x rows) = x^T (1 x cols) @ W^T (cols x rows). Column-major: y (rows x 1) = W (rows x cols,
  // which is the row-major buffer read transposed, lda = ld) @ x (cols x 1).
  const float alpha = 1.f, beta = 0.f;
  OPBENCH_CUBLAS_CHECK(cublasGemmEx(handle_on(stream), CUBLAS_OP_T, CUBLAS_OP_N, to_int(rows, "rows"),
                                    1, to_int(cols, "cols"), &alpha, w, CUDA_R_16BF, to_int(ld, "ld"),
                                    x, CUDA_R_16BF, to_int(cols, "cols"), &beta, y, CUDA_R_16BF,
                                    to_int(rows, "rows"), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void cublas_gemm_bf16(const void* a, const void* b, void* c, int64_t m, int64_t n, int64_t k,
                      cudaStream_t stream) {
  // Row-major C (m x n) = A (m x k) @ B (k x n) is column-major C^T (n x m) = B^T (n x k) @ A^T
  // (k x m), and a row-major buffer read column-major is its transpose: so pass B first (ld n), then
  // A (ld k), and C with ld n, no transposes.
  const float alpha = 1.f, beta = 0.f;
  OPBENCH_CUBLAS_CHECK(cublasGemmEx(handle_on(stream), CUBLAS_OP_N, CUBLAS_OP_N, to_int(n, "n"),
                                    to_int(m, "m"), to_int(k, "k"), &alpha, b, CUDA_R_16BF,
                                    to_int(n, "n"), a, CUDA_R_16BF, to_int(k, "k"), &beta, c,
                                    CUDA_R_16BF, to_int(n, "n"), CUBLAS_COMPUTE_32F,
                                    CUBLAS_GEMM_DEFAULT));
}

}  // namespace opbench::kernels
