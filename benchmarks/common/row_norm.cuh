// The machinery of opbench's row-normalization kernels (RMSNorm, LayerNorm), shared as CUDA device
// code. EXPERIMENTAL (tuning): three vector-path kernels (the row's width a multiple of the 16-byte
// vector, x, weight, bias and y 16-byte aligned):
//  - vector_kernel: a row per group of threads, the row held in registers (x read from memory once);
//  - reread_kernel: kRows rows per block, the row read twice (statistics, then output), the first
//    read kept in L2 (evict_last), the second read from L2 (evict_first); any width, few registers;
//  - staged_kernel: kRows rows per block, x copied to shared memory (cp.async), read from there.
// Scalar path: a block per row, any shape and alignment, x read per pass.
// A Norm policy supplies the statistics and the output of one element:
//   struct Norm { static constexpr bool kCentered;   // true: a mean is subtracted (LayerNorm)
//                 static constexpr bool kBias;       // true: a bias may be added (when Row::b is set)
//                 static float scale(float sum_sq, float cols, float eps);   // from the (centered) sum of squares
//                 template <typename T> static T out(float x, float mean, float scale, T w, T b); };
// Include only from .cu files.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
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

template <typename T>
struct Row {
  const T* x;
  const T* w;
  const T* b;   // nullptr: no bias
  T* y;
  int64_t cols, row_stride;
  float eps;
};

