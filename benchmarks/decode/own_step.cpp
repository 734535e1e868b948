// A decode step with opbench's own kernels (own_step.h). CUDA builds only.
#ifdef OPBENCH_HAVE_CUDA
#include "decode/own_step.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAStream.h>

#include "kernels/decode/decode_kernels.h"
#include "opbench/check.h"

namespace opbench::decode {
kernels::GemvArgs OwnStep::gemv_args(const Linear& l, const at::Tensor& x, at::Tensor& y) const {
  kernels::GemvArgs a;
  a.w = l.w.data_ptr();
  a.w_type = l.int4() ? kernels::WeightType::kInt4 : l.int8() ? kernels::WeightType::kInt8 : kernels::WeightType::kBf16;
  a.group_qparams = l.int4() ? l.qparams.data_ptr() : nullptr;
  a.rows = l.w.size(-2);
  a.cols = l.in_features();
  a.row_stride = a.cols;
  a.x = x.data_ptr();
  a.y = y.data_ptr();
  a.row_scale = l.int8() ? l.scale.data_ptr() : nullptr;
  a.programmatic = programmatic_;
  return a;
}

kernels::GemvArgs OwnStep::normed_args(const Linear& l, const at::Tensor& norm_w, at::Tensor& y) const {
  kernels::GemvArgs a = gemv_args(l, h_, y);
  a.fusion.norm_w = norm_w.data_ptr();
  a.fusion.norm_eps = static_cast<float>(m_.cfg.norm_eps);
  return a;
}

// y[e] = W[idx[e]] . x[e] for the top_k selected experts; x_stride 0: one x for all.
kernels::GemvArgs OwnStep::gather_args(kernels::GemvArgs a, const Linear& l, int64_t x_stride,
                                       const at::Tensor& idx) const {
  a.x_stride = x_stride;
  a.expert_idx = idx.data_ptr<int64_t>();
  a.num_selected = idx.numel();
  a.num_experts = l.w.size(0);
  a.expert_stride = a.rows * a.cols;
  if (l.int8()) a.row_scale_expert_stride = a.rows;
  return a;
}

OwnStep::OwnStep(Model& model, bool programmatic) : m_(model), programmatic_(programmatic) {
  const ModelConfig& c = model.cfg;
  if (model.act_dtype != c10::kBFloat16 || !model.tok_emb.is_cuda())
    throw Error("own decode kernels need bf16 activations on a CUDA device");
  if (model.all_reduce && c.moe()) throw Error("own decode kernels split dense models only");
  auto opts = model.tok_emb.options();
  const int64_t k = c.moe() ? c.top_k : 1;
  h_ = at::empty({1, c.dim}, opts);
  q_ = at::empty({c.n_heads * c.head_dim()}, opts);
  attn_ = at::empty({c.n_heads * c.head_dim()}, opts);
  delta_ = at::empty({k, c.dim}, opts);
  act_ = at::empty({k, c.ffn}, opts);
  logits_ = at::empty({1, c.vocab}, opts);
  attn_partials_ = at::empty({kernels::attention_partials_floats(c.n_heads, c.head_dim(), c.max_len())},
                             opts.dtype(c10::kFloat));
  attn_counters_ = at::zeros({c.n_heads}, opts.dtype(c10::kInt));
  if (c.moe()) {
    router_ = at::empty({c.n_experts}, opts);
    route_idx_ = at::empty({c.top_k}, opts.dtype(c10::kLong));
    route_w_ = at::empty({c.top_k}, opts.dtype(c10::kFloat));
  }
}

std::string OwnStep::kernel_names(const Model& model, bool programmatic) {
  std::string gemv = model.int4   ? "gemv_int4(fused group dequantize)"
                     : model.int8 ? "gemv_int8(fused dequantize)"
                                  : "gemv_bf16";
  std::string names = "own:" + gemv + "+rms_norm/rope_cache/residual_add/swiglu," +
                      (model.cfg.moe() ? "gather_gemv,top2_route,residual_add," : "") + "decode_attention,next_token";
  if (model.add_sums)
    names += ",lsa_sum_add x2/layer (NCCL device API: each rank stores its partial into every rank's window, adds them to h)";
  else if (model.all_reduce)
    names += std::string(",residual_add nccl:all_reduce x2/layer") + (model.reduce_buffer.defined() ? " (symmetric window)" : "");
  return names + (programmatic ? " (programmatic launches)" : "") + " aten:embedding";
}

// h += l . x: the GEMV adds into h; a shard's GEMV writes its partial, summed over the ranks, then added
// (with Model::reduce_buffer: wo's partial, `second` false, in its row 0, w2's in row 1, summed into h's delta;
// with Model::add_sums too, one kernel sums the ranks' rows and adds them).
void OwnStep::add_to_h(const Linear& l, const at::Tensor& x, bool second, cudaStream_t stream) {
  if (!m_.all_reduce) {
    kernels::GemvArgs a = gemv_args(l, x, h_);
    a.fusion.epilogue = kernels::GemvEpilogue::kAddToY;
    kernels::launch_gemv(a, stream);
    return;
  }
  const bool window = m_.reduce_buffer.defined();
  if (m_.add_sums) {   // one kernel sums the ranks' rows into h
    at::Tensor partial = m_.reduce_buffer.narrow(0, second ? 1 : 0, 1);
    kernels::launch_gemv(gemv_args(l, x, partial), stream);
    m_.add_sums(second ? 1 : 0, h_, programmatic_);
    return;
  }
  at::Tensor sum = delta_.narrow(0, 0, 1);
  at::Tensor partial = window ? m_.reduce_buffer.narrow(0, second ? 1 : 0, 1) : sum;
  kernels::launch_gemv(gemv_args(l, x, partial), stream);
  m_.all_reduce(partial, sum);
  kernels::ResidualAddArgs add;
  add.h = h_.data_ptr();
  add.delta = sum.data_ptr();
  add.n_delta = 1;
  add.dim = m_.cfg.dim;
  kernels::launch_residual_add(add, stream, programmatic_);
}

// h += FFN(rms_norm(h)), the norm fused into the GEMVs that read it.
void OwnStep::feed_forward(int64_t l, cudaStream_t stream) {
  const ModelConfig& c = m_.cfg;
  const Layer& layer = m_.layers[static_cast<size_t>(l)];
  if (!c.moe()) {
    kernels::GemvArgs w13 = normed_args(layer.w13, layer.ffn_norm, act_);
    w13.fusion.epilogue = kernels::GemvEpilogue::kSwiglu;
    kernels::launch_gemv(w13, stream);
    add_to_h(layer.w2, act_, /*second=*/true, stream);
    return;
  }
  kernels::launch_gemv(normed_args(layer.gate, layer.ffn_norm, router_), stream);
  kernels::launch_top2_route(router_.data_ptr(), c.n_experts, route_idx_.data_ptr<int64_t>(),
                             route_w_.data_ptr<float>(), stream, programmatic_);
  if (route_log_) {
    route_log_->idx.select(0, l).view({-1}).copy_(route_idx_);
    route_log_->weights.select(0, l).view({-1}).copy_(route_w_);
  }
  kernels::GemvArgs w13 = gather_args(normed_args(layer.w13, layer.ffn_norm, act_), layer.w13, 0, route_idx_);
  w13.fusion.epilogue = kernels::GemvEpilogue::kSwiglu;
  kernels::launch_gemv(w13, stream);
  kernels::launch_gemv(gather_args(gemv_args(layer.w2, act_, delta_), layer.w2, c.ffn, route_idx_), stream);
  kernels::ResidualAddArgs add;   // h += the routing-weighted experts' outputs
  add.h = h_.data_ptr();
  add.delta = delta_.data_ptr();
  add.n_delta = c.top_k;
  add.delta_weights = route_w_.data_ptr<float>();
  add.dim = c.dim;
  kernels::launch_residual_add(add, stream, programmatic_);
}

const at::Tensor& OwnStep::forward(const at::Tensor& token, const at::Tensor& pos) {
  const ModelConfig& c = m_.cfg;
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  at::index_select_out(h_, m_.tok_emb, 0, token);
  const int64_t hd = c.head_dim();
  for (int64_t l = 0; l < c.n_layers; ++l) {
    const Layer& layer = m_.layers[static_cast<size_t>(l)];
    const int64_t cache_offset = l * c.n_kv_heads * c.max_len() * hd;
    kernels::GemvArgs qkv = normed_args(layer.wqkv, layer.attn_norm, q_);
    qkv.fusion.epilogue = kernels::GemvEpilogue::kRopeCache;
    kernels::RopeCacheOut& rope = qkv.fusion.rope;
    rope.pos = pos.data_ptr<int64_t>();
    rope.cos = m_.rope_cos.data_ptr<float>();
    rope.sin = m_.rope_sin.data_ptr<float>();
    rope.k_cache = static_cast<at::BFloat16*>(m_.k_cache.data_ptr()) + cache_offset;
    rope.v_cache = static_cast<at::BFloat16*>(m_.v_cache.data_ptr()) + cache_offset;
    rope.q_rows = c.n_heads * hd;
    rope.kv_rows = c.n_kv_heads * hd;
    rope.head_dim = hd;
    rope.max_len = c.max_len();
    kernels::launch_gemv(qkv, stream);
    kernels::AttentionArgs att;
    att.q = q_.data_ptr();
    att.k_cache = rope.k_cache;
    att.v_cache = rope.v_cache;
    att.pos = rope.pos;
    att.out = attn_.data_ptr();
    att.n_heads = c.n_heads;
    att.n_kv_heads = c.n_kv_heads;
    att.head_dim = hd;
    att.max_len = c.max_len();
    att.partials = attn_partials_.data_ptr<float>();
    att.counters = static_cast<unsigned*>(attn_counters_.data_ptr());
    kernels::launch_decode_attention(att, stream, programmatic_);
    add_to_h(layer.wo, attn_, /*second=*/false, stream);
    feed_forward(l, stream);
  }
  kernels::launch_gemv(normed_args(m_.output, m_.norm, logits_), stream);
  return logits_;
}

}  // namespace opbench::decode
#endif  // OPBENCH_HAVE_CUDA
