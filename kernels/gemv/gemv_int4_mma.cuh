// The int4 GEMV on bf16 tensor cores (GemvPath::kInt4Mma; gemv_args.h says what a GEMV computes, and
// gemv.cu launches it where the table in gemv_configs.h picks it). Include only from .cu files.
//
// Why: the vector kernel's int4 dot takes a LOP3 and an fp32 FMA a weight, plus x converted and summed
// per chunk (about 2.4-3 instructions a weight, counted from the source), and its decode GEMVs stop at two
// thirds of a read stream. Here a LOP3 makes two weights at once, 128 + q as a bf16 pair (0x4300 | q is
// exactly 128 + q), and mma.m16n8k16 does the multiply-adds: about 1.4 instructions a weight. Measured:
// Llama-2-7B int4 decode 369.5 -> 501.2 tok/s (H100); alone, in ordinary launches, the vector kernel stays
// faster (docs/decisions.md), so the table takes this one for programmatic launches.
//
// A warp holds a tile of 16 rows of W (A's rows) and multiplies it by x in B's columns (x in all 8 of
// them; D's columns are then equal). Lane (g, t) = (lane / 4, lane % 4) loads 16 bytes, 32 columns, of
// each of its two rows (A's rows g and g + 8) per group of 128 columns: the 4 lanes of a row cover the
// group's 64 bytes. A dot product does not care in which order k runs, so A's k positions take the
// columns in the order the LOP3s produce them — from a word of 8 columns c..c+7, the pairs (c+1, c+5),
// (c, c+4), (c+3, c+7), (c+2, c+6) — and x is staged in shared memory in that order. After a group's 8
// mmas D = sum(x (128 + q)), so the group adds scale (D - 136 sum(x)) + zero sum(x) to the row
// ((q - 8) scale + zero is the weight), with sum(x) over the group staged beside x.
//
// A block is kTiles tiles of 16 rows (for the SwiGLU epilogue, 8 rows of each half: A's row g is output
// row o + g of the first half, row g + 8 the same row of the second) and kWarps / kTiles warps per tile,
// each taking kSteps consecutive groups a step, the tile's warps interleaved along the row; their sums
// meet in shared memory. Every other epilogue pairs rows 2i and 2i + 1 in A's rows g and g + 8, as RoPE
// needs. The first steps of W are loaded before the wait on earlier kernels (weights are no kernel's
// output), and each step loads the next one's weights before its arithmetic. REQUIRES: cols, row_stride
// and expert_stride multiples of 128 (int4's rules), cols <= kInt4MmaMaxCols,
// 16-byte-aligned x and norm_w, an even row count for the paired epilogues. kInt4MmaMaxCols (gemv_configs.h)
// keeps the staged x under 48 KB of shared memory.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/common/launch.cuh"
#include "kernels/gemv/gemv_fusion.cuh"
#include "kernels/gemv/gemv_math.cuh"

namespace opbench::kernels::gemv {

constexpr int kMmaTileRows = 16;

// Shared memory of a block for rows of `cols` columns: x in the mma's order, then each group's sum of x.
constexpr size_t int4_mma_shared_bytes(int64_t cols) {
  return static_cast<size_t>(cols) * 2 + static_cast<size_t>(cols / kInt4GroupSize) * sizeof(float);
}

// 128 + q for the nibbles q at bits 0..3 and 16..19 of r, as a bf16 pair (low half from bits 0..3).
__device__ __forceinline__ uint32_t int4_pair_plus_128(uint32_t r) {
  uint32_t out;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(out) : "r"(r), "n"(0x000F000Fu), "r"(0x43004300u));   // (a & b) | c
  return out;
}

