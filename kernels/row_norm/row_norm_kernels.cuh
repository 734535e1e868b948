// The row norms' kernels (row_norm.h says what they compute; row_norm.cu launches the configuration
// that the table in row_norm_configs.h picks), a header so that the tuner (row_norm_tune.cu) can
// compile every configuration. Two vector paths (the row's width a multiple of the 16-byte vector, x,
// weight, bias and y 16-byte aligned), both reading x from memory once:
//  - vector_kernel, short rows: a row per group of threads (several rows a block when rows are short),
//    each thread's share of the row held in registers, all its loads in flight together; the mean,
//    then the centered sum of squares, reduced over the row's threads.
//  - two_pass_kernel, longer rows: a row per block, read twice, the second time from L1 or L2; both
//    statistics from one pass of shifted sums.
// Scalar path: a block per row, any shape and alignment, x read per pass.
// A Norm policy (row_norm_policy.cuh) supplies the statistics and the output of one element.
// Include only from .cu files.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuda/l2_policy.cuh"
#include "kernels/row_norm/row_norm_policy.cuh"

namespace opbench::kernels::row_norm {

constexpr int kVectorBytes = 16;
constexpr int64_t kMaxRowBytes = 128 * 1024;   // the vector paths' longest row

// Element k of a 16-byte vector of T, in fp32 (k a constant once unrolled).
template <typename T>
__device__ __forceinline__ float element(const uint4& q, int k) {
  return to_f(reinterpret_cast<const T*>(&q)[k]);
}
// bf16 is fp32's upper half: one shift or one mask an element, where converting each 16-bit element on
// its own takes a byte permute and a shift for every other one (sm_90 SASS).
template <>
__device__ __forceinline__ float element<__nv_bfloat16>(const uint4& q, int k) {
  const uint32_t word = k < 4 ? (k < 2 ? q.x : q.y) : (k < 6 ? q.z : q.w);
  return __uint_as_float(k % 2 == 0 ? word << 16 : word & 0xffff0000u);
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

// Loads and stores of x and y: streamed past the caches (__ldcs/__stcs) with kStreaming, else cached.
template <bool kStreaming>
__device__ __forceinline__ uint4 load_row(const uint4* p) { if constexpr (kStreaming) return __ldcs(p); else return *p; }
template <bool kStreaming>
__device__ __forceinline__ void store_row(uint4* p, uint4 v) { if constexpr (kStreaming) __stcs(p, v); else *p = v; }

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

// The output vector of x vector `xq` (wq, bq: the weight's and the bias's).
template <typename T, typename Norm>
__device__ __forceinline__ uint4 out_vector(uint4 xq, uint4 wq, uint4 bq, bool bias, float mean, float scale) {
  uint4 out;
  T* o = reinterpret_cast<T*>(&out);
#pragma unroll
  for (int k = 0; k < kVectorBytes / static_cast<int>(sizeof(T)); ++k)
    o[k] = Norm::template out<T>(element<T>(xq, k), mean, scale, element<T>(wq, k), bias ? element<T>(bq, k) : 0.f);
  return out;
}

// Rows in registers: a row per group of `group_threads` threads (blockDim.x / group_threads rows per
// block), kVec 16-byte vectors per thread. REQUIRES: group_threads * kVec >= the row's vectors.
template <typename T, int kVec, typename Norm, bool kStreaming>
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
    if (has_row && v < vectors) held[i] = load_row<kStreaming>(xr + v);
  }
  auto each = [&](auto&& f) {
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const int64_t v = t + static_cast<int64_t>(i) * group_threads;
      if (!has_row || v >= vectors) continue;
#pragma unroll
      for (int k = 0; k < kPer; ++k) f(element<T>(held[i], k));
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
  const bool bias = Norm::kBias && r.b;
  uint4* yr = reinterpret_cast<uint4*>(r.y + row * r.cols);
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const int64_t v = t + static_cast<int64_t>(i) * group_threads;
    if (v >= vectors) continue;
    const uint4 wq = __ldg(reinterpret_cast<const uint4*>(r.w) + v);
    uint4 bq{};   // no registers for a bias a norm never has
    if (bias) bq = __ldg(reinterpret_cast<const uint4*>(r.b) + v);
    store_row<kStreaming>(yr + v, out_vector<T, Norm>(held[i], wq, bq, bias, mean, scale));
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
// vector_kernel on blocks of about `block_threads` threads: as many row groups as fit, at least one.
template <typename T, int kVec, typename Norm, bool kStreaming>
void launch_vector(Row<T> r, int64_t rows, int block_threads, cudaStream_t stream) {
  const int group = group_threads<kVec>(r.cols / (kVectorBytes / static_cast<int64_t>(sizeof(T))));
  const int rows_per_block = std::max(1, block_threads / group);
  const dim3 grid(static_cast<unsigned>((rows + rows_per_block - 1) / rows_per_block));
  vector_kernel<T, kVec, Norm, kStreaming><<<grid, rows_per_block * group, 0, stream>>>(r, rows, group);
}

// Long rows: a row per block, read twice. The first pass (x kept in L2 with evict_last, in L1 with
// L1::evict_last) sums x - s and (x - s)^2 for a shift s, the thread's own first element, so that the
// thread's sums do not cancel; for LayerNorm the row's mean is then the sum of the threads' n (mean - c)
// for c the row's first element, and its centered sum of squares the sum of each thread's own plus
// n (thread mean - row mean)^2: no term cancels (one shift for the whole row, its first element, cancels
// when that element is an outlier); the second pass reads x again (L2 evict_first and L1::evict_first:
// x is done) and writes y, with kKeepY under an evict_last policy too, so that L2 gives up x's lines
// before y's. The L1 hints are inductor's; that the second pass reads x from L1 is inferred from
// timings, not counted.
// kVec vectors of each pass in flight per thread; at least kMinBlocks blocks an SM (the registers follow:
// 2048 threads of 2 vectors fit 32 registers, 1536 threads of 4 fit 40; at 32 those would spill). Against
// holding the row in registers or shared memory, no thread waits on a second reduction and the registers
// do not grow with the row. REQUIRES: a row of at most kMaxRowBytes (its vector indices are 32-bit).
template <typename T, typename Norm, int kThreads, int kVec, bool kKeepY, int kMinBlocks>
__global__ void __launch_bounds__(kThreads, kMinBlocks) two_pass_kernel(Row<T> r) {
  using opbench::detail::L1Hint;
  constexpr int kPer = kVectorBytes / sizeof(T);
  const int vectors = static_cast<int>(r.cols / kPer), step = kThreads * kVec, thread = threadIdx.x;
  const uint4* xr = reinterpret_cast<const uint4*>(r.x + blockIdx.x * r.row_stride);
  const uint64_t keep = opbench::detail::l2_policy(true), drop = opbench::detail::l2_policy(false);
  // A thread's kVec vectors of one step, all loads in flight before any is used.
  auto load_step = [&](auto l1_hint, int first, uint64_t policy, uint4 (&q)[kVec]) {
#pragma unroll
    for (int i = 0; i < kVec; ++i)
      if (first + i * kThreads < vectors)
        q[i] = opbench::detail::load_with_policy<decltype(l1_hint)::value>(xr + first + i * kThreads, policy);
  };
  float sum = 0.f, sum_sq = 0.f, shift = 0.f;
  for (int first = thread; first < vectors; first += step) {
    uint4 q[kVec];
    load_step(std::integral_constant<L1Hint, L1Hint::kEvictLast>{}, first, keep, q);
    if (Norm::kCentered && first == thread) shift = element<T>(q[0], 0);
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      if (first + i * kThreads >= vectors) continue;
#pragma unroll
      for (int k = 0; k < kPer; ++k) {
        const float d = element<T>(q[i], k) - shift;
        sum += d;
        sum_sq = fmaf(d, d, sum_sq);
      }
    }
  }
  const float cols = static_cast<float>(r.cols);
  float mean = 0.f;
  if constexpr (Norm::kCentered) {
    const int mine = thread < vectors ? (vectors - thread + kThreads - 1) / kThreads : 0;
    const float n = static_cast<float>(mine * kPer), shifted_mean = n > 0.f ? sum / n : 0.f;
    const float row_first = to_f(r.x[blockIdx.x * r.row_stride]);
    const float thread_mean = (shift - row_first) + shifted_mean;   // the thread's mean - c
    const float row_mean = group_sum(n * thread_mean, kThreads) / cols;   // the row's mean - c
    mean = row_first + row_mean;
    // the thread's centered sum of squares, sum (x - s)^2 - n (mean - s)^2, plus its mean's deviation
    const float deviation = thread_mean - row_mean;
    sum_sq = group_sum(fmaxf(sum_sq - sum * shifted_mean, 0.f) + n * deviation * deviation, kThreads);
  } else {
    sum_sq = group_sum(sum_sq, kThreads);
  }
  const float scale = Norm::scale(sum_sq, cols, r.eps);
  const bool bias = Norm::kBias && r.b;
  const uint4* w = reinterpret_cast<const uint4*>(r.w);
  const uint4* b = reinterpret_cast<const uint4*>(r.b);
  uint4* yr = reinterpret_cast<uint4*>(r.y + blockIdx.x * r.cols);
  for (int first = thread; first < vectors; first += step) {
    uint4 q[kVec];
    load_step(std::integral_constant<L1Hint, L1Hint::kEvictFirst>{}, first, drop, q);
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const int v = first + i * kThreads;
      if (v >= vectors) continue;
      const uint4 out = out_vector<T, Norm>(q[i], __ldg(w + v), bias ? __ldg(b + v) : uint4{}, bias, mean, scale);
      if constexpr (kKeepY)
        opbench::detail::store_with_policy(yr + v, out, keep);
      else
        yr[v] = out;
    }
  }
}

