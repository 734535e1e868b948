// The arithmetic the GEMV's kernels share (gemv_kernels.cuh): the kernels' parameters, x's chunks in
// fp32, the dot product of a 16-byte chunk of W (bf16, or int8 dequantized on the fly), the reductions
// and a row's bf16 result. Include only from .cu files.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/gemv/gemv_args.h"

namespace opbench::kernels::gemv {

constexpr int kWarpSize = 32;
constexpr int kScalarWarps = 8;   // scalar_kernel's block
constexpr int kVectorBytes = 16;

struct Params {
  const void* w;
  int64_t rows, cols, row_stride;
  const __nv_bfloat16* x;
  int64_t x_stride;
  __nv_bfloat16* y;
  const int64_t* expert_idx;
  int64_t expert_stride, num_experts;
  const __nv_bfloat16* row_scale;
  int64_t row_scale_expert_stride;
  // Fusions (gemv_args.h; which ones run is the kernel's template): the rms norm prologue's weights,
  // the RoPE epilogue's tables and caches.
  const __nv_bfloat16* norm_w = nullptr;
  float norm_eps = 0.f;
  RopeCacheOut rope = {};
};


__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(int8_t v) { return static_cast<float>(v); }

// x's elements matching one 16-byte chunk of W as loaded (bf16): one vector for bf16 weights, two for int8.
template <typename T>
struct XRaw {
  static constexpr int kVectors = kVectorBytes / static_cast<int>(sizeof(T)) / 8;
  uint4 q[kVectors];
  __device__ __forceinline__ void load(const __nv_bfloat16* x) {
#pragma unroll
    for (int i = 0; i < kVectors; ++i) q[i] = reinterpret_cast<const uint4*>(x)[i];
  }
};

// x's elements matching one 16-byte chunk of W, in fp32: 8 for bf16 weights, 16 for int8 (loaded from x,
// or converted from an XRaw loaded earlier).
template <typename T>
struct XChunk {
  static constexpr int kElems = kVectorBytes / sizeof(T);
  float v[kElems];
  __device__ __forceinline__ void load(const __nv_bfloat16* x) {
#pragma unroll
    for (int q = 0; q < kElems / 8; ++q) set_vector(q, reinterpret_cast<const uint4*>(x)[q]);
  }
  __device__ __forceinline__ void convert(const XRaw<T>& raw) {
#pragma unroll
    for (int q = 0; q < kElems / 8; ++q) set_vector(q, raw.q[q]);
  }
  // Elements 8q..8q+7 from their 16 bytes.
  __device__ __forceinline__ void set_vector(int q, uint4 raw) {
    const __nv_bfloat162* x2 = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float2 f = __bfloat1622float2(x2[i]);
      v[8 * q + 2 * i] = f.x;
      v[8 * q + 2 * i + 1] = f.y;
    }
  }
};

// acc + dot(one 16-byte chunk of W, the matching x).
__device__ __forceinline__ float dot_chunk(uint4 wv, const XChunk<__nv_bfloat16>& x, float acc) {
  const __nv_bfloat162* w2 = reinterpret_cast<const __nv_bfloat162*>(&wv);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 wf = __bfloat1622float2(w2[i]);
    acc = fmaf(wf.x, x.v[2 * i], acc);
    acc = fmaf(wf.y, x.v[2 * i + 1], acc);
  }
  return acc;
}

// int8 -> fp32 without I2F (a quarter-rate instruction, 16 per 16-byte load: the int8 path's limit):
// b ^ 0x80 placed in the low mantissa byte of 2^23 is the float 2^23 + 128 + b, exactly; one byte
// permute and one add recover b. Two accumulation chains halve the dependent-FMA latency.
__device__ __forceinline__ float dot_chunk(uint4 wv, const XChunk<int8_t>& x, float acc) {
  constexpr float kBias = 8388608.f + 128.f;
  const uint32_t words[4] = {wv.x ^ 0x80808080u, wv.y ^ 0x80808080u, wv.z ^ 0x80808080u, wv.w ^ 0x80808080u};
  float a0 = 0.f, a1 = 0.f;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float w0 = __uint_as_float(__byte_perm(words[k], 0x4B000000u, 0x7540)) - kBias;
    const float w1 = __uint_as_float(__byte_perm(words[k], 0x4B000000u, 0x7541)) - kBias;
    const float w2 = __uint_as_float(__byte_perm(words[k], 0x4B000000u, 0x7542)) - kBias;
    const float w3 = __uint_as_float(__byte_perm(words[k], 0x4B000000u, 0x7543)) - kBias;
    a0 = fmaf(w0, x.v[4 * k], a0);
    a1 = fmaf(w1, x.v[4 * k + 1], a1);
    a0 = fmaf(w2, x.v[4 * k + 2], a0);
    a1 = fmaf(w3, x.v[4 * k + 3], a1);
  }
  return acc + (a0 + a1);
}

// The expert a slice reads (0 without gathering), or -1 for an index out of range: the slice's rows
// then become NaN, so the check fails, and W is never read out of bounds.
__device__ __forceinline__ int64_t expert_of(const Params& p, int64_t slice) {
  if (p.expert_idx == nullptr) return 0;
  const int64_t e = p.expert_idx[slice];
  return e >= 0 && e < p.num_experts ? e : -1;
}

__device__ __forceinline__ __nv_bfloat16 nan_bf16() { return __float2bfloat16(__int_as_float(0x7fc00000)); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// The bf16 result of a row: its fp32 sum times the row's bf16 scale (the expert's) when there is one.
__device__ __forceinline__ __nv_bfloat16 finish_row(const Params& p, int64_t expert, int64_t row, float total) {
  if (p.row_scale != nullptr) total *= __bfloat162float(p.row_scale[expert * p.row_scale_expert_stride + row]);
  return __float2bfloat16(total);
}

}  // namespace opbench::kernels::gemv
