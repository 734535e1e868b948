// The decode models' configurations, weights, byte counts and ATen forward (model.h).
#include "decode/model.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/outer.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/topk.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>

#include <cmath>
#include <map>

#include "opbench/check.h"

namespace opbench::decode {
namespace {

at::TensorOptions on(c10::Device device, c10::ScalarType dtype) { return at::TensorOptions().device(device).dtype(dtype); }

c10::ScalarType opmath(c10::ScalarType dtype) { return dtype == c10::kDouble ? c10::kDouble : c10::kFloat; }

// `experts` = 0: a plain [out, in] layer; else [experts, out, in] with scales [experts, out].
Linear make_linear(int64_t experts, int64_t out, int64_t in, c10::ScalarType act, WeightQuant quant,
                   c10::Device device) {
  std::vector<int64_t> shape = {out, in}, scale_shape = {out};
  if (experts > 0) {
    shape.insert(shape.begin(), experts);
    scale_shape.insert(scale_shape.begin(), experts);
  }
  const double inv_sqrt_in = 1.0 / std::sqrt(static_cast<double>(in));
  Linear l;
  if (quant == WeightQuant::kInt4) {   // rms((q - 8) s + z) ~ 4.8 * the mean scale: O(1) activations
    kernels::Int4Weights q = kernels::random_int4(shape, inv_sqrt_in / 4.8, device);
    l.w = q.packed;
    l.qparams = q.qparams;
    if (act == c10::kBFloat16) l.aten = kernels::aten_int4_layout(q);
  } else if (quant == WeightQuant::kInt8) {   // uniform [-127, 127] has rms 73.3: scales of ~1 / (73 sqrt(in)) keep activations O(1)
    l.w = at::randint(-127, 128, shape, on(device, c10::kChar));
    l.scale = (at::rand(scale_shape, on(device, c10::kFloat)) + 0.5).mul_(inv_sqrt_in / 73.3).to(act);
  } else {
    l.w = at::randn(shape, on(device, act)).mul_(inv_sqrt_in);
  }
  return l;
}

at::Tensor norm_weight(int64_t dim, c10::ScalarType act, c10::Device device) {
  return at::randn({dim}, on(device, act)).mul_(0.1).add_(1.0);
}

// int4 as gpt-fast's WeightOnlyInt4Linear (PyTorch's int4 matmul) for bf16 activations, else on the
// dequantized weights.
at::Tensor linear(const Linear& l, const at::Tensor& x) {   // x [T, in] -> [T, out]
  if (l.int4() && l.aten.packed.defined() && x.scalar_type() == c10::kBFloat16) return kernels::aten_int4_mm(x, l.aten);
  if (l.int4()) return at::matmul(x, kernels::dequantize_int4({l.w, l.qparams}, x.scalar_type()).t());
  if (!l.int8()) return at::matmul(x, l.w.t());
  return at::matmul(x, l.w.to(x.scalar_type()).t()) * l.scale;
}

// gpt-fast's rms norm: statistics in fp32, normalized value rounded to the dtype, times the weight.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w, double eps) {
  at::Tensor xf = x.to(opmath(x.scalar_type()));
  return (xf * at::rsqrt(xf.square().mean({-1}, true) + eps)).to(x.scalar_type()) * w;
}

// Rotates pairs (2i, 2i+1) of x [T, heads, head_dim] by the angles of each token's position.
at::Tensor rope(const at::Tensor& x, const at::Tensor& cos_t, const at::Tensor& sin_t) {
  const int64_t t = x.size(0), half = x.size(2) / 2;
  at::Tensor xf = x.to(opmath(x.scalar_type())).view({t, x.size(1), half, 2});
  at::Tensor x0 = xf.select(-1, 0), x1 = xf.select(-1, 1);
  at::Tensor c = cos_t.to(xf.scalar_type()).view({t, 1, half}), s = sin_t.to(xf.scalar_type()).view({t, 1, half});
  return at::stack({x0 * c - x1 * s, x1 * c + x0 * s}, -1).flatten(2).to(x.scalar_type());
}

at::Tensor attention(Model& m, int64_t layer, const at::Tensor& qkv, const at::Tensor& input_pos,
                     const at::Tensor& cos_t, const at::Tensor& sin_t, const at::Tensor& mask) {
  const ModelConfig& c = m.cfg;
  const int64_t t = qkv.size(0), hd = c.head_dim();
  at::Tensor q = rope(qkv.narrow(1, 0, c.n_heads * hd).view({t, c.n_heads, hd}), cos_t, sin_t);
  at::Tensor k = rope(qkv.narrow(1, c.n_heads * hd, c.n_kv_heads * hd).view({t, c.n_kv_heads, hd}), cos_t, sin_t);
  at::Tensor v = qkv.narrow(1, (c.n_heads + c.n_kv_heads) * hd, c.n_kv_heads * hd).view({t, c.n_kv_heads, hd});
  at::Tensor kc = m.k_cache.select(0, layer), vc = m.v_cache.select(0, layer);   // [kv_heads, max_len, hd]
  kc.index_copy_(1, input_pos, k.transpose(0, 1));
  vc.index_copy_(1, input_pos, v.transpose(0, 1));
  at::Tensor out = at::scaled_dot_product_attention(q.transpose(0, 1).unsqueeze(0), kc.unsqueeze(0), vc.unsqueeze(0),
                                                    mask, 0.0, false, std::nullopt, c.n_kv_heads != c.n_heads);
  return out.squeeze(0).transpose(0, 1).reshape({t, c.n_heads * hd});
}

// y = x . W[e]^T (* scale[e]) for rows of x paired with experts `flat_idx` (both [n, ...]).
at::Tensor expert_linear(const Linear& l, const at::Tensor& x, const at::Tensor& flat_idx) {
  at::Tensor w = l.w.index_select(0, flat_idx).to(x.scalar_type());   // [n, out, in]
  at::Tensor y = at::bmm(w, x.unsqueeze(2)).squeeze(2);
  return l.int8() ? y * l.scale.index_select(0, flat_idx) : y;
}

at::Tensor feed_forward(const Model& m, int64_t l, const at::Tensor& xn, const Routes* forced) {
  const Layer& layer = m.layers[static_cast<size_t>(l)];
  const int64_t ffn = m.cfg.ffn;
  auto swiglu = [ffn](const at::Tensor& h13) { return at::silu(h13.narrow(1, 0, ffn)) * h13.narrow(1, ffn, ffn); };
  if (!m.cfg.moe()) return linear(layer.w2, swiglu(linear(layer.w13, xn)));
  const int64_t t = xn.size(0), k = m.cfg.top_k;
  at::Tensor idx, weights;
  if (forced) {
    idx = forced->idx.select(0, l);
    weights = forced->weights.select(0, l);
  } else {
    route_aten(layer.gate, xn, k, idx, weights);
  }
  at::Tensor flat = idx.flatten();
  at::Tensor x_rep = xn.unsqueeze(1).expand({t, k, xn.size(1)}).reshape({t * k, xn.size(1)});
  at::Tensor y = expert_linear(layer.w2, swiglu(expert_linear(layer.w13, x_rep, flat)), flat);   // [t k, dim]
  return (y.view({t, k, -1}) * weights.to(xn.scalar_type()).unsqueeze(2)).sum(1);
}

}  // namespace