// two_pass_kernel<.., kThreads, kVec, kKeepY, kMinBlocks> on blocks of kThreads threads, a row a block.
template <typename T, typename Norm, int kThreads, int kVec, bool kKeepY, int kMinBlocks>
void launch_two_pass(Row<T> r, int64_t rows, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(rows));
  two_pass_kernel<T, Norm, kThreads, kVec, kKeepY, kMinBlocks><<<grid, kThreads, 0, stream>>>(r);
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
    yr[c] = Norm::template out<T>(to_f(xr[c]), mean, scale, to_f(r.w[c]), r.b ? to_f(r.b[c]) : 0.f);
}

// scalar_kernel on blocks of kScalarThreads threads, a row a block.
constexpr int kScalarThreads = 256;
template <typename T, typename Norm>
void launch_scalar(Row<T> r, int64_t rows, cudaStream_t stream) {
  scalar_kernel<T, Norm><<<static_cast<unsigned>(rows), kScalarThreads, 0, stream>>>(r);
}

inline bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0; }

// The vector paths' condition (see the top); rows of up to 128 KiB.
inline bool vectorizable(const void* x, const void* w, const void* b, const void* y, int64_t cols,
                         int64_t row_stride, int element_bytes) {
  const int64_t per = kVectorBytes / element_bytes;
  return cols % per == 0 && row_stride % per == 0 && aligned(x) && aligned(w) && (!b || aligned(b)) &&
         aligned(y) && cols * element_bytes <= kMaxRowBytes;
}

}  // namespace opbench::kernels::row_norm
