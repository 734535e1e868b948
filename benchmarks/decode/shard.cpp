// Tensor-parallel shards made block by block from a seed (shard.h).
#include "decode/shard.h"

#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>

#include <cmath>
#include <vector>

#include "opbench/check.h"

namespace opbench::decode {
namespace {

// What a block belongs to: a seed ingredient, so no two blocks share a generator stream.
enum class Part : uint64_t {
  kTokEmb = 1, kNorm, kOutput, kOutputScale, kAttnNorm, kFfnNorm, kQ, kK, kV, kQScale, kKScale, kVScale,
  kWo, kWoScale, kW1, kW3, kW1Scale, kW3Scale, kW2, kW2Scale
};

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Draws each block from the device's generator reseeded for that block.
class Blocks {
 public:
  Blocks(uint64_t seed, c10::ScalarType act, bool int8, c10::Device device)
      : seed_(seed), act_(act), int8_(int8), device_(device),
        gen_(at::globalContext().defaultGenerator(device).clone()) {}

  bool int8() const { return int8_; }

  // randn * scale in the activation dtype (norm weights, embeddings, float weights).
  at::Tensor normal(Part part, int64_t layer, int64_t block, at::IntArrayRef shape, double scale, double shift = 0) {
    at::Tensor t = at::randn(shape, reseeded(part, layer, block), options(act_)).mul_(scale);
    return shift != 0 ? t.add_(shift) : t;
  }

  // A weight block [rows, cols] of a layer whose whole fan-in is `fan_in`: make_model's distributions.
  at::Tensor weight(Part part, int64_t layer, int64_t block, int64_t rows, int64_t cols, int64_t fan_in) {
    if (!int8_) return normal(part, layer, block, {rows, cols}, 1.0 / std::sqrt(static_cast<double>(fan_in)));
    return at::randint(-127, 128, {rows, cols}, reseeded(part, layer, block), options(c10::kChar));
  }

  // int8 scales of `rows` output rows: (0.5..1.5) / (73.3 sqrt(fan_in)), in the activation dtype.
  at::Tensor scales(Part part, int64_t layer, int64_t block, int64_t rows, int64_t fan_in) {
    const double inv = 1.0 / (73.3 * std::sqrt(static_cast<double>(fan_in)));
    return (at::rand({rows}, reseeded(part, layer, block), options(c10::kFloat)) + 0.5).mul_(inv).to(act_);
  }

