// The decode step's small kernels (decode_kernels.cu): everything of a batch-1 transformer layer that
// is not a GEMV, each one launch, so that a decode step is ~8 kernels per layer instead of ~30 ATen
// ones. Activations bf16, arithmetic fp32, one token (T = 1). Positions are read on the device (the
// step is capturable in a CUDA graph). The layouts are the model's (model.h): qkv = [q heads | k heads
// | v heads], caches [kv_heads, max_len, head_dim], RoPE on pairs (2i, 2i+1) as gpt-fast's
// apply_rotary_emb. Plain C++ interface (no ATen). Every launch is checked (opbench::Error).
// `programmatic`: a programmatic dependent launch (common/launch.cuh): the kernel may start while the
// previous kernel of the stream finishes; each kernel waits for its inputs before it reads them, and
// lets the next kernel launch at once.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace opbench::kernels {

// h += sum_e delta_weights[e] * delta[e] (n_delta rows of dim; delta_weights fp32 on the device, or
// nullptr for weight 1; n_delta = 0: h unchanged), rounded to bf16 and stored; then
// out = bf16(bf16(h * rsqrt(mean(h^2) + eps)) * norm_w) -- gpt-fast's RMSNorm of the new residual.
struct ResidualNormArgs {
  void* h = nullptr;
  const void* delta = nullptr;
  int64_t n_delta = 0;
  const float* delta_weights = nullptr;
  const void* norm_w = nullptr;
  void* out = nullptr;
  int64_t dim = 0;
  float eps = 1e-5f;
};
void launch_residual_rms_norm(const ResidualNormArgs& args, cudaStream_t stream, bool programmatic = false);

// From qkv at position *pos: q_out = rope(q); k_cache[:, pos] = rope(k); v_cache[:, pos] = v.
// cos/sin: fp32 [max_len, head_dim / 2].
struct RopeCacheArgs {
  const void* qkv = nullptr;
  void* q_out = nullptr;
  void* k_cache = nullptr;
  void* v_cache = nullptr;
  const int64_t* pos = nullptr;
  const float* cos = nullptr;
  const float* sin = nullptr;
  int64_t n_heads = 0, n_kv_heads = 0, head_dim = 0, max_len = 0;
};
void launch_rope_cache(const RopeCacheArgs& args, cudaStream_t stream, bool programmatic = false);

// out[h] = softmax(q[h] . K[g]^T / sqrt(head_dim) over positions 0..*pos) . V[g], g = h / (n_heads /
// n_kv_heads) (grouped-query attention). One block per head; scores in shared memory (max_len floats).
struct AttentionArgs {
  const void* q = nullptr;
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  const int64_t* pos = nullptr;
  void* out = nullptr;
  int64_t n_heads = 0, n_kv_heads = 0, head_dim = 0, max_len = 0;
};
void launch_decode_attention(const AttentionArgs& args, cudaStream_t stream, bool programmatic = false);

// SwiGLU of `rows` rows of [a | b] (2 * ffn each): out[r] = bf16(silu(a) * b), computed in fp32.
void launch_swiglu(const void* h13, void* out, int64_t rows, int64_t ffn, cudaStream_t stream,
                   bool programmatic = false);

// Mixture-of-experts routing of one token: p = softmax(logits) over n_experts (bf16 in), the two largest
// (the lower index first on a tie), idx[0..1] (int64) and weights[0..1] = p / (p0 + p1) (fp32).
void launch_top2_route(const void* logits, int64_t n_experts, int64_t* idx, float* weights, cudaStream_t stream,
                       bool programmatic = false);

}  // namespace opbench::kernels
