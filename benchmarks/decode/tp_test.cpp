// Tensor-parallel decode (shard.h, tp_decode.cpp) without a launch:
//  (a) every shard is what gpt-fast's tp.py's split makes of the whole model (written here from tp.py's
//      rules: q, k and v split one by one, w1 and w3 one by one, wo and w2 by columns, int8 scales with
//      the rows of column-parallel layers and whole for row-parallel ones), bf16 and int8;
//  (b) the TP forward -- one thread per rank, an all-reduce between the threads -- gives the whole
//      model's logits (fp32 on the CPU; the own-kernel step on a GPU);
//  (c) the byte counts per GPU, the shard config, and the families' cases (none in a world of one).
#include <ATen/ATen.h>
#include <c10/core/DeviceGuard.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "decode/model.h"
#include "decode/shard.h"
#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/family.h"

#ifdef OPBENCH_HAVE_CUDA
#include "decode/own_step.h"
#include "tests/cpp/rel_rms.h"
#endif

namespace opbench::decode {
namespace {

constexpr uint64_t kSeed = 7;

at::Tensor part(const at::Tensor& x, int64_t dim, int64_t rank, int64_t tp) { return x.tensor_split(tp, dim)[rank]; }

// tp.py's shard_qkv: q, k and v each split, then concatenated.
at::Tensor part_qkv(const at::Tensor& x, const ModelConfig& c, int64_t rank, int64_t tp) {
  const int64_t hd = c.dim / c.n_heads;
  std::vector<at::Tensor> qkv = x.split_with_sizes({c.n_heads * hd, c.n_kv_heads * hd, c.n_kv_heads * hd}, 0);
  return at::cat({part(qkv[0], 0, rank, tp), part(qkv[1], 0, rank, tp), part(qkv[2], 0, rank, tp)}, 0);
}

// w13 = [w1 | w3]: tp.py shards w1 and w3 colwise one by one.
at::Tensor part_w13(const at::Tensor& x, int64_t ffn, int64_t rank, int64_t tp) {
  return at::cat({part(x.narrow(0, 0, ffn), 0, rank, tp), part(x.narrow(0, ffn, ffn), 0, rank, tp)}, 0);
}

void expect_equal(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_TRUE(at::equal(got, want)) << what;
}

TEST(TensorParallel, ShardsAreTpPysSplitOfTheWholeModel) {   // (a)
  const ModelConfig& c = model_config("tiny-gqa");
  for (bool int8 : {false, true}) {
    Model whole = make_shard(c, 0, 1, kSeed, at::kBFloat16, int8, at::kCPU);
    for (int64_t rank : {0, 1}) {
      Model s = make_shard(c, rank, 2, kSeed, at::kBFloat16, int8, at::kCPU);
      const std::string at_rank = (int8 ? "int8 rank " : "bf16 rank ") + std::to_string(rank);
      expect_equal(s.tok_emb, whole.tok_emb, "tok_emb " + at_rank);
      expect_equal(s.output.w, whole.output.w, "output " + at_rank);
      expect_equal(s.norm, whole.norm, "norm " + at_rank);
      for (size_t l = 0; l < whole.layers.size(); ++l) {
        const Layer &w = whole.layers[l], &got = s.layers[l];
        const std::string where = " layer " + std::to_string(l) + " " + at_rank;
        expect_equal(got.attn_norm, w.attn_norm, "attn_norm" + where);
        expect_equal(got.wqkv.w, part_qkv(w.wqkv.w, c, rank, 2), "wqkv" + where);
        expect_equal(got.wo.w, part(w.wo.w, 1, rank, 2), "wo" + where);
        expect_equal(got.w13.w, part_w13(w.w13.w, c.ffn, rank, 2), "w13" + where);
        expect_equal(got.w2.w, part(w.w2.w, 1, rank, 2), "w2" + where);
        if (!int8) continue;
        expect_equal(got.wqkv.scale, part_qkv(w.wqkv.scale, c, rank, 2), "wqkv scales" + where);
        expect_equal(got.w13.scale, part_w13(w.w13.scale, c.ffn, rank, 2), "w13 scales" + where);
        expect_equal(got.wo.scale, w.wo.scale, "wo scales (whole)" + where);
        expect_equal(got.w2.scale, w.w2.scale, "w2 scales (whole)" + where);
      }
      EXPECT_EQ(s.k_cache.sizes(), (std::vector<int64_t>{c.n_layers, 1, c.max_len(), c.dim / c.n_heads})) << at_rank;
    }
  }
}

// A sum over threads, in place: each caller waits for the others, then takes the sum (added in rank order).
class ThreadAllReduce {
 public:
  explicit ThreadAllReduce(int ranks) : parts_(static_cast<size_t>(ranks)) {}
  void operator()(int rank, at::Tensor& t) {
    std::unique_lock<std::mutex> lock(mu_);
    const int64_t round = round_;
    parts_[static_cast<size_t>(rank)] = t.clone();
    if (++arrived_ < static_cast<int>(parts_.size())) {
      done_.wait(lock, [&] { return round_ != round; });
    } else {
      sum_ = parts_[0].clone();
      for (size_t i = 1; i < parts_.size(); ++i) sum_.add_(parts_[i]);
      arrived_ = 0;
      ++round_;
      done_.notify_all();
    }
    t.copy_(sum_);   // sum_ changes only once every rank has arrived again
  }

