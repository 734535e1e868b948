// The device code of the GEMV's fusions (GemvFusion in gemv_args.h), template parameters of
// vector_kernel so that the plain GEMV carries none of it: the rms norm prologue multiplies each x chunk
// by the norm's weights and sums its squares, the scale (the row_norm home's RmsPolicy) applied to the
// group's sums at the end; the epilogues add into y, or pair a group's two rows (SwiGLU: rows o and
// o + rows / 2; RoPE: rows 2i and 2i + 1, stored to q or the caches). Include only from .cu files.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/gemv/gemv_math.cuh"
#include "kernels/row_norm/row_norm_policy.cuh"

namespace opbench::kernels::gemv {

// The rms norm prologue on one chunk of x: adds the squares of x to sum_sq, then multiplies x by the
// norm's weights g.
template <typename T>
__device__ __forceinline__ void apply_norm(XChunk<T>& x, const __nv_bfloat16* g, float& sum_sq) {
  XChunk<T> w;
  w.load(g);
  float sq[4] = {};   // four short chains: one long chain of kElems FMAs would bound the int8 loop
#pragma unroll
  for (int i = 0; i < XChunk<T>::kElems; ++i) {
    sq[i % 4] = fmaf(x.v[i], x.v[i], sq[i % 4]);
    x.v[i] *= w.v[i];
  }
  sum_sq += (sq[0] + sq[1]) + (sq[2] + sq[3]);
}

// The rms norm's scale of x from its sum of squares over the row.
__device__ __forceinline__ float norm_scale(const Params& p, float sum_sq) {
  return row_norm::RmsPolicy::scale(sum_sq, static_cast<float>(p.cols), p.norm_eps);
}

// The fused epilogues (gemv_args.h) of one row group, by the thread holding its two rows' results
// (bf16-rounded, as the unfused kernel stores them).
__device__ __forceinline__ void store_swiglu(const Params& p, int64_t slice, int64_t o, float a, float b) {
  p.y[slice * (p.rows / 2) + o] = __float2bfloat16(a / (1.f + __expf(-a)) * b);
}
// What an epilogue reads besides the row results, loaded before the row loop so that the loads' latency
// hides behind it: the old y (kAddToY, one per row), the position and its rotation (kRopeCache).
struct EpilogueOperands {
  float y_old = 0.f, cos = 1.f, sin = 0.f;
  int64_t pos = 0;
};
// The position and the rotation of rows (row, row + 1) of [q | k | v] (row even).
__device__ __forceinline__ EpilogueOperands rope_operands(const Params& p, int64_t row) {
  const RopeCacheOut& r = p.rope;
  EpilogueOperands o;
  o.pos = *r.pos;
  if (row < r.q_rows + r.kv_rows) {   // q and k rows rotate, v rows do not
    const int64_t at = o.pos * (r.head_dim / 2) + (row % r.head_dim) / 2;
    o.cos = r.cos[at];
    o.sin = r.sin[at];
  }
  return o;
}
template <GemvEpilogue kEpilogue>
__device__ __forceinline__ EpilogueOperands load_epilogue_operands(const Params& p, int64_t slice, int64_t first_row,
                                                                   int rows_here, int lane) {
  EpilogueOperands o;
  if (kEpilogue == GemvEpilogue::kAddToY && lane < rows_here)
    o.y_old = __bfloat162float(p.y[slice * p.rows + first_row + lane]);
  if (kEpilogue == GemvEpilogue::kRopeCache && lane == 0 && rows_here > 0) o = rope_operands(p, first_row);
  return o;
}

// Rows (row, row + 1) of [q | k | v]: a RoPE pair of a q or k head, or two elements of a v head.
__device__ __forceinline__ void store_rope_cache(const Params& p, const EpilogueOperands& e, int64_t row, float x0,
                                                 float x1) {
  const RopeCacheOut& r = p.rope;
  const int64_t pos = e.pos;
  const float o0 = x0 * e.cos - x1 * e.sin, o1 = x1 * e.cos + x0 * e.sin;   // v: cos 1, sin 0
  __nv_bfloat16* dst;
  if (row < r.q_rows) {
    dst = p.y + row;
  } else {
    const bool key = row < r.q_rows + r.kv_rows;
    const int64_t kv_row = row - r.q_rows - (key ? 0 : r.kv_rows);
    dst = static_cast<__nv_bfloat16*>(key ? r.k_cache : r.v_cache) +
          ((kv_row / r.head_dim) * r.max_len + pos) * r.head_dim + kv_row % r.head_dim;
  }
  dst[0] = __float2bfloat16(o0);
  dst[1] = __float2bfloat16(o1);
}

}  // namespace opbench::kernels::gemv