// d += A B for A's four registers and B's two (PTX's m16n8k16 fragments), fp32 accumulation.
__device__ __forceinline__ void mma_16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                          uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Columns c..c+7 of the lane's two rows (a word each; a byte holds columns 2b high and 2b + 1 low) times
// x's 8 in the staged order (x_c+1, x_c+5), (x_c, x_c+4), (x_c+3, x_c+7), (x_c+2, x_c+6): two mmas.
__device__ __forceinline__ void mma_word(float (&d)[4], uint32_t lo, uint32_t hi, uint4 x) {
  mma_16816(d, int4_pair_plus_128(lo), int4_pair_plus_128(hi), int4_pair_plus_128(lo >> 4), int4_pair_plus_128(hi >> 4),
            x.x, x.y);
  mma_16816(d, int4_pair_plus_128(lo >> 8), int4_pair_plus_128(hi >> 8), int4_pair_plus_128(lo >> 12),
            int4_pair_plus_128(hi >> 12), x.z, x.w);
}

// 8 bf16 of x (x_c..x_c+7, two a word) in the staged order.
__device__ __forceinline__ uint4 staged_order(uint4 v) {
  return {__byte_perm(v.x, v.z, 0x7632), __byte_perm(v.x, v.z, 0x5410), __byte_perm(v.y, v.w, 0x7632),
          __byte_perm(v.y, v.w, 0x5410)};
}

// Stages x (kNorm: x times the norm's weights, rounded to bf16) into `xs` in the staged order and each
// group's sum of it into `group_sums`; returns (kNorm) this thread's part of x's sum of squares. A
// thread takes 8 columns at a time, so the 16 threads of a group's 128 columns are one half of a warp.
template <bool kNorm>
__device__ __forceinline__ float stage_x(const Params& p, const __nv_bfloat16* x, uint4* xs, float* group_sums) {
  float sum_sq = 0.f;
  const int64_t vectors = p.cols / 8;
  const unsigned half = 0xFFFFu << (threadIdx.x & 16);
  for (int64_t i = threadIdx.x; i < vectors; i += blockDim.x) {
    uint4 v = reinterpret_cast<const uint4*>(x)[i];
    __nv_bfloat162* pairs = reinterpret_cast<__nv_bfloat162*>(&v);
    if constexpr (kNorm) {
      const uint4 g = reinterpret_cast<const uint4*>(p.norm_w)[i];
      const __nv_bfloat162* gp = reinterpret_cast<const __nv_bfloat162*>(&g);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float2 f = __bfloat1622float2(pairs[k]), w = __bfloat1622float2(gp[k]);
        sum_sq = fmaf(f.x, f.x, fmaf(f.y, f.y, sum_sq));
        pairs[k] = __floats2bfloat162_rn(f.x * w.x, f.y * w.y);
      }
    }
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __bfloat1622float2(pairs[k]);
      sum += f.x + f.y;
    }
    xs[i] = staged_order(v);
#pragma unroll
    for (int offset = 8; offset > 0; offset /= 2) sum += __shfl_xor_sync(half, sum, offset);
    if (i % 16 == 0) group_sums[i / 16] = sum;
  }
  return sum_sq;
}

