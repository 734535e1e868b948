// Internal: see block_stream.cu. `release` and `timed_out` are device pointers to mapped host memory.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace opbench::detail {
void launch_block_stream(cudaStream_t stream, const int32_t* release, int32_t* timed_out,
                         uint64_t timeout_ns);
}  // namespace opbench::detail
