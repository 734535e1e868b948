// The int4 and int8 GEMVs on tensor cores (GemvPath::kMma; gemv_args.h says what a GEMV computes, and
// gemv.cu launches it where the table in gemv_configs.h picks it). Include only from .cu files.
//
// Why: the vector kernel spends about 2.4-3 instructions a weight on int4 and 3.5 on int8 (a convert, an
// add and an fp32 FMA a weight, plus x converted per chunk; counted from the source), and its decode GEMVs
// stop short of a read stream. Here one logic op makes two weights and mma.m16n8k16 does the
// multiply-adds:
// - int4: a LOP3 gives 128 + q as a bf16 pair (0x4300 | q is exactly 128 + q), x staged in bf16; about
//   1.4 instructions a weight. Llama-2-7B int4 decode 369.5 -> 501.2 tok/s (H100).
// - int8: a byte permute gives 1024 + u, u = b ^ 0x80 = b + 128, as an fp16 pair (0x64 above a byte is
//   exactly 1024 + the byte; one XOR flips four signs), x staged in fp16; about 0.9 instructions a
//   weight. x is scaled by a power of two so that the block's largest |x| lies in [2^14, 2^15): every
//   bf16 value from there down to 2^-28 of it converts exactly (fp16 holds 3 more mantissa bits), and
//   no |x| overflows fp16's 65504.
// In ordinary launches the vector kernels stay faster for int4 (docs/decisions.md), so the table takes
// these for programmatic launches.
//
// A warp holds a tile of 16 rows of W (A's rows) and multiplies it by x in B's columns (x in all 8 of
// them; D's columns are then equal). A unit is the 64 bytes of a row that its 4 lanes load at once:
// lane (g, t) = (lane / 4, lane % 4) loads bytes 16t..16t+15 of the unit of each of its two rows (A's
// rows g and g + 8): 128 int4 columns (one qparams group), 64 int8 columns. A dot product does not care
// in which order k runs, so A's k positions take the columns in the order the logic ops produce them,
// and x is staged in shared memory in that order (int4: from a word of 8 columns c..c+7 the pairs
// (c+1, c+5), (c, c+4), (c+3, c+7), (c+2, c+6); int8: the natural order), with each unit's sum of x
// beside it. After a unit's mmas D = sum(x (offset + w)): int4 adds scale (D - 136 sum(x)) +
// zero sum(x) to the row ((q - 8) scale + zero is the weight), int8 D - 1152 sum(x), unscaled at the end.
//
// A block is kTiles tiles of 16 rows (for the SwiGLU epilogue, 8 rows of each half: A's row g is output
// row o + g of the first half, row g + 8 the same row of the second) and kWarps / kTiles warps per tile,
// each taking kSteps consecutive units a step, the tile's warps interleaved along the row; their sums
// meet in shared memory. Every other epilogue pairs rows 2i and 2i + 1 in A's rows g and g + 8, as RoPE
// needs. The first steps of W are loaded before the wait on earlier kernels (weights are no kernel's
// output), and each step loads the next one's weights before its arithmetic. REQUIRES: cols, row_stride
// and expert_stride multiples of the unit's columns (int4's rules; int8: 64, mma_fits), cols <=
// kMmaMaxCols (gemv_configs.h: the staged x under 48 KB of shared memory), 16-byte-aligned x and norm_w,
// an even row count for the paired epilogues.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/launch.cuh"
#include "kernels/gemv/gemv_configs.h"
#include "kernels/gemv/gemv_fusion.cuh"
#include "kernels/gemv/gemv_math.cuh"

namespace opbench::kernels::gemv {

constexpr int kMmaTileRows = 16;
template <typename T>
constexpr int kUnitCols = mma_unit_cols(kWeightType<T>);
static_assert(kUnitCols<Int4> == kInt4GroupSize, "an int4 unit is one qparams group");

// Shared memory of a block for rows of `cols` columns: x staged (2 bytes a column), then each unit's sum.
template <typename T>
constexpr size_t mma_shared_bytes(int64_t cols) {
  return static_cast<size_t>(cols) * 2 + static_cast<size_t>(cols / kUnitCols<T>) * sizeof(float);
}

// 128 + q for the nibbles q at bits 0..3 and 16..19 of r, as a bf16 pair (low half from bits 0..3).
__device__ __forceinline__ uint32_t int4_pair_plus_128(uint32_t r) {
  uint32_t out;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(out) : "r"(r), "n"(0x000F000Fu), "r"(0x43004300u));   // (a & b) | c
  return out;
}
// 1024 + u for bytes u of r (selector 0x4140: bytes 0 and 1; 0x4342: bytes 2 and 3), as an fp16 pair.
template <uint32_t kSelector>
__device__ __forceinline__ uint32_t int8_pair_plus_1024(uint32_t r) {
  return __byte_perm(r, 0x64646464u, kSelector);
}

// d += A B for A's four registers and B's two (PTX's m16n8k16 fragments), fp32 accumulation.
__device__ __forceinline__ void mma_bf16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_f16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                        uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
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
// int8: columns c..c+3 of the lane's two rows (a word each, signs flipped) times x_c..x_c+3 (x01 the
// fp16 pair x_c, x_c+1; x23 the next): one mma.
__device__ __forceinline__ void mma_word(float (&d)[4], uint32_t lo, uint32_t hi, uint32_t x01, uint32_t x23) {
  mma_f16(d, int8_pair_plus_1024<0x4140>(lo), int8_pair_plus_1024<0x4140>(hi), int8_pair_plus_1024<0x4342>(lo),
          int8_pair_plus_1024<0x4342>(hi), x01, x23);
}

