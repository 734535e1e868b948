// opbench's own read and write streams, the Ceiling family's: the access pattern of the fastest own
// kernels (a 32 KiB chunk per block of 512 threads, 16-byte vectors, two in flight per thread, streamed
// past the caches), with as little arithmetic as a stream can have, so that they read and write faster
// than ATen's sum and fill_. There is no own copy: cudaMemcpyAsync is faster. One launch configuration
// at every size (the constants in stream_kernels.cu). Float64 reference: stream_reference.h.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace opbench::kernels {

constexpr int64_t kStreamChunkBytes = 32 * 1024;   // what one block reads or writes

// Reads `bytes` of bf16 at `data` once and writes the fp32 sum of each 32 KiB chunk to chunk_sums[i]
// (bytes / kStreamChunkBytes of them), so that the read can be checked. REQUIRES: data 16-byte aligned,
// bytes a positive multiple of kStreamChunkBytes (else throws opbench::Error). Enqueues on `stream`,
// checks the launch, does not synchronize.
void launch_read_stream(const void* data, int64_t bytes, float* chunk_sums, cudaStream_t stream);

// Writes the 32-bit `word` over `bytes` at `data`. REQUIRES as launch_read_stream.
void launch_write_stream(void* data, int64_t bytes, uint32_t word, cudaStream_t stream);

}  // namespace opbench::kernels
