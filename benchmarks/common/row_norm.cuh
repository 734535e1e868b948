// The machinery of opbench's row-normalization kernels (RMSNorm, LayerNorm), shared as CUDA device
// code: a block per row. Vector path (the row's width a multiple of the 16-byte vector, x, weight,
// bias and y 16-byte aligned): each thread loads its share of the row into registers once (all its
// loads in flight together, streamed past L1), the statistics are reduced across the block (warp
// shuffles, then one float per warp in shared memory), and each thread writes its outputs from the
// registers: x is read from memory once. Scalar path: any shape and alignment, x read per pass.
// A Norm policy supplies the statistics and the output of one element:
//   struct Norm { static constexpr bool kCentered;   // true: a mean is subtracted (LayerNorm)
//                 static constexpr bool kBias;       // true: a bias may be added (when Row::b is set)
//                 static float scale(float sum_sq, float cols, float eps);   // from the (centered) sum of squares
//                 template <typename T> static T out(float x, float mean, float scale, T w, T b); };
// Include only from .cu files.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "common/norm_args.h"
#include "opbench/check.h"

namespace opbench::kernels::row_norm {

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

// Sum of `v` over the block; every thread gets the total. REQUIRES: blockDim.x a multiple of 32; every
// thread of the block calls it (the same number of times).
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float warp_sums[32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();   // warp_sums may still be read by a previous call
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  float total = lane < static_cast<int>(blockDim.x / 32) ? warp_sums[lane] : 0.f;
  for (int offset = 16; offset > 0; offset /= 2) total += __shfl_xor_sync(0xffffffffu, total, offset);
  return total;
}

template <typename T>
struct Row {
  const T* x;
  const T* w;
  const T* b;   // nullptr: no bias
  T* y;
  int64_t cols, row_stride;
  float eps;
};

template <typename T, int kVec, typename Norm>
__global__ void vector_kernel(Row<T> r) {
  constexpr int kPer = kVectorBytes / sizeof(T);
  const int64_t vectors = r.cols / kPer;
  const uint4* xr = reinterpret_cast<const uint4*>(r.x + blockIdx.x * r.row_stride);
  uint4 held[kVec];
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const int64_t v = threadIdx.x + static_cast<int64_t>(i) * blockDim.x;
    if (v < vectors) held[i] = __ldcs(xr + v);
  }
  auto each = [&](auto&& f) {
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const int64_t v = threadIdx.x + static_cast<int64_t>(i) * blockDim.x;
      if (v >= vectors) continue;
      const T* e = reinterpret_cast<const T*>(&held[i]);
#pragma unroll
      for (int k = 0; k < kPer; ++k) f(to_f(e[k]));
    }
  };
  float mean = 0.f;
  if constexpr (Norm::kCentered) {
    float sum = 0.f;
    each([&](float v) { sum += v; });
    mean = block_sum(sum) / static_cast<float>(r.cols);
  }
  float sum_sq = 0.f;
  each([&](float v) { sum_sq += (v - mean) * (v - mean); });
  const float scale = Norm::scale(block_sum(sum_sq), static_cast<float>(r.cols), r.eps);
  uint4* yr = reinterpret_cast<uint4*>(r.y + blockIdx.x * r.cols);
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const int64_t v = threadIdx.x + static_cast<int64_t>(i) * blockDim.x;
    if (v >= vectors) continue;
    uint4 wq = __ldg(reinterpret_cast<const uint4*>(r.w) + v);
    uint4 bq{};   // no registers for a bias a norm never has
    if constexpr (Norm::kBias)
      if (r.b) bq = __ldg(reinterpret_cast<const uint4*>(r.b) + v);
    const T* e = reinterpret_cast<const T*>(&held[i]);
    const T* we = reinterpret_cast<const T*>(&wq);
    const T* be = reinterpret_cast<const T*>(&bq);
    uint4 out;
    T* o = reinterpret_cast<T*>(&out);
#pragma unroll
    for (int k = 0; k < kPer; ++k) o[k] = Norm::out(to_f(e[k]), mean, scale, we[k], r.b ? be[k] : T());
    __stcs(yr + v, out);
  }
}

