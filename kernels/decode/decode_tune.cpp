// The decode step's kernels' tuner entry (kernels/tune/tune.h): their one configuration each, at the
// decode models' shapes (Llama-2-7B: 32 heads of 128, no grouping; Mixtral-8x7B: 8 KV heads; caches of
// 206 positions, the last one attended; a 32000-token vocabulary; 8 experts; a 4096-wide residual), each
// checked against its float64 reference first.
#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/decode/decode_kernels.h"
#include "kernels/decode/decode_reference.h"
#include "kernels/tune/tune.h"
#include "opbench/check.h"
#include "opbench/reference.h"

namespace opbench::kernels {
namespace {

constexpr int64_t kMaxLen = 206, kHeadDim = 128, kHeads = 32, kVocab = 32000, kPromptLen = 6;

at::TensorOptions on_gpu(c10::ScalarType dtype) { return at::TensorOptions().device(at::kCUDA).dtype(dtype); }

void tune_attention(tune::Tuner& tuner, const char* model, int64_t kv_heads) {
  const at::Tensor q = at::randn({kHeads * kHeadDim}, on_gpu(at::kBFloat16));
  const at::Tensor k = at::randn({kv_heads, kMaxLen, kHeadDim}, on_gpu(at::kBFloat16));
  const at::Tensor v = at::randn({kv_heads, kMaxLen, kHeadDim}, on_gpu(at::kBFloat16));
  const at::Tensor pos = at::full({1}, kMaxLen - 1, on_gpu(at::kLong));
  at::Tensor out = at::empty({kHeads * kHeadDim}, on_gpu(at::kBFloat16));
  at::Tensor partials = at::empty({attention_partials_floats(kHeads, kHeadDim, kMaxLen)}, on_gpu(at::kFloat));
  at::Tensor counters = at::zeros({kHeads}, on_gpu(at::kInt));
  const AttentionArgs a{q.data_ptr(),   k.data_ptr(), v.data_ptr(), pos.data_ptr<int64_t>(),
                        out.data_ptr(), kHeads,       kv_heads,     kHeadDim,
                        kMaxLen,        partials.data_ptr<float>(), static_cast<unsigned*>(counters.data_ptr())};
  const at::Tensor expected = attention_reference(q, k, v, kMaxLen - 1, kHeads).cpu();
  const tune::Case c{"decode", "bf16", std::string("attention/") + model, 2.0 * static_cast<double>(k.nbytes())};
  tuner.run(c, "launch", [&] { out.fill_(NAN); }, [&](cudaStream_t s) { launch_decode_attention(a, s); },
            [&] { expect_close(out, expected, tolerance_for(at::kBFloat16), c.name); });
}

// Every launch advances the position, so the sequence holds a slot for each launch the stopping rule allows.
void tune_next_token(tune::Tuner& tuner) {
  const StoppingRule& rule = tuner.options().rule;
  const int64_t slots = kPromptLen + rule.warmup_iterations + rule.max_samples + 2;
  const at::Tensor logits = at::randn({kVocab}, on_gpu(at::kBFloat16));
  at::Tensor sequence = at::zeros({slots}, on_gpu(at::kLong)), token = at::zeros({1}, on_gpu(at::kLong));
  at::Tensor pos = at::zeros({1}, on_gpu(at::kLong));
  const NextTokenArgs a{logits.data_ptr(), kVocab, sequence.data_ptr<int64_t>(), token.data_ptr<int64_t>(),
                        pos.data_ptr<int64_t>(), kPromptLen};
  const int64_t expected = next_token_reference(logits, sequence, kPromptLen, kPromptLen);
  const tune::Case c{"decode", "bf16", "next_token/32000", static_cast<double>(logits.nbytes())};
  tuner.run(c, "launch", [&] { pos.fill_(kPromptLen); }, [&](cudaStream_t s) { launch_next_token(a, s); }, [&] {
    if (token.item<int64_t>() != expected)
      throw Error("next token " + std::to_string(token.item<int64_t>()) + ", expected " + std::to_string(expected));
  });
}

// Distinct logits: no tie for the reference's order to break otherwise than the kernel's.
void tune_top2_route(tune::Tuner& tuner) {
  const at::Tensor logits = (at::randperm(8, on_gpu(at::kLong)).to(at::kFloat) * 0.37).to(at::kBFloat16);
  at::Tensor idx = at::empty({2}, on_gpu(at::kLong)), weights = at::empty({2}, on_gpu(at::kFloat));
  const Top2 expected = top2_route_reference(logits);
  const tune::Case c{"decode", "bf16", "top2_route/8", static_cast<double>(logits.nbytes())};
  auto launch = [&](cudaStream_t s) {
    launch_top2_route(logits.data_ptr(), 8, idx.data_ptr<int64_t>(), weights.data_ptr<float>(), s);
  };
  tuner.run(c, "launch", [&] { idx.fill_(-1); }, launch, [&] {
    if (!at::equal(idx.cpu(), expected.idx.cpu())) throw Error("top2_route picked other experts");
    expect_close(weights, expected.weights, {1e-5, 1e-5}, c.name);
  });
}

// Every launch adds into h again: checked once from a copy, timed on whatever h holds.
void tune_residual_add(tune::Tuner& tuner) {
  const int64_t dim = 4096, n = 2;
  const at::Tensor h0 = at::randn({dim}, on_gpu(at::kBFloat16)), delta = at::randn({n, dim}, on_gpu(at::kBFloat16));
  const at::Tensor w = at::rand({n}, on_gpu(at::kFloat));
  at::Tensor h = h0.clone();
  const ResidualAddArgs a{h.data_ptr(), delta.data_ptr(), n, w.data_ptr<float>(), dim};
  const at::Tensor expected = residual_add_reference(h0, delta, w).cpu();
  const tune::Case c{"decode", "bf16", "residual_add/2x4096", static_cast<double>(delta.nbytes() + 2 * h.nbytes())};
  tuner.run(c, "launch", [&] { h.copy_(h0); }, [&](cudaStream_t s) { launch_residual_add(a, s); },
            [&] { expect_close(h, expected, tolerance_for(at::kBFloat16), c.name); });
}

}  // namespace
}  // namespace opbench::kernels

OPBENCH_TUNE_ENTRY(decode) {
  using namespace opbench::kernels;
  tune_attention(tuner, "llama2-7b", 32);
  tune_attention(tuner, "mixtral-8x7b", 8);
  tune_next_token(tuner);
  tune_top2_route(tuner);
  tune_residual_add(tuner);
}
