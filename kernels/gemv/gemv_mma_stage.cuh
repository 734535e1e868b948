// x staged for the tensor-core GEMVs (gemv_mma.cuh, whose top says why): scaled by a power of two that
// brings the block's largest |x| into [2^21, 2^22), rounded to integers q, and split into the three bytes
// of 2^22 + q (x's planes), in shared memory in the order of the weights' registers. Include only from
// .cu files.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/gemv/gemv_configs.h"
#include "kernels/gemv/gemv_math.cuh"

namespace opbench::kernels::gemv {

template <typename T>
constexpr int kUnitCols = mma_unit_cols(kWeightType<T>);
static_assert(kUnitCols<Int4> == kInt4GroupSize, "an int4 unit is one qparams group");

// x in shared memory: kXPlanes planes of a byte a column, a unit's planes together (a plane of a unit is
// kUnitCols bytes), then int4's unit sums.
constexpr int kXPlanes = 3;
constexpr float kPlaneMagic = 12582912.f;   // 1.5 2^23: adding it rounds |v| < 2^22 to an integer in the low bits
template <typename T>
constexpr size_t mma_shared_bytes(int64_t cols) {
  const size_t planes = static_cast<size_t>(cols) * kXPlanes;
  if constexpr (std::is_same_v<T, Int4>) return planes + static_cast<size_t>(cols / kUnitCols<T>) * sizeof(float);
  return planes;
}

// x's vector i (8 bf16), kNorm: times the norm's weights, rounded to bf16, its squares added to sum_sq.
template <bool kNorm>
__device__ __forceinline__ uint4 x_vector(const Params& p, const __nv_bfloat16* x, int64_t i, float& sum_sq) {
  uint4 v = reinterpret_cast<const uint4*>(x)[i];
  if constexpr (kNorm) {
    __nv_bfloat162* pairs = reinterpret_cast<__nv_bfloat162*>(&v);
    const uint4 g = reinterpret_cast<const uint4*>(p.norm_w)[i];
    const __nv_bfloat162* gp = reinterpret_cast<const __nv_bfloat162*>(&g);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __bfloat1622float2(pairs[k]), w = __bfloat1622float2(gp[k]);
      sum_sq = fmaf(f.x, f.x, fmaf(f.y, f.y, sum_sq));
      pairs[k] = __floats2bfloat162_rn(f.x * w.x, f.y * w.y);
    }
  }
  return v;
}

// Sums `v` over the lanes of x's unit (`lanes` consecutive lanes, a vector each) and stores it for
// vector i.
template <int kLanes>
__device__ __forceinline__ void store_unit_sum(float v, int64_t i, float* unit_sums) {
  const unsigned set = ((1u << kLanes) - 1u) << (threadIdx.x & (kWarpSize - kLanes));
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(set, v, offset);
  if (i % kLanes == 0) unit_sums[i / kLanes] = v;
}

// The largest |x| of a vector as float bits (unsigned order is |x|'s, infinities and NaNs above every
// finite value), and its sum.
struct VectorScan {
  uint32_t top = 0;
  float sum = 0.f;
  __device__ __forceinline__ explicit VectorScan(uint4 v) {
    const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __bfloat1622float2(pairs[k]);
      top = max(top, max(__float_as_uint(fabsf(f.x)), __float_as_uint(fabsf(f.y))));
      sum += f.x + f.y;
    }
  }
};

// Writes vector i's planes (8 columns; `bits[c]`: the float 1.5 2^23 + q of column c, whose low 23 bits
// are 2^22 + q) in the order of A's registers: two words a plane, int8 columns 0-3 and 4-7 side by side,
// int4 the odd columns (low nibbles) in the lane's first 16 bytes, the even ones in its second.
template <typename T>
__device__ __forceinline__ void write_planes(const uint32_t (&bits)[8], int64_t i, uint8_t* planes) {
  constexpr bool kInt4 = std::is_same_v<T, Int4>;
  constexpr int kVectors = kUnitCols<T> / 8;   // vectors a unit
  constexpr int kCols[2][4] = {{kInt4 ? 1 : 0, kInt4 ? 3 : 1, kInt4 ? 5 : 2, kInt4 ? 7 : 3},
                               {kInt4 ? 0 : 4, kInt4 ? 2 : 5, kInt4 ? 4 : 6, kInt4 ? 6 : 7}};
  const int v = static_cast<int>(i % kVectors);
  // int4: the vector is word v % 4 of lane v / 4's 16 bytes
  const int at[2] = {kInt4 ? (v / 4) * 32 + (v % 4) * 4 : v * 8, kInt4 ? (v / 4) * 32 + (v % 4) * 4 + 16 : v * 8 + 4};
  uint8_t* unit = planes + (i / kVectors) * (kXPlanes * kUnitCols<T>);
#pragma unroll
  for (int plane = 0; plane < kXPlanes; ++plane) {
    const uint32_t byte = kXPlanes - 1 - plane, pick = byte | (byte + 4) << 4;   // plane 0: bits 16..23
    uint32_t word[2];
#pragma unroll
    for (int h = 0; h < 2; ++h)
      word[h] = __byte_perm(__byte_perm(bits[kCols[h][0]], bits[kCols[h][1]], pick),
                            __byte_perm(bits[kCols[h][2]], bits[kCols[h][3]], pick), 0x5410);
    uint8_t* plane_bytes = unit + plane * kUnitCols<T>;
    if constexpr (kInt4) {
      *reinterpret_cast<uint32_t*>(plane_bytes + at[0]) = word[0];
      *reinterpret_cast<uint32_t*>(plane_bytes + at[1]) = word[1];
    } else {
      *reinterpret_cast<uint2*>(plane_bytes + at[0]) = make_uint2(word[0], word[1]);
    }
  }
}