// Loads and stores of x and y: streamed (__ldcs/__stcs), cached, or loads that skip L1.
enum class Cache { kStream, kCache, kNoAlloc };
template <Cache kMode>
__device__ __forceinline__ uint4 load_row(const uint4* p) {
  if constexpr (kMode == Cache::kStream) {
    return __ldcs(p);
  } else if constexpr (kMode == Cache::kCache) {
    return *p;
  } else {
    uint4 v;
    asm("ld.global.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
  }
}
template <Cache kMode>
__device__ __forceinline__ void store_row(uint4* p, uint4 v) { if constexpr (kMode == Cache::kStream) __stcs(p, v); else *p = v; }

// L2 eviction policies and a load that skips L1 with one.
__device__ __forceinline__ uint64_t evict_last_policy() {
  uint64_t p;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ uint64_t evict_first_policy() {
  uint64_t p;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}
template <bool kHint>
__device__ __forceinline__ uint4 load_with(const uint4* p, uint64_t policy) {
  if constexpr (!kHint) return *p;
  uint4 v;
  asm("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(policy));
  return v;
}

// Sum of `v` over the calling thread's group of `group_threads` consecutive threads (a power of two up
// to 32, or a multiple of 32); every thread of the group gets the total. REQUIRES: every thread of the
// block calls it.
__device__ __forceinline__ float group_sum(float v, int group_threads) {
  __shared__ float warp_sums[32];
  for (int offset = 16; offset > 0; offset /= 2)
    if (offset < group_threads) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (group_threads <= 32) return v;
  const int group_warps = group_threads / 32;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, first = warp - warp % group_warps;
  __syncthreads();   // warp_sums may still be read by a previous call
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  float total = 0.f;
  for (int g = 0; g < group_warps; ++g) total += warp_sums[first + g];
  return total;
}

// Each v[k] summed over the block (a multiple of 32 threads); every thread gets the totals.
template <int kRows>
__device__ __forceinline__ void block_sum(float (&v)[kRows]) {
  __shared__ float partial[kRows][32];
#pragma unroll
  for (int k = 0; k < kRows; ++k)
    for (int offset = 16; offset > 0; offset /= 2) v[k] += __shfl_xor_sync(0xffffffffu, v[k], offset);
  if (blockDim.x == 32) return;
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  __syncthreads();
  if (threadIdx.x % 32 == 0)
    for (int k = 0; k < kRows; ++k) partial[k][warp] = v[k];
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    float total = 0.f;
    for (int g = 0; g < warps; ++g) total += partial[k][g];
    v[k] = total;
  }
}

// Count, mean and centered sum of squares of a set of values; merged as Chan et al.'s parallel
// variance (no cancellation when the mean is large against the spread).
struct Moments {
  float n, mean, m2;
};
__device__ __forceinline__ Moments merge(Moments a, Moments b) {
  const float n = a.n + b.n;
  if (n == 0.f) return a;
  const float d = b.mean - a.mean, f = b.n / n;
  return {n, fmaf(d, f, a.mean), a.m2 + b.m2 + d * d * a.n * f};
}
template <int kRows>
__device__ __forceinline__ void block_moments(Moments (&m)[kRows]) {
  __shared__ Moments partial[kRows][32];
#pragma unroll
  for (int k = 0; k < kRows; ++k)
    for (int offset = 16; offset > 0; offset /= 2) {
      Moments o{__shfl_xor_sync(0xffffffffu, m[k].n, offset), __shfl_xor_sync(0xffffffffu, m[k].mean, offset),
                __shfl_xor_sync(0xffffffffu, m[k].m2, offset)};
      m[k] = merge(m[k], o);
    }
  if (blockDim.x == 32) return;
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  __syncthreads();
  if (threadIdx.x % 32 == 0)
    for (int k = 0; k < kRows; ++k) partial[k][warp] = m[k];
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    Moments total{0.f, 0.f, 0.f};
    for (int g = 0; g < warps; ++g) total = merge(total, partial[k][g]);
    m[k] = total;
  }
}

// Vector path: a row per group of `group_threads` threads (blockDim.x / group_threads rows per block),
// kVec 16-byte vectors per thread. REQUIRES: group_threads * kVec >= the row's vectors.
template <typename T, int kVec, typename Norm, Cache kMode, bool kPrefetch>
__global__ void vector_kernel(Row<T> r, int64_t rows, int group_threads) {
  constexpr int kPer = kVectorBytes / sizeof(T);
  const int64_t vectors = r.cols / kPer;
  const int t = threadIdx.x % group_threads;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / group_threads) + threadIdx.x / group_threads;
  const bool has_row = row < rows;   // a group past the last row still takes part in the reductions
  const uint4* xr = reinterpret_cast<const uint4*>(r.x + row * r.row_stride);
  uint4 held[kVec];
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const int64_t v = t + static_cast<int64_t>(i) * group_threads;
    if (has_row && v < vectors) held[i] = load_row<kMode>(xr + v);
  }
  if constexpr (kPrefetch) {
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const int64_t v = t + static_cast<int64_t>(i) * group_threads;
      if (!has_row || v >= vectors) continue;
      asm volatile("prefetch.global.L1 [%0];" ::"l"(reinterpret_cast<const uint4*>(r.w) + v));
      if (Norm::kBias && r.b) asm volatile("prefetch.global.L1 [%0];" ::"l"(reinterpret_cast<const uint4*>(r.b) + v));
    }
  }
  auto each = [&](auto&& f) {
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const int64_t v = t + static_cast<int64_t>(i) * group_threads;
      if (!has_row || v >= vectors) continue;
      const T* e = reinterpret_cast<const T*>(&held[i]);
#pragma unroll
      for (int k = 0; k < kPer; ++k) f(to_f(e[k]));
    }
  };
  float mean = 0.f;
  if constexpr (Norm::kCentered) {
    float sum = 0.f;
    each([&](float v) { sum += v; });
    mean = group_sum(sum, group_threads) / static_cast<float>(r.cols);
  }
  float sum_sq = 0.f;
  each([&](float v) { sum_sq += (v - mean) * (v - mean); });
  const float scale = Norm::scale(group_sum(sum_sq, group_threads), static_cast<float>(r.cols), r.eps);
  if (!has_row) return;
  uint4* yr = reinterpret_cast<uint4*>(r.y + row * r.cols);
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const int64_t v = t + static_cast<int64_t>(i) * group_threads;
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
    store_row<kMode>(yr + v, out);
  }
}

// The threads of vector_kernel's row group for rows of `vectors` vectors, kVec a thread: the fewest
// that cover the row, a power of two up to a warp, else whole warps.
template <int kVec>
inline int group_threads(int64_t vectors) {
  const int64_t need = (vectors + kVec - 1) / kVec;
  if (need > 32) return static_cast<int>((need + 31) / 32 * 32);
  int g = 1;
  while (g < need) g *= 2;
  return g;
}
template <typename T, int kVec, typename Norm, Cache kMode, bool kPrefetch>
void launch_vector(Row<T> r, int64_t rows, int block_threads, cudaStream_t stream) {
  const int group = group_threads<kVec>(r.cols / (kVectorBytes / static_cast<int64_t>(sizeof(T))));
  const int rows_per_block = std::max(1, block_threads / group);
  const dim3 grid(static_cast<unsigned>((rows + rows_per_block - 1) / rows_per_block));
  vector_kernel<T, kVec, Norm, kMode, kPrefetch><<<grid, rows_per_block * group, 0, stream>>>(r, rows, group);
}

