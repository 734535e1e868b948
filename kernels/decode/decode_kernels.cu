// The decode step's small kernels: see decode_kernels.h for what each computes.
#include <cuda_bf16.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "kernels/common/launch.cuh"
#include "kernels/decode/decode_kernels.h"
#include "opbench/check.h"

namespace opbench::kernels {
namespace {

constexpr int kWarp = 32;
using bf16 = __nv_bfloat16;

__device__ __forceinline__ float to_f(bf16 v) { return __bfloat162float(v); }

__global__ void residual_add(ResidualAddArgs a) {
  wait_for_inputs();
  allow_next_launch();
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= a.dim) return;
  bf16* h = static_cast<bf16*>(a.h);
  const bf16* delta = static_cast<const bf16*>(a.delta);
  float x = to_f(h[i]);
  for (int64_t e = 0; e < a.n_delta; ++e) x += (a.delta_weights ? a.delta_weights[e] : 1.f) * to_f(delta[e * a.dim + i]);
  h[i] = __float2bfloat16(x);
}

constexpr int kAttentionThreads = 128;
constexpr int kChunk = static_cast<int>(kAttentionChunk);
constexpr int kMaxHeadChunks = 32;   // head_dim <= 32 x 8

constexpr int kMaxRowsPerThread = kChunk / (kAttentionThreads / kMaxHeadChunks);   // V rows a thread sums

// acc + p * the 8 bf16 of `raw`, element-wise.
__device__ __forceinline__ void add_scaled(float (&acc)[8], float p, uint4 raw) {
  const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 f = __bfloat1622float2(pairs[i]);
    acc[2 * i] = fmaf(p, f.x, acc[2 * i]);
    acc[2 * i + 1] = fmaf(p, f.y, acc[2 * i + 1]);
  }
}

// One block per (head, chunk of positions); see decode_kernels.h. Every load of the chunk (q, the K rows,
// the V rows) is issued before any arithmetic: the block waits one memory latency, not three.
__global__ void __launch_bounds__(kAttentionThreads) decode_attention(AttentionArgs a) {
  {   // The chunk's K and V rows start towards L2 before the position is known (L2 stays coherent with
      // the row the kernel before writes): the loads below then wait on L2, not DRAM. Chunks past the
      // position fetch rows nobody reads -- cheaper than a second round trip for every chunk.
    const int64_t group = blockIdx.x / (a.n_heads / a.n_kv_heads), row_bytes = a.head_dim * 2;
    const int64_t rows = a.max_len - blockIdx.y * kAttentionChunk < kAttentionChunk ? a.max_len - blockIdx.y * kAttentionChunk
                                                                                   : kAttentionChunk;
    const int64_t offset = (group * a.max_len + blockIdx.y * kAttentionChunk) * row_bytes;
    for (int64_t byte = threadIdx.x * 128; byte < rows * row_bytes; byte += kAttentionThreads * 128) {
      prefetch_l2(static_cast<const char*>(a.k_cache) + offset + byte);
      prefetch_l2(static_cast<const char*>(a.v_cache) + offset + byte);
    }
  }
  wait_for_inputs();
  allow_next_launch();
  const int64_t head = blockIdx.x, chunk = blockIdx.y, len = *a.pos + 1, first = chunk * kChunk;
  if (first >= len) return;
  __shared__ float q[kMaxHeadChunks * 8], p[kChunk], acc[kAttentionThreads * 8];
  __shared__ bool last;
  const int hd = static_cast<int>(a.head_dim), chunks = hd / 8;
  const int n = static_cast<int>(len - first < kChunk ? len - first : kChunk);
  const int64_t group = head / (a.n_heads / a.n_kv_heads);
  const bf16* k = static_cast<const bf16*>(a.k_cache) + (group * a.max_len + first) * hd;
  const bf16* v = static_cast<const bf16*>(a.v_cache) + (group * a.max_len + first) * hd;
  const int tid = threadIdx.x;
  // Scores: a position per lane of warp 0 (its whole K row); V: a thread per 8 dims and row lane.
  const int lanes = kAttentionThreads / chunks, c = tid % chunks, row_lane = tid / chunks;
  uint4 k_row[kMaxHeadChunks], v_rows[kMaxRowsPerThread];
  if (tid < n)
#pragma unroll
    for (int j = 0; j < kMaxHeadChunks; ++j)
      if (j < chunks) k_row[j] = reinterpret_cast<const uint4*>(k + tid * hd)[j];
#pragma unroll
  for (int j = 0; j < kMaxRowsPerThread; ++j) {
    const int t = row_lane + j * lanes;
    if (row_lane < lanes && t < n) v_rows[j] = reinterpret_cast<const uint4*>(v + t * hd)[c];
  }
  const float q_scale = rsqrtf(static_cast<float>(hd));
  for (int d = tid; d < hd; d += kAttentionThreads) q[d] = to_f(static_cast<const bf16*>(a.q)[head * hd + d]) * q_scale;
  __syncthreads();
  float* part = a.partials + (head * gridDim.y + chunk) * (hd + 2);
  if (tid < kChunk) {
    float s = -INFINITY;
    if (tid < n) {
      s = 0.f;
#pragma unroll
      for (int j = 0; j < kMaxHeadChunks; ++j) {
        if (j >= chunks) break;
        const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&k_row[j]);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float2 f = __bfloat1622float2(pairs[i]);
          s = fmaf(q[8 * j + 2 * i], f.x, fmaf(q[8 * j + 2 * i + 1], f.y, s));
        }
      }
    }
    float m = s;
    for (int o = kWarp / 2; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    const float e = tid < n ? __expf(s - m) : 0.f;
    float l = e;
    for (int o = kWarp / 2; o > 0; o /= 2) l += __shfl_xor_sync(0xffffffffu, l, o);
    p[tid] = e;
    if (tid == 0) {
      part[hd] = m;
      part[hd + 1] = l;
    }
  }
  __syncthreads();
  float sum[8] = {};