// Stages x's planes into `planes` (the file's top says why) and int4's unit sums into `unit_sums`;
// returns (kNorm) this thread's part of x's sum of squares, 2^-shift in `unscale`. A thread takes 8
// columns at a time, so a unit's vectors lie in consecutive lanes (cols is a multiple of the unit, blockDim
// of the warp).
template <typename T, bool kNorm>
__device__ __forceinline__ float stage_x(const Params& p, const __nv_bfloat16* x, uint8_t* planes, float* unit_sums,
                                         float& unscale) {
  constexpr int kLanes = kUnitCols<T> / 8;
  float sum_sq = 0.f;
  const int64_t vectors = p.cols / 8;
  auto scan = [&](uint4 v, int64_t i, uint32_t& top) {
    const VectorScan s(v);
    top = max(top, s.top);
    if constexpr (std::is_same_v<T, Int4>) store_unit_sum<kLanes>(s.sum, i, unit_sums);
  };
  // The thread's first kHeld vectors stay in registers between the passes; later ones are read again.
  constexpr int kHeld = 2;
  uint4 held[kHeld];
  uint32_t top = 0;
#pragma unroll
  for (int k = 0; k < kHeld; ++k) {
    const int64_t i = threadIdx.x + int64_t{k} * blockDim.x;
    if (i < vectors) held[k] = x_vector<kNorm>(p, x, i, sum_sq);
  }
#pragma unroll
  for (int k = 0; k < kHeld; ++k) {
    const int64_t i = threadIdx.x + int64_t{k} * blockDim.x;
    if (i < vectors) scan(held[k], i, top);
  }
  for (int64_t i = threadIdx.x + int64_t{kHeld} * blockDim.x; i < vectors; i += blockDim.x)
    scan(x_vector<kNorm>(p, x, i, sum_sq), i, top);
  __shared__ uint32_t warp_top[32];
  top = __reduce_max_sync(0xffffffffu, top);
  if (threadIdx.x % kWarpSize == 0) warp_top[threadIdx.x / kWarpSize] = top;
  __syncthreads();
  for (int w = 0; w < static_cast<int>(blockDim.x / kWarpSize); ++w) top = max(top, warp_top[w]);
  // top in [2^e, 2^(e+1)): 2^(21 - e) brings it into [2^21, 2^22); the shift bounded so that 2^shift and
  // 2^-shift are normal floats. An x that is not finite makes every row NaN.
  const int e = static_cast<int>(top >> 23) - 127;
  const int shift = max(-120, min(120, 21 - e));
  const float scale = __int_as_float((127 + shift) << 23);
  unscale = top >= 0x7f800000u ? __int_as_float(0x7fc00000) : __int_as_float((127 - shift) << 23);
  auto to_planes = [&](uint4 v, int64_t i) {
    const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&v);
    uint32_t bits[8];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __bfloat1622float2(pairs[k]);
      bits[2 * k] = __float_as_uint(fmaf(f.x, scale, kPlaneMagic));
      bits[2 * k + 1] = __float_as_uint(fmaf(f.y, scale, kPlaneMagic));
    }
    write_planes<T>(bits, i, planes);
  };
#pragma unroll
  for (int k = 0; k < kHeld; ++k) {
    const int64_t i = threadIdx.x + int64_t{k} * blockDim.x;
    if (i < vectors) to_planes(held[k], i);
  }
  // Vectors past the held ones again (from L1): the planes overwrite the room another thread's would need.
  float squares_again = 0.f;
  for (int64_t i = threadIdx.x + int64_t{kHeld} * blockDim.x; i < vectors; i += blockDim.x)
    to_planes(x_vector<kNorm>(p, x, i, squares_again), i);
  return sum_sq;
}

}  // namespace opbench::kernels::gemv
