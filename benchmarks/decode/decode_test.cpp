// The decode models (model.h, generate.h) on tiny configurations:
//  (a) incremental decode with the KV cache gives the logits of one full causal forward (fp64, fp32;
//      CPU, and GPU when there is one);
//  (b) the device-fed step (the one a graph captures) generates the tokens of a host-fed loop (CPU),
//      and a CUDA graph the tokens of the same step run eagerly (GPU, ATen and own kernels);
//  (c) int8 weight-only logits agree with the dequantized-weights model: fp32 on the CPU to 1e-4 of
//      their RMS (the same arithmetic up to rounding), bf16 with own kernels on a GPU to 5% RMS (bf16
//      rounding of W * scale and of every activation);
//  (c') int4 weight-only (groups of 128): the ATen forward on the dequantized weights (fp32, CPU) and
//      through PyTorch's int4 matmul (bf16, CPU; the own kernels on a GPU) against the dequantized model;
//  (d) routing: the ATen router's two experts are the two largest probabilities (fp64 reference sort);
// and the byte accounting (Llama-2-7B's 13.21 GB), the case names and the memory refusal.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "decode/generate.h"
#include "decode/model.h"
#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/family.h"

#ifdef OPBENCH_HAVE_CUDA
#include "decode/own_step.h"
#include "kernels/common/serial_launches.h"
#include "tests/cpp/rel_rms.h"
#endif

