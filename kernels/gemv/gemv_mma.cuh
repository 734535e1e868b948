// The int4 and int8 GEMVs on tensor cores (GemvPath::kMma; gemv_args.h says what a GEMV computes, and
// gemv.cu launches it where the table in gemv_configs.h picks it). Include only from .cu files.
//
// Why: the vector kernel spends about 2.4-3 instructions a weight on int4 and 3.5 on int8 (a convert, an
// add and an fp32 FMA a weight, plus x converted per chunk; counted from the source), and its decode GEMVs
// stop short of a read stream. Here the mmas do the multiply-adds:
// - int4: a LOP3 gives 128 + q as a bf16 pair (0x4300 | q is exactly 128 + q), x staged in bf16,
//   mma.m16n8k16; about 1.4 instructions a weight. Llama-2-7B int4 decode 369.5 -> 501.2 tok/s (H100).
// - int8: the weights are A as loaded, mma.m16n8k32 on int8 A and uint8 B: about 0.25 instructions a
//   weight. x becomes integers: scaled by a power of two that brings the block's largest |x| into [2^21,
//   2^22) and rounded, q = round(x 2^shift), so every bf16 value down to 2^-14 of the largest converts
//   exactly. B's columns 0..2 hold the bytes of 2^22 + q (one FMA with 1.5 2^23 puts it in a float's low
//   bits; plane 0 the top byte) and column 3 ones, so D's columns are the planes' dot products and the
//   row's sum of W: q.w = 65536 D0 + 256 D1 + D2 - 2^22 D3, exact in int32 and int64. Llama-2-7B int8
//   decode on an H200 494.7 -> 469.2 ms a generation against fp16 mmas on permuted bytes (about 0.9 a
//   weight), which spent as much on the weights' conversion as x's staging costs.
// In ordinary launches the vector kernels stay faster for int4 (docs/decisions.md), so the table takes
// these for programmatic launches.
//
// A warp holds a tile of 16 rows of W (A's rows) and multiplies it by x in B's columns (int4: x in all 8
// of them; D's columns are then equal). A unit is the 64 bytes of a row that its 4 lanes load at once:
// lane (g, t) = (lane / 4, lane % 4) loads bytes 16t..16t+15 of the unit of each of its two rows (A's
// rows g and g + 8): 128 int4 columns (one qparams group), 64 int8 columns. A dot product does not care
// in which order k runs, so A's k positions take the columns in the order the logic ops produce them (int8:
// as loaded, a word of 4 columns a register), and x is staged in shared memory in that order (int4: from a
// word of 8 columns c..c+7 the pairs (c+1, c+5), (c, c+4), (c+3, c+7), (c+2, c+6), with each unit's sum of
// x beside it; int8: each unit's 3 planes of 64 bytes in the natural order). int4: after a unit's mmas D
// = sum(x (128 + q)), and the row gains scale (D - 136 sum(x)) + zero sum(x) ((q - 8) scale + zero is the
// weight). int8: D accumulates over the whole row, in two sets (two chains of dependent mmas), unscaled at
// the end.
//
// A block is kTiles tiles of 16 rows (for the SwiGLU epilogue, 8 rows of each half: A's row g is output
// row o + g of the first half, row g + 8 the same row of the second) and kWarps / kTiles warps per tile,
// each taking kSteps consecutive units a step, the tile's warps interleaved along the row; their sums
// meet in shared memory. Every other epilogue pairs rows 2i and 2i + 1 in A's rows g and g + 8, as RoPE
// needs. The first steps of W are loaded before the wait on earlier kernels (weights are no kernel's
// output), and each step loads the next one's weights before its arithmetic. REQUIRES: cols, row_stride
// and expert_stride multiples of the unit's columns (int4's rules; int8: 64, mma_fits), cols <=
// kMmaMaxCols (gemv_configs.h: the staged x in 48 KB of shared memory; allow_mma_shared_bytes lifts the
// default limit), 16-byte-aligned x and norm_w, an even row count for the paired epilogues. An x that is
// not finite gives NaN rows (int8).
#pragma once
#include <cuda_bf16.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "kernels/common/launch.cuh"
#include "kernels/common/per_device.h"
#include "kernels/gemv/gemv_configs.h"
#include "kernels/gemv/gemv_fusion.cuh"
#include "kernels/gemv/gemv_math.cuh"

