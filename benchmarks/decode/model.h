// A batch-1 decoder-only transformer as gpt-fast's model.py and mixtral-moe's model.py describe it
// (Llama-2: dense SwiGLU FFN; Mixtral: 8 experts, top-2 routing, grouped-query attention), random
// weights made on the device (no checkpoint), a KV cache of prompt + new tokens, and its byte count.
//
// Two forwards share the weights and the cache:
//   forward_aten  any number of tokens T at positions input_pos, ATen ops only (CPU and GPU; any
//                 floating dtype; int8 weights dequantized as gpt-fast's WeightOnlyInt8Linear:
//                 y = (x . W^T) * scales; int4 weights, bf16 activations, through PyTorch's int4 matmul as
//                 gpt-fast's WeightOnlyInt4Linear calls it, other activations on the dequantized weights).
//                 The reference: a full causal forward when T > 1.
//   OwnStep       (own_step.h) one token on a GPU with opbench's kernels: GEMV (fused int8 or int4 dequantize,
//                 gather for the experts, the rms norm as a prologue, RoPE + cache write and SwiGLU as
//                 epilogues), decode attention, top-2 routing, the residual add.
// Layouts: wqkv = [q heads | k heads | v heads] x dim; w13 = [w1 | w3] x dim (experts: [E, 2 ffn, dim]);
// caches [layers, kv_heads, max_len, head_dim]; RoPE rotates pairs (2i, 2i+1) with base `rope_base`.
// A tensor-parallel shard (shard.h) is a Model too: its config counts the rank's heads, KV heads and FFN
// rows, and `all_reduce` sums the partial outputs of its row-parallel layers over the ranks.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/gemv/int4_weights.h"