// The output of kRows rows at vector v (wq, bq: the weight's and bias's vector).
template <typename T, typename Norm>
__device__ __forceinline__ uint4 out_vector(uint4 xq, uint4 wq, uint4 bq, bool bias, float mean, float scale) {
  constexpr int kPer = kVectorBytes / sizeof(T);
  const T* e = reinterpret_cast<const T*>(&xq);
  const T* we = reinterpret_cast<const T*>(&wq);
  const T* be = reinterpret_cast<const T*>(&bq);
  uint4 out;
  T* o = reinterpret_cast<T*>(&out);
#pragma unroll
  for (int k = 0; k < kPer; ++k) o[k] = Norm::out(to_f(e[k]), mean, scale, we[k], bias ? be[k] : T());
  return out;
}

// Moments of one vector's values (exact: mean first, then the centered squares).
template <typename T>
__device__ __forceinline__ Moments vector_moments(uint4 q) {
  constexpr int kPer = kVectorBytes / sizeof(T);
  const T* e = reinterpret_cast<const T*>(&q);
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < kPer; ++k) sum += to_f(e[k]);
  const float mean = sum * (1.f / kPer);
  float m2 = 0.f;
#pragma unroll
  for (int k = 0; k < kPer; ++k) m2 += (to_f(e[k]) - mean) * (to_f(e[k]) - mean);
  return {static_cast<float>(kPer), mean, m2};
}
template <typename T>
__device__ __forceinline__ float vector_sum_sq(uint4 q) {
  const T* e = reinterpret_cast<const T*>(&q);
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < kVectorBytes / static_cast<int>(sizeof(T)); ++k) s += to_f(e[k]) * to_f(e[k]);
  return s;
}

// Two reads of x: kRows rows per block, each thread the same vectors of every row, kUnroll vectors a
// row in flight per step. Pass 1 (statistics) keeps x in L2, pass 2 reads it back and writes y.
template <typename T, int kRows, int kUnroll, typename Norm, bool kHint>
__global__ void reread_kernel(Row<T> r, int64_t rows) {
  constexpr int kPer = kVectorBytes / sizeof(T);
  const int64_t vectors = r.cols / kPer, step = static_cast<int64_t>(blockDim.x) * kUnroll;
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kRows;
  const uint4* xr[kRows];
  bool has[kRows];
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    has[k] = row0 + k < rows;
    xr[k] = reinterpret_cast<const uint4*>(r.x + (has[k] ? row0 + k : row0) * r.row_stride);
  }
  const uint64_t keep = kHint ? evict_last_policy() : 0, drop = kHint ? evict_first_policy() : 0;
  Moments m[kRows];
  float sum_sq[kRows];
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    m[k] = {0.f, 0.f, 0.f};
    sum_sq[k] = 0.f;
  }
  for (int64_t base = threadIdx.x; base < vectors; base += step) {
    uint4 held[kRows][kUnroll];
#pragma unroll
    for (int i = 0; i < kUnroll; ++i)
#pragma unroll
      for (int k = 0; k < kRows; ++k)
        if (has[k] && base + i * blockDim.x < vectors) held[k][i] = load_with<kHint>(xr[k] + base + i * blockDim.x, keep);
#pragma unroll
    for (int i = 0; i < kUnroll; ++i)
#pragma unroll
      for (int k = 0; k < kRows; ++k) {
        if (!has[k] || base + i * blockDim.x >= vectors) continue;
        if constexpr (Norm::kCentered) m[k] = merge(m[k], vector_moments<T>(held[k][i]));
        else sum_sq[k] += vector_sum_sq<T>(held[k][i]);
      }
  }
  float mean[kRows], scale[kRows];
  if constexpr (Norm::kCentered) {
    block_moments(m);
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      mean[k] = m[k].mean;
      scale[k] = Norm::scale(m[k].m2, static_cast<float>(r.cols), r.eps);
    }
  } else {
    block_sum(sum_sq);
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      mean[k] = 0.f;
      scale[k] = Norm::scale(sum_sq[k], static_cast<float>(r.cols), r.eps);
    }
  }
  const uint4* w = reinterpret_cast<const uint4*>(r.w);
  const uint4* b = reinterpret_cast<const uint4*>(r.b);
  for (int64_t base = threadIdx.x; base < vectors; base += step) {
    uint4 held[kRows][kUnroll], wq[kUnroll], bq[kUnroll];
#pragma unroll
    for (int i = 0; i < kUnroll; ++i) {
      const int64_t v = base + i * blockDim.x;
      if (v >= vectors) continue;
      wq[i] = __ldg(w + v);
      bq[i] = Norm::kBias && b ? __ldg(b + v) : uint4{};
#pragma unroll
      for (int k = 0; k < kRows; ++k)
        if (has[k]) held[k][i] = load_with<kHint>(xr[k] + v, drop);
    }
#pragma unroll
    for (int i = 0; i < kUnroll; ++i) {
      const int64_t v = base + i * blockDim.x;
      if (v >= vectors) continue;
#pragma unroll
      for (int k = 0; k < kRows; ++k)
        if (has[k])
          reinterpret_cast<uint4*>(r.y + (row0 + k) * r.cols)[v] =
              out_vector<T, Norm>(held[k][i], wq[i], bq[i], Norm::kBias && b, mean[k], scale[k]);
    }
  }
}
template <typename T, int kRows, int kUnroll, typename Norm, bool kHint>
void launch_reread(Row<T> r, int64_t rows, int block_threads, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((rows + kRows - 1) / kRows));
  reread_kernel<T, kRows, kUnroll, Norm, kHint><<<grid, block_threads, 0, stream>>>(r, rows);
}

