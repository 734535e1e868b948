// Clock kernels (clock_kernels.h). clock64 counts SM cycles and differs between SMs, so both readings
// of a pair are taken on SM 0; globaltimer is the GPU's ns clock, the same on every SM.
#include "clock_kernels.h"
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

}  // namespace

void launch_sm0_timestamps(cudaStream_t stream, uint64_t* out, int sm_count) {
  sm0_timestamps_kernel<<<2 * sm_count, 1, 0, stream>>>(out);
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

void launch_spin(cudaStream_t stream, uint64_t nanoseconds) {
  spin_kernel<<<1, 1, 0, stream>>>(nanoseconds);
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace opbench::detail
