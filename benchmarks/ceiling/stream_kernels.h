// Stream kernels for the bandwidth ceilings: a read-only stream and a write-only stream over a buffer,
// each with 16-byte accesses, a grid sized to fill the GPU (a few blocks per SM, each striding over
// the buffer) so that enough bytes are in flight. Plain C++ interface.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace opbench::kernels {

// Reads every byte of `data` (`bytes` a multiple of 16, `data` 16-byte aligned) and adds its 32-bit
// words, wrapping, into *checksum (which the caller zeroes first): the result depends on every word,
// so the reads cannot be elided, and the caller can check it exactly.
void launch_read_stream(const void* data, int64_t bytes, uint32_t* checksum, cudaStream_t stream);

// Writes `pattern` to every 32-bit word of `data` (`bytes` a multiple of 16, 16-byte aligned).
void launch_write_stream(void* data, int64_t bytes, uint32_t pattern, cudaStream_t stream);

}  // namespace opbench::kernels