// x staged in shared memory: kRows rows per block, each thread copies (cp.async, L2 only) and later
// reads back the same vectors of every row, so no barrier is needed between the copy and the reads.
template <typename T, int kRows, typename Norm>
__global__ void staged_kernel(Row<T> r, int64_t rows) {
  extern __shared__ uint4 stage[];   // kRows x vectors
  constexpr int kPer = kVectorBytes / sizeof(T);
  const int64_t vectors = r.cols / kPer;
  const int64_t row0 = static_cast<int64_t>(blockIdx.x) * kRows;
#pragma unroll
  for (int k = 0; k < kRows; ++k) {
    if (row0 + k >= rows) continue;
    const uint4* xr = reinterpret_cast<const uint4*>(r.x + (row0 + k) * r.row_stride);
    for (int64_t v = threadIdx.x; v < vectors; v += blockDim.x) {
      const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(stage + k * vectors + v));
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(xr + v) : "memory");
    }
  }
  asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
  float mean[kRows], scale[kRows], acc[kRows];
#pragma unroll
  for (int k = 0; k < kRows; ++k) mean[k] = acc[k] = 0.f;
  if constexpr (Norm::kCentered) {
    for (int64_t v = threadIdx.x; v < vectors; v += blockDim.x)
#pragma unroll
      for (int k = 0; k < kRows; ++k) {
        const uint4 q = stage[k * vectors + v];
        const T* e = reinterpret_cast<const T*>(&q);
#pragma unroll
        for (int j = 0; j < kPer; ++j) acc[k] += to_f(e[j]);
      }
    block_sum(acc);
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      mean[k] = acc[k] / static_cast<float>(r.cols);
      acc[k] = 0.f;
    }
  }
  for (int64_t v = threadIdx.x; v < vectors; v += blockDim.x)
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
      const uint4 q = stage[k * vectors + v];
      const T* e = reinterpret_cast<const T*>(&q);
#pragma unroll
      for (int j = 0; j < kPer; ++j) acc[k] += (to_f(e[j]) - mean[k]) * (to_f(e[j]) - mean[k]);
    }
  block_sum(acc);
