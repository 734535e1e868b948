// The decode step's small kernels: see decode_kernels.h for what each computes.
#include <cuda_bf16.h>

#include <cmath>
#include <string>

#include "common/launch.cuh"
#include "decode/decode_kernels.h"
#include "opbench/check.h"

namespace opbench::kernels {
namespace {

constexpr int kWarp = 32;
using bf16 = __nv_bfloat16;

__device__ __forceinline__ float to_f(bf16 v) { return __bfloat162float(v); }

// Sum (or max) over the block; every thread gets the result. `scratch` holds one float per warp.
template <bool kMax>
__device__ float block_reduce(float v, float* scratch) {
  for (int o = kWarp / 2; o > 0; o /= 2) {
    float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, warps = blockDim.x / kWarp;
  __syncthreads();   // scratch may still be read by a previous reduction
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : (kMax ? -INFINITY : 0.f);
  for (int o = kWarp / 2; o > 0; o /= 2) {
    float other = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, other) : v + other;
  }
  return v;
}

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

constexpr int kAttentionThreads = 256;
constexpr int kAttentionMaxPerLane = 8;   // head_dim <= 8 * 32

// A thread per cached position for the scores (its row of K in 16-byte loads, all in flight at once),
// then warps that split the positions for the weighted sum of V.
__global__ void __launch_bounds__(kAttentionThreads) decode_attention(AttentionArgs a) {
  wait_for_inputs();
  allow_next_launch();
  extern __shared__ float shared[];   // q (head_dim), scores (max_len), partial sums (warps x head_dim)
  __shared__ float scratch[kWarp];
  float* q = shared;
  float* scores = q + a.head_dim;
  float* partial = scores + a.max_len;
  const int64_t head = blockIdx.x, group = head / (a.n_heads / a.n_kv_heads), len = *a.pos + 1;
  const bf16* k = static_cast<const bf16*>(a.k_cache) + group * a.max_len * a.head_dim;
  const bf16* v = static_cast<const bf16*>(a.v_cache) + group * a.max_len * a.head_dim;
  const float scale = rsqrtf(static_cast<float>(a.head_dim));
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp, warps = blockDim.x / kWarp;
  for (int64_t d = threadIdx.x; d < a.head_dim; d += blockDim.x)
    q[d] = to_f(static_cast<const bf16*>(a.q)[head * a.head_dim + d]) * scale;
  __syncthreads();
  float local_max = -INFINITY;
  for (int64_t t = threadIdx.x; t < len; t += blockDim.x) {
    const uint4* row = reinterpret_cast<const uint4*>(k + t * a.head_dim);
    float s = 0.f;
#pragma unroll 4
    for (int64_t c = 0; c < a.head_dim / 8; ++c) {
      const uint4 raw = row[c];
      const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float2 f = __bfloat1622float2(pairs[i]);
        s = fmaf(q[8 * c + 2 * i], f.x, s);
        s = fmaf(q[8 * c + 2 * i + 1], f.y, s);
      }
    }
    scores[t] = s;
    local_max = fmaxf(local_max, s);
  }
  const float max_score = block_reduce<true>(local_max, scratch);   // syncs: scores are complete
  float local_sum = 0.f;
  for (int64_t t = threadIdx.x; t < len; t += blockDim.x) {
    scores[t] = __expf(scores[t] - max_score);
    local_sum += scores[t];
  }
  const float inv_sum = 1.f / block_reduce<false>(local_sum, scratch);   // syncs: probabilities written
  // Weighted sum of V: warp w takes positions w, w + warps, ...; lane l the dims l, l + 32, ... (each
  // warp-wide load is one contiguous stretch of a V row); the warps' partial sums meet in shared memory.
  float acc[kAttentionMaxPerLane] = {};
#pragma unroll 4
  for (int64_t t = warp; t < len; t += warps) {
    const float p = scores[t];
    const bf16* row = v + t * a.head_dim;
#pragma unroll
    for (int j = 0; j < kAttentionMaxPerLane; ++j) {
      const int64_t d = lane + j * kWarp;
      if (d < a.head_dim) acc[j] = fmaf(p, to_f(row[d]), acc[j]);
    }
  }
#pragma unroll
  for (int j = 0; j < kAttentionMaxPerLane; ++j) {
    const int64_t d = lane + j * kWarp;
    if (d < a.head_dim) partial[warp * a.head_dim + d] = acc[j];
  }
  __syncthreads();
  for (int64_t d = threadIdx.x; d < a.head_dim; d += blockDim.x) {
    float total = 0.f;
    for (int w = 0; w < warps; ++w) total += partial[w * a.head_dim + d];
    static_cast<bf16*>(a.out)[head * a.head_dim + d] = __float2bfloat16(total * inv_sum);
  }
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
  if (!a.q || !a.k_cache || !a.v_cache || !a.pos || !a.out) invalid("decode_attention", "null pointer");
  if (a.n_kv_heads <= 0 || a.n_heads % a.n_kv_heads != 0) invalid("decode_attention", "n_heads % n_kv_heads != 0");
  if (a.head_dim <= 0 || a.head_dim % 8 != 0 || a.head_dim > kAttentionThreads)
    invalid("decode_attention", "head_dim must be a multiple of 8 in [8, 256]");
  const size_t shared_bytes =
      static_cast<size_t>(a.head_dim + a.max_len + (kAttentionThreads / kWarp) * a.head_dim) * sizeof(float);
  if (shared_bytes > 48 * 1024) invalid("decode_attention", "max_len too long for the scores in shared memory");
  launch_kernel(decode_attention, dim3(static_cast<unsigned>(a.n_heads)), dim3(kAttentionThreads), shared_bytes,
                stream, programmatic, a);
}

void launch_top2_route(const void* logits, int64_t n_experts, int64_t* idx, float* weights, cudaStream_t stream,
                       bool programmatic) {
  if (!logits || !idx || !weights) invalid("top2_route", "null pointer");
  if (n_experts < 2) invalid("top2_route", "needs at least 2 experts");
  launch_kernel(top2_route, dim3(1), dim3(1), 0, stream, programmatic, static_cast<const bf16*>(logits), n_experts,
                idx, weights);
}

}  // namespace opbench::kernels
