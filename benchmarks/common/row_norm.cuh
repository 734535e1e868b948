// The machinery of opbench's row-normalization kernels (RMSNorm, LayerNorm), shared as CUDA device
// code. Vector path (the row's width a multiple of the 16-byte vector, x, weight, bias and y 16-byte
// aligned): a row per group of warps (several rows a block when rows are short); each thread loads its
// share of the row into registers once (all its loads in flight together), the statistics are reduced
// across the group (warp shuffles, then one float per warp in shared memory), and each thread writes its
// outputs from the registers: x is read from memory once. Scalar path: a block per row, any shape and
// alignment, x read per pass.
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

// Sum of `v` over the `group_warps` warps of the calling thread's row group (consecutive warps);
// every thread of the group gets the total. REQUIRES: every thread of the block calls it.
__device__ __forceinline__ float group_sum(float v, int group_warps) {
  __shared__ float warp_sums[32];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (group_warps == 1) return v;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, first = warp - warp % group_warps;
  __syncthreads();   // warp_sums may still be read by a previous call
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  float total = 0.f;
  for (int g = 0; g < group_warps; ++g) total += warp_sums[first + g];
  return total;
}

// Vector path: a row per group of `group_warps` warps (blockDim.x / 32 / group_warps rows per block),
// kVec 16-byte vectors per thread. REQUIRES: group_warps * 32 * kVec >= the row's vectors.
template <typename T, int kVec, typename Norm, bool kStreaming = true>
__global__ void vector_kernel(Row<T> r, int64_t rows, int group_warps) {
  constexpr int kPer = kVectorBytes / sizeof(T);
  const int64_t vectors = r.cols / kPer;
  const int group_threads = group_warps * 32;
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
      const T* e = reinterpret_cast<const T*>(&held[i]);
#pragma unroll
      for (int k = 0; k < kPer; ++k) f(to_f(e[k]));
    }
  };
  float mean = 0.f;
  if constexpr (Norm::kCentered) {
    float sum = 0.f;
    each([&](float v) { sum += v; });
    mean = group_sum(sum, group_warps) / static_cast<float>(r.cols);
  }
  float sum_sq = 0.f;
  each([&](float v) { sum_sq += (v - mean) * (v - mean); });
  const float scale = Norm::scale(group_sum(sum_sq, group_warps), static_cast<float>(r.cols), r.eps);
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
    store_row<kStreaming>(yr + v, out);
  }
}

// The launch shape of vector_kernel<.., kVec, ..> for rows of `vectors` vectors: warps per row group
// (the fewest that cover the row) and rows per block (blocks of up to 8 warps when rows are short).
struct GroupShape {
  int group_warps, rows_per_block;
};
template <int kVec>
inline GroupShape group_shape(int64_t vectors) {
  const int group_warps = static_cast<int>((vectors + 32 * kVec - 1) / (32 * kVec));
  return {group_warps, group_warps >= 8 ? 1 : 8 / group_warps};
}
template <typename T, int kVec, typename Norm, bool kStreaming = true>
void launch_vector(Row<T> r, int64_t rows, cudaStream_t stream) {
  const GroupShape shape = group_shape<kVec>(r.cols / (kVectorBytes / static_cast<int64_t>(sizeof(T))));
  const dim3 grid(static_cast<unsigned>((rows + shape.rows_per_block - 1) / shape.rows_per_block));
  vector_kernel<T, kVec, Norm, kStreaming>
      <<<grid, shape.rows_per_block * shape.group_warps * 32, 0, stream>>>(r, rows, shape.group_warps);
}

template <typename T, typename Norm>
__global__ void scalar_kernel(Row<T> r) {
  const T* xr = r.x + blockIdx.x * r.row_stride;
  float mean = 0.f;
  if constexpr (Norm::kCentered) {
    float sum = 0.f;
    for (int64_t c = threadIdx.x; c < r.cols; c += blockDim.x) sum += to_f(xr[c]);
    mean = group_sum(sum, blockDim.x / 32) / static_cast<float>(r.cols);
  }
  float sum_sq = 0.f;
  for (int64_t c = threadIdx.x; c < r.cols; c += blockDim.x) {
    float d = to_f(xr[c]) - mean;
    sum_sq += d * d;
  }
  const float scale = Norm::scale(group_sum(sum_sq, blockDim.x / 32), static_cast<float>(r.cols), r.eps);
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
      launch_vector<T, 4, Norm, true>(r, rows, stream);
    else if (vectors <= 4096)
      launch_vector<T, 4, Norm, false>(r, rows, stream);
    else
      launch_vector<T, 8, Norm, false>(r, rows, stream);
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