const ModelConfig& model_config(const std::string& name) {
  static const std::map<std::string, ModelConfig> configs = [] {
    std::map<std::string, ModelConfig> c;
    c["7b"] = {.name = "7b", .dim = 4096, .n_layers = 32, .n_heads = 32, .n_kv_heads = 32, .ffn = 11008, .vocab = 32000};
    c["8x7b"] = {.name = "8x7b", .dim = 4096, .n_layers = 32, .n_heads = 32, .n_kv_heads = 8, .ffn = 14336,
                 .vocab = 32000, .n_experts = 8, .top_k = 2, .rope_base = 1e6};
    c["70b"] = {.name = "70b", .dim = 8192, .n_layers = 80, .n_heads = 64, .n_kv_heads = 8, .ffn = 28672, .vocab = 32000};
    c["8b"] = {.name = "8b", .dim = 4096, .n_layers = 32, .n_heads = 32, .n_kv_heads = 8, .ffn = 14336,
               .vocab = 128256, .rope_base = 5e5};   // Llama-3-8B
    c["tiny"] = {.name = "tiny", .dim = 256, .n_layers = 2, .n_heads = 4, .n_kv_heads = 4, .ffn = 512, .vocab = 512,
                 .new_tokens = 16};
    c["tiny-gqa"] = {.name = "tiny-gqa", .dim = 256, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .ffn = 512,
                     .vocab = 512, .new_tokens = 16};
    c["tiny-moe"] = {.name = "tiny-moe", .dim = 256, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .ffn = 384,
                     .vocab = 512, .n_experts = 8, .top_k = 2, .rope_base = 1e6, .new_tokens = 16};
    return c;
  }();
  auto it = configs.find(name);
  if (it == configs.end()) throw Error("no model configuration named " + name);
  return it->second;
}

