// The int4 and int8 GEMVs on tensor cores (GemvPath::kMma; gemv_args.h says what a GEMV computes, and
// gemv.cu launches it where the table in gemv_configs.h picks it). Include only from .cu files.
//
// Why: the vector kernel spends about 2.4-3 instructions a weight on int4 and 3.5 on int8 (a convert, an
// add and an fp32 FMA a weight, plus x converted per chunk; counted from the source), and its decode GEMVs
// stop short of a read stream. Here integer mmas (mma.m16n8k32, 8-bit A and B, s32 sums) do the
// multiply-adds on the weights as loaded:
// - x becomes integers: scaled by a power of two that brings the block's largest |x| into [2^21, 2^22) and
//   rounded, q = round(x 2^shift), so every bf16 value down to 2^-14 of the largest converts exactly. One
//   FMA with 1.5 2^23 puts 2^22 + q in a float's low bits; its three bytes are x's planes (plane 0 the top
//   byte). B's columns are the planes and a column of ones (kOnesColumn), so D's columns are the planes'
//   dot products and the sum of A's row: q.a = 65536 P0 + 256 P1 + P2 - 2^22 ones, exactly.
// - int8: A is the weights as loaded, a word of 4 columns a register; D accumulates over the whole row in
//   two sets (two chains of dependent mmas) and is combined in int64 at the end. About 0.25 instructions
//   a weight, against 0.9 for fp16 mmas on permuted bytes: Llama-2-7B int8 decode on an H200 494.7 ->
//   469.2 ms a generation.
// - int4: A is the weights' low nibbles (q) and, in a second set of mmas, their high nibbles in place (16
//   q), two logic ops a word of 8 weights; sm_90 has no 4-bit mma of its own (ptxas expands
//   mma.m16n8k64.u4 into these two 8-bit mmas, with B split again each time). Each unit (one qparams group)
//   has its own sums: e = 16 D(low) + D(high) is 16 times D, lanes t = 0 and 1 turn their two columns
//   into a float, and the row gains scale q.w + (zero - 8 scale) sum(x) ((q - 8) scale + zero is the
//   weight). Its loop runs 150-157 instructions for 2 units (128 weights a lane), against 238 for bf16
//   mmas on 128 + q made by logic ops: Llama-2-7B int4 decode on an H200 392 -> 371 ms a generation.
// In ordinary launches the vector kernels stay faster for int4 (docs/decisions.md), so the table takes
// these for programmatic launches.
//
// A warp holds a tile of 16 rows of W (A's rows) and multiplies it by x's planes in B's columns. A unit is
// the 64 bytes of a row that its 4 lanes load at once: lane (g, t) = (lane / 4, lane % 4) loads bytes
// 16t..16t+15 of the unit of each of its two rows (A's rows g and g + 8): 128 int4 columns (one qparams
// group), 64 int8 columns. A dot product does not care in which order k runs, so A's k positions take the
// columns in the order of the registers (int8: as loaded; int4: a word's odd columns, its low nibbles,
// then its even columns), and x's planes are staged in shared memory in that order, a unit's three planes
// together (int4: after them all, each unit's sum of x). Lane (g, t) reads its B column's plane at the
// bytes of its own weights.
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
// not finite gives NaN rows.
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
#include "kernels/gemv/gemv_mma_stage.cuh"

