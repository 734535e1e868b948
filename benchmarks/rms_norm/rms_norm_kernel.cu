// RMSNorm kernels: see rms_norm_kernel.h.
//
// Vector path: a block per row, blockDim threads each holding kVecPerThread 16-byte vectors of the row
// in registers (so the row is loaded once, before the reduction, with all loads of a thread in flight
// together); the sum of squares is reduced across the block (warp shuffles, then one float per warp in
// shared memory), then each thread scales its registers and stores them. Threads per block are chosen
// so that blockDim * kVecPerThread vectors cover the row: 1024 bf16 columns take 128 threads x 1 vector,
// 16384 take 256 x 8.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

#include "opbench/check.h"
#include "rms_norm_kernel.h"

namespace opbench::kernels {
namespace {

constexpr int kVectorBytes = 16;
constexpr int kMaxVecPerThread = 8;
constexpr int kMaxThreads = 1024;

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// As Llama's reference: the normalized value is rounded to the dtype (type_as(x)), then multiplied by
// the weight in the dtype (computed in fp32, rounded once).
template <typename T>
__device__ __forceinline__ T normalized_times_weight(float normalized, T weight) {
  return from_f<T>(to_f(from_f<T>(normalized)) * to_f(weight));
}

// Sum of `v` over the block; every thread gets the total. REQUIRES: blockDim.x a multiple of 32.
__device__ float block_sum(float v) {
  __shared__ float warp_sums[32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  const int warps = blockDim.x / 32;
  float total = lane < warps ? warp_sums[lane] : 0.f;
  for (int offset = 16; offset > 0; offset /= 2) total += __shfl_xor_sync(0xffffffffu, total, offset);
  return total;
}

template <typename T, int kVec>
__global__ void rms_norm_vector(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                                int64_t cols, int64_t row_stride, float eps) {
  constexpr int kPer = kVectorBytes / sizeof(T);
  const int64_t row = blockIdx.x;
  const uint4* xr = reinterpret_cast<const uint4*>(x + row * row_stride);
  const int64_t vectors = cols / kPer;
  uint4 held[kVec];
  float sum_sq = 0.f;
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const int64_t v = threadIdx.x + static_cast<int64_t>(i) * blockDim.x;
    if (v < vectors) held[i] = __ldcs(xr + v);   // streamed: x is not read again
  }
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const int64_t v = threadIdx.x + static_cast<int64_t>(i) * blockDim.x;
    if (v >= vectors) continue;
    const T* e = reinterpret_cast<const T*>(&held[i]);
#pragma unroll
    for (int k = 0; k < kPer; ++k) sum_sq += to_f(e[k]) * to_f(e[k]);
  }
  const float scale = rsqrtf(block_sum(sum_sq) / static_cast<float>(cols) + eps);
  const uint4* wv = reinterpret_cast<const uint4*>(w);
  uint4* yr = reinterpret_cast<uint4*>(y + row * cols);
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const int64_t v = threadIdx.x + static_cast<int64_t>(i) * blockDim.x;
    if (v >= vectors) continue;
    uint4 wq = __ldg(wv + v);
    const T* e = reinterpret_cast<const T*>(&held[i]);
    const T* we = reinterpret_cast<const T*>(&wq);
    uint4 out;
    T* o = reinterpret_cast<T*>(&out);
#pragma unroll
    for (int k = 0; k < kPer; ++k) o[k] = normalized_times_weight<T>(to_f(e[k]) * scale, we[k]);
    __stcs(yr + v, out);
  }
}

// Any shape and alignment: two passes over the row.
template <typename T>
__global__ void rms_norm_scalar(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                                int64_t cols, int64_t row_stride, float eps) {
  const T* xr = x + blockIdx.x * row_stride;
  float sum_sq = 0.f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum_sq += to_f(xr[c]) * to_f(xr[c]);
  const float scale = rsqrtf(block_sum(sum_sq) / static_cast<float>(cols) + eps);
  T* yr = y + blockIdx.x * cols;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    yr[c] = normalized_times_weight<T>(to_f(xr[c]) * scale, w[c]);
}

int element_bytes(NormType type) { return type == NormType::kFp32 ? 4 : 2; }

template <typename T>
void launch_typed(const RmsNormArgs& a, cudaStream_t stream) {
  const T* x = static_cast<const T*>(a.x);
  const T* w = static_cast<const T*>(a.w);
  T* y = static_cast<T*>(a.y);
  const dim3 grid(static_cast<unsigned>(a.rows));
  if (!rms_norm_vectorizable(a)) {
    rms_norm_scalar<T><<<grid, 256, 0, stream>>>(x, w, y, a.cols, a.row_stride, a.eps);
    return;
  }
  const int64_t vectors = a.cols / (kVectorBytes / static_cast<int64_t>(sizeof(T)));
  // Fewest vectors per thread that keep the block <= 1024 threads, and at least 128 threads per row
  // (4 warps) so the loads of a row are spread over enough lanes.
  int per = 1;
  while (per < kMaxVecPerThread && vectors > static_cast<int64_t>(per) * 128) per *= 2;
  int threads = static_cast<int>((vectors + per - 1) / per);
  threads = ((threads + 31) / 32) * 32;
  switch (per) {
    case 1: rms_norm_vector<T, 1><<<grid, threads, 0, stream>>>(x, w, y, a.cols, a.row_stride, a.eps); break;
    case 2: rms_norm_vector<T, 2><<<grid, threads, 0, stream>>>(x, w, y, a.cols, a.row_stride, a.eps); break;
    case 4: rms_norm_vector<T, 4><<<grid, threads, 0, stream>>>(x, w, y, a.cols, a.row_stride, a.eps); break;
    default: rms_norm_vector<T, 8><<<grid, threads, 0, stream>>>(x, w, y, a.cols, a.row_stride, a.eps); break;
  }
}

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0; }

}  // namespace

bool rms_norm_vectorizable(const RmsNormArgs& a) {
  const int64_t per = kVectorBytes / element_bytes(a.type);
  return a.cols % per == 0 && a.row_stride % per == 0 && aligned(a.x) && aligned(a.w) && aligned(a.y) &&
         a.cols / per <= static_cast<int64_t>(kMaxThreads) * kMaxVecPerThread;
}

void launch_rms_norm(const RmsNormArgs& a, cudaStream_t stream) {
  if (!a.x || !a.w || !a.y) throw Error("launch_rms_norm: null pointer");
  if (a.rows < 1 || a.cols < 1 || a.row_stride < a.cols)
    throw Error("launch_rms_norm: bad shape rows=" + std::to_string(a.rows) + " cols=" + std::to_string(a.cols) +
                " row_stride=" + std::to_string(a.row_stride));
  if (a.rows > 2147483647) throw Error("launch_rms_norm: more rows than a grid holds");
  switch (a.type) {
    case NormType::kBf16: launch_typed<__nv_bfloat16>(a, stream); break;
    case NormType::kFp16: launch_typed<__half>(a, stream); break;
    case NormType::kFp32: launch_typed<float>(a, stream); break;
  }
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace opbench::kernels