namespace opbench::decode {

struct ModelConfig {
  std::string name;                  // "7b", "70b", "8x7b", "tiny", "tiny-gqa", "tiny-moe"
  int64_t dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, ffn = 0, vocab = 0;
  int64_t n_experts = 0, top_k = 0;  // a mixture of experts when n_experts > 0
  double rope_base = 10000, norm_eps = 1e-5;
  int64_t prompt_len = 6, new_tokens = 200;
  // A shard's config (shard_config, shard.h): n_heads, n_kv_heads and ffn are one rank's share of `tp`,
  // and the head size stays the whole model's dim / n_heads. 0 and 1 in a whole model's config.
  int64_t shard_head_dim = 0, tp = 1;
  int64_t head_dim() const { return shard_head_dim > 0 ? shard_head_dim : dim / n_heads; }
  int64_t qkv_rows() const { return (n_heads + 2 * n_kv_heads) * head_dim(); }
  // Steps of one generation: the prompt is fed one token per step through the same decode step (its
  // last step yields the first new token), so prompt_len - 1 + new_tokens steps, max_len positions.
  int64_t steps() const { return prompt_len - 1 + new_tokens; }
  int64_t max_len() const { return prompt_len + new_tokens; }
  bool moe() const { return n_experts > 0; }
};

// The configurations, by name: gpt-fast's Llama-2-7B, Llama-2-70B and Mixtral-8x7B, and tiny ones for the
// CPU (tiny-gqa: grouped-query attention, dense, for the tensor-parallel tests).
const ModelConfig& model_config(const std::string& name);

// How a model's linear layers hold their weights: the activation dtype, int8 weight-only (gpt-fast's
// WeightOnlyInt8QuantHandler) or int4 weight-only (its WeightOnlyInt4QuantHandler: groups of 128, dense
// models only). Every linear layer, the output head included, as gpt-fast's handlers replace them all.
enum class WeightQuant { kNone, kInt8, kInt4 };
constexpr WeightQuant int8_or_none(bool int8) { return int8 ? WeightQuant::kInt8 : WeightQuant::kNone; }

// A linear layer: w [out, in] (experts: [E, out, in]) in bf16/fp32/fp64, or int8 with per-output-row
// scales [out] ([E, out]) in the activation dtype, or int4 (dense layers only): w the packed bytes
// [out, in / 2] and qparams [out, in / 128, 2] in the own GEMV's layout (kernels/gemv/int4_weights.h),
// `aten` the same weights in the layout of PyTorch's int4 matmul (bf16 activations only).
struct Linear {
  at::Tensor w, scale, qparams;
  kernels::AtenInt4 aten;
  bool int8() const { return scale.defined(); }
  bool int4() const { return qparams.defined(); }
  int64_t in_features() const { return int4() ? w.size(-1) * 2 : w.size(-1); }
};

struct Layer {
  at::Tensor attn_norm, ffn_norm;    // [dim]
  Linear wqkv, wo, w13, w2, gate;    // gate: the router (experts only)
};

struct Model {
  ModelConfig cfg;
  c10::ScalarType act_dtype = c10::kBFloat16;   // activations, norms, embeddings, scales
  bool int8 = false;                            // every linear layer int8 weight-only
  bool int4 = false;                            // every linear layer int4 weight-only
  at::Tensor tok_emb, norm;                     // [vocab, dim], [dim]
  Linear output;                                // [vocab, dim]
  std::vector<Layer> layers;
  at::Tensor k_cache, v_cache;                  // [layers, kv_heads, max_len, head_dim], act dtype
  at::Tensor rope_cos, rope_sin;                // fp32 [max_len, head_dim / 2]
  // A shard's sum over the ranks of a row-parallel layer's partial output [T, dim] (wo's and w2's) into
  // `sum` (which may be `partial` itself), before the residual add; on a GPU it only enqueues on the
  // current stream (capturable). Empty for a whole model.
  std::function<void(const at::Tensor& partial, const at::Tensor& sum)> all_reduce;
  // Where the own-kernel step writes those partials when set: [2, dim] (act dtype), row 0 wo's and row 1
  // w2's. With all_reduce: memory the all-reduce is fastest on (NCCL: a symmetric window,
  // Communicator::symmetric_tensor), summed out of place into the step's own buffer: an NCCL window as
  // the output of a symmetric all-reduce gives wrong sums in CUDA graphs (NVIDIA/nccl#1924; TensorRT-LLM
  // avoids it the same way). With add_sums: ordinary memory. Undefined: the step's own buffer, summed in
  // place.
  at::Tensor reduce_buffer;
  // On one host through NCCL's device API (tp_decode.cpp's default where available): add_sums(row, h,
  // programmatic) adds every rank's reduce_buffer row `row` into h on the current stream in one kernel
  // (collective/lsa_sum.h: rows 0 and 1 alternate), in place of the all-reduce and the residual add.
  // Empty: all_reduce.
  std::function<void(int64_t row, const at::Tensor& h, bool programmatic)> add_sums;
};

// Random weights on `device` (seeded by the caller through at::manual_seed; a whole model's config): randn / sqrt(fan_in) for
// float weights; int8 uniform in [-127, 127] with scales (0.5..1.5) / (73 sqrt(fan_in)); norm weights
// 1 + 0.1 randn; embeddings randn. The caches are zeroed.
// int4: q uniform in [0, 15], group scales (0.5..1.5) / (4.8 sqrt(fan_in)), zeros of half a scale's
// size (kernels::random_int4); refused for a mixture of experts.
Model make_model(const ModelConfig& cfg, c10::ScalarType act_dtype, WeightQuant quant, c10::Device device);
inline Model make_model(const ModelConfig& cfg, c10::ScalarType act_dtype, bool int8, c10::Device device) {
  return make_model(cfg, act_dtype, int8_or_none(int8), device);
}

// The zeroed KV caches and the RoPE tables of model.cfg on `device` (make_model's and make_shard's).
void make_cache_and_rope(Model& model, c10::Device device);

// The same model with every int8 linear dequantized to act_dtype: bf16(W * scale) (test (c)); every int4
// linear to act_dtype((q - 8) * scale + zero).
Model dequantized(const Model& model);

// Bytes one decode step streams: every linear weight (and int8 scales, int4 half a byte a weight and
// the groups' bf16 scale and zero) and norm weight, the output head included, the token embedding table
// excluded (a step reads one row of it); for experts, the top_k / n_experts share of the expert weights.
// gpt-fast's count adds the KV cache and RoPE tables (its _get_model_size sums buffers too):
// gpt_fast_model_bytes.
double streamed_bytes_per_token(const ModelConfig& cfg, WeightQuant quant, c10::ScalarType act_dtype);
// Of those, the norm weights' (two a layer and the final one): what the linear layers' GEMVs do not read.
double norm_bytes_per_token(const ModelConfig& cfg, c10::ScalarType act_dtype);
double gpt_fast_model_bytes(const ModelConfig& cfg, WeightQuant quant, c10::ScalarType act_dtype);
// Bytes the weights and caches occupy in memory (all experts).
double resident_bytes(const ModelConfig& cfg, WeightQuant quant, c10::ScalarType act_dtype);
inline double streamed_bytes_per_token(const ModelConfig& cfg, bool int8, c10::ScalarType act_dtype) {
  return streamed_bytes_per_token(cfg, int8_or_none(int8), act_dtype);
}
inline double gpt_fast_model_bytes(const ModelConfig& cfg, bool int8, c10::ScalarType act_dtype) {
  return gpt_fast_model_bytes(cfg, int8_or_none(int8), act_dtype);
}
inline double resident_bytes(const ModelConfig& cfg, bool int8, c10::ScalarType act_dtype) {
  return resident_bytes(cfg, int8_or_none(int8), act_dtype);
}
// The weights' quantization a case's dtype names: int8 (kChar), int4 (Int4), else none.
WeightQuant quant_of_dtype(c10::ScalarType dtype);

// Expert choices per layer: idx [layers, T, top_k] (int64), weights [layers, T, top_k] (fp32).
struct Routes {
  at::Tensor idx, weights;
};

// Logits [T, vocab] of tokens [T] (int64) at positions input_pos [T] (int64, on the model's device),
// writing their keys and values into the cache first; each token attends to the cached positions
// <= its own. A shard (shard.h) sums wo's and w2's partial outputs with model.all_reduce before each
// residual add. Capturable in a CUDA graph for T = 1 (no host sync). `forced`: the experts' choices to
// use instead of the router's (comparing two forwards whose routers may break a near-tie differently).
at::Tensor forward_aten(Model& model, const at::Tensor& tokens, const at::Tensor& input_pos,
                        const Routes* forced = nullptr);

// The router's choice for `x_normed` [T, dim]: expert indices [T, top_k] (int64, descending
// probability) and weights [T, top_k] (fp32, summing to 1) -- gpt-fast's MOEFeedForward.
void route_aten(const Linear& gate, const at::Tensor& x_normed, int64_t top_k, at::Tensor& idx, at::Tensor& weights);

}  // namespace opbench::decode
