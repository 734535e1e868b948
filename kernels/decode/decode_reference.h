// Float64 references of the decode step's small kernels (decode_kernels.h), on the inputs' device: the
// GPU test (decode_kernels_test.cpp) and the tuner (decode_tune.cpp) hold the kernels' outputs to them.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace opbench::kernels {

// Grouped-query attention of one token at position `pos`: q [n_heads * head_dim], caches [kv_heads,
// max_len, head_dim]; softmax(q . K^T / sqrt(head_dim)) . V over positions 0..pos, [n_heads * head_dim].
at::Tensor attention_reference(const at::Tensor& q, const at::Tensor& k_cache, const at::Tensor& v_cache,
                               int64_t pos, int64_t n_heads);

// The greedy loop's next token after position `pos`: the prompt's sequence[pos + 1] while pos + 1 <
// prompt_len, else argmax(logits), the lowest index among equal maxima.
int64_t next_token_reference(const at::Tensor& logits, const at::Tensor& sequence, int64_t pos, int64_t prompt_len);

// Top-2 routing of one token: the two most probable experts of softmax(logits), the more probable
// first, and their probabilities renormalized over the two.
struct Top2 {
  at::Tensor idx;       // int64 [2]
  at::Tensor weights;   // float64 [2]
};
Top2 top2_route_reference(const at::Tensor& logits);

// h + sum_e delta_weights[e] * delta[e] (delta [n, dim]; delta_weights [n], or undefined for weight 1).
at::Tensor residual_add_reference(const at::Tensor& h, const at::Tensor& delta, const at::Tensor& delta_weights);

}  // namespace opbench::kernels
