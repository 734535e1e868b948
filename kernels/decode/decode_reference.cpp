#include "kernels/decode/decode_reference.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/argmax.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/repeat_interleave.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/topk.h>

#include <cmath>

namespace opbench::kernels {

at::Tensor attention_reference(const at::Tensor& q, const at::Tensor& k_cache, const at::Tensor& v_cache,
                               int64_t pos, int64_t n_heads) {
  const int64_t head_dim = k_cache.size(2), group = n_heads / k_cache.size(0);
  at::Tensor k = k_cache.narrow(1, 0, pos + 1).to(at::kDouble).repeat_interleave(group, 0);
  at::Tensor v = v_cache.narrow(1, 0, pos + 1).to(at::kDouble).repeat_interleave(group, 0);
  at::Tensor scores = at::matmul(k, q.to(at::kDouble).view({n_heads, head_dim, 1})).squeeze(2) /
                      std::sqrt(static_cast<double>(head_dim));
  return at::matmul(at::softmax(scores, -1).unsqueeze(1), v).view({-1});
}

int64_t next_token_reference(const at::Tensor& logits, const at::Tensor& sequence, int64_t pos, int64_t prompt_len) {
  if (pos + 1 < prompt_len) return sequence[pos + 1].item<int64_t>();
  return at::argmax(logits.to(at::kCPU, at::kDouble)).item<int64_t>();   // the CPU's: the first maximum
}

Top2 top2_route_reference(const at::Tensor& logits) {
  auto [values, idx] = at::topk(at::softmax(logits.to(at::kDouble), -1), 2);
  return {idx, values / values.sum()};
}

at::Tensor residual_add_reference(const at::Tensor& h, const at::Tensor& delta, const at::Tensor& delta_weights) {
  at::Tensor d = delta.to(at::kDouble);
  if (delta_weights.defined()) d = d * delta_weights.to(at::kDouble).unsqueeze(1);
  return h.to(at::kDouble) + d.sum(0);
}

}  // namespace opbench::kernels