 private:
  std::mutex mu_;
  std::condition_variable done_;
  std::vector<at::Tensor> parts_;
  at::Tensor sum_;
  int arrived_ = 0;
  int64_t round_ = 0;
};

at::Tensor longs(int64_t value, c10::Device device) {
  return at::tensor(std::vector<int64_t>{value}, at::TensorOptions().device(device).dtype(at::kLong));
}

using test_util::rel_rms;

using StepOf = std::function<at::Tensor(Model&, const at::Tensor&, const at::Tensor&)>;

// The worst relative RMS over positions 0..3 between the TP step (one thread per rank) and the whole model.
double tp_vs_whole(const ModelConfig& c, int64_t tp, at::ScalarType act, bool int8, c10::Device device,
                   const StepOf& step) {
  Model whole = make_shard(c, 0, 1, kSeed, act, int8, device);
  std::vector<Model> shards;
  ThreadAllReduce reduce(static_cast<int>(tp));
  for (int64_t r = 0; r < tp; ++r) {
    shards.push_back(make_shard(c, r, tp, kSeed, act, int8, device));
    shards.back().all_reduce = [&reduce, r](const at::Tensor& partial, const at::Tensor& sum) {
      at::Tensor t = partial;
      reduce(static_cast<int>(r), t);
      if (!sum.is_same(partial)) sum.copy_(t);
    };
  }
  std::vector<at::Tensor> logits(static_cast<size_t>(tp));
  double worst = 0;
  for (int64_t p = 0; p < 4; ++p) {
    at::Tensor token = longs((13 * p + 5) % c.vocab, device), pos = longs(p, device);
    std::vector<std::thread> ranks;
    for (int64_t r = 0; r < tp; ++r)
      ranks.emplace_back([&, r] {
        Model& shard = shards[static_cast<size_t>(r)];
        c10::DeviceGuard on_its_device(shard.tok_emb.device());   // a new thread starts on device 0
        logits[static_cast<size_t>(r)] = step(shard, token, pos).clone();
      });
    for (auto& t : ranks) t.join();
    at::Tensor want = forward_aten(whole, token, pos);
    for (const at::Tensor& got : logits) worst = std::max(worst, rel_rms(got, want));
  }
  return worst;
}

at::Tensor aten_step(Model& m, const at::Tensor& token, const at::Tensor& pos) { return forward_aten(m, token, pos); }

TEST(TensorParallel, TpForwardGivesTheWholeModelsLogitsOnCpu) {   // (b)
  for (bool int8 : {false, true}) {
    EXPECT_LT(tp_vs_whole(model_config("tiny-gqa"), 2, at::kFloat, int8, at::kCPU, aten_step), 1e-5) << int8;
    EXPECT_LT(tp_vs_whole(model_config("tiny"), 4, at::kFloat, int8, at::kCPU, aten_step), 1e-5) << int8;
  }
}

#ifdef OPBENCH_HAVE_CUDA
TEST(TensorParallel, OwnKernelTpStepGivesTheWholeModelsLogitsOnGpu) {   // (b), own kernels
  if (!current_device().is_gpu) GTEST_SKIP() << "no CUDA device";
  auto own = [](Model& m, const at::Tensor& token, const at::Tensor& pos) {
    OwnStep step(m);   // a step per call: its buffers are this thread's
    return step.forward(token, pos).clone();
  };
  for (bool int8 : {false, true})
    EXPECT_LT(tp_vs_whole(model_config("tiny-gqa"), 2, at::kBFloat16, int8, at::kCUDA, own), 0.05) << int8;   // kLogitsRelRms
}
#endif

TEST(TensorParallel, ShardConfigAndBytesPerGpu) {   // (c)
  const ModelConfig& b70 = model_config("70b");
  const ModelConfig s = shard_config(b70, 4);
  EXPECT_EQ(s.n_heads, 16);
  EXPECT_EQ(s.n_kv_heads, 2);
  EXPECT_EQ(s.ffn, 7168);
  EXPECT_EQ(s.head_dim(), 128);
  EXPECT_EQ(s.qkv_rows(), (16 + 2 * 2) * 128);
  // The four GPUs together stream the whole model once plus three more copies of what is replicated:
  // the norms, the output head (and its scales) and, int8, wo's and w2's scales.
  for (bool int8 : {false, true}) {
    const double a = 2, layers = static_cast<double>(b70.n_layers), dim = static_cast<double>(b70.dim),
                 vocab = static_cast<double>(b70.vocab);
    const double replicated = layers * 2 * dim * a * (int8 ? 2 : 1) + dim * a + vocab * dim * (int8 ? 1 : a) +
                              (int8 ? vocab * a : 0);
    EXPECT_NEAR(4 * streamed_bytes_per_token(s, int8, at::kBFloat16),
                streamed_bytes_per_token(b70, int8, at::kBFloat16) + 3 * replicated, 1.0) << int8;
  }
  EXPECT_NEAR(streamed_bytes_per_token(b70, false, at::kBFloat16) / 1e9, 137.4, 0.1);
  EXPECT_THROW(shard_config(b70, 3), Error);
  EXPECT_THROW(shard_config(model_config("tiny-moe"), 2), Error);
}

TEST(TensorParallel, FamiliesHaveNoCaseInAWorldOfOne) {   // (c)
  DeviceInfo gpu;
  gpu.is_gpu = true;
  for (const char* name : {"Llama2TP", "Llama2_70bTP"}) {
    const Family& f = family_named(name);
    EXPECT_TRUE(f.every_rank) << name;
    EXPECT_EQ(f.min_world_size, 2) << name;
    EXPECT_TRUE(cases_of(f, gpu).empty()) << name;
    EXPECT_TRUE(cases_of(f, DeviceInfo{}).empty()) << name;
  }
  const Family& llama = family_named("Llama2TP");
  EXPECT_EQ(llama.name_shape({0, 32, 2}), "7b-32L-tp2");
  EXPECT_EQ(llama.name_shape(llama.cpu_shapes.at(0)), "tiny-gqa-2L-tp2");
  EXPECT_EQ(family_named("Llama2_70bTP").name_shape({4, 80, 4}), "70b-80L-tp4");
  const Work w = llama.work(at::kBFloat16, {0, 32, 2});   // one GPU's bytes: half the 7B's split weights
  EXPECT_NEAR(w.bytes_read / 200 / 1e9, (13.214 - 0.262) / 2 + 0.262, 0.01);
}

}  // namespace
}  // namespace opbench::decode
