// The arithmetic the GEMV's kernels share (gemv_kernels.cuh): the kernels' parameters, the weight
// types' traits and loads, x's chunks in fp32, the dot product of a 16-byte chunk of W (bf16, or int8 or
// int4 dequantized on the fly), the reductions and a row's bf16 result. Include only from .cu files.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

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
  const __nv_bfloat162* group_qparams = nullptr;   // int4: (scale, zero) per kInt4GroupSize weights
  // Fusions (gemv_args.h; which ones run is the kernel's template): the rms norm prologue's weights,
  // the RoPE epilogue's tables and caches.
  const __nv_bfloat16* norm_w = nullptr;
  float norm_eps = 0.f;
  RopeCacheOut rope = {};
};


// The kernels' weight element types: __nv_bfloat16, int8_t, and Int4 for two int4 weights a byte (the
// kernels address W by weight, and Int4 stands for a weight of half a byte).
struct Int4 {
  uint8_t pair;
};
template <typename T>
constexpr int kBits = sizeof(T) * 8;
template <>
constexpr int kBits<Int4> = 4;
template <typename T>
constexpr WeightType kWeightType = std::is_same_v<T, Int4> ? WeightType::kInt4
                                   : std::is_same_v<T, int8_t> ? WeightType::kInt8
                                                               : WeightType::kBf16;
static_assert(kBits<Int4> == weight_bits(WeightType::kInt4) && kBits<int8_t> == weight_bits(WeightType::kInt8));

// The address of the weight at element offset `e` of W (for Int4, of the byte holding it; e even).
template <typename T>
__device__ __forceinline__ const void* weight_address(const Params& p, int64_t e) {
  return static_cast<const char*>(p.w) + (kBits<T> == 4 ? e >> 1 : e * (kBits<T> / 8));
}

// One 16-byte chunk of W as loaded, and for int4 its group's (scale, zero): a chunk's 32 weights lie in
// one group (kInt4GroupSize is a multiple of 32 and rows start at a group).
template <typename T>
struct WChunk {
  uint4 q;
};
template <>
struct WChunk<Int4> {
  uint4 q;
  __nv_bfloat162 qparams;
};
// The chunk at element offset `e` of W, streamed past L1 (__ldcs); the qparams, shared by four chunks, cached.
template <typename T>
__device__ __forceinline__ WChunk<T> load_chunk(const Params& p, int64_t e) {
  WChunk<T> c;
  c.q = __ldcs(static_cast<const uint4*>(weight_address<T>(p, e)));
  if constexpr (std::is_same_v<T, Int4>) c.qparams = __ldg(p.group_qparams + static_cast<uint64_t>(e) / kInt4GroupSize);
  return c;
}

// An int4 row's start: its first byte and its first group's qparams (a row starts at a group), so that a
// load adds only its column's offsets (c / 2, c / 128), not the 64-bit shifts of the whole element offset
// again. Empty for the other types (vector_kernel addresses them by element offset, load_chunk above).
template <typename T>
struct RowStart {
  RowStart() = default;
  __device__ __forceinline__ RowStart(const Params&, int64_t) {}
};
template <>
struct RowStart<Int4> {
  const uint8_t* bytes;
  const __nv_bfloat162* qparams;
  RowStart() = default;
  __device__ __forceinline__ RowStart(const Params& p, int64_t row_e)
      : bytes(static_cast<const uint8_t*>(p.w) + (row_e >> 1)), qparams(p.group_qparams + row_e / kInt4GroupSize) {}
};
// The int4 chunk at column offset `c` (>= 0) of a row.
__device__ __forceinline__ WChunk<Int4> load_chunk(const RowStart<Int4>& row, int64_t c) {
  const uint64_t at = static_cast<uint64_t>(c);
  WChunk<Int4> chunk;
  chunk.q = __ldcs(reinterpret_cast<const uint4*>(row.bytes + at / 2));
  chunk.qparams = __ldg(row.qparams + at / kInt4GroupSize);
  return chunk;
}

// The dequantized weight at element offset `e` of W (the scalar kernel's).
template <typename T>
__device__ __forceinline__ float weight_value(const Params& p, int64_t e) {
  if constexpr (std::is_same_v<T, Int4>) {
    const uint8_t pair = *static_cast<const uint8_t*>(weight_address<T>(p, e));
    const int q = (e & 1) ? pair & 0xF : pair >> 4;   // the even column in the high nibble
    const float2 sz = __bfloat1622float2(p.group_qparams[e / kInt4GroupSize]);
    return static_cast<float>(q - 8) * sz.x + sz.y;
  } else if constexpr (std::is_same_v<T, int8_t>) {
    return static_cast<float>(*static_cast<const int8_t*>(weight_address<T>(p, e)));
  } else {
    return __bfloat162float(*static_cast<const __nv_bfloat16*>(weight_address<T>(p, e)));
  }
}

// Weights in one 16-byte chunk of W: 8 bf16, 16 int8, 32 int4.
template <typename T>
constexpr int kChunkElems = kVectorBytes * 8 / kBits<T>;

