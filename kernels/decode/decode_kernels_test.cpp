// The decode step's small kernels (decode_kernels.h) on the GPU against their float64 references
// (decode_reference.h): attention at every length (one chunk of positions and several, each launch
// twice), the next token past the prompt and within it (ties, misaligned logits, odd vocabularies),
// the top-2 route, and the weighted residual add. Skips without a CUDA device.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "opbench/device.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include "kernels/decode/decode_kernels.h"
#include "kernels/decode/decode_reference.h"
#include "tests/cpp/rel_rms.h"

namespace opbench::kernels {
namespace {

using test_util::rel_rms;

at::Tensor longs(std::vector<int64_t> values) {
  return at::tensor(values, at::TensorOptions().device(at::kCUDA).dtype(at::kLong));
}

class DecodeKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!current_device().is_gpu) GTEST_SKIP() << "no CUDA device";
    at::manual_seed(0);
  }
  static cudaStream_t stream() { return c10::cuda::getCurrentCUDAStream().stream(); }
};

TEST_F(DecodeKernels, Top2RoutePicksTheTwoMostProbableExperts) {
  auto opts = at::TensorOptions().device(at::kCUDA);
  at::Tensor idx = at::empty({2}, opts.dtype(at::kLong)), weights = at::empty({2}, opts.dtype(at::kFloat));
  for (int trial = 0; trial < 64; ++trial) {
    at::Tensor logits = (at::randn({8}, opts.dtype(at::kFloat)) * 3).to(at::kBFloat16);
    launch_top2_route(logits.data_ptr(), 8, idx.data_ptr<int64_t>(), weights.data_ptr<float>(), stream());
    const Top2 want = top2_route_reference(logits);
    if (logits[want.idx[0]].item<float>() == logits[want.idx[1]].item<float>()) continue;   // a tie: either order
    EXPECT_TRUE(at::equal(idx.cpu(), want.idx.cpu())) << "trial " << trial;
    EXPECT_LT((weights.to(at::kDouble) - want.weights).abs().max().item<double>(), 1e-5);
  }
}

// The per-head counters must be back at 0 after a launch, or the second would combine too early or never.
TEST_F(DecodeKernels, AttentionMatchesTheReferenceAtEveryLength) {
  auto opts = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  const int64_t heads = 8, kv_heads = 2;
  for (int64_t hd : {64, 128})
    for (int64_t max_len : {40, 206}) {
      at::Tensor q = at::randn({heads * hd}, opts), k = at::randn({kv_heads, max_len, hd}, opts),
                 v = at::randn({kv_heads, max_len, hd}, opts), out = at::empty({heads * hd}, opts);
      at::Tensor partials = at::full({attention_partials_floats(heads, hd, max_len)}, NAN, opts.dtype(at::kFloat));
      at::Tensor counters = at::zeros({heads}, opts.dtype(at::kInt));
      for (int64_t pos : {int64_t{0}, int64_t{1}, int64_t{17}, int64_t{32}, max_len / 2 + 3, max_len - 1}) {
        at::Tensor p = longs({pos});
        AttentionArgs a{q.data_ptr(), k.data_ptr(), v.data_ptr(), p.data_ptr<int64_t>(), out.data_ptr(),
                        heads, kv_heads, hd, max_len, partials.data_ptr<float>(),
                        static_cast<unsigned*>(counters.data_ptr())};
        const at::Tensor want = attention_reference(q, k, v, pos, heads);
        for (int launch = 0; launch < 2; ++launch) {
          out.fill_(0);
          launch_decode_attention(a, stream());
          EXPECT_LT(rel_rms(out, want), 0.01) << "head_dim " << hd << " max_len " << max_len << " pos " << pos;
        }
        EXPECT_EQ(counters.count_nonzero().item<int64_t>(), 0);
      }
    }
}

// Ties at the maximum (the lowest index wins), past the prompt, and the prompt's own token while it
// lasts; aligned and misaligned logits, a vocabulary not a multiple of 8.
TEST_F(DecodeKernels, NextTokenPicksArgmaxAfterThePrompt) {
  auto opts = at::TensorOptions().device(at::kCUDA);
  const int64_t prompt_len = 6;
  for (int64_t vocab : {32000, 1003})
    for (int64_t offset : {0, 1})
      for (int64_t pos : {int64_t{2}, int64_t{7}}) {
        at::Tensor buffer = at::randn({vocab + 1}, opts.dtype(at::kBFloat16)), logits = buffer.narrow(0, offset, vocab);
        logits.narrow(0, vocab / 3, 1).fill_(9);
        logits.narrow(0, vocab - 5, 1).fill_(9);
        at::Tensor sequence = at::arange(100, 100 + 20, opts.dtype(at::kLong)), token = longs({0}),
                   where = longs({pos});
        const int64_t want = next_token_reference(logits, sequence, pos, prompt_len);
        if (pos + 1 >= prompt_len) ASSERT_EQ(want, vocab / 3);
        launch_next_token({logits.data_ptr(), vocab, sequence.data_ptr<int64_t>(), token.data_ptr<int64_t>(),
                           where.data_ptr<int64_t>(), prompt_len},
                          stream());
        EXPECT_EQ(token.item<int64_t>(), want) << "vocab " << vocab << " offset " << offset << " pos " << pos;
        EXPECT_EQ(sequence[pos + 1].item<int64_t>(), want);
        EXPECT_EQ(where.item<int64_t>(), pos + 1);
      }
}

// Weighted (the routed experts) and unweighted; the sum rounded to bf16 once.
TEST_F(DecodeKernels, ResidualAddSumsTheWeightedDeltasIntoH) {
  auto opts = at::TensorOptions().device(at::kCUDA);
  const int64_t dim = 1000, n = 2;
  for (bool weighted : {true, false}) {
    at::Tensor h = at::randn({dim}, opts.dtype(at::kBFloat16)), delta = at::randn({n, dim}, opts.dtype(at::kBFloat16));
    at::Tensor w = weighted ? at::rand({n}, opts.dtype(at::kFloat)) : at::Tensor();
    const at::Tensor want = residual_add_reference(h, delta, w);
    ResidualAddArgs a{h.data_ptr(), delta.data_ptr(), n, weighted ? w.data_ptr<float>() : nullptr, dim};
    launch_residual_add(a, stream());
    EXPECT_LT(rel_rms(h, want), 0.005) << (weighted ? "weighted" : "unweighted");
  }
}

}  // namespace
}  // namespace opbench::kernels
#endif  // OPBENCH_HAVE_CUDA