Model make_model(const ModelConfig& cfg, c10::ScalarType act, WeightQuant quant, c10::Device device) {
  if (cfg.tp != 1) throw Error("model " + cfg.name + ": make_model makes whole models; make_shard makes shards");
  if (quant == WeightQuant::kInt4 && cfg.moe()) throw Error("model " + cfg.name + ": int4 weights for dense models only");
  if (cfg.dim % cfg.n_heads != 0 || cfg.n_heads % cfg.n_kv_heads != 0 || cfg.head_dim() % 2 != 0)
    throw Error("model " + cfg.name + ": dim, heads and kv heads do not divide");
  Model m;
  m.cfg = cfg;
  m.act_dtype = act;
  m.int8 = quant == WeightQuant::kInt8;
  m.int4 = quant == WeightQuant::kInt4;
  const int64_t e = cfg.n_experts, hd = cfg.head_dim();
  m.tok_emb = at::randn({cfg.vocab, cfg.dim}, on(device, act));
  m.norm = norm_weight(cfg.dim, act, device);
  m.output = make_linear(0, cfg.vocab, cfg.dim, act, quant, device);
  for (int64_t l = 0; l < cfg.n_layers; ++l) {
    Layer layer;
    layer.attn_norm = norm_weight(cfg.dim, act, device);
    layer.ffn_norm = norm_weight(cfg.dim, act, device);
    layer.wqkv = make_linear(0, cfg.qkv_rows(), cfg.dim, act, quant, device);
    layer.wo = make_linear(0, cfg.dim, cfg.n_heads * hd, act, quant, device);
    layer.w13 = make_linear(e, 2 * cfg.ffn, cfg.dim, act, quant, device);
    layer.w2 = make_linear(e, cfg.dim, cfg.ffn, act, quant, device);
    if (cfg.moe()) layer.gate = make_linear(0, e, cfg.dim, act, quant, device);
    m.layers.push_back(std::move(layer));
  }
  make_cache_and_rope(m, device);
  return m;
}

void make_cache_and_rope(Model& m, c10::Device device) {
  const ModelConfig& cfg = m.cfg;
  const int64_t hd = cfg.head_dim();
  m.k_cache = at::zeros({cfg.n_layers, cfg.n_kv_heads, cfg.max_len(), hd}, on(device, m.act_dtype));
  m.v_cache = at::zeros_like(m.k_cache);
  // angle(p, i) = p / base^(2i / head_dim), in float64 then rounded to fp32
  at::Tensor inv_freq = at::pow(cfg.rope_base, at::arange(0, hd, 2, on(device, c10::kDouble)) / static_cast<double>(hd)).reciprocal();
  at::Tensor angles = at::outer(at::arange(cfg.max_len(), on(device, c10::kDouble)), inv_freq);
  m.rope_cos = at::cos(angles).to(c10::kFloat);
  m.rope_sin = at::sin(angles).to(c10::kFloat);
}

Model dequantized(const Model& model) {
  Model m = model;
  auto dequantize = [&](Linear& l) {
    if (l.int4()) {
      l.w = kernels::dequantize_int4({l.w, l.qparams}, model.act_dtype);
      l.qparams = at::Tensor();
      l.aten = {};
      return;
    }
    if (!l.int8()) return;
    l.w = (l.w.to(c10::kFloat) * l.scale.to(c10::kFloat).unsqueeze(-1)).to(model.act_dtype);
    l.scale = at::Tensor();
  };
  dequantize(m.output);
  for (auto& layer : m.layers)
    for (Linear* l : {&layer.wqkv, &layer.wo, &layer.w13, &layer.w2, &layer.gate}) dequantize(*l);
  m.int8 = false;
  m.int4 = false;
  m.k_cache = at::zeros_like(model.k_cache);
  m.v_cache = at::zeros_like(model.v_cache);
  return m;
}

