// The GEMV's kernels (gemv_args.h says what they compute; gemv.cu launches the configuration that the
// table in gemv_configs.h picks), a header so that the tuner (gemv_tune.cu) can compile every
// configuration. Include only from .cu files. T, the weight type: __nv_bfloat16, int8_t or Int4 (two
// weights a byte with group qparams, gemv_math.cuh); the exact-fit kernels take bf16 and int8 only.
//
// vector_kernel: a block of kWarps warps is split into row groups of kGroup warps; a group computes
// kRows consecutive output rows (grid.x covers the rows), grid.y one slice per selected expert (1 for a
// plain GEMV). The kGroup x 32 lanes of a group read consecutive 16-byte chunks of each of its rows (a
// group step covers kGroup x 512 contiguous bytes of a row), kSteps steps of all kRows rows in flight
// per lane before any arithmetic, multiply with the matching elements of x in fp32 (converted once per
// chunk for all of the group's rows), and sum with warp shuffles, then across the group's warps in
// shared memory. W is streamed past L1 (__ldcs); x is re-read by every group from L1/L2.
//
// kMinBlocks > 0: registers for that many blocks an SM (__launch_bounds__'s second argument), with
// kXFirst x's loads of an iteration issued with W's, before any arithmetic: the tuner's bounded
// configurations; the table's configurations leave both at their defaults. 0 gives ptxas no minimum (a
// minimum of 1 changes its register allotment).
//
// Fusions (gemv_fusion.cuh) are template parameters, so that the plain GEMV carries none of their code.
// Operands an epilogue reads (old y, position, rotation; with kProgrammatic the int8 rows' scales) are
// fetched before the row loop.
//
// Programmatic dependent launch (sm_90), kProgrammatic: the kernel fetches its rows' scales into L1,
// then waits for the kernels it depends on (griddepcontrol.wait: nothing it reads besides W and the
// scales may be ready before), then lets the next kernel launch (griddepcontrol.launch_dependents). The
// ordinary launch's kernel has none of the three (the two instructions would return at once).
#pragma once
#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/launch.cuh"
#include "kernels/gemv/gemv_fusion.cuh"
#include "kernels/gemv/gemv_math.cuh"

