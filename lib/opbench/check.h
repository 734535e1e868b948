// One checking macro for every CUDA runtime and cuBLAS call. A failed call throws opbench::Error whose
// message names the call, the file:line and the CUDA error string; a benchmark case turns it into
// SkipWithError and the sweep goes on.
#pragma once
#include <stdexcept>
#include <string>

namespace opbench {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {
[[noreturn]] void throw_call_failed(const char* api, int code, const char* what, const char* call,
                                    const char* file, int line);
}  // namespace detail
}  // namespace opbench

#ifdef OPBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#define OPBENCH_CUDA_CHECK(call)                                                                \
  do {                                                                                          \
    cudaError_t opbench_status_ = (call);                                                       \
    if (opbench_status_ != cudaSuccess)                                                         \
      ::opbench::detail::throw_call_failed("CUDA", static_cast<int>(opbench_status_),           \
                                           cudaGetErrorString(opbench_status_), #call, __FILE__, \
                                           __LINE__);                                           \
  } while (0)

// For cuBLAS calls. Expands to code that names CUBLAS_STATUS_SUCCESS and cublasGetStatusString, so
// a file using it includes <cublas_v2.h> and links cuBLAS itself; this header does not pull them in.
#define OPBENCH_CUBLAS_CHECK(call)                                                              \
  do {                                                                                          \
    cublasStatus_t opbench_cublas_status_ = (call);                                             \
    if (opbench_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                        \
      ::opbench::detail::throw_call_failed("cuBLAS", static_cast<int>(opbench_cublas_status_),  \
                                           cublasGetStatusString(opbench_cublas_status_), #call, \
                                           __FILE__, __LINE__);                                 \
  } while (0)
#endif