#pragma unroll
  for (int j = 0; j < kMaxRowsPerThread; ++j) {
    const int t = row_lane + j * lanes;
    if (row_lane < lanes && t < n) add_scaled(sum, p[t], v_rows[j]);
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) acc[tid * 8 + i] = sum[i];
  __syncthreads();
  for (int d = tid; d < hd; d += kAttentionThreads) {
    float total = 0.f;
    for (int r = 0; r < lanes; ++r) total += acc[(r * chunks + d / 8) * 8 + d % 8];
    part[d] = total;
  }
  // The head's last block to finish combines the chunks (its counter back to 0 for the next launch).
  __threadfence();
  __syncthreads();
  const unsigned used = static_cast<unsigned>((len + kChunk - 1) / kChunk);
  if (tid == 0) {
    last = atomicAdd(&a.counters[head], 1u) == used - 1;
    if (last) a.counters[head] = 0;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  const float* parts = a.partials + head * gridDim.y * (hd + 2);
  for (int d = tid; d < hd; d += kAttentionThreads) {
    // An online softmax over the chunks; unrolled, so that their L2 loads issue together.
    float m = -INFINITY, num = 0.f, den = 0.f;
#pragma unroll 8
    for (unsigned s = 0; s < used; ++s) {
      const float* ps = parts + s * (hd + 2);
      const float m_s = __ldcg(ps + hd), l_s = __ldcg(ps + hd + 1), a_s = __ldcg(ps + d);
      const float m_new = fmaxf(m, m_s), old_w = __expf(m - m_new), new_w = __expf(m_s - m_new);
      num = num * old_w + a_s * new_w;
      den = den * old_w + l_s * new_w;
      m = m_new;
    }
    static_cast<bf16*>(a.out)[head * hd + d] = __float2bfloat16(num / den);
  }
}

// The running greedy pick: the larger logit, the lower index on a tie.
struct Pick {
  float logit = -INFINITY;
  int64_t index = INT64_MAX;
  __device__ void consider(float v, int64_t i) {
    if (v > logit || (v == logit && i < index)) {
      logit = v;
      index = i;
    }
  }
  __device__ void merge_warp() {
    for (int o = kWarp / 2; o > 0; o /= 2)
      consider(__shfl_xor_sync(0xffffffffu, logit, o), __shfl_xor_sync(0xffffffffu, index, o));
  }
};

constexpr int kNextTokenThreads = 1024;
constexpr int kNextTokenVectorsInFlight = 4;   // 16-byte loads per thread per round

