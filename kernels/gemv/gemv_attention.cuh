// Attention fused into the QKV GEMV (RopeCacheOut::attn_out, gemv_args.h): the block that stores the last
// rows of a KV group -- its q heads, its k head and its v head, counted per group in attn_counters --
// computes the attention of the group's q heads over positions 0..*pos and stores it to attn_out, what
// the separate decode_attention kernel (kernels/decode/decode_kernels.h) would. The step then runs one
// kernel fewer per layer: the output projection's GEMV waits on the QKV GEMV alone. Include only from .cu
// files; called by every thread of a block of the vector kernel or the int4 tensor-core kernel after the
// block's rows are stored.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/gemv/gemv_math.cuh"

namespace opbench::kernels::gemv {

// The fused attention's limits (gemv.cu checks them): every score of a group in shared memory.
constexpr int64_t kFusedAttentionMaxLen = 256, kFusedAttentionMaxHeads = 4, kFusedAttentionMaxHeadDim = 128;
constexpr int kFusedAttentionThreads = 256;   // REQUIRES: blocks of this many threads

// Group g's q heads (heads g * hpg ... g * hpg + hpg - 1) against K and V rows 0..len-1 of KV head g.
// Scores and the V sums in fp32, as decode_attention; q, K and V read through L2 (other blocks of this
// kernel wrote q and row len - 1). Few registers a thread (4 loads of K in flight, one head's V sums at
// a time): the GEMV's own loop shares the kernel's register allotment.
__device__ __forceinline__ void attend_group(const Params& p, int64_t g) {
  constexpr int kThreads = kFusedAttentionThreads, kWarps = kThreads / kWarpSize, kBatch = 4;
  const RopeCacheOut& r = p.rope;
  const int hd = static_cast<int>(r.head_dim), hpg = static_cast<int>(r.q_rows / r.kv_rows), chunks = hd / 8;
  const int len = static_cast<int>(*r.pos + 1);
  __shared__ float q[kFusedAttentionMaxHeads * kFusedAttentionMaxHeadDim];
  __shared__ float score[kFusedAttentionMaxHeads * kFusedAttentionMaxLen];
  __shared__ float head_sum[kFusedAttentionMaxHeads];
  __shared__ float v_sums[kWarps][kFusedAttentionMaxHeadDim];
  const int tid = threadIdx.x, warp = tid / kWarpSize, lane = tid % kWarpSize;
  const float q_scale = rsqrtf(static_cast<float>(hd));
  for (int i = tid; i < hpg * hd; i += kThreads) q[i] = __bfloat162float(__ldcg(p.y + g * hpg * hd + i)) * q_scale;
  __syncthreads();
  const __nv_bfloat16* k = static_cast<const __nv_bfloat16*>(r.k_cache) + g * r.max_len * hd;
  const __nv_bfloat16* v = static_cast<const __nv_bfloat16*>(r.v_cache) + g * r.max_len * hd;
  for (int i = tid; i < hpg * len; i += kThreads) {   // a (head, position) score a thread
    const int h = i / len, t = i % len;
    const uint4* row = reinterpret_cast<const uint4*>(k + static_cast<int64_t>(t) * hd);
    const float* qh = q + h * hd;
    float s = 0.f;
    for (int j0 = 0; j0 < chunks; j0 += kBatch) {
      uint4 raw[kBatch];
#pragma unroll
      for (int j = 0; j < kBatch; ++j)
        if (j0 + j < chunks) raw[j] = __ldcg(row + j0 + j);
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if (j0 + j >= chunks) break;
        const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw[j]);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float2 f = __bfloat1622float2(pairs[e]);
          s = fmaf(qh[8 * (j0 + j) + 2 * e], f.x, fmaf(qh[8 * (j0 + j) + 2 * e + 1], f.y, s));
        }
      }
    }
    score[h * len + t] = s;
  }
  __syncthreads();
  if (warp < hpg) {   // a warp a head: the softmax's numerators in place, their sum aside
    float m = -INFINITY;
    for (int t = lane; t < len; t += kWarpSize) m = fmaxf(m, score[warp * len + t]);
    for (int o = kWarpSize / 2; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    float l = 0.f;
    for (int t = lane; t < len; t += kWarpSize) {
      const float e = __expf(score[warp * len + t] - m);
      score[warp * len + t] = e;
      l += e;
    }
    l = warp_sum(l);
    if (lane == 0) head_sum[warp] = l;
  }
  __syncthreads();
  // V, a head at a time: a thread an 8-dimension chunk and a row lane (chunks is a power of two, so the
  // row lanes of a chunk within a warp are chunks lanes apart and meet by shuffles, the warps in
  // shared memory).
  const int row_lanes = kThreads / chunks, c = tid % chunks, row_lane = tid / chunks;
  __nv_bfloat16* out = static_cast<__nv_bfloat16*>(r.attn_out) + g * hpg * hd;
  for (int h = 0; h < hpg; ++h) {
    float acc[8] = {};
    for (int t = row_lane; t < len; t += row_lanes) {
      const uint4 raw = __ldcg(reinterpret_cast<const uint4*>(v + static_cast<int64_t>(t) * hd) + c);
      const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
      const float w = score[h * len + t];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float2 f = __bfloat1622float2(pairs[e]);
        acc[2 * e] = fmaf(w, f.x, acc[2 * e]);
        acc[2 * e + 1] = fmaf(w, f.y, acc[2 * e + 1]);
      }
    }
#pragma unroll
    for (int e = 0; e < 8; ++e)
      for (int o = kWarpSize / 2; o >= chunks; o /= 2) acc[e] += __shfl_xor_sync(0xffffffffu, acc[e], o);
    if (lane < chunks)
#pragma unroll
      for (int e = 0; e < 8; ++e) v_sums[warp][8 * c + e] = acc[e];
    __syncthreads();
    for (int d = tid; d < hd; d += kThreads) {
      float total = 0.f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w) total += v_sums[w][d];
      out[h * hd + d] = __float2bfloat16(total / head_sum[h]);
    }
    __syncthreads();   // v_sums is the next head's
  }
}

// Called by every thread of a block once the block's own stores are issued: counts the block into its
// KV group (the block's rows, [first_row, first_row + block_rows), lie in one head) and, in the group's
// last block, computes the group's attention. The last block sets the counter back to 0.
__device__ __forceinline__ void attend_when_group_done(const Params& p, int64_t first_row, int64_t block_rows) {
  const RopeCacheOut& r = p.rope;
  if (r.attn_out == nullptr) return;
  __shared__ int64_t done_group;   // the group this block completed, or -1
  __threadfence();                 // this thread's stores, visible before the count
  __syncthreads();
  if (threadIdx.x == 0) {
    const int64_t hd = r.head_dim, hpg = r.q_rows / r.kv_rows;
    const int64_t g = first_row < r.q_rows             ? first_row / hd / hpg
                      : first_row < r.q_rows + r.kv_rows ? (first_row - r.q_rows) / hd
                                                         : (first_row - r.q_rows - r.kv_rows) / hd;
    const auto blocks = static_cast<unsigned>((hpg + 2) * hd / block_rows);
    const bool last = atomicAdd(r.attn_counters + g, 1u) == blocks - 1;
    if (last) r.attn_counters[g] = 0;
    done_group = last ? g : -1;
  }
  __syncthreads();
  if (done_group < 0) return;
  __threadfence();
  attend_group(p, done_group);
}

}  // namespace opbench::kernels::gemv