namespace opbench::decode {
namespace {

using test_util::rel_rms;

at::Tensor longs(std::vector<int64_t> values, c10::Device device) {
  return at::tensor(values, at::TensorOptions().device(device).dtype(at::kLong));
}

std::vector<int64_t> prompt_of(const ModelConfig& cfg) {
  std::vector<int64_t> p;
  for (int64_t i = 0; i < cfg.prompt_len; ++i) p.push_back((3 + 17 * i) % cfg.vocab);
  return p;
}

// (a): the logits of T tokens fed one at a time equal those of one causal forward over all T.
void expect_incremental_matches_full(const std::string& config, c10::ScalarType dtype, c10::Device device,
                                     double limit) {
  at::manual_seed(0);
  Model model = make_model(model_config(config), dtype, false, device);
  const int64_t t = 6;
  std::vector<int64_t> tokens = {5, 9, 2, 200, 77, 31}, positions(t);
  std::iota(positions.begin(), positions.end(), 0);
  at::Tensor full = forward_aten(model, longs(tokens, device), longs(positions, device));
  model.k_cache.zero_();
  model.v_cache.zero_();
  for (int64_t i = 0; i < t; ++i) {
    at::Tensor step = forward_aten(model, longs({tokens[i]}, device), longs({i}, device));
    EXPECT_LT(rel_rms(step[0], full[i]), limit) << config << " token " << i;
  }
}

TEST(Decode, IncrementalDecodeMatchesFullCausalForwardOnCpu) {
  for (const char* config : {"tiny", "tiny-moe"}) {
    expect_incremental_matches_full(config, at::kDouble, at::kCPU, 1e-12);
    expect_incremental_matches_full(config, at::kFloat, at::kCPU, 1e-5);
  }
}

TEST(Decode, IncrementalDecodeMatchesFullCausalForwardOnGpu) {
  if (!current_device().is_gpu) GTEST_SKIP() << "no CUDA device";
  for (const char* config : {"tiny", "tiny-moe"}) expect_incremental_matches_full(config, at::kFloat, at::kCUDA, 1e-4);
}

TEST(Decode, CacheAttendsOnlyToEarlierPositions) {   // (a) fails this way too: a later token leaking in
  at::manual_seed(0);
  Model model = make_model(model_config("tiny"), at::kDouble, false, at::kCPU);
  at::Tensor first = forward_aten(model, longs({5, 9}, at::kCPU), longs({0, 1}, at::kCPU));
  at::Tensor again = forward_aten(model, longs({5, 123}, at::kCPU), longs({0, 1}, at::kCPU));
  EXPECT_LT(rel_rms(again[0], first[0]), 1e-12);   // position 0 does not see position 1
  EXPECT_GT(rel_rms(again[1], first[1]), 1e-3);
}

// (b) on the CPU: the device-fed step, as captured, against a loop that picks each token on the host.
TEST(Decode, DeviceFedStepGeneratesTheHostLoopsTokens) {
  for (const char* config : {"tiny", "tiny-moe"}) {
    at::manual_seed(0);
    Model model = make_model(model_config(config), at::kFloat, false, at::kCPU);
    const ModelConfig& c = model.cfg;
    std::vector<int64_t> prompt = prompt_of(c);
    Decoder decoder(model, StepKernels::kAten, false, prompt);
    decoder.generate();
    std::vector<int64_t> got = decoder.tokens();

    std::vector<int64_t> want = prompt;
    for (int64_t pos = 0; pos < c.steps(); ++pos) {
      at::Tensor logits = forward_aten(model, longs({want[static_cast<size_t>(pos)]}, at::kCPU), longs({pos}, at::kCPU));
      if (pos + 1 >= c.prompt_len) want.push_back(logits[0].argmax().item<int64_t>());
    }
    ASSERT_EQ(static_cast<int64_t>(got.size()), c.max_len());
    EXPECT_EQ(got, want) << config;
    std::set<int64_t> distinct(got.begin() + c.prompt_len, got.end());
    EXPECT_GT(distinct.size(), 1u) << config << ": a generation of one repeated token says little";
  }
}

// (c) on the CPU: (x . W^T) * s against x . (W * s)^T in fp32.
TEST(Decode, Int8LogitsMatchTheDequantizedModel) {
  for (const char* config : {"tiny", "tiny-moe"}) {
    at::manual_seed(0);
    Model int8 = make_model(model_config(config), at::kFloat, true, at::kCPU);
    Model dense = dequantized(int8);
    ASSERT_EQ(dense.layers[0].wqkv.w.scalar_type(), at::kFloat);
    at::Tensor tokens = longs({5, 9, 2}, at::kCPU), pos = longs({0, 1, 2}, at::kCPU);
    EXPECT_LT(rel_rms(forward_aten(int8, tokens, pos), forward_aten(dense, tokens, pos)), 1e-4) << config;
  }
}

// (c') on the CPU: fp32 activations multiply the dequantized weights (the same arithmetic up to rounding);
// bf16 ones go through _weight_int4pack_mm_for_cpu (bf16 rounding of activations and weights).
TEST(Decode, Int4LogitsMatchTheDequantizedModel) {
  at::manual_seed(0);
  at::Tensor tokens = longs({5, 9, 2}, at::kCPU), pos = longs({0, 1, 2}, at::kCPU);
  Model fp32 = make_model(model_config("tiny"), at::kFloat, WeightQuant::kInt4, at::kCPU);
  ASSERT_TRUE(fp32.int4 && fp32.output.int4());
  EXPECT_EQ(fp32.layers[0].w2.in_features(), 512);
  Model fp32_dense = dequantized(fp32);
  EXPECT_LT(rel_rms(forward_aten(fp32, tokens, pos), forward_aten(fp32_dense, tokens, pos)), 1e-4);
  Model bf16 = make_model(model_config("tiny"), at::kBFloat16, WeightQuant::kInt4, at::kCPU);
  ASSERT_TRUE(bf16.layers[0].wqkv.aten.packed.defined());
  Model bf16_dense = dequantized(bf16);
  EXPECT_LT(rel_rms(forward_aten(bf16, tokens, pos), forward_aten(bf16_dense, tokens, pos)), 0.05);
  EXPECT_THROW(make_model(model_config("tiny-moe"), at::kBFloat16, WeightQuant::kInt4, at::kCPU), Error);
}

// (d) on the CPU: the router's choice against a float64 sort of the softmax probabilities.
TEST(Decode, RouterPicksTheTwoMostProbableExperts) {
  at::manual_seed(3);
  Linear gate;
  gate.w = at::randn({8, 64}, at::kFloat);
  at::Tensor x = at::randn({32, 64}, at::kFloat);
  at::Tensor idx, weights;
  route_aten(gate, x, 2, idx, weights);
  at::Tensor probs = at::softmax(at::matmul(x.to(at::kDouble), gate.w.to(at::kDouble).t()), -1);
  for (int64_t t = 0; t < 32; ++t) {
    std::vector<int64_t> order(8);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return probs[t][a].item<double>() > probs[t][b].item<double>();
    });
    EXPECT_EQ(idx[t][0].item<int64_t>(), order[0]);
    EXPECT_EQ(idx[t][1].item<int64_t>(), order[1]);
    const double p0 = probs[t][order[0]].item<double>(), p1 = probs[t][order[1]].item<double>();
    EXPECT_NEAR(weights[t][0].item<double>(), p0 / (p0 + p1), 1e-6);
  }
}

