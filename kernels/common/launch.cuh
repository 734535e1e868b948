// One kernel launch, optionally as a programmatic dependent launch: with `programmatic` on a device of
// compute capability 9.0 or newer, the kernel may start before the previous kernel of the stream has
// finished (once that kernel allows it, griddepcontrol.launch_dependents), and must itself wait
// (griddepcontrol.wait) before it reads anything an earlier kernel writes. Captured in a CUDA graph,
// the dependency becomes a programmatic edge. Checks the launch (throws opbench::Error).
// Include only from .cu files.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <utility>

#include "kernels/common/per_device.h"
#include "kernels/common/prefetch_range.h"
#include "opbench/check.h"

namespace opbench::kernels {

// Waits until the kernels this one depends on have finished and their writes are visible (a no-op
// without programmatic dependent launch, and before sm_90).
__device__ __forceinline__ void wait_for_inputs() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
// Lets the next kernel of the stream launch (its blocks start as this kernel's retire).
__device__ __forceinline__ void allow_next_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Start fetching the cache line holding `p` into L2 or L1; no register waits for it. What a kernel reads
// that no earlier kernel writes (weights) may be fetched so before wait_for_inputs.
__device__ __forceinline__ void prefetch_l2(const void* p) { asm volatile("prefetch.global.L2 [%0];" ::"l"(p)); }
__device__ __forceinline__ void prefetch_l1(const void* p) { asm volatile("prefetch.global.L1 [%0];" ::"l"(p)); }

// Block `part` of `parts` fetches its share of `r` into L2: bulk prefetches of up to kPrefetchPieceBytes,
// one per thread at a time (sm_90; nothing before). A hint: no thread waits for it.
constexpr int64_t kPrefetchPieceBytes = 4096;
__device__ __forceinline__ void prefetch_share_l2(const PrefetchRange& r, int64_t part, int64_t parts) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const int64_t pieces = (r.bytes + kPrefetchPieceBytes - 1) / kPrefetchPieceBytes;
  const int64_t per_part = (pieces + parts - 1) / parts;
  const int64_t end = (part + 1) * per_part < pieces ? (part + 1) * per_part : pieces;
  for (int64_t i = part * per_part + threadIdx.x; i < end; i += blockDim.x) {
    const int64_t offset = i * kPrefetchPieceBytes;
    const auto size = static_cast<uint32_t>(r.bytes - offset < kPrefetchPieceBytes ? r.bytes - offset : kPrefetchPieceBytes);
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(static_cast<const char*>(r.ptr) + offset), "r"(size)
                 : "memory");
  }
#endif
}

// This block's share of each of `ranges` (the grid's blocks numbered x fastest, then y).
template <int kRanges>
__device__ __forceinline__ void prefetch_block_share_l2(const PrefetchRange (&ranges)[kRanges]) {
  const int64_t block = static_cast<int64_t>(blockIdx.y) * gridDim.x + blockIdx.x, blocks = int64_t{gridDim.x} * gridDim.y;
#pragma unroll
  for (int i = 0; i < kRanges; ++i) prefetch_share_l2(ranges[i], block, blocks);
}

// True when the current device supports programmatic dependent launch (compute capability >= 9.0).
// Read once per device: the decode step asks on every launch.
inline bool programmatic_launch_supported() {
  static std::atomic<int8_t> cache[kMaxCachedDevices] = {};
  return once_per_device(cache, [](int device) {
           int major = 0;
           OPBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
           return major >= 9 ? 1 : 0;
         }) == 1;
}

template <typename... Params, typename... Args>
void launch_kernel(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes, cudaStream_t stream,
                   bool programmatic, Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  if (programmatic && programmatic_launch_supported()) {
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
  }
  OPBENCH_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace opbench::kernels
