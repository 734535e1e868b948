// Tensor-parallel shards of a dense decode model (model.h), split the way gpt-fast's tp.py splits one.
// Rank r of tp holds:
//   wqkv  column-parallel: its q heads [r nh/tp, (r+1) nh/tp) and its k and v heads [r nkv/tp, (r+1)
//         nkv/tp), rows [q_r | k_r | v_r] (tp.py's shard_qkv); int8 scales split with the rows
//   w13   column-parallel: rows [w1_r | w3_r], w1_r = rows [r ffn/tp, (r+1) ffn/tp) of w1, likewise w3
//         (tp.py shards w1 and w3 colwise one by one); int8 scales split with the rows
//   wo    row-parallel: the columns of its q heads; w2 row-parallel: the columns of its FFN rows; int8
//         scales per output row, whole on every rank
//   norms, token embedding, output head: whole on every rank; KV cache: its kv heads only.
// Its config (shard_config) counts the rank's heads, kv heads and FFN rows; head_dim stays the whole
// model's. The step sums wo's output and w2's output over the ranks (Model::all_reduce) before each
// residual add: two all-reduces of [1, dim] per layer.
//
// Seeding (no whole model is ever made: Llama-2-70B bf16 is 138 GB): every weight is assembled from
// blocks, each drawn from a generator of the model's device seeded with a mix (splitmix64) of (seed,
// tensor, layer, block): one block per q, k or v head of wqkv (its rows; their int8 scales another),
// per q head of wo (its columns), per kFfnBlocks-th of the FFN rows of w1 and of w3 and of w2's columns,
// and one per replicated tensor and per row-parallel scale vector. A block's values depend on those four
// and its shape only, so shard (rank, tp) is the concatenation of its blocks, made without the others,
// and the whole model (rank 0 of 1) holds every block: make_shard(cfg, r, tp) is exactly tp.py's split
// of make_shard(cfg, 0, 1). Replicated tensors are equal on every rank whose device is the same GPU
// model (a CUDA generator's stream depends on the launch geometry, that is on the SM count).
// Distributions: make_model's (model.h), fan-in the whole layer's.
#pragma once
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>

#include "decode/model.h"

namespace opbench::decode {

// FFN blocks of the seeding: tp must divide it (tp 1, 2, 4 or 8).
constexpr int64_t kFfnBlocks = 8;

// Rank's config of `whole` split `tp` ways. Throws opbench::Error when it does not split: a mixture of
// experts, or tp not dividing n_heads, n_kv_heads and kFfnBlocks, or kFfnBlocks not dividing ffn.
ModelConfig shard_config(const ModelConfig& whole, int64_t tp);

// Rank `rank`'s shard of `whole` on `device` (its all_reduce left empty: the caller's communicator sets
// it). tp = 1: the whole model, seeded block by block.
Model make_shard(const ModelConfig& whole, int64_t rank, int64_t tp, uint64_t seed, c10::ScalarType act_dtype,
                 bool int8, c10::Device device);

}  // namespace opbench::decode