namespace opbench::kernels::gemv {

// 16-byte path (see the top). REQUIRES: the layout rules of gemv_vectorizable; kRows == 2 for the
// kSwiglu and kRopeCache epilogues; blocks of kWarps warps. kNormInput: the rms norm prologue (x is the
// residual stream; each group sums the squares of the x it reads, the whole row of x, and scales its
// results at the end).
// kSwiglu: a group's two rows are o and o + rows / 2 (grid over rows / 2 output rows). kMayGather false:
// REQUIRES no expert index (grid.y 1); the kernel then has none of the gather's code.
template <typename T, int kWarps, int kGroup, int kRows, int kSteps, bool kMayGather = true, bool kProgrammatic = false,
          bool kNormInput = false, GemvEpilogue kEpilogue = GemvEpilogue::kStore, int kMinBlocks = 0,
          bool kXFirst = false>
__global__ void __launch_bounds__(kWarps * kWarpSize, kMinBlocks) vector_kernel(Params p) {
  static_assert(kWarps % kGroup == 0, "a block holds whole row groups");
  constexpr int kElems = XChunk<T>::kElems;
  constexpr int64_t kStride = int64_t{kGroup} * kWarpSize * kElems;
  constexpr int kSums = kRows + (kNormInput ? 1 : 0);   // the rows' sums, then x's sum of squares
  __shared__ float partial[kWarps][kSums];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
  const int group_warp = warp % kGroup;
  const int64_t group_index = static_cast<int64_t>(blockIdx.x) * (kWarps / kGroup) + warp / kGroup;
  static_assert(kRows == 2 || (kEpilogue != GemvEpilogue::kSwiglu && kEpilogue != GemvEpilogue::kRopeCache),
                "the paired epilogues take two rows a group");
  constexpr bool paired = kEpilogue == GemvEpilogue::kSwiglu;
  const int64_t first_row = paired ? group_index : group_index * kRows, row_step = paired ? p.rows / 2 : 1;
  const int64_t slice = kMayGather ? blockIdx.y : 0;
  const bool has_rows = first_row < (paired ? row_step : p.rows);   // uniform across the group; a group without rows still syncs
  if (kProgrammatic && kMayGather && p.expert_idx != nullptr) wait_for_inputs();   // the index comes from an earlier kernel
  const int64_t expert = kMayGather ? expert_of(p, slice) : 0;
  const int rows_here = !has_rows ? 0 : paired ? 2 : kRows == 1 ? 1 : static_cast<int>(p.rows - first_row < kRows ? p.rows - first_row : kRows);
  // A partial row group reads its last row again in place of the missing ones (never out of bounds).
  int64_t row_off[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) row_off[r] = (r < rows_here ? r : rows_here - 1) * row_step * p.row_stride;
  // W's element offset of the group's first row (W is addressed by weight: weight_address, load_chunk).
  const int64_t w = (expert < 0 ? 0 : expert) * p.expert_stride + first_row * p.row_stride;
  const bool reads = has_rows && expert >= 0;
  const __nv_bfloat16* x = p.x + slice * p.x_stride;
  float acc[kSums] = {};
  int64_t c = (static_cast<int64_t>(group_warp) * kWarpSize + lane) * kElems;
  constexpr bool kInt4 = std::is_same_v<T, Int4>;
  RowStart<T> row_start[kRows];   // int4's (the others address W by element offset)
#pragma unroll
  for (int r = 0; r < kRows; ++r) row_start[r] = RowStart<T>(p, w + row_off[r]);
  auto chunk_at = [&](int r, int64_t at_c) {
    if constexpr (kInt4) return load_chunk(row_start[r], at_c);
    else return load_chunk<T>(p, w + row_off[r] + at_c);
  };
  // x (and y, which an earlier kernel may still read) belong to earlier kernels: wait for them. W is not
  // fetched into L2 before the wait: fetching its first steps made H200 decode 3.6% slower (decisions.md).
  // The rows' scales, read at the group's end: fetched into L1 now, so that the end waits for L1, not DRAM.
  if (kProgrammatic && reads && p.row_scale != nullptr && group_warp == 0 && lane < kRows && lane < rows_here)
    prefetch_l1(p.row_scale + expert * p.row_scale_expert_stride + first_row + lane * row_step);
  if constexpr (kProgrammatic) {
    wait_for_inputs();
    allow_next_launch();
  }
  EpilogueOperands operands;
  if constexpr (kEpilogue == GemvEpilogue::kAddToY || kEpilogue == GemvEpilogue::kRopeCache)
    if (group_warp == 0) operands = load_epilogue_operands<kEpilogue>(p, slice, first_row, rows_here, lane);
  auto load_x = [&](int64_t at) {
    XChunk<T> xc;
    xc.load(x + at);
    if constexpr (kNormInput) apply_norm(xc, p.norm_w + at, acc[kRows]);
    xc.finish();
    return xc;
  };
  auto converted = [](const XRaw<T>& raw) {
    XChunk<T> xc;
    xc.convert(raw);
    xc.finish();
    return xc;
  };
  for (; reads && c + (kSteps - 1) * kStride < p.cols; c += kSteps * kStride) {
    WChunk<T> wv[kSteps][kRows];
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
#pragma unroll
      for (int r = 0; r < kRows; ++r) wv[s][r] = kInt4 ? chunk_at(r, c + s * kStride) : load_chunk<T>(p, w + row_off[r] + c + s * kStride);
    XRaw<T> xr[kXFirst ? kSteps : 1];
    if constexpr (kXFirst) {
      static_assert(!kNormInput, "x first: the unfused GEMV");
#pragma unroll
      for (int s = 0; s < kSteps; ++s) xr[s].load(x + c + s * kStride);
    }
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const XChunk<T> xc = kXFirst ? converted(xr[s]) : load_x(c + s * kStride);
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] = dot_chunk(wv[s][r], xc, acc[r]);
    }
  }
  for (; reads && c < p.cols; c += kStride) {   // fewer than kSteps chunks left
    const XChunk<T> xc = load_x(c);
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[r] = dot_chunk(chunk_at(r, c), xc, acc[r]);
  }
