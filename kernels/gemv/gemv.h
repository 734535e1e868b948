// opbench's own GEMV (what it computes: gemv_args.h). Groups of warps per few output rows, 16-byte
// loads of W and x with several in flight per lane where the layout allows it (else a scalar loop),
// shuffle and shared-memory reductions, one bf16 store per row; plain GEMVs and two-slice gathers whose
// row length fits a kernel exactly run it (a row a block, no loop). The kernels: gemv_kernels.cuh; the
// configuration a launch runs: the table in gemv_configs.h. Plain C++ interface (no ATen).
#pragma once
#include <cuda_runtime_api.h>

#include "kernels/gemv/gemv_args.h"

namespace opbench::kernels {

// Enqueues the kernel on `stream` and checks the launch (cudaGetLastError). Throws opbench::Error on
// invalid arguments or a failed launch. Does not synchronize.
void launch_gemv(const GemvArgs& args, cudaStream_t stream);

}  // namespace opbench::kernels