TEST(Decode, CountsLlama2SevenBAsGptFastDoes) {
  const ModelConfig& c = model_config("7b");
  // 6.607e9 parameters outside the embedding table, 2 bytes each; gpt-fast adds the KV cache.
  EXPECT_NEAR(streamed_bytes_per_token(c, false, at::kBFloat16) / 1e9, 13.214, 0.001);
  const double kv = 2.0 * 32 * 32 * 206 * 128 * 2;
  EXPECT_NEAR(gpt_fast_model_bytes(c, false, at::kBFloat16) - streamed_bytes_per_token(c, false, at::kBFloat16), kv, 1);
  // int8: one byte a weight plus a bf16 scale per output row
  EXPECT_NEAR(streamed_bytes_per_token(c, true, at::kBFloat16) / 1e9, 6.611, 0.001);
  // int4: half a byte a weight plus a bf16 scale and zero per 128 weights; norms stay bf16
  const double norms = (2.0 * 32 + 1) * 4096 * 2, weights = (streamed_bytes_per_token(c, false, at::kBFloat16) - norms) / 2;
  EXPECT_NEAR(streamed_bytes_per_token(c, WeightQuant::kInt4, at::kBFloat16), weights * (0.5 + 4.0 / 128) + norms, 1);
  EXPECT_NEAR(streamed_bytes_per_token(c, WeightQuant::kInt4, at::kBFloat16) / 1e9, 3.5105, 0.0001);
  // Mixtral: 2 of 8 experts' weights per token
  ModelConfig m = model_config("8x7b");
  m.n_layers = 16;
  const double expert = 3.0 * 14336 * 4096 + (2 * 14336 + 4096) * 2.0;   // w1 w3 w2 int8 + bf16 scales
  ModelConfig all = m;
  all.top_k = 8;
  EXPECT_DOUBLE_EQ(streamed_bytes_per_token(all, true, at::kBFloat16) - streamed_bytes_per_token(m, true, at::kBFloat16),
                   16 * 6 * expert);   // the 6 experts a token does not use are not counted
}

TEST(Decode, Llama3EightBIsMetasConfigurationAndCountsItsBytes) {
  const ModelConfig& c = model_config("8b");
  EXPECT_EQ(c.dim, 4096);
  EXPECT_EQ(c.n_layers, 32);
  EXPECT_EQ(c.n_heads, 32);
  EXPECT_EQ(c.n_kv_heads, 8);
  EXPECT_EQ(c.ffn, 14336);
  EXPECT_EQ(c.vocab, 128256);
  EXPECT_DOUBLE_EQ(c.rope_base, 500000);
  // per layer: wqkv (4096 + 2 x 1024) x 4096, wo 4096^2, w13 2 x 14336 x 4096, w2 14336 x 4096, two norms;
  // then the final norm and the 128256 x 4096 output head: 7,504,924,672 weights outside the embedding
  // table (8.03e9 with it, Llama-3-8B's count), 2 bytes each.
  EXPECT_NEAR(streamed_bytes_per_token(c, false, at::kBFloat16), 2.0 * 7504924672, 1);
  DeviceInfo gpu, cpu;
  gpu.is_gpu = true;
  EXPECT_EQ(cases_of(family_named("Llama3"), gpu)[0].name(), "Llama3/bf16/8b-32L/eager");
  EXPECT_EQ(cases_of(family_named("Llama3"), cpu)[0].name(), "Llama3/bf16/tiny-gqa-2L/eager");
}

