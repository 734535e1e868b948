// One kernel launch, optionally as a programmatic dependent launch: with `programmatic` on a device of
// compute capability 9.0 or newer, the kernel may start before the previous kernel of the stream has
// finished (once that kernel allows it, griddepcontrol.launch_dependents), and must itself wait
// (griddepcontrol.wait) before it reads anything an earlier kernel writes. Captured in a CUDA graph,
// the dependency becomes a programmatic edge; under a ScopedSerialLaunches (serial_launches.h) it is an
// ordinary one. Checks the launch (throws opbench::Error).
// Include only from .cu files.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <utility>

#include "kernels/common/per_device.h"
#include "kernels/common/serial_launches.h"
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
  if (programmatic && programmatic_launch_supported() && !serial_launches_forced()) {
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = 1;
  }
  OPBENCH_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace opbench::kernels