namespace opbench::kernels::gemv {

// B's column of ones: int8 after the planes (planes 0, 1, 2, ones), int4 beside plane 0 (plane 0, ones,
// planes 1, 2), so that one lane removes the planes' bias 2^22 = 65536 64 exactly from a unit's sums.
template <typename T>
constexpr int kOnesColumn = std::is_same_v<T, Int4> ? 1 : kXPlanes;

// d += A B (PTX's m16n8k32 fragments): A int8 (kSignedA) or uint8, B uint8, s32 accumulation.
template <bool kSignedA>
__device__ __forceinline__ void mma_k32(int (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                        uint32_t b1) {
  if constexpr (kSignedA)
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  else
    asm("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// A unit of the lane's two rows (16 bytes each; int4 also their groups' qparams) and its arithmetic.
template <typename T>
struct MmaUnit {
  WChunk<T> lo, hi;
  // int8: d += the unit's weights times x's planes (`plane`: the lane's 16 bytes of its B column, the
  // columns its weights hold). Two accumulators: two chains of dependent mmas instead of one.
  __device__ __forceinline__ void accumulate(uint4 plane, int (&d0)[4], int (&d1)[4]) const {
    mma_k32<true>(d0, lo.q.x, hi.q.x, lo.q.y, hi.q.y, plane.x, plane.y);
    mma_k32<true>(d1, lo.q.z, hi.q.z, lo.q.w, hi.q.w, plane.z, plane.w);
  }
  // int4: e = 16 times the unit's D (D's columns 2t, 2t + 1 of rows g, g + 8): the low nibbles (odd
  // columns, q) times `odd`, the high nibbles in place (even columns, 16 q) times `even`, the lane's
  // bytes of its B column for those columns.
  __device__ __forceinline__ void sixteen_dots(uint4 odd, uint4 even, int (&e)[4]) const {
    constexpr uint32_t kLow = 0x0F0F0F0Fu;
    int d_low[4] = {0, 0, 0, 0}, d_high[4] = {0, 0, 0, 0};
    mma_k32<false>(d_low, lo.q.x & kLow, hi.q.x & kLow, lo.q.y & kLow, hi.q.y & kLow, odd.x, odd.y);
    mma_k32<false>(d_high, lo.q.x & ~kLow, hi.q.x & ~kLow, lo.q.y & ~kLow, hi.q.y & ~kLow, even.x, even.y);
    mma_k32<false>(d_low, lo.q.z & kLow, hi.q.z & kLow, lo.q.w & kLow, hi.q.w & kLow, odd.z, odd.w);
    mma_k32<false>(d_high, lo.q.z & ~kLow, hi.q.z & ~kLow, lo.q.w & ~kLow, hi.q.w & ~kLow, even.z, even.w);
#pragma unroll
    for (int k = 0; k < 4; ++k) e[k] = 16 * d_low[k] + d_high[k];
  }
  // int4: acc (x scaled) += scale times the lane's share of q.w, its columns' e times `lane_mult` (t = 0,
  // plane 0 and ones: e0 - 64 e1; t = 1, planes 1 and 2: 256 e2 + e3; exact in int32; the end weighs them
  // 4096 and 1/16); acc_x (x as given) += (zero - 8 scale) sum(x), `sx` the unit's sum of x.
  __device__ __forceinline__ void accumulate(uint4 odd, uint4 even, int2 lane_mult, float sx, float (&acc)[2],
                                             float (&acc_x)[2]) const {
    int e[4];
    sixteen_dots(odd, even, e);
    const float2 q[2] = {__bfloat1622float2(lo.qparams), __bfloat1622float2(hi.qparams)};
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      acc[r] = fmaf(q[r].x, static_cast<float>(lane_mult.x * e[2 * r] + lane_mult.y * e[2 * r + 1]), acc[r]);
      acc_x[r] = fmaf(fmaf(-8.f, q[r].x, q[r].y), sx, acc_x[r]);
    }
  }
};

// Blocks of kWarps warps an SM is to hold of mma_kernel<T>: int4's registers bounded to 80 a thread (3
// blocks of 8 warps; unbounded the compiler takes 77-87 and an SM holds 2), int8's gathers to 64 (4
// blocks; unbounded 63-78: Mixtral int8 decode 2.5% slower on an H200). 0 leaves int8's plain GEMVs to
// the compiler (64-76 registers; a stated 1 makes it take 98-102, and 64 slowed Llama decode 2-4%).
template <typename T, int kWarps, bool kMayGather>
constexpr int kMmaMinBlocks = std::max(1, (std::is_same_v<T, Int4> ? 768 : 1024) / (kWarps * kWarpSize)) *
                              (std::is_same_v<T, Int4> || kMayGather);

template <typename T, int kWarps, int kTiles, int kSteps, bool kMayGather, bool kProgrammatic, bool kNorm,
          GemvEpilogue kEpilogue>
__global__ void __launch_bounds__(kWarps * kWarpSize, (kMmaMinBlocks<T, kWarps, kMayGather>)) mma_kernel(Params p) {
  static_assert(kWarps % kTiles == 0, "a tile's warps split its row");
  constexpr int kSplits = kWarps / kTiles;
  constexpr bool kSwiglu = kEpilogue == GemvEpilogue::kSwiglu;
  constexpr bool kInt4 = std::is_same_v<T, Int4>;
  extern __shared__ uint4 xs[];
  uint8_t* planes = reinterpret_cast<uint8_t*>(xs);
  float* unit_sums = kInt4 ? reinterpret_cast<float*>(planes + p.cols * kXPlanes) : nullptr;
  __shared__ float partial[kWarps][kMmaTileRows];
  __shared__ float warp_sum_sq[kWarps];
  __shared__ uint4 ones[2];   // B's column of ones: a lane's bytes of it
  if (kInt4 && threadIdx.x < 2) ones[threadIdx.x] = make_uint4(0x01010101u, 0x01010101u, 0x01010101u, 0x01010101u);
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
  // int4 and gathers load through pointers to their rows' next step, opaque to the compiler and advanced a
  // step at a time: else it computes the rows' addresses again each step (int4's loop 147 -> 180-238
  // instructions for 2 units). int8's plain GEMVs address by unit: at 64-76 registers, where the pointers
  // take 70-80 and slow Llama int8 decode 2-4% (H200).
  constexpr bool kPointers = kInt4 || kMayGather;
  using Index = std::conditional_t<kPointers, int, int64_t>;   // units: int where pointers (cols <= kMmaMaxCols)
  const Index units = static_cast<Index>(p.cols / kUnitCols<T>);
  constexpr Index kStride = Index{kSplits} * kSteps;   // units between a warp's steps
  constexpr int kUnitVectors = kMmaUnitBytes / 16;      // uint4s of a row's unit
  Index u0 = static_cast<Index>(split) * kSteps;
  const uint4* lo_next = reinterpret_cast<const uint4*>(lo_bytes) + u0 * kUnitVectors;
  const uint4* hi_next = reinterpret_cast<const uint4*>(hi_bytes) + u0 * kUnitVectors;
  if constexpr (kPointers) asm("" : "+l"(lo_next), "+l"(hi_next));
  if constexpr (kInt4) {
    lo_q += u0;
    hi_q += u0;
  }

  MmaUnit<T> w[kSteps], next[kSteps];
  auto load = [&](MmaUnit<T> (&s)[kSteps], Index step_unit) {
#pragma unroll
    for (int k = 0; k < kSteps; ++k)
      if (step_unit + k < units) {
        if constexpr (kPointers) {
          s[k].lo.q = __ldcs(lo_next + k * kUnitVectors);
          s[k].hi.q = __ldcs(hi_next + k * kUnitVectors);
          if constexpr (kInt4) {
            s[k].lo.qparams = __ldg(lo_q + k);
            s[k].hi.qparams = __ldg(hi_q + k);
          }
        } else {
          s[k].lo.q = __ldcs(reinterpret_cast<const uint4*>(lo_bytes + (step_unit + k) * kMmaUnitBytes));
          s[k].hi.q = __ldcs(reinterpret_cast<const uint4*>(hi_bytes + (step_unit + k) * kMmaUnitBytes));
        }
      }
    if constexpr (kPointers) {
      lo_next += kStride * kUnitVectors;
      hi_next += kStride * kUnitVectors;
    }
    if constexpr (kInt4) {
      lo_q += kStride;
      hi_q += kStride;
    }
  };
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
  float sum_sq = stage_x<T, kNorm>(p, p.x + slice * p.x_stride, planes, unit_sums, unscale);
  if constexpr (kNorm) {
    sum_sq = warp_sum(sum_sq);
    if (lane == 0) warp_sum_sq[warp] = sum_sq;
  }
  __syncthreads();

  // The lane's B column g (kOnesColumn says which holds ones; columns 4..7 ones, their D unused), at the
  // bytes of its own weights (a quarter of the unit's plane). int4 reads its ones from `ones` at every
  // unit, int8 takes them from registers.
  const bool reads_plane = g <= kXPlanes && g != kOnesColumn<T>;
  const uint4* lane_plane =
      reads_plane || !kInt4
          ? reinterpret_cast<const uint4*>(planes + min(g < kOnesColumn<T> ? g : g - 1, kXPlanes - 1) * kUnitCols<T> +
                                           t * (kUnitCols<T> / 4))
          : ones;
  const Index lane_stride = reads_plane || !kInt4 ? kXPlanes * kUnitCols<T> / 16 : 0;   // uint4s of x's planes a unit
  const uint4 kOnes = {0x01010101u, 0x01010101u, 0x01010101u, 0x01010101u};
  float acc[2] = {0.f, 0.f}, acc_x[2] = {0.f, 0.f};   // int4: rows g, g + 8
  int acc8[4] = {0, 0, 0, 0}, acc8_b[4] = {0, 0, 0, 0};   // int8: D's columns 2t, 2t + 1 of rows g, g + 8
  const int2 lane_mult = t == 0 ? make_int2(1, -64) : t == 1 ? make_int2(256, 1) : make_int2(0, 0);   // int4
  for (; u0 < units; u0 += kStride) {
    load(next, u0 + kStride);
#pragma unroll
    for (int k = 0; k < kSteps; ++k) {
      const Index unit = u0 + k;
      if (unit >= units) break;
      const uint4* b = lane_plane + unit * lane_stride;
      if constexpr (kInt4)
        w[k].accumulate(b[0], b[1], lane_mult, unit_sums[unit], acc, acc_x);
      else
        w[k].accumulate(reads_plane ? b[0] : kOnes, acc8, acc8_b);
    }
#pragma unroll
    for (int k = 0; k < kSteps; ++k) w[k] = next[k];
  }
  float row_sum[2];   // the lane's rows' dot products with x (t = 0)
  if constexpr (kInt4) {
    // q.w = (4096 (lane 0's) + (lane 1's) / 16); acc_x is alike in every lane
    const float coef = t == 0 ? 4096.f : t == 1 ? 0.0625f : 0.f;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_sum[r] = fmaf(acc[r] * coef, unscale, t == 0 ? acc_x[r] : 0.f);
      row_sum[r] += __shfl_xor_sync(0xffffffffu, row_sum[r], 1);
      row_sum[r] += __shfl_xor_sync(0xffffffffu, row_sum[r], 2);
    }
  } else {   // lane t = 1 holds D's columns 2, 3 (plane 2, ones)
    int from_t1[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      acc8[k] += acc8_b[k];
      from_t1[k] = __shfl_down_sync(0xffffffffu, acc8[k], 1);
    }
#pragma unroll
    for (int r = 0; r < 2; ++r)
      row_sum[r] = static_cast<float>(65536ll * acc8[2 * r] + 256ll * acc8[2 * r + 1] + from_t1[2 * r] -
                                      int64_t{1 << 22} * from_t1[2 * r + 1]) * unscale;
  }
  if (t == 0) {
    partial[warp][g] = row_sum[0];
    partial[warp][g + 8] = row_sum[1];
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

// Lets `kKernel` (an mma_kernel) take the shared memory of rows of up to kMmaMaxCols columns: the 48 KB
// of x's planes (int4: and its unit sums) and the static arrays pass the default limit. Once a device.
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