namespace {
double linear_bytes(int64_t out, int64_t in, WeightQuant quant, double act_bytes) {
  if (quant == WeightQuant::kInt4) return kernels::int4_weight_bytes(out, in);
  const bool int8 = quant == WeightQuant::kInt8;
  return static_cast<double>(out) * static_cast<double>(in) * (int8 ? 1.0 : act_bytes) + (int8 ? out * act_bytes : 0.0);
}
}  // namespace

WeightQuant quant_of_dtype(c10::ScalarType dtype) {
  return dtype == c10::kChar ? WeightQuant::kInt8 : dtype == c10::ScalarType::Int4 ? WeightQuant::kInt4 : WeightQuant::kNone;
}

double streamed_bytes_per_token(const ModelConfig& c, WeightQuant quant, c10::ScalarType act) {
  const double a = static_cast<double>(c10::elementSize(act));
  double ffn = linear_bytes(2 * c.ffn, c.dim, quant, a) + linear_bytes(c.dim, c.ffn, quant, a);
  if (c.moe()) ffn = linear_bytes(c.n_experts, c.dim, quant, a) + static_cast<double>(c.top_k) * ffn;
  const double layer =
      linear_bytes(c.qkv_rows(), c.dim, quant, a) + linear_bytes(c.dim, c.n_heads * c.head_dim(), quant, a) + ffn;
  return static_cast<double>(c.n_layers) * layer + linear_bytes(c.vocab, c.dim, quant, a) +
         norm_bytes_per_token(c, act);
}

double norm_bytes_per_token(const ModelConfig& c, c10::ScalarType act) {
  const double a = static_cast<double>(c10::elementSize(act));
  return static_cast<double>(2 * c.n_layers + 1) * static_cast<double>(c.dim) * a;
}

namespace {
double kv_cache_bytes(const ModelConfig& c, c10::ScalarType act) {
  return 2.0 * static_cast<double>(c.n_layers * c.n_kv_heads * c.max_len() * c.head_dim()) * c10::elementSize(act);
}
}  // namespace

double gpt_fast_model_bytes(const ModelConfig& c, WeightQuant quant, c10::ScalarType act) {
  return streamed_bytes_per_token(c, quant, act) + kv_cache_bytes(c, act);
}

double resident_bytes(const ModelConfig& c, WeightQuant quant, c10::ScalarType act) {
  ModelConfig all = c;
  all.top_k = c.n_experts;   // every expert in memory
  return streamed_bytes_per_token(all, quant, act) + static_cast<double>(c.vocab * c.dim) * c10::elementSize(act) +
         kv_cache_bytes(c, act);
}

void route_aten(const Linear& gate, const at::Tensor& x_normed, int64_t top_k, at::Tensor& idx, at::Tensor& weights) {
  at::Tensor probs = at::softmax(linear(gate, x_normed).to(opmath(x_normed.scalar_type())), -1);
  auto [values, indices] = at::topk(probs, top_k, -1);
  weights = values / values.sum({-1}, true);
  idx = indices;
}

at::Tensor forward_aten(Model& m, const at::Tensor& tokens, const at::Tensor& input_pos, const Routes* forced) {
  const auto device = m.tok_emb.device();
  at::Tensor mask = at::arange(m.cfg.max_len(), on(device, c10::kLong)).unsqueeze(0) <= input_pos.unsqueeze(1);
  at::Tensor cos_t = m.rope_cos.index_select(0, input_pos), sin_t = m.rope_sin.index_select(0, input_pos);
  at::Tensor h = m.tok_emb.index_select(0, tokens);   // [T, dim]
  for (int64_t l = 0; l < m.cfg.n_layers; ++l) {
    const Layer& layer = m.layers[static_cast<size_t>(l)];
    at::Tensor xn = rms_norm(h, layer.attn_norm, m.cfg.norm_eps);
    at::Tensor attn_out = linear(layer.wo, attention(m, l, linear(layer.wqkv, xn), input_pos, cos_t, sin_t, mask));
    if (m.all_reduce) m.all_reduce(attn_out, attn_out);
    h = h + attn_out;
    at::Tensor ffn_out = feed_forward(m, l, rms_norm(h, layer.ffn_norm, m.cfg.norm_eps), forced);
    if (m.all_reduce) m.all_reduce(ffn_out, ffn_out);
    h = h + ffn_out;
  }
  return linear(m.output, rms_norm(h, m.norm, m.cfg.norm_eps));
}

}  // namespace opbench::decode
