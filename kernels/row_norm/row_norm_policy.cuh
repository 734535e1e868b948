// The normalization math of the row norms (row_norm.h), shared as device code: fp32 conversions of the
// element types and each norm's policy, the statistics' scale and the output of one element. The row
// norm kernels (row_norm_kernels.cuh) and the GEMV's rms norm prologue (kernels/gemv/gemv_fusion.cuh)
// compute with it. A policy:
//   struct Norm { static constexpr bool kCentered;   // true: a mean is subtracted (LayerNorm)
//                 static constexpr bool kBias;       // true: a bias may be added (when Row::b is set)
//                 static float scale(float sum_sq, float cols, float eps);   // from the (centered) sum of squares
//                 template <typename T> static T out(float x, float mean, float scale, float w, float b); };
// Include only from .cu files.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace opbench::kernels::row_norm {

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

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

}  // namespace opbench::kernels::row_norm
