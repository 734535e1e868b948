// The timers' kernels (timer_kernels.h). clock64 counts SM cycles and differs between SMs, so both
// readings of a pair are taken on SM 0; globaltimer is the GPU's ns clock, the same on every SM.
#include "timer_kernels.h"
#include "l2_policy.cuh"
#include "opbench/check.h"

namespace opbench::detail {
namespace {

__device__ uint64_t read_globaltimer() {
  uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__device__ uint32_t read_smid() {
  uint32_t smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  return smid;
}

// Holds its stream until the host releases it (or a timeout passes), so that a timed iteration is fully
// enqueued before the GPU reaches it and host launch latency stays out of the timing.
__global__ void block_stream_kernel(const volatile int32_t* release, int32_t* timed_out, uint64_t timeout_ns) {
  const uint64_t start = read_globaltimer();
  while (*release == 0) {
    if (read_globaltimer() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}

__global__ void sm0_timestamps_kernel(uint64_t* out) {
  if (read_smid() != 0) return;
  const uint64_t ns = read_globaltimer();
  const uint64_t cycles = clock64();
  // One 16-byte store: when two blocks land on SM 0, the pair read stays one block's.
  *reinterpret_cast<ulonglong2*>(out) = make_ulonglong2(ns, cycles);
}

__global__ void spin_kernel(uint64_t nanoseconds) {
  const uint64_t start = read_globaltimer();
  while (read_globaltimer() - start < nanoseconds) {
  }
}

// Grid-stride 16-byte loads, four in flight per thread; the XOR of everything read goes nowhere
// unless it equals a value a zeroed buffer cannot give.
__global__ void read_flush_kernel(const uint4* data, size_t count, int* sink) {
  const uint64_t keep = l2_policy(true);
  unsigned acc = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < count; i += 4 * stride) {
    const uint4 a = load_with_policy(data + i, keep), b = load_with_policy(data + i + stride, keep),
                c = load_with_policy(data + i + 2 * stride, keep), d = load_with_policy(data + i + 3 * stride, keep);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < count; i += stride) {
    const uint4 a = load_with_policy(data + i, keep);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x9e3779b9u) *sink = 1;
}

// Back to evict_normal, every 128-byte line of the buffer that read_flush_kernel marked evict_last.
__global__ void demote_flush_kernel(const uint4* data, size_t lines) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t line = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; line < lines; line += stride)
    asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(data + 8 * line) : "memory");
#else
  (void)data;
  (void)lines;
#endif
}

}  // namespace

void launch_block_stream(cudaStream_t stream, const int32_t* release, int32_t* timed_out, uint64_t timeout_ns) {
  block_stream_kernel<<<1, 1, 0, stream>>>(release, timed_out, timeout_ns);
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

void launch_read_flush(cudaStream_t stream, const void* buffer, size_t bytes, int* sink, int sm_count) {
  const auto* data = static_cast<const uint4*>(buffer);
  read_flush_kernel<<<4 * sm_count, 512, 0, stream>>>(data, bytes / 16, sink);
  OPBENCH_CUDA_CHECK(cudaGetLastError());
  demote_flush_kernel<<<4 * sm_count, 512, 0, stream>>>(data, bytes / 128);
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

void launch_sm0_timestamps(cudaStream_t stream, uint64_t* out, int sm_count) {
  sm0_timestamps_kernel<<<2 * sm_count, 1, 0, stream>>>(out);
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

void launch_spin(cudaStream_t stream, uint64_t nanoseconds) {
  spin_kernel<<<1, 1, 0, stream>>>(nanoseconds);
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace opbench::detail