namespace opbench::kernels::gemv {

constexpr int kMmaTileRows = 16;
template <typename T>
constexpr int kUnitCols = mma_unit_cols(kWeightType<T>);
static_assert(kUnitCols<Int4> == kInt4GroupSize, "an int4 unit is one qparams group");

// int8's x in shared memory: 3 bytes a column (kXPlanes planes of a unit's 64 columns, a unit's
// planes together).
constexpr int kXPlanes = 3;
constexpr float kPlaneMagic = 12582912.f;   // 1.5 2^23: adding it rounds |v| < 2^22 to an integer in the low bits
constexpr int kPlaneBias = 1 << 22;         // what the planes' bytes hold above q
// Shared memory of a block for rows of `cols` columns. int4: x staged (2 bytes a column), then each unit's
// sum; int8: x's planes.
template <typename T>
constexpr size_t mma_shared_bytes(int64_t cols) {
  if constexpr (std::is_same_v<T, Int4>)
    return static_cast<size_t>(cols) * 2 + static_cast<size_t>(cols / kUnitCols<T>) * sizeof(float);
  return static_cast<size_t>(cols) * kXPlanes;
}

// 128 + q for the nibbles q at bits 0..3 and 16..19 of r, as a bf16 pair (low half from bits 0..3).
__device__ __forceinline__ uint32_t int4_pair_plus_128(uint32_t r) {
  uint32_t out;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(out) : "r"(r), "n"(0x000F000Fu), "r"(0x43004300u));   // (a & b) | c
  return out;
}

// d += A B for A's four registers and B's two (PTX's m16n8k16 fragments), fp32 accumulation.
__device__ __forceinline__ void mma_bf16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// d += A B for int8 A and uint8 B (PTX's m16n8k32 fragments), s32 accumulation.
__device__ __forceinline__ void mma_s8(int (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                       uint32_t b1) {
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// int4: columns c..c+7 of the lane's two rows (a word each; a byte holds columns 2b high and 2b + 1 low)
// times x's 8 in the staged order: two mmas.
__device__ __forceinline__ void mma_word(float (&d)[4], uint32_t lo, uint32_t hi, uint4 x) {
  mma_bf16(d, int4_pair_plus_128(lo), int4_pair_plus_128(hi), int4_pair_plus_128(lo >> 4), int4_pair_plus_128(hi >> 4),
           x.x, x.y);
  mma_bf16(d, int4_pair_plus_128(lo >> 8), int4_pair_plus_128(hi >> 8), int4_pair_plus_128(lo >> 12),
           int4_pair_plus_128(hi >> 12), x.z, x.w);
}

// A unit of the lane's two rows (16 bytes each; int4 also their groups' qparams) and its arithmetic.
template <typename T>
struct MmaUnit {
  WChunk<T> lo, hi;
  // int4: acc_lo and acc_hi += the unit's dot products with x. `xu`: the lane's staged x of the unit;
  // `sx`: the unit's sum of staged x.
  __device__ __forceinline__ void accumulate(const uint4* xu, float sx, float& acc_lo, float& acc_hi) const {
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    mma_word(d, lo.q.x, hi.q.x, xu[0]);
    mma_word(d, lo.q.y, hi.q.y, xu[1]);
    mma_word(d, lo.q.z, hi.q.z, xu[2]);
    mma_word(d, lo.q.w, hi.q.w, xu[3]);
    const float2 ql = __bfloat1622float2(lo.qparams), qh = __bfloat1622float2(hi.qparams);
    acc_lo = fmaf(ql.x, d[0] - 136.f * sx, fmaf(ql.y, sx, acc_lo));
    acc_hi = fmaf(qh.x, d[2] - 136.f * sx, fmaf(qh.y, sx, acc_hi));
  }
  // int8: d += the unit's weights times x's planes (B's column n plane n; `plane`: the lane's 16 bytes of
  // its plane, the columns its weights hold). The weights are A as loaded: a word of 4 columns a register.
  // Two accumulators: two chains of dependent mmas instead of one.
  __device__ __forceinline__ void accumulate(uint4 plane, int (&d0)[4], int (&d1)[4]) const {
    mma_s8(d0, lo.q.x, hi.q.x, lo.q.y, hi.q.y, plane.x, plane.y);
    mma_s8(d1, lo.q.z, hi.q.z, lo.q.w, hi.q.w, plane.z, plane.w);
  }
};

// 8 bf16 of x (x_c..x_c+7, two a word) in int4's staged order.
__device__ __forceinline__ uint4 staged_order(uint4 v) {
  return {__byte_perm(v.x, v.z, 0x7632), __byte_perm(v.x, v.z, 0x5410), __byte_perm(v.y, v.w, 0x7632),
          __byte_perm(v.y, v.w, 0x5410)};
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

// Stages x into `xs`; returns (kNorm) this thread's part of x's sum of squares. int4: bf16 in the staged
// order, each unit's sum in `unit_sums`; a thread takes 8 columns at a time, so a unit's vectors lie in
// consecutive lanes (cols is a multiple of the unit, blockDim of the warp). int8: the planes of 2^22 + q
// (the file's top says why), 2^-shift in `unscale`.
template <typename T, bool kNorm>
__device__ __forceinline__ float stage_x(const Params& p, const __nv_bfloat16* x, uint4* xs, float* unit_sums,
                                         float& unscale) {
  constexpr int kLanes = kUnitCols<T> / 8;
  float sum_sq = 0.f;
  const int64_t vectors = p.cols / 8;
  unscale = 1.f;
  if constexpr (std::is_same_v<T, Int4>) {
    for (int64_t i = threadIdx.x; i < vectors; i += blockDim.x) {
      const uint4 v = x_vector<kNorm>(p, x, i, sum_sq);
      const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&v);
      float sum = 0.f;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __bfloat1622float2(pairs[k]);
        sum += f.x + f.y;
      }
      xs[i] = staged_order(v);
      store_unit_sum<kLanes>(sum, i, unit_sums);
    }
  } else {
    // The largest |x| as float bits: unsigned order is |x|'s, infinities and NaNs above every finite value.
    auto top_of = [](uint4 v) {
      const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&v);
      uint32_t top = 0;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __bfloat1622float2(pairs[k]);
        top = max(top, max(__float_as_uint(fabsf(f.x)), __float_as_uint(fabsf(f.y))));
      }
      return top;
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
    for (int k = 0; k < kHeld; ++k)
      if (threadIdx.x + int64_t{k} * blockDim.x < vectors) top = max(top, top_of(held[k]));
    for (int64_t i = threadIdx.x + int64_t{kHeld} * blockDim.x; i < vectors; i += blockDim.x)
      top = max(top, top_of(x_vector<kNorm>(p, x, i, sum_sq)));
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
    uint8_t* planes = reinterpret_cast<uint8_t*>(xs);
    auto write_planes = [&](uint4 v, int64_t i) {
      const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&v);
      uint32_t bits[8];   // the float 1.5 2^23 + q, q = x 2^shift rounded: its low 23 bits are 2^22 + q
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __bfloat1622float2(pairs[k]);
        bits[2 * k] = __float_as_uint(fmaf(f.x, scale, kPlaneMagic));
        bits[2 * k + 1] = __float_as_uint(fmaf(f.y, scale, kPlaneMagic));
      }
      uint8_t* unit = planes + (i / 8) * (kXPlanes * kMmaUnitBytes) + (i % 8) * 8;
#pragma unroll
      for (int plane = 0; plane < kXPlanes; ++plane) {
        const uint32_t byte = kXPlanes - 1 - plane, pick = byte | (byte + 4) << 4;   // plane 0: bits 16..23
        uint32_t word[2];
#pragma unroll
        for (int h = 0; h < 2; ++h)
          word[h] = __byte_perm(__byte_perm(bits[4 * h], bits[4 * h + 1], pick),
                                __byte_perm(bits[4 * h + 2], bits[4 * h + 3], pick), 0x5410);
        *reinterpret_cast<uint2*>(unit + plane * kMmaUnitBytes) = make_uint2(word[0], word[1]);
      }
    };