template <int kWarps, int kTiles, int kSteps, bool kMayGather, bool kProgrammatic, bool kNorm, GemvEpilogue kEpilogue>
__global__ void __launch_bounds__(kWarps * kWarpSize) int4_mma_kernel(Params p) {
  static_assert(kWarps % kTiles == 0, "a tile's warps split its row");
  constexpr int kSplits = kWarps / kTiles;
  constexpr bool kSwiglu = kEpilogue == GemvEpilogue::kSwiglu;
  extern __shared__ uint4 xs[];
  float* group_sums = reinterpret_cast<float*>(xs + p.cols / 8);
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
  const uint8_t* lo_bytes = static_cast<const uint8_t*>(p.w) + lo_e / 2 + 16 * t;
  const uint8_t* hi_bytes = static_cast<const uint8_t*>(p.w) + hi_e / 2 + 16 * t;
  const __nv_bfloat162* lo_q = p.group_qparams + lo_e / kInt4GroupSize;
  const __nv_bfloat162* hi_q = p.group_qparams + hi_e / kInt4GroupSize;
  const int64_t groups = p.cols / kInt4GroupSize;
  constexpr int64_t kStride = int64_t{kSplits} * kSteps;   // groups between a warp's steps

  struct Step {
    uint4 lo, hi;
    __nv_bfloat162 lo_q, hi_q;
  };
  Step w[kSteps], next[kSteps];
  auto load = [&](Step (&s)[kSteps], int64_t g0) {
#pragma unroll
    for (int k = 0; k < kSteps; ++k)
      if (g0 + k < groups) {
        s[k].lo = __ldcs(reinterpret_cast<const uint4*>(lo_bytes + (g0 + k) * (kInt4GroupSize / 2)));
        s[k].hi = __ldcs(reinterpret_cast<const uint4*>(hi_bytes + (g0 + k) * (kInt4GroupSize / 2)));
        s[k].lo_q = __ldg(lo_q + g0 + k);
        s[k].hi_q = __ldg(hi_q + g0 + k);
      }
  };
  int64_t g0 = static_cast<int64_t>(split) * kSteps;
  load(w, g0);
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
  float sum_sq = stage_x<kNorm>(p, p.x + slice * p.x_stride, xs, group_sums);
  if constexpr (kNorm) {
    sum_sq = warp_sum(sum_sq);
    if (lane == 0) warp_sum_sq[warp] = sum_sq;
  }
  __syncthreads();

  float acc_lo = 0.f, acc_hi = 0.f;
  for (; g0 < groups; g0 += kStride) {
    load(next, g0 + kStride);
#pragma unroll
    for (int k = 0; k < kSteps; ++k) {
      const int64_t group = g0 + k;
      if (group >= groups) break;
      const uint4* xg = xs + group * (kInt4GroupSize / 8) + 4 * t;
      float d[4] = {0.f, 0.f, 0.f, 0.f};
      mma_word(d, w[k].lo.x, w[k].hi.x, xg[0]);
      mma_word(d, w[k].lo.y, w[k].hi.y, xg[1]);
      mma_word(d, w[k].lo.z, w[k].hi.z, xg[2]);
      mma_word(d, w[k].lo.w, w[k].hi.w, xg[3]);
      const float sx = group_sums[group];
      const float2 ql = __bfloat1622float2(w[k].lo_q), qh = __bfloat1622float2(w[k].hi_q);
      acc_lo = fmaf(ql.x, d[0] - 136.f * sx, fmaf(ql.y, sx, acc_lo));
      acc_hi = fmaf(qh.x, d[2] - 136.f * sx, fmaf(qh.y, sx, acc_hi));
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
    sums[0] += partial[s * kTiles + tile][g];
    sums[1] += partial[s * kTiles + tile][g + 8];
  }
  if constexpr (kNorm) {
    float total = 0.f;
#pragma unroll
    for (int v = 0; v < kWarps; ++v) total += warp_sum_sq[v];
    const float scale = norm_scale(p, total);
    sums[0] *= scale;
    sums[1] *= scale;
  }
  float result[2];   // as the unfused kernel stores them
#pragma unroll
  for (int r = 0; r < 2; ++r) result[r] = __bfloat162float(expert < 0 ? nan_bf16() : __float2bfloat16(sums[r]));
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

// Blocks of int4_mma_kernel<kWarps, kTiles, ...> for `rows` rows of W (swiglu: the rows / 2 output rows).
template <int kTiles>
inline unsigned int4_mma_blocks(int64_t rows, bool swiglu) {
  const int64_t per_block = int64_t{kTiles} * (swiglu ? 8 : kMmaTileRows);
  const int64_t covered = swiglu ? rows / 2 : rows;
  return static_cast<unsigned>((covered + per_block - 1) / per_block);
}

}  // namespace opbench::kernels::gemv
