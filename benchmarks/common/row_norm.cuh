// The machinery of opbench's row-normalization kernels (RMSNorm, LayerNorm), shared as CUDA device
// code. Two vector paths (the row's width a multiple of the 16-byte vector, x, weight, bias and y
// 16-byte aligned), both reading x from memory once:
//  - vector_kernel, short rows: a row per group of threads (several rows a block when rows are short),
//    each thread's share of the row held in registers, all its loads in flight together; the mean,
//    then the centered sum of squares, reduced over the row's threads.
//  - two_pass_kernel, longer rows: a row per block, read twice, the second time from L1 or L2; both
//    statistics from one pass of shifted sums.
// Scalar path: a block per row, any shape and alignment, x read per pass.
// A Norm policy supplies the statistics and the output of one element:
//   struct Norm { static constexpr bool kCentered;   // true: a mean is subtracted (LayerNorm)
//                 static constexpr bool kBias;       // true: a bias may be added (when Row::b is set)
//                 static float scale(float sum_sq, float cols, float eps);   // from the (centered) sum of squares
//                 template <typename T> static T out(float x, float mean, float scale, float w, float b); };
// Include only from .cu files.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/norm_args.h"
#include "cuda/l2_policy.cuh"
#include "opbench/check.h"

namespace opbench::kernels::row_norm {

constexpr int kVectorBytes = 16;
constexpr int64_t kMaxRowBytes = 128 * 1024;   // the vector paths' longest row

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Element k of a 16-byte vector of T, in fp32 (k a constant once unrolled).
template <typename T>
__device__ __forceinline__ float element(const uint4& q, int k) {
  return to_f(reinterpret_cast<const T*>(&q)[k]);
}
// bf16 is fp32's upper half: one shift or one mask an element, where converting each 16-bit element on
// its own took a byte permute and a shift for every other one (sm_90 SASS).
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
// n (thread mean - row mean)^2: no term cancels (one shift for the whole row, its first element,
// cancelled when that element was an outlier: fp32 outputs ~20 ulp off); the second pass reads x again
// (L2 evict_first and L1::evict_first: x is done) and writes y, with kKeepY under an
// evict_last policy too, so that L2 gives up x's lines before y's. The L1 hints are inductor's (its
// LayerNorm at 16384 on the H200, results/NVIDIA_H200/norm_32_registers_dropped). That the second pass
// reads from L1 is inferred, not counted: x not allocated in L1 ran 2-3.7% slower
// (results/NVIDIA_H200/norm_l1_hints_dropped), and with the hints and 32-bit indices, bf16 4096 rows 8192
// and 16384 wide ran faster (H200 LayerNorm +1.0 to +3.6%, RMSNorm +1.1 to +2.2%; H100 +1.5 to +3.1%;
// results/<gpu>/norm_inductor_hints).
// kVec vectors of each pass in flight per thread; at least kMinBlocks blocks an SM (the registers follow:
// 2048 threads of 2 vectors fit 32 registers, 1536 threads of 4 fit 40; at 32 those would spill). Against
// holding the row in registers or shared memory, no thread waits on a second reduction and the registers
// do not grow with the row (H100, bf16 4096 rows: LayerNorm 1.7-4% faster at 8192 and 16384 than the
// shared-memory kernel it replaced, RMSNorm 0.5-4%). REQUIRES: a row of at most kMaxRowBytes (its vector
// indices are 32-bit).
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
// two_pass_kernel on blocks of 128, 256 or 512 threads, 4 vectors a pass in flight per thread: the
// fewest threads that take the row in one step, at most 512, 1536 threads an SM. y is kept in L2
// (kKeepY) past 512 vectors: at 4096 bf16 it ran 3% slower so. The same shapes for both norms on both
// GPUs: with the L1 hints, RMSNorm on the H100 ran 1.7% (8192) and 0.5% (16384) faster on LayerNorm's
// shapes than on the 512-thread, 2048-threads-an-SM shapes it had there before
// (results/NVIDIA_H100_80GB_HBM3/norm_inductor_hints).
template <typename T, typename Norm>
void launch_two_pass(Row<T> r, int64_t rows, cudaStream_t stream) {
  const int64_t vectors = r.cols / (kVectorBytes / static_cast<int64_t>(sizeof(T)));
  const dim3 grid(static_cast<unsigned>(rows));
  if (vectors <= 128 * 4)
    two_pass_kernel<T, Norm, 128, 4, false, 12><<<grid, 128, 0, stream>>>(r);
  else if (vectors <= 256 * 4)
    two_pass_kernel<T, Norm, 256, 4, true, 6><<<grid, 256, 0, stream>>>(r);
  else
    two_pass_kernel<T, Norm, 512, 4, true, 3><<<grid, 512, 0, stream>>>(r);
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

inline bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0; }

// As at::layer_norm: the biased variance, the output computed in fp32 and rounded once. For 16-bit
// outputs the normalized value is x rstd - mean rstd, one FMA (mean rstd is the row's): its rounding,
// fp32's epsilon times |mean| rstd, stays far below a 16-bit ulp of the output for any mean/deviation
// ratio a 16-bit row can hold (the deviation at least about the row's ulp there, 2^-8 |mean| for bf16);
// fp32 rows keep (x - mean) rstd.
struct LayerPolicy {
  static constexpr bool kBias = true;
  static constexpr bool kCentered = true;
  __device__ static float scale(float centered_sum_sq, float cols, float eps) {
    return rsqrtf(centered_sum_sq / cols + eps);
  }
  template <typename T>
  __device__ static T out(float x, float mean, float rstd, float w, float b) {
    if constexpr (sizeof(T) == 2)
      return from_f<T>(fmaf(fmaf(x, rstd, -mean * rstd), w, b));
    else
      return from_f<T>(fmaf((x - mean) * rstd, w, b));
  }
};

// As Llama's reference: statistics in fp32, the normalized value rounded to the dtype (type_as(x)),
// then multiplied by the weight in the dtype (computed in fp32, rounded once).
struct RmsPolicy {
  static constexpr bool kBias = false;
  static constexpr bool kCentered = false;
  __device__ static float scale(float sum_sq, float cols, float eps) { return rsqrtf(sum_sq / cols + eps); }
  template <typename T>
  __device__ static T out(float x, float, float scale, float w, float) {
    return from_f<T>(to_f(from_f<T>(x * scale)) * w);
  }
};

// The vector paths' condition (see the top); rows of up to 128 KiB.
inline bool vectorizable(const void* x, const void* w, const void* b, const void* y, int64_t cols,
                         int64_t row_stride, int element_bytes) {
  const int64_t per = kVectorBytes / element_bytes;
  return cols % per == 0 && row_stride % per == 0 && aligned(x) && aligned(w) && (!b || aligned(b)) &&
         aligned(y) && cols * element_bytes <= kMaxRowBytes;
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
  if (!vectorizable(r.x, r.w, r.b, r.y, r.cols, r.row_stride, sizeof(T))) {
    scalar_kernel<T, Norm><<<static_cast<unsigned>(rows), 256, 0, stream>>>(r);
  } else {
    // Tuned on the H100 and the same on the H200 (verify/tune, results/<gpu>/kernel_tune), 4 vectors a thread:
    // rows of up to 256 vectors (2048 bf16) in registers, streamed, on blocks of 4 warps; longer rows by
    // two passes over L2, a row per block (launch_two_pass).
    const int64_t vectors = r.cols / (kVectorBytes / static_cast<int64_t>(sizeof(T)));
    if (vectors <= 256)
      launch_vector<T, 4, Norm, true>(r, rows, 128, stream);
    else
      launch_two_pass<T, Norm>(r, rows, stream);
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