 private:
  at::TensorOptions options(c10::ScalarType dtype) const { return at::TensorOptions().device(device_).dtype(dtype); }
  at::Generator& reseeded(Part part, int64_t layer, int64_t block) {
    uint64_t s = splitmix64(seed_);
    for (uint64_t v : {static_cast<uint64_t>(part), static_cast<uint64_t>(layer + 1), static_cast<uint64_t>(block)})
      s = splitmix64(s ^ v);
    gen_.set_current_seed(s);
    return gen_;
  }
  uint64_t seed_;
  c10::ScalarType act_;
  bool int8_;
  c10::Device device_;
  at::Generator gen_;
};

struct Range {
  int64_t begin, end;
};
Range share(int64_t count, int64_t rank, int64_t tp) { return {rank * count / tp, (rank + 1) * count / tp}; }

// A column-parallel layer: the blocks `parts` x `ranges` stacked row-wise (rows_per_block each), with
// their int8 scales (the matching scale part).
Linear column_parallel(Blocks& b, int64_t layer, const std::vector<std::pair<Part, Part>>& parts,
                       const std::vector<Range>& ranges, int64_t rows_per_block, int64_t in) {
  std::vector<at::Tensor> w, scale;
  for (size_t i = 0; i < parts.size(); ++i) {
    for (int64_t k = ranges[i].begin; k < ranges[i].end; ++k) {
      w.push_back(b.weight(parts[i].first, layer, k, rows_per_block, in, in));
      if (b.int8()) scale.push_back(b.scales(parts[i].second, layer, k, rows_per_block, in));
    }
  }
  Linear l{at::cat(w, 0), at::Tensor()};
  if (b.int8()) l.scale = at::cat(scale, 0);
  return l;
}

// A row-parallel layer [out, ...]: the column blocks `range` (cols_per_block each) of a layer with
// fan-in `fan_in`; int8 scales whole.
Linear row_parallel(Blocks& b, int64_t layer, Part part, Part scale_part, Range range, int64_t out,
                    int64_t cols_per_block, int64_t fan_in) {
  std::vector<at::Tensor> w;
  for (int64_t k = range.begin; k < range.end; ++k) w.push_back(b.weight(part, layer, k, out, cols_per_block, fan_in));
  Linear l{at::cat(w, 1), at::Tensor()};
  if (b.int8()) l.scale = b.scales(scale_part, layer, 0, out, fan_in);
  return l;
}

Layer shard_layer(Blocks& b, const ModelConfig& whole, int64_t l, int64_t rank, int64_t tp) {
  const int64_t hd = whole.dim / whole.n_heads, dim = whole.dim, ffn_block = whole.ffn / kFfnBlocks;
  const Range q = share(whole.n_heads, rank, tp), kv = share(whole.n_kv_heads, rank, tp),
              f = share(kFfnBlocks, rank, tp);
  Layer layer;
  layer.attn_norm = b.normal(Part::kAttnNorm, l, 0, {dim}, 0.1, 1.0);
  layer.ffn_norm = b.normal(Part::kFfnNorm, l, 0, {dim}, 0.1, 1.0);
  layer.wqkv = column_parallel(b, l, {{Part::kQ, Part::kQScale}, {Part::kK, Part::kKScale}, {Part::kV, Part::kVScale}},
                               {q, kv, kv}, hd, dim);
  layer.wo = row_parallel(b, l, Part::kWo, Part::kWoScale, q, dim, hd, whole.n_heads * hd);
  layer.w13 = column_parallel(b, l, {{Part::kW1, Part::kW1Scale}, {Part::kW3, Part::kW3Scale}}, {f, f}, ffn_block, dim);
  layer.w2 = row_parallel(b, l, Part::kW2, Part::kW2Scale, f, dim, ffn_block, whole.ffn);
  return layer;
}

}  // namespace

ModelConfig shard_config(const ModelConfig& whole, int64_t tp) {
  auto refuse = [&](const std::string& why) {
    throw Error("model " + whole.name + " does not split " + std::to_string(tp) + " ways: " + why);
  };
  if (whole.moe()) refuse("tensor parallelism here splits dense models only");
  if (whole.tp != 1) refuse("it is a shard already");
  if (tp < 1 || whole.n_heads % tp != 0 || whole.n_kv_heads % tp != 0 || kFfnBlocks % tp != 0)
    refuse("tp must divide the heads, the kv heads and " + std::to_string(kFfnBlocks));
  if (whole.ffn % kFfnBlocks != 0 || whole.dim % whole.n_heads != 0 || whole.n_heads % whole.n_kv_heads != 0)
    refuse("ffn, dim or the heads do not divide");
  ModelConfig c = whole;
  c.shard_head_dim = whole.dim / whole.n_heads;
  c.tp = tp;
  c.n_heads = whole.n_heads / tp;
  c.n_kv_heads = whole.n_kv_heads / tp;
  c.ffn = whole.ffn / tp;
  return c;
}

Model make_shard(const ModelConfig& whole, int64_t rank, int64_t tp, uint64_t seed, c10::ScalarType act, bool int8,
                 c10::Device device) {
  if (rank < 0 || rank >= tp) throw Error("rank " + std::to_string(rank) + " is not below tp " + std::to_string(tp));
  Model m;
  m.cfg = shard_config(whole, tp);
  m.act_dtype = act;
  m.int8 = int8;
  Blocks b(seed, act, int8, device);
  m.tok_emb = b.normal(Part::kTokEmb, -1, 0, {whole.vocab, whole.dim}, 1.0);
  m.norm = b.normal(Part::kNorm, -1, 0, {whole.dim}, 0.1, 1.0);
  m.output.w = b.weight(Part::kOutput, -1, 0, whole.vocab, whole.dim, whole.dim);
  if (int8) m.output.scale = b.scales(Part::kOutputScale, -1, 0, whole.vocab, whole.dim);
  for (int64_t l = 0; l < whole.n_layers; ++l) m.layers.push_back(shard_layer(b, whole, l, rank, tp));
  make_cache_and_rope(m, device);
  return m;
}

}  // namespace opbench::decode
