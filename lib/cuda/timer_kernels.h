// Internal: the timers' own kernels (timer_kernels.cu): the stream hold, clock stamps, the injected
// delay, the L2 flush.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace opbench::detail {

// Holds `stream` until the host sets *release (mapped host memory, as is `timed_out`), or sets
// *timed_out after `timeout_ns`.
void launch_block_stream(cudaStream_t stream, const int32_t* release, int32_t* timed_out, uint64_t timeout_ns);

// Writes {globaltimer ns, clock64 cycles} as read on SM 0 to `out` (device pointer to mapped host
// memory, 2 x uint64, 16-byte aligned). A grid of 2 x sm_count one-thread blocks makes a block on SM 0 all but certain;
// `out` is zeroed first by the caller: {0, 0} after the kernel means no block ran there.
void launch_sm0_timestamps(cudaStream_t stream, uint64_t* out, int sm_count);

// Keeps the stream busy for `nanoseconds` (one thread spinning on globaltimer): the injected delay of
// --opbench_inject_slowdown.
void launch_spin(cudaStream_t stream, uint64_t nanoseconds);

// Reads `bytes` of `buffer` (a multiple of 128, 16-byte aligned) so that L2 holds only clean lines of
// it afterwards, of normal priority: the cold-cache flush. A read, not a memset: a memset leaves L2 full
// of dirty lines that the timed kernel would then pay to write back (measured on the H100: +6% on a 190 us
// GEMV, +17% on a 22 us rms norm against ncu, whose cache control invalidates). From sm_80 on the read
// carries an L2 evict_last policy and a second kernel then demotes the buffer's lines to evict_normal:
// lines an earlier kernel read with evict_last (as inductor's norms and GEMVs read x) survive a plain
// read of 2x L2, but not newer evict_last lines (measured on the H100, LayerNorm 4096x8192 after such a
// read: 5% faster with the plain read flush, unchanged with this one). `sink` (one int, device) is
// written only if the data has an impossible checksum, which keeps the loads.
void launch_read_flush(cudaStream_t stream, const void* buffer, size_t bytes, int* sink, int sm_count);

}  // namespace opbench::detail