TEST(Decode, CaseNamesCarryModelAndLayersAndTheLayerFlagReplacesThem) {
  DeviceInfo gpu, cpu;
  gpu.is_gpu = true;
  std::vector<std::string> names;
  for (const auto& info : cases_of(family_named("Mixtral"), gpu)) names.push_back(info.name());
  EXPECT_EQ(names, (std::vector<std::string>{"Mixtral/int8/8x7b-16L/eager", "Mixtral/int8/8x7b-16L/graph",
                                             "Mixtral/int8/8x7b-16L/graph_serial",
                                             "Mixtral/int8/8x7b-16L/aten_graph", "Mixtral/int8/8x7b-16L/inductor"}));
  EXPECT_EQ(cases_of(family_named("Mixtral"), gpu, 32)[0].name(), "Mixtral/int8/8x7b-32L/eager");
  EXPECT_EQ(cases_of(family_named("Llama2"), cpu)[0].name(), "Llama2/bf16/tiny-2L/eager");
  const std::vector<CaseInfo> cpu_cases = cases_of(family_named("Llama2"), cpu);
  ASSERT_EQ(cpu_cases.size(), 5u);   // eager and inductor, bf16 and int8; int4 eager only (no int4 in model.py's step)
  EXPECT_EQ(cpu_cases.back().name(), "Llama2/int4/tiny-2L/eager");
  const CaseInfo llama = cases_of(family_named("Llama2"), gpu)[0];
  EXPECT_DOUBLE_EQ(llama.work.items, 200);
  EXPECT_NEAR(llama.work.bytes_read / 200 / 1e9, 13.214, 0.001);
  EXPECT_TRUE(llama.experiments[0].is_model);
}

#ifdef OPBENCH_HAVE_CUDA
class DecodeGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!current_device().is_gpu) GTEST_SKIP() << "no CUDA device";
    at::manual_seed(0);
  }
};

// Own step against the ATen forward on the same weights, for three positions; experts as the own step chose.
double own_vs_aten(Model& model) {
  const ModelConfig& c = model.cfg;
  Routes routes;
  if (c.moe()) {
    routes.idx = at::zeros({c.n_layers, 1, c.top_k}, at::TensorOptions().device(at::kCUDA).dtype(at::kLong));
    routes.weights = at::zeros({c.n_layers, 1, c.top_k}, at::TensorOptions().device(at::kCUDA).dtype(at::kFloat));
  }
  OwnStep own(model);
  own.log_routes(c.moe() ? &routes : nullptr);
  double worst = 0;
  for (int64_t p = 0; p < 4; ++p) {
    at::Tensor token = longs({(11 * p + 4) % c.vocab}, at::kCUDA), pos = longs({p}, at::kCUDA);
    at::Tensor got = own.forward(token, pos).clone();
    worst = std::max(worst, rel_rms(got, forward_aten(model, token, pos, c.moe() ? &routes : nullptr)));
  }
  return worst;
}

TEST_F(DecodeGpu, OwnStepMatchesAtenForward) {
  for (const char* config : {"tiny", "tiny-moe"})
    for (bool int8 : {false, true}) {
      Model model = make_model(model_config(config), at::kBFloat16, int8, at::kCUDA);
      EXPECT_LT(own_vs_aten(model), 0.03) << config << (int8 ? " int8" : " bf16");
    }
}