template <typename T, typename Norm>
__global__ void scalar_kernel(Row<T> r) {
  const T* xr = r.x + blockIdx.x * r.row_stride;
  float mean = 0.f;
  if constexpr (Norm::kCentered) {
    float sum = 0.f;
    for (int64_t c = threadIdx.x; c < r.cols; c += blockDim.x) sum += to_f(xr[c]);
    mean = block_sum(sum) / static_cast<float>(r.cols);
  }
  float sum_sq = 0.f;
  for (int64_t c = threadIdx.x; c < r.cols; c += blockDim.x) {
    float d = to_f(xr[c]) - mean;
    sum_sq += d * d;
  }
  const float scale = Norm::scale(block_sum(sum_sq), static_cast<float>(r.cols), r.eps);
  T* yr = r.y + blockIdx.x * r.cols;
  for (int64_t c = threadIdx.x; c < r.cols; c += blockDim.x)
    yr[c] = Norm::out(to_f(xr[c]), mean, scale, r.w[c], r.b ? r.b[c] : T());
}

inline bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0; }

// The vector path's condition (see the top).
inline bool vectorizable(const void* x, const void* w, const void* b, const void* y, int64_t cols,
                         int64_t row_stride, int element_bytes) {
  const int64_t per = kVectorBytes / element_bytes;
  return cols % per == 0 && row_stride % per == 0 && aligned(x) && aligned(w) && (!b || aligned(b)) &&
         aligned(y) && cols / per <= static_cast<int64_t>(kMaxThreads) * kMaxVecPerThread;
}

// Checks the arguments (throws opbench::Error naming `who`), picks the path and the block shape,
// launches on `stream`, and checks the launch.
template <typename T, typename Norm>
void launch(const char* who, Row<T> r, int64_t rows, cudaStream_t stream) {
  if (!r.x || !r.w || !r.y) throw Error(std::string(who) + ": null pointer");
  if (rows < 1 || r.cols < 1 || r.row_stride < r.cols)
    throw Error(std::string(who) + ": bad shape rows=" + std::to_string(rows) + " cols=" + std::to_string(r.cols) +
                " row_stride=" + std::to_string(r.row_stride));
  if (rows > 2147483647) throw Error(std::string(who) + ": more rows than a grid holds");
  const dim3 grid(static_cast<unsigned>(rows));
  if (!vectorizable(r.x, r.w, r.b, r.y, r.cols, r.row_stride, sizeof(T))) {
    scalar_kernel<T, Norm><<<grid, 256, 0, stream>>>(r);
  } else {
    const int64_t vectors = r.cols / (kVectorBytes / static_cast<int64_t>(sizeof(T)));
    // Fewest vectors per thread that keep at least 128 threads (4 warps) on a row and the block within
    // 1024 threads: 1024 bf16 columns take 128 threads x 1 vector, 16384 take 256 x 8.
    int per = 1;
    while (per < kMaxVecPerThread && vectors > static_cast<int64_t>(per) * 128) per *= 2;
    const int threads = static_cast<int>(((vectors + per - 1) / per + 31) / 32 * 32);
    switch (per) {
      case 1: vector_kernel<T, 1, Norm><<<grid, threads, 0, stream>>>(r); break;
      case 2: vector_kernel<T, 2, Norm><<<grid, threads, 0, stream>>>(r); break;
      case 4: vector_kernel<T, 4, Norm><<<grid, threads, 0, stream>>>(r); break;
      default: vector_kernel<T, 8, Norm><<<grid, threads, 0, stream>>>(r); break;
    }
  }
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

// The public entry points of a norm kernel: the vector-path condition and the launch for NormArgs.
inline bool vectorizable(const NormArgs& a) {
  return vectorizable(a.x, a.w, a.b, a.y, a.cols, a.row_stride, a.type == NormType::kFp32 ? 4 : 2);
}

template <typename Norm>
void launch_args(const char* who, const NormArgs& a, cudaStream_t stream) {
  auto row = [&](auto* type_tag) {
    using T = std::remove_pointer_t<decltype(type_tag)>;
    return Row<T>{static_cast<const T*>(a.x), static_cast<const T*>(a.w), static_cast<const T*>(a.b),
                  static_cast<T*>(a.y), a.cols, a.row_stride, a.eps};
  };
  switch (a.type) {
    case NormType::kBf16: launch<__nv_bfloat16, Norm>(who, row(static_cast<__nv_bfloat16*>(nullptr)), a.rows, stream); break;
    case NormType::kFp16: launch<__half, Norm>(who, row(static_cast<__half*>(nullptr)), a.rows, stream); break;
    case NormType::kFp32: launch<float, Norm>(who, row(static_cast<float*>(nullptr)), a.rows, stream); break;
  }
}

}  // namespace opbench::kernels::row_norm