#pragma unroll
  for (int k = 0; k < kRows; ++k) scale[k] = Norm::scale(acc[k], static_cast<float>(r.cols), r.eps);
  const uint4* w = reinterpret_cast<const uint4*>(r.w);
  const uint4* b = reinterpret_cast<const uint4*>(r.b);
  for (int64_t v = threadIdx.x; v < vectors; v += blockDim.x) {
    const uint4 wq = __ldg(w + v), bq = Norm::kBias && b ? __ldg(b + v) : uint4{};
#pragma unroll
    for (int k = 0; k < kRows; ++k)
      if (row0 + k < rows)
        reinterpret_cast<uint4*>(r.y + (row0 + k) * r.cols)[v] =
            out_vector<T, Norm>(stage[k * vectors + v], wq, bq, Norm::kBias && b, mean[k], scale[k]);
  }
}
template <typename T, int kRows, typename Norm>
size_t staged_bytes(const Row<T>& r) {
  return static_cast<size_t>(kRows) * (r.cols / (kVectorBytes / sizeof(T))) * kVectorBytes;
}
template <typename T, int kRows, typename Norm>
void launch_staged(Row<T> r, int64_t rows, int block_threads, cudaStream_t stream) {
  const size_t bytes = staged_bytes<T, kRows, Norm>(r);
  auto kernel = staged_kernel<T, kRows, Norm>;
  OPBENCH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  OPBENCH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  const dim3 grid(static_cast<unsigned>((rows + kRows - 1) / kRows));
  kernel<<<grid, block_threads, bytes, stream>>>(r, rows);
}

template <typename T, typename Norm>
__global__ void scalar_kernel(Row<T> r) {
  const T* xr = r.x + blockIdx.x * r.row_stride;
  float mean = 0.f;
  if constexpr (Norm::kCentered) {
    float sum = 0.f;
    for (int64_t c = threadIdx.x; c < r.cols; c += blockDim.x) sum += to_f(xr[c]);
    mean = group_sum(sum, blockDim.x) / static_cast<float>(r.cols);
  }
  float sum_sq = 0.f;
  for (int64_t c = threadIdx.x; c < r.cols; c += blockDim.x) {
    float d = to_f(xr[c]) - mean;
    sum_sq += d * d;
  }
  const float scale = Norm::scale(group_sum(sum_sq, blockDim.x), static_cast<float>(r.cols), r.eps);
  T* yr = r.y + blockIdx.x * r.cols;
  for (int64_t c = threadIdx.x; c < r.cols; c += blockDim.x)
    yr[c] = Norm::out(to_f(xr[c]), mean, scale, r.w[c], r.b ? r.b[c] : T());
}

inline bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0; }

// As at::layer_norm: the biased variance, the output computed in fp32 and rounded once.
struct LayerPolicy {
  static constexpr bool kBias = true;
  static constexpr bool kCentered = true;
  __device__ static float scale(float centered_sum_sq, float cols, float eps) {
    return rsqrtf(centered_sum_sq / cols + eps);
  }
  template <typename T>
  __device__ static T out(float x, float mean, float rstd, T w, T b) {
    return from_f<T>(fmaf((x - mean) * rstd, to_f(w), to_f(b)));
  }
};

// As Llama's reference: statistics in fp32, the normalized value rounded to the dtype (type_as(x)),
// then multiplied by the weight in the dtype (computed in fp32, rounded once).
struct RmsPolicy {
  static constexpr bool kBias = false;
  static constexpr bool kCentered = false;
  __device__ static float scale(float sum_sq, float cols, float eps) { return rsqrtf(sum_sq / cols + eps); }
  template <typename T>
  __device__ static T out(float x, float, float scale, T w, T) {
    return from_f<T>(to_f(from_f<T>(x * scale)) * to_f(w));
  }
};

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
    // Tuned on the H100 (verify/tune, results/NVIDIA_H100_80GB_HBM3/kernel_tune): 4 vectors a thread, so
    // rows of up to 512 vectors (4096 bf16) share a block of 8 warps; those streamed past the caches,
    // longer rows cached (5-10% faster at 8192 and 16384 bf16). 8 vectors a thread past 4096 vectors.
    const int64_t vectors = r.cols / (kVectorBytes / static_cast<int64_t>(sizeof(T)));
    if (vectors <= 512)
      launch_vector<T, 4, Norm, Cache::kStream, false>(r, rows, 256, stream);
    else if (vectors <= 4096)
      launch_vector<T, 4, Norm, Cache::kCache, false>(r, rows, 256, stream);
    else
      launch_vector<T, 8, Norm, Cache::kCache, false>(r, rows, 256, stream);
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