#pragma unroll
    for (int k = 0; k < kHeld; ++k) {
      const int64_t i = threadIdx.x + int64_t{k} * blockDim.x;
      if (i < vectors) write_planes(held[k], i);
    }
    // Vectors past the held ones again (from L1): the planes overwrite the room another thread's would need.
    float squares_again = 0.f;
    for (int64_t i = threadIdx.x + int64_t{kHeld} * blockDim.x; i < vectors; i += blockDim.x)
      write_planes(x_vector<kNorm>(p, x, i, squares_again), i);
  }
  return sum_sq;
}

template <typename T, int kWarps, int kTiles, int kSteps, bool kMayGather, bool kProgrammatic, bool kNorm,
          GemvEpilogue kEpilogue>
__global__ void __launch_bounds__(kWarps * kWarpSize) mma_kernel(Params p) {
  static_assert(kWarps % kTiles == 0, "a tile's warps split its row");
  constexpr int kSplits = kWarps / kTiles;
  constexpr bool kSwiglu = kEpilogue == GemvEpilogue::kSwiglu;
  constexpr bool kInt4 = std::is_same_v<T, Int4>;
  extern __shared__ uint4 xs[];
  float* unit_sums = reinterpret_cast<float*>(xs + p.cols / 8);
  __shared__ float partial[kWarps][kMmaTileRows];
  __shared__ float warp_sum_sq[kWarps];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize, g = lane / 4, t = lane % 4;
  const int tile = warp % kTiles, split = warp / kTiles;
  const int64_t slice = kMayGather ? blockIdx.y : 0;
  // A's rows g and g + 8: W's rows (lo, hi), and whether they exist (rows are even where pairs are stored).
  const int64_t tile_index = static_cast<int64_t>(blockIdx.x) * kTiles + tile;
  const int64_t half_rows = p.rows / 2;
  const int64_t lo = kSwiglu ? tile_index * 8 + g : tile_index * kMmaTileRows + 2 * g;
  const int64_t hi = kSwiglu ? lo + half_rows : lo + 1;
  const bool lo_valid = kSwiglu ? lo < half_rows : lo < p.rows;
  const bool hi_valid = kSwiglu ? lo_valid : hi < p.rows;
  if (kProgrammatic && kMayGather && p.expert_idx != nullptr) wait_for_inputs();   // the index is an earlier kernel's
  const int64_t expert = kMayGather ? expert_of(p, slice) : 0;
  // Rows past the end read the last row, an out-of-range expert reads expert 0: never out of bounds.
  const int64_t lo_read = lo_valid ? lo : (kSwiglu ? half_rows : p.rows) - 1;
  const int64_t hi_read = kSwiglu ? lo_read + half_rows : hi_valid ? hi : p.rows - 1;
  const int64_t base = (expert < 0 ? 0 : expert) * p.expert_stride;
  const int64_t lo_e = base + lo_read * p.row_stride, hi_e = base + hi_read * p.row_stride;
  const uint8_t* lo_bytes = static_cast<const uint8_t*>(weight_address<T>(p, lo_e)) + 16 * t;
  const uint8_t* hi_bytes = static_cast<const uint8_t*>(weight_address<T>(p, hi_e)) + 16 * t;
  const __nv_bfloat162* lo_q = kInt4 ? p.group_qparams + lo_e / kInt4GroupSize : nullptr;
  const __nv_bfloat162* hi_q = kInt4 ? p.group_qparams + hi_e / kInt4GroupSize : nullptr;
  const int64_t units = p.cols / kUnitCols<T>;
  constexpr int64_t kStride = int64_t{kSplits} * kSteps;   // units between a warp's steps

  MmaUnit<T> w[kSteps], next[kSteps];
  auto load = [&](MmaUnit<T> (&s)[kSteps], int64_t u0) {
#pragma unroll
    for (int k = 0; k < kSteps; ++k)
      if (u0 + k < units) {
        s[k].lo.q = __ldcs(reinterpret_cast<const uint4*>(lo_bytes + (u0 + k) * kMmaUnitBytes));
        s[k].hi.q = __ldcs(reinterpret_cast<const uint4*>(hi_bytes + (u0 + k) * kMmaUnitBytes));
        if constexpr (kInt4) {
          s[k].lo.qparams = __ldg(lo_q + u0 + k);
          s[k].hi.qparams = __ldg(hi_q + u0 + k);
        }
      }
  };
  int64_t u0 = static_cast<int64_t>(split) * kSteps;
  load(w, u0);
  if constexpr (kProgrammatic) {
    wait_for_inputs();
    allow_next_launch();
  }
  float y_old[2] = {0.f, 0.f};
  EpilogueOperands rope;
  if (split == 0 && t == 0 && lo_valid) {
    if constexpr (kEpilogue == GemvEpilogue::kAddToY) {
      y_old[0] = __bfloat162float(p.y[slice * p.rows + lo]);
      if (hi_valid) y_old[1] = __bfloat162float(p.y[slice * p.rows + hi]);
    }
    if constexpr (kEpilogue == GemvEpilogue::kRopeCache) rope = rope_operands(p, lo);
  }
  float unscale;
  float sum_sq = stage_x<T, kNorm>(p, p.x + slice * p.x_stride, xs, unit_sums, unscale);
  if constexpr (kNorm) {
    sum_sq = warp_sum(sum_sq);
    if (lane == 0) warp_sum_sq[warp] = sum_sq;
  }
  __syncthreads();

  constexpr int kUnitVectors = kUnitCols<T> / 8;   // uint4s of staged x a unit
  float acc_lo = 0.f, acc_hi = 0.f;
  int acc8[4] = {0, 0, 0, 0}, acc8_b[4] = {0, 0, 0, 0};   // int8: D's columns 2t, 2t + 1 of rows g, g + 8
  // int8: the lane's plane (B's column g; the lanes of columns 3..7 read plane 2, D's columns there unused).
  const uint4* x_plane = reinterpret_cast<const uint4*>(reinterpret_cast<const uint8_t*>(xs) +
                                                        min(g, kXPlanes - 1) * kMmaUnitBytes + 16 * t);
  const uint4 kOnes = {0x01010101u, 0x01010101u, 0x01010101u, 0x01010101u};   // B's column 3: D's the row sums of W
  constexpr int kPlaneVectors = kXPlanes * kMmaUnitBytes / 16;   // uint4s of x's planes a unit
  for (; u0 < units; u0 += kStride) {
    load(next, u0 + kStride);
#pragma unroll
    for (int k = 0; k < kSteps; ++k) {
      const int64_t unit = u0 + k;
      if (unit >= units) break;
      if constexpr (kInt4)
        w[k].accumulate(xs + unit * kUnitVectors + t * (kUnitVectors / 4), unit_sums[unit], acc_lo, acc_hi);
      else
        w[k].accumulate(g < kXPlanes ? x_plane[unit * kPlaneVectors] : kOnes, acc8, acc8_b);
    }
#pragma unroll
    for (int k = 0; k < kSteps; ++k) w[k] = next[k];
  }
  if constexpr (!kInt4) {   // planes 2^22 + q = 65536 plane 0 + 256 plane 1 + plane 2; lane t = 1 holds D's columns 2, 3
    int from_t1[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      acc8[k] += acc8_b[k];
      from_t1[k] = __shfl_down_sync(0xffffffffu, acc8[k], 1);
    }
    acc_lo = static_cast<float>(65536ll * acc8[0] + 256ll * acc8[1] + from_t1[0] - int64_t{kPlaneBias} * from_t1[1]);
    acc_hi = static_cast<float>(65536ll * acc8[2] + 256ll * acc8[3] + from_t1[2] - int64_t{kPlaneBias} * from_t1[3]);
  }
  if (t == 0) {
    partial[warp][g] = acc_lo;
    partial[warp][g + 8] = acc_hi;
  }
  __syncthreads();
  if (split != 0 || t != 0 || !lo_valid) return;
  float sums[2] = {0.f, 0.f};
#pragma unroll
  for (int s = 0; s < kSplits; ++s) {
    sums[0] += partial[s * kTiles + tile][g] * unscale;
    sums[1] += partial[s * kTiles + tile][g + 8] * unscale;
  }
  if constexpr (kNorm) {
    float total = 0.f;
#pragma unroll
    for (int v = 0; v < kWarps; ++v) total += warp_sum_sq[v];
    const float scale = norm_scale(p, total);
    sums[0] *= scale;
    sums[1] *= scale;
  }
  float result[2];   // as the unfused kernel stores them (int8: times the row's scale)
  const int64_t rows[2] = {lo, hi_valid ? hi : lo};
#pragma unroll
  for (int r = 0; r < 2; ++r)
    result[r] = __bfloat162float(expert < 0 ? nan_bf16() : finish_row(p, expert, rows[r], sums[r]));
  if constexpr (kSwiglu) {
    store_swiglu(p, slice, lo, result[0], result[1]);
  } else if constexpr (kEpilogue == GemvEpilogue::kRopeCache) {
    store_rope_cache(p, rope, lo, result[0], result[1]);
  } else {
    __nv_bfloat16* y = p.y + slice * p.rows;
    y[lo] = __float2bfloat16(result[0] + y_old[0]);
    if (hi_valid) y[hi] = __float2bfloat16(result[1] + y_old[1]);
  }
}

// Lets `kKernel` (an mma_kernel) take the shared memory of rows of up to kMmaMaxCols columns: int8's
// 48 KB and the static arrays pass the default limit. Once a device.
template <auto kKernel>
void allow_mma_shared_bytes() {
  static std::atomic<int8_t> done[kMaxCachedDevices] = {};
  once_per_device(done, [](int) {
    constexpr size_t kBytes = std::max(mma_shared_bytes<Int4>(kMmaMaxCols), mma_shared_bytes<int8_t>(kMmaMaxCols));
    OPBENCH_CUDA_CHECK(cudaFuncSetAttribute(kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kBytes)));
    return 1;
  });
}

// Blocks of mma_kernel<T, kWarps, kTiles, ...> for `rows` rows of W (swiglu: the rows / 2 output rows).
template <int kTiles>
inline unsigned mma_blocks(int64_t rows, bool swiglu) {
  const int64_t per_block = int64_t{kTiles} * (swiglu ? 8 : kMmaTileRows);
  const int64_t covered = swiglu ? rows / 2 : rows;
  return static_cast<unsigned>((covered + per_block - 1) / per_block);
}

}  // namespace opbench::kernels::gemv