#pragma unroll
  for (int r = 0; r < kSums; ++r) acc[r] = warp_sum(acc[r]);
  if constexpr (kGroup > 1) {
    if (lane == 0)
#pragma unroll
      for (int r = 0; r < kSums; ++r) partial[warp][r] = acc[r];
    __syncthreads();
    if (group_warp == 0)
#pragma unroll
      for (int r = 0; r < kSums; ++r) {
        float total = 0.f;
#pragma unroll
        for (int g = 0; g < kGroup; ++g) total += partial[warp + g][r];
        acc[r] = total;
      }
  }
  if (group_warp != 0 || rows_here == 0) return;
  if constexpr (kNormInput) {
    const float scale = norm_scale(p, acc[kRows]);
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[r] *= scale;
  }
  float result[kRows];   // as the unfused kernel stores them
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    result[r] = __bfloat162float(expert < 0 ? nan_bf16() : finish_row(p, expert, first_row + r * row_step, acc[r]));
  if constexpr (kRows == 2) {
    if constexpr (kEpilogue == GemvEpilogue::kSwiglu || kEpilogue == GemvEpilogue::kRopeCache) {
      if (lane != 0) return;
      if constexpr (paired)
        store_swiglu(p, slice, first_row, result[0], result[1]);
      else
        store_rope_cache(p, operands, first_row, result[0], result[1]);
      return;
    }
  }
  if (lane >= rows_here) return;
  float mine = result[0];
#pragma unroll
  for (int r = 1; r < kRows; ++r)
    if (lane == r) mine = result[r];
  __nv_bfloat16* y = p.y + slice * p.rows + first_row + lane;
  if constexpr (kEpilogue == GemvEpilogue::kAddToY) mine += operands.y_old;
  *y = __float2bfloat16(mine);
}

// Exact-fit rows (a plain GEMV of an ordinary launch whose row length is row_kernel_cols, a compile-time
// constant): a row per block of kWarps warps, each thread kChunks 16-byte chunks of W (consecutive
// threads, consecutive chunks, a block step apart) and the matching x, every load issued before any
// arithmetic, no loop and no bounds: the code inductor generates for static shapes, with the library's
// arithmetic. kMinBlocks as vector_kernel's.
template <typename T, int kWarps, int kChunks>
constexpr int64_t row_kernel_cols = int64_t{kWarps} * kWarpSize * kChunks * XChunk<T>::kElems;

template <typename T, int kWarps, int kChunks, int kMinBlocks = 0>
__global__ void __launch_bounds__(kWarps * kWarpSize, kMinBlocks) row_kernel(Params p) {
  static_assert(!std::is_same_v<T, Int4>, "the exact-fit kernels take bf16 and int8 weights");
  constexpr int kThreads = kWarps * kWarpSize, kElems = XChunk<T>::kElems;
  __shared__ float partial[kWarps];
  const int64_t row = blockIdx.x;
  const uint4* w = reinterpret_cast<const uint4*>(static_cast<const T*>(p.w) + row * p.row_stride) + threadIdx.x;
  const __nv_bfloat16* x = p.x + threadIdx.x * kElems;
  uint4 wv[kChunks];
  XRaw<T> xr[kChunks];
#pragma unroll
  for (int i = 0; i < kChunks; ++i) wv[i] = __ldcs(w + i * kThreads);
#pragma unroll
  for (int i = 0; i < kChunks; ++i) xr[i].load(x + i * kThreads * kElems);
  float acc = 0.f;
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    XChunk<T> xc;
    xc.convert(xr[i]);
    acc = dot_chunk(wv[i], xc, acc);
  }
  acc = warp_sum(acc);
  if (threadIdx.x % kWarpSize == 0) partial[threadIdx.x / kWarpSize] = acc;
  __syncthreads();
  if (threadIdx.x != 0) return;
  float total = 0.f;
#pragma unroll
  for (int g = 0; g < kWarps; ++g) total += partial[g];
  p.y[row] = finish_row(p, 0, row, total);
}

