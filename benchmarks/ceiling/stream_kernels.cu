// Stream kernels: see stream_kernels.h. Each thread keeps 4 independent 16-byte loads (or stores) in
// flight per loop step; blocks stride over the buffer.
#include <algorithm>
#include <string>

#include "opbench/check.h"
#include "stream_kernels.h"

namespace opbench::kernels {
namespace {

constexpr int kThreads = 512;
constexpr int kUnroll = 4;

__global__ void read_stream(const uint4* __restrict__ data, int64_t vectors, uint32_t* checksum) {
  uint32_t sum = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcs(data + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) sum += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  for (; i < vectors; i += stride) {
    uint4 v = __ldcs(data + i);
    sum += v.x + v.y + v.z + v.w;
  }
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(checksum, sum);
}

__global__ void write_stream(uint4* __restrict__ data, int64_t vectors, uint32_t pattern) {
  const uint4 v = make_uint4(pattern, pattern, pattern, pattern);
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vectors; i += stride)
    __stcs(data + i, v);
}

// Enough resident blocks to fill every SM (the occupancy calculator's figure), capped by the work.
template <typename Kernel>
int grid_for(Kernel kernel, int64_t vectors) {
  int device = 0, sms = 0, per_sm = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&device));
  OPBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  OPBENCH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  int64_t needed = (vectors + kThreads - 1) / kThreads;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(needed, static_cast<int64_t>(sms) * per_sm)));
}

void check_buffer(const void* data, int64_t bytes, const char* who) {
  if (!data || bytes < 16 || bytes % 16 != 0 || reinterpret_cast<uintptr_t>(data) % 16 != 0)
    throw Error(std::string(who) + ": needs a 16-byte aligned buffer of a positive multiple of 16 bytes, got " +
                std::to_string(bytes) + " bytes");
}

}  // namespace

void launch_read_stream(const void* data, int64_t bytes, uint32_t* checksum, cudaStream_t stream) {
  check_buffer(data, bytes, "launch_read_stream");
  if (!checksum) throw Error("launch_read_stream: null checksum");
  const int64_t vectors = bytes / 16;
  read_stream<<<grid_for(read_stream, vectors), kThreads, 0, stream>>>(static_cast<const uint4*>(data), vectors,
                                                                         checksum);
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

void launch_write_stream(void* data, int64_t bytes, uint32_t pattern, cudaStream_t stream) {
  check_buffer(data, bytes, "launch_write_stream");
  const int64_t vectors = bytes / 16;
  write_stream<<<grid_for(write_stream, vectors), kThreads, 0, stream>>>(static_cast<uint4*>(data), vectors,
                                                                           pattern);
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace opbench::kernels