TEST_F(DecodeGpu, GraphGeneratesTheEagerTokens) {   // (b) on the GPU
  for (const char* config : {"tiny", "tiny-moe"})
    for (StepKernels kernels : {StepKernels::kAten, StepKernels::kOwn, StepKernels::kOwnSerial}) {
      Model model = make_model(model_config(config), at::kBFloat16, true, at::kCUDA);
      Decoder decoder(model, kernels, true, prompt_of(model.cfg));
      decoder.generate();
      std::vector<int64_t> graphed = decoder.tokens();
      decoder.generate(/*eager=*/true);
      EXPECT_EQ(graphed, decoder.tokens()) << config;
      EXPECT_EQ(decoder.new_token_milliseconds().size(), static_cast<size_t>(model.cfg.new_tokens));
    }
}

// Programmatic launches overlap each kernel with the one before; a kernel reading its inputs before
// they are complete would change the logits. The serial step runs the same kernels (the int8 and int4
// GEMVs pick tensor cores for programmatic launches only) without the overlap (ScopedSerialLaunches).
// Both steps write the same cache entries at each position.
TEST_F(DecodeGpu, ProgrammaticLaunchesChangeNoLogit) {
  for (const char* config : {"tiny", "tiny-moe"})
    for (WeightQuant quant : {WeightQuant::kNone, WeightQuant::kInt8, WeightQuant::kInt4}) {
      if (quant == WeightQuant::kInt4 && std::string(config) == "tiny-moe") continue;   // no int4 experts
      Model model = make_model(model_config(config), at::kBFloat16, quant, at::kCUDA);
      OwnStep overlapped(model, true), serial(model, true);
      for (int64_t p = 0; p < 6; ++p) {
        at::Tensor token = longs({(7 * p + 3) % model.cfg.vocab}, at::kCUDA), pos = longs({p}, at::kCUDA);
        at::Tensor want;
        {
          kernels::ScopedSerialLaunches serial_launches;
          want = serial.forward(token, pos).clone();
        }
        EXPECT_TRUE(at::equal(overlapped.forward(token, pos), want))
            << config << " quant " << static_cast<int>(quant) << " position " << p;
      }
    }
}

// int4: the own step (int4 GEMV) against the ATen forward (_weight_int4pack_mm) and the dequantized
// bf16 model; graphs of both steps generate their eager tokens.
TEST_F(DecodeGpu, Int4OwnStepMatchesAtenAndTheDequantizedModel) {
  Model int4 = make_model(model_config("tiny"), at::kBFloat16, WeightQuant::kInt4, at::kCUDA);
  EXPECT_LT(own_vs_aten(int4), 0.03);
  Model dense = dequantized(int4);
  OwnStep own(int4);
  at::Tensor token = longs({42}, at::kCUDA), pos = longs({0}, at::kCUDA);
  EXPECT_LT(rel_rms(own.forward(token, pos), forward_aten(dense, token, pos)), 0.05);
  for (StepKernels kernels : {StepKernels::kAten, StepKernels::kOwn}) {
    Model model = make_model(model_config("tiny"), at::kBFloat16, WeightQuant::kInt4, at::kCUDA);
    Decoder decoder(model, kernels, true, prompt_of(model.cfg));
    decoder.generate();
    std::vector<int64_t> graphed = decoder.tokens();
    decoder.generate(/*eager=*/true);
    EXPECT_EQ(graphed, decoder.tokens());
  }
}

TEST_F(DecodeGpu, Int8OwnKernelsMatchTheDequantizedBf16Model) {   // (c) on the GPU
  for (const char* config : {"tiny", "tiny-moe"}) {
    Model int8 = make_model(model_config(config), at::kBFloat16, true, at::kCUDA);
    Model dense = dequantized(int8);
    OwnStep own(int8);
    at::Tensor token = longs({42}, at::kCUDA), pos = longs({0}, at::kCUDA);
    EXPECT_LT(rel_rms(own.forward(token, pos), forward_aten(dense, token, pos)), 0.05) << config;
  }
}
#endif

}  // namespace
}  // namespace opbench::decode