// Exact-fit gather of two slices that share x (the seed's gather_gemv: W[idx] @ x for two indices): a
// block of kWarps warps takes row blockIdx.x of both selected experts. Both indices are loaded together,
// then every load of both rows is issued before any arithmetic, and each x chunk is converted once for
// both rows. Against row_kernel on the same gather, a block reads twice the bytes for one wait on the
// indices. Its configurations: gemv_configs.h. An index out of range gives
// that slice NaN rows (W read at expert 0, never out of bounds). REQUIRES: a gather of 2 slices,
// x_stride 0, cols the kernel's span (row_kernel_cols).
template <typename T, int kWarps, int kChunks, int kMinBlocks = 0>
__global__ void __launch_bounds__(kWarps * kWarpSize, kMinBlocks) gather_pair_kernel(Params p) {
  static_assert(!std::is_same_v<T, Int4>, "the exact-fit kernels take bf16 and int8 weights");
  constexpr int kThreads = kWarps * kWarpSize, kElems = XChunk<T>::kElems;
  __shared__ float partial[kWarps][2];
  const int64_t row = blockIdx.x;
  const int64_t e0 = expert_of(p, 0), e1 = expert_of(p, 1);
  const T* row_start = static_cast<const T*>(p.w) + row * p.row_stride;   // of expert 0
  const uint4* w0 = reinterpret_cast<const uint4*>(row_start + (e0 < 0 ? 0 : e0) * p.expert_stride) + threadIdx.x;
  const uint4* w1 = reinterpret_cast<const uint4*>(row_start + (e1 < 0 ? 0 : e1) * p.expert_stride) + threadIdx.x;
  uint4 wv[2][kChunks];
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    wv[0][i] = __ldcs(w0 + i * kThreads);
    wv[1][i] = __ldcs(w1 + i * kThreads);
  }
  float acc0 = 0.f, acc1 = 0.f;
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    XChunk<T> xc;
    xc.load(p.x + (threadIdx.x + i * kThreads) * kElems);
    acc0 = dot_chunk(wv[0][i], xc, acc0);
    acc1 = dot_chunk(wv[1][i], xc, acc1);
  }
  acc0 = warp_sum(acc0);
  acc1 = warp_sum(acc1);
  if (threadIdx.x % kWarpSize == 0) {
    partial[threadIdx.x / kWarpSize][0] = acc0;
    partial[threadIdx.x / kWarpSize][1] = acc1;
  }
  __syncthreads();
  if (threadIdx.x >= 2) return;   // thread s finishes slice s
  float total = 0.f;
#pragma unroll
  for (int g = 0; g < kWarps; ++g) total += partial[g][threadIdx.x];
  const int64_t e = threadIdx.x == 0 ? e0 : e1;
  p.y[threadIdx.x * p.rows + row] = e < 0 ? nan_bf16() : finish_row(p, e, row, total);
}

// Any shape and alignment: one row per warp, element by element.
template <typename T>
__global__ void __launch_bounds__(kScalarWarps * kWarpSize) scalar_kernel(Params p) {
  wait_for_inputs();
  allow_next_launch();
  const int lane = threadIdx.x % kWarpSize;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kScalarWarps + threadIdx.x / kWarpSize;
  const int64_t slice = blockIdx.y;
  if (row >= p.rows) return;
  __nv_bfloat16* y = p.y + slice * p.rows + row;
  const int64_t expert = expert_of(p, slice);
  if (expert < 0) {
    if (lane == 0) *y = nan_bf16();
    return;
  }
  const int64_t w = expert * p.expert_stride + row * p.row_stride;   // the row's element offset
  const __nv_bfloat16* x = p.x + slice * p.x_stride;
  float acc = 0.f;
  for (int64_t c = lane; c < p.cols; c += kWarpSize) acc = fmaf(weight_value<T>(p, w + c), __bfloat162float(x[c]), acc);
  acc = warp_sum(acc);
  if (lane == 0) *y = finish_row(p, expert, row, acc);
}

// Blocks of vector_kernel<.., kWarps, kGroup, kRows, ..> for `rows` rows.
template <int kWarps, int kGroup, int kRows>
inline unsigned vector_blocks(int64_t rows) {
  constexpr int64_t kRowsPerBlock = int64_t{kWarps / kGroup} * kRows;
  return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}

}  // namespace opbench::kernels::gemv
