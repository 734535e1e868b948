// The own read and write streams: see stream_kernels.h.
#include <cstdint>
#include <string>

#include "opbench/check.h"
#include "kernels/stream/stream_kernels.h"

namespace opbench::kernels {
namespace {

constexpr int kThreads = 512;
constexpr int kInFlight = 2;   // 16-byte vectors a thread loads before it uses any
constexpr int64_t kChunkVectors = kStreamChunkBytes / 16;
static_assert(kChunkVectors % (kThreads * kInFlight) == 0, "a chunk is whole steps");

// The sum of the eight bf16 of a vector: bf16 is fp32's upper half, so one shift or mask an element.
__device__ __forceinline__ float sum_bf16x8(const uint4& q) {
  const uint32_t words[4] = {q.x, q.y, q.z, q.w};
  float low = 0.f, high = 0.f;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    low += __uint_as_float(words[k] << 16);
    high += __uint_as_float(words[k] & 0xffff0000u);
  }
  return low + high;
}

__global__ void __launch_bounds__(kThreads) read_stream_kernel(const uint4* data, float* chunk_sums) {
  const uint4* chunk = data + blockIdx.x * kChunkVectors;
  float sum = 0.f;
  for (int64_t v = threadIdx.x; v < kChunkVectors; v += kThreads * kInFlight) {
    uint4 q[kInFlight];
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) q[i] = __ldcs(chunk + v + i * kThreads);
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) sum += sum_bf16x8(q[i]);
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  __shared__ float warp_sums[kThreads / 32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x != 0) return;
  float total = 0.f;
  for (int w = 0; w < kThreads / 32; ++w) total += warp_sums[w];
  chunk_sums[blockIdx.x] = total;
}

__global__ void __launch_bounds__(kThreads) write_stream_kernel(uint4* data, uint32_t word) {
  uint4* chunk = data + blockIdx.x * kChunkVectors;
  const uint4 q{word, word, word, word};
  for (int64_t v = threadIdx.x; v < kChunkVectors; v += kThreads * kInFlight)
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) __stcs(chunk + v + i * kThreads, q);
}

unsigned chunks_of(const char* who, const void* data, int64_t bytes) {
  if (data == nullptr || reinterpret_cast<uintptr_t>(data) % 16 != 0)
    throw Error(std::string(who) + ": data null or not 16-byte aligned");
  if (bytes <= 0 || bytes % kStreamChunkBytes != 0 || bytes / kStreamChunkBytes > 0x7fffffff)
    throw Error(std::string(who) + ": " + std::to_string(bytes) + " bytes is not a positive multiple of " +
                std::to_string(kStreamChunkBytes));
  return static_cast<unsigned>(bytes / kStreamChunkBytes);
}

}  // namespace

void launch_read_stream(const void* data, int64_t bytes, float* chunk_sums, cudaStream_t stream) {
  const unsigned chunks = chunks_of("launch_read_stream", data, bytes);
  if (chunk_sums == nullptr) throw Error("launch_read_stream: chunk_sums is null");
  read_stream_kernel<<<chunks, kThreads, 0, stream>>>(static_cast<const uint4*>(data), chunk_sums);
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

void launch_write_stream(void* data, int64_t bytes, uint32_t word, cudaStream_t stream) {
  const unsigned chunks = chunks_of("launch_write_stream", data, bytes);
  write_stream_kernel<<<chunks, kThreads, 0, stream>>>(static_cast<uint4*>(data), word);
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace opbench::kernels
