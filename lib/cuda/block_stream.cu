// A kernel that holds its stream until the host releases it (or a timeout passes), so that a timed
// iteration is fully enqueued before the GPU reaches it and host launch latency stays out of the timing.
#include <cstdint>

#include "block_stream.h"
#include "opbench/check.h"

namespace opbench::detail {
namespace {

__device__ uint64_t globaltimer_ns() {
  uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void block_stream_kernel(const volatile int32_t* release, int32_t* timed_out,
                                    uint64_t timeout_ns) {
  uint64_t start = globaltimer_ns();
  while (*release == 0) {
    if (globaltimer_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
  }
}

}  // namespace

void launch_block_stream(cudaStream_t stream, const int32_t* release, int32_t* timed_out,
                         uint64_t timeout_ns) {
  block_stream_kernel<<<1, 1, 0, stream>>>(release, timed_out, timeout_ns);
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace opbench::detail