// A unit of the lane's two rows (16 bytes each; int4 also their groups' qparams) and its arithmetic:
// acc_lo and acc_hi += the unit's dot products with x (int8: x scaled, weights without row scales).
template <typename T>
struct MmaUnit {
  WChunk<T> lo, hi;
  // `xu`: the lane's staged x of the unit; `sx`: the unit's sum of staged x.
  __device__ __forceinline__ void accumulate(const uint4* xu, float sx, float& acc_lo, float& acc_hi) const {
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    if constexpr (std::is_same_v<T, Int4>) {
      mma_word(d, lo.q.x, hi.q.x, xu[0]);
      mma_word(d, lo.q.y, hi.q.y, xu[1]);
      mma_word(d, lo.q.z, hi.q.z, xu[2]);
      mma_word(d, lo.q.w, hi.q.w, xu[3]);
      const float2 ql = __bfloat1622float2(lo.qparams), qh = __bfloat1622float2(hi.qparams);
      acc_lo = fmaf(ql.x, d[0] - 136.f * sx, fmaf(ql.y, sx, acc_lo));
      acc_hi = fmaf(qh.x, d[2] - 136.f * sx, fmaf(qh.y, sx, acc_hi));
    } else {
      constexpr uint32_t kFlip = 0x80808080u;
      const uint4 x0 = xu[0], x1 = xu[1];
      mma_word(d, lo.q.x ^ kFlip, hi.q.x ^ kFlip, x0.x, x0.y);
      mma_word(d, lo.q.y ^ kFlip, hi.q.y ^ kFlip, x0.z, x0.w);
      mma_word(d, lo.q.z ^ kFlip, hi.q.z ^ kFlip, x1.x, x1.y);
      mma_word(d, lo.q.w ^ kFlip, hi.q.w ^ kFlip, x1.z, x1.w);
      acc_lo += fmaf(-1152.f, sx, d[0]);
      acc_hi += fmaf(-1152.f, sx, d[2]);
    }
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

// Stages x into `xs` and each unit's sum of it into `unit_sums`; returns (kNorm) this thread's part of
// x's sum of squares. int4: bf16 in the staged order. int8: fp16 times 2^shift (the file's top says why), 2^-shift in
// `unscale`. A thread takes 8 columns at a time, so a unit's vectors lie in consecutive lanes (cols is a
// multiple of the unit, blockDim of the warp).
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
    __shared__ float warp_top[32];
    float top = 0.f;
    for (int64_t i = threadIdx.x; i < vectors; i += blockDim.x) {
      const uint4 v = x_vector<kNorm>(p, x, i, sum_sq);
      const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __bfloat1622float2(pairs[k]);
        top = fmaxf(top, fmaxf(fabsf(f.x), fabsf(f.y)));
      }
      xs[i] = v;   // bf16 until the block's largest |x| is known
    }
#pragma unroll
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2) top = fmaxf(top, __shfl_xor_sync(0xffffffffu, top, offset));
    if (threadIdx.x % kWarpSize == 0) warp_top[threadIdx.x / kWarpSize] = top;
    __syncthreads();
    for (int w = 0; w < static_cast<int>(blockDim.x / kWarpSize); ++w) top = fmaxf(top, warp_top[w]);
    // top in [2^e, 2^(e+1)): 2^(14 - e) brings it into [2^14, 2^15); the shift bounded so that 2^shift and
    // 2^-shift are normal floats.
    const int e = (__float_as_int(top) >> 23) - 127;
    const int shift = max(-120, min(120, 14 - e));
    const float scale = __int_as_float((127 + shift) << 23);
    unscale = __int_as_float((127 - shift) << 23);
    for (int64_t i = threadIdx.x; i < vectors; i += blockDim.x) {   // the thread's own vectors: no sync needed
      uint4 v = xs[i];
      __nv_bfloat162* pairs = reinterpret_cast<__nv_bfloat162*>(&v);
      float sum = 0.f;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __bfloat1622float2(pairs[k]);
        const __half2 h = __floats2half2_rn(f.x * scale, f.y * scale);
        const float2 back = __half22float2(h);
        sum += back.x + back.y;
        pairs[k] = *reinterpret_cast<const __nv_bfloat162*>(&h);
      }
      xs[i] = v;
      store_unit_sum<kLanes>(sum, i, unit_sums);
    }
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
  for (; u0 < units; u0 += kStride) {
    load(next, u0 + kStride);
#pragma unroll
    for (int k = 0; k < kSteps; ++k) {
      const int64_t unit = u0 + k;
      if (unit >= units) break;
      w[k].accumulate(xs + unit * kUnitVectors + t * (kUnitVectors / 4), unit_sums[unit], acc_lo, acc_hi);
    }
#pragma unroll
    for (int k = 0; k < kSteps; ++k) w[k] = next[k];
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

// Blocks of mma_kernel<T, kWarps, kTiles, ...> for `rows` rows of W (swiglu: the rows / 2 output rows).
template <int kTiles>
inline unsigned mma_blocks(int64_t rows, bool swiglu) {
  const int64_t per_block = int64_t{kTiles} * (swiglu ? 8 : kMmaTileRows);
  const int64_t covered = swiglu ? rows / 2 : rows;
  return static_cast<unsigned>((covered + per_block - 1) / per_block);
}

}  // namespace opbench::kernels::gemv