// x's elements matching one 16-byte chunk of W as loaded (bf16): one vector for bf16 weights, two for
// int8, four for int4.
template <typename T>
struct XRaw {
  static constexpr int kVectors = kChunkElems<T> / 8;
  uint4 q[kVectors];
  __device__ __forceinline__ void load(const __nv_bfloat16* x) {
#pragma unroll
    for (int i = 0; i < kVectors; ++i) q[i] = reinterpret_cast<const uint4*>(x)[i];
  }
};

// x's elements matching one 16-byte chunk of W, in fp32: 8 for bf16 weights, 16 for int8, 32 for int4
// (loaded from x, or converted from an XRaw loaded earlier). For int4, finish() also computes what every
// row of the group shares (dot_chunk<Int4> says why): the sum of the chunk's x (the zero's term) and the
// starts of the even and odd columns' accumulation chains; a no-op otherwise.
template <typename T>
struct XChunk {
  static constexpr int kElems = kChunkElems<T>;
  float v[kElems];
  float sum = 0.f, even_start = 0.f, odd_start = 0.f;
  __device__ __forceinline__ void finish();
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

// int4: the chunk's weights are (q - 8) * scale + zero, so its dot product is
// scale * sum((q - 8) x) + zero * sum(x). A nibble q masked into bits 12..15 of the float 2^11 (0x45000000)
// makes the float 2048 + q, into bits 16..19 of 2^7 (0x43000000) the float 128 + q, exactly: one LOP3 a
// weight, no int->float convert and no bias subtraction (the int8 path's byte permute and add). A word's
// columns c0..c7 lie at nibbles (from bit 0) c1 c0 c3 c2 c5 c4 c7 c6 (the even column high); the word,
// it shifted 8 bits either way and it with bytes 3 and 0 moved to bytes 1 and 2 place each even column at
// bits 12..15 and an odd one at bits 16..19. So sum((q - 8) x) is a chain over the even columns of
// (2048 + q) x started at -2056 sum(x_even) plus one over the odd columns of (128 + q) x started at
// -136 sum(x_odd), the starts and sum(x) computed once per chunk for all of a group's rows (finish()).
// The chains' terms are 2^11 and 2^7 times x, so fp32 keeps q x to ~2^-13 and 2^-17 of |x|: far inside the
// check's tolerance (dot_tolerance.h).
template <>
__device__ __forceinline__ void XChunk<Int4>::finish() {
  float e[2] = {}, o[2] = {};   // short chains
#pragma unroll
  for (int i = 0; i < kElems / 2; ++i) {
    e[i % 2] += v[2 * i];
    o[i % 2] += v[2 * i + 1];
  }
  const float even = e[0] + e[1], odd = o[0] + o[1];
  sum = even + odd;
  even_start = -2056.f * even;
  odd_start = -136.f * odd;
}
template <typename T>
__device__ __forceinline__ void XChunk<T>::finish() {}

// (r & mask) | magic as one LOP3: written as C++, ptxas spends two (a LOP3 takes one 32-bit immediate).
template <uint32_t kMask>
__device__ __forceinline__ float masked_or(uint32_t r, uint32_t magic) {
  uint32_t out;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(out) : "r"(r), "n"(kMask), "r"(magic));   // 0xEA: (a & b) | c
  return __uint_as_float(out);
}
// 2048 + q for the nibble q at bits 12..15 of r; 128 + q for the nibble at bits 16..19.
__device__ __forceinline__ float int4_at_12(uint32_t r) { return masked_or<0x0000F000u>(r, 0x45000000u); }
__device__ __forceinline__ float int4_at_16(uint32_t r) { return masked_or<0x000F0000u>(r, 0x43000000u); }

__device__ __forceinline__ float dot_chunk(const WChunk<Int4>& wc, const XChunk<Int4>& x, float acc) {
  const uint32_t words[4] = {wc.q.x, wc.q.y, wc.q.z, wc.q.w};
  float even = x.even_start, odd = x.odd_start;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const uint32_t w = words[k];
    const float* xv = x.v + 8 * k;
    const uint32_t up = w << 8, down = w >> 8, swapped = __byte_perm(w, 0u, 0x4034u);   // bytes 3, 0 at 1, 2
    even = fmaf(int4_at_12(up), xv[0], even);   // c0 (bits 4..7), c3 (8..11)
    odd = fmaf(int4_at_16(up), xv[3], odd);
    even = fmaf(int4_at_12(w), xv[2], even);    // c2, c5
    odd = fmaf(int4_at_16(w), xv[5], odd);
    even = fmaf(int4_at_12(down), xv[4], even);   // c4 (bits 20..23), c7 (24..27)
    odd = fmaf(int4_at_16(down), xv[7], odd);
    even = fmaf(int4_at_12(swapped), xv[6], even);   // c6 (bits 28..31), c1 (0..3)
    odd = fmaf(int4_at_16(swapped), xv[1], odd);
  }
  const float2 sz = __bfloat1622float2(wc.qparams);
  return fmaf(sz.x, even + odd, fmaf(sz.y, x.sum, acc));
}
template <typename T>
__device__ __forceinline__ float dot_chunk(const WChunk<T>& wc, const XChunk<T>& x, float acc) {
  return dot_chunk(wc.q, x, acc);
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
