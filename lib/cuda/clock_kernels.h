// Internal: kernels that read the GPU's clocks (clock_kernels.cu).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace opbench::detail {

// Writes {globaltimer ns, clock64 cycles} as read on SM 0 to `out` (device pointer to mapped host
// memory, 2 x uint64, 16-byte aligned). A grid of 2 x sm_count one-thread blocks makes a block on SM 0 all but certain;
// `out` is zeroed first by the caller: {0, 0} after the kernel means no block ran there.
void launch_sm0_timestamps(cudaStream_t stream, uint64_t* out, int sm_count);

// Keeps the stream busy for `nanoseconds` (one thread spinning on globaltimer): the injected delay of
// --opbench_inject_slowdown.
void launch_spin(cudaStream_t stream, uint64_t nanoseconds);

}  // namespace opbench::detail