__global__ void __launch_bounds__(kNextTokenThreads) next_token(NextTokenArgs a, bool vectorized) {
  wait_for_inputs();
  allow_next_launch();
  __shared__ float warp_logit[kWarp];
  __shared__ int64_t warp_index[kWarp];
  const bf16* logits = static_cast<const bf16*>(a.logits);
  const int64_t vectors = vectorized ? a.vocab / 8 : 0;
  Pick pick;
  for (int64_t base = threadIdx.x; base < vectors; base += kNextTokenVectorsInFlight * kNextTokenThreads) {
    uint4 raw[kNextTokenVectorsInFlight];
#pragma unroll
    for (int j = 0; j < kNextTokenVectorsInFlight; ++j)
      if (base + j * kNextTokenThreads < vectors) raw[j] = reinterpret_cast<const uint4*>(logits)[base + j * kNextTokenThreads];
#pragma unroll
    for (int j = 0; j < kNextTokenVectorsInFlight; ++j) {
      const int64_t v = base + j * kNextTokenThreads;
      if (v >= vectors) break;
      const bf16* e = reinterpret_cast<const bf16*>(&raw[j]);
#pragma unroll
      for (int i = 0; i < 8; ++i) pick.consider(to_f(e[i]), v * 8 + i);
    }
  }
  for (int64_t i = vectors * 8 + threadIdx.x; i < a.vocab; i += kNextTokenThreads) pick.consider(to_f(logits[i]), i);
  pick.merge_warp();
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  if (lane == 0) {
    warp_logit[warp] = pick.logit;
    warp_index[warp] = pick.index;
  }
  __syncthreads();
  if (warp != 0) return;
  pick = Pick{};
  if (lane < kNextTokenThreads / kWarp) pick.consider(warp_logit[lane], warp_index[lane]);
  pick.merge_warp();
  if (lane != 0) return;
  const int64_t next_pos = *a.pos + 1;
  const int64_t next = next_pos < a.prompt_len ? a.sequence[next_pos] : pick.index;
  a.sequence[next_pos] = next;
  *a.token = next;
  *a.pos = next_pos;
}

__global__ void top2_route(const bf16* logits, int64_t n, int64_t* idx, float* weights) {
  wait_for_inputs();
  allow_next_launch();
  int64_t first = 0, second = -1;
  for (int64_t e = 1; e < n; ++e) {
    if (to_f(logits[e]) > to_f(logits[first])) {
      second = first;
      first = e;
    } else if (second < 0 || to_f(logits[e]) > to_f(logits[second])) {
      second = e;
    }
  }
  if (second < 0) second = first == 0 ? 1 : 0;
  // softmax over all experts then renormalized over the two = softmax over the two logits
  const float l0 = to_f(logits[first]), l1 = to_f(logits[second]);
  const float e1 = __expf(l1 - l0);
  idx[0] = first;
  idx[1] = second;
  weights[0] = 1.f / (1.f + e1);
  weights[1] = e1 / (1.f + e1);
}

[[noreturn]] void invalid(const char* kernel, const std::string& why) { throw Error(std::string(kernel) + ": " + why); }

unsigned blocks_for(int64_t n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

}  // namespace

void launch_residual_add(const ResidualAddArgs& a, cudaStream_t stream, bool programmatic) {
  if (!a.h || (a.n_delta > 0 && !a.delta)) invalid("residual_add", "null pointer");
  if (a.dim <= 0 || a.n_delta < 0) invalid("residual_add", "empty shape");
  launch_kernel(residual_add, dim3(blocks_for(a.dim, 256)), dim3(256), 0, stream, programmatic, a);
}

void launch_decode_attention(const AttentionArgs& a, cudaStream_t stream, bool programmatic) {
  if (!a.q || !a.k_cache || !a.v_cache || !a.pos || !a.out || !a.partials || !a.counters)
    invalid("decode_attention", "null pointer");
  if (a.n_kv_heads <= 0 || a.n_heads % a.n_kv_heads != 0) invalid("decode_attention", "n_heads % n_kv_heads != 0");
  if (a.head_dim <= 0 || a.head_dim % 8 != 0 || a.head_dim > kMaxHeadChunks * 8)
    invalid("decode_attention", "head_dim must be a multiple of 8 in [8, 256]");
  if (a.max_len <= 0) invalid("decode_attention", "max_len must be positive");
  const dim3 grid(static_cast<unsigned>(a.n_heads), static_cast<unsigned>((a.max_len + kChunk - 1) / kChunk));
  launch_kernel(decode_attention, grid, dim3(kAttentionThreads), 0, stream, programmatic, a);
}

void launch_next_token(const NextTokenArgs& a, cudaStream_t stream, bool programmatic) {
  if (!a.logits || !a.sequence || !a.token || !a.pos) invalid("next_token", "null pointer");
  if (a.vocab <= 0 || a.prompt_len <= 0) invalid("next_token", "vocab and prompt_len must be positive");
  const bool vectorized = reinterpret_cast<uintptr_t>(a.logits) % 16 == 0;
  launch_kernel(next_token, dim3(1), dim3(kNextTokenThreads), 0, stream, programmatic, a, vectorized);
}

void launch_top2_route(const void* logits, int64_t n_experts, int64_t* idx, float* weights, cudaStream_t stream,
                       bool programmatic) {
  if (!logits || !idx || !weights) invalid("top2_route", "null pointer");
  if (n_experts < 2) invalid("top2_route", "needs at least 2 experts");
  launch_kernel(top2_route, dim3(1), dim3(1), 0, stream, programmatic, static_cast<const bf16*>(logits), n_experts,
                idx, weights);
}

}  // namespace opbench::kernels
