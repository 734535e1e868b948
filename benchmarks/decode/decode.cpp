// Llama2, Llama3 and Mixtral: whole-model greedy decode at batch 1 -- gpt-fast's model experiments
// llama2_7b_bf16, llama2_7b_int8, llama2_7b_int4 (gpt-fast's int4 weight-only: groups of 128 along the
// input dimension, every linear layer and the output head; no inductor case: model.py's DecodeStep has
// no int4 layers) and mixtral_8x7b_int8, and Llama-3-8B (llama3_8b_bf16, llama3_8b_int8:
// grouped-query attention with 8 KV heads, a 128256-token vocabulary, RoPE base 500000) -- with random
// weights made on the device.
// A case is one model x weight dtype x backend; an iteration is one generation (a 6-token prompt, 200
// new tokens; tiny configs on the CPU: 16), timed as wall time with the device synchronized at its end,
// 5 generations per case (gpt-fast averages 5). Rows per experiment, as gpt-fast's:
//   token_per_sec            new tokens / generation time (the median of the 5)
//   memory_bandwidth(GB/s)   bytes streamed per token x tok/s; %ceiling = tok/s / (read ceiling / bytes)
//   startup_time(s)          weight init + graph capture + one warm-up generation (a package's load too)
//   token_latency_p50(ms), token_latency_p90(ms)   per new token, one generation timed step by step
//   compilation_time(s)      inductor only: how long its package took to build (the seed's
//                            compilation_time(s) times torch.compile's first calls)
//   power(W), energy_per_token(J)   the GPU's energy over the 5 timed generations (NVML's total-energy
//                            counter) / their wall time, / their new tokens; "-" on the CPU
// Bytes per token: streamed_bytes_per_token (model.h): every linear weight, int8 scales, int4 group
// scales and zeros (int4 weights half a byte), norm weights and
// the output head, not the embedding table; experts: the top-2 of 8 share. Printed per case with
// gpt-fast's count (which adds the KV cache) before the weights are allocated.
//
// Backends (GPU): eager   the step launched from C++ each token, own kernels (own_step.h)
//                 graph   the same step captured once in a CUDA graph, replayed per token
//                 graph_serial  the graph without programmatic launches (each kernel waits for the
//                         previous one to finish): what the overlap of kernels buys
//                 aten_graph  the ATen-only step (forward_aten) captured in a CUDA graph (int4: PyTorch's
//                         _weight_int4pack_mm with gpt-fast's inner-k tiles, as its WeightOnlyInt4Linear)
//                 inductor  model.py's DecodeStep (gpt-fast's model semantics: static KV cache as
//                         mutable state) compiled by AOTInductor, its weights and cache this model's
//                         tensors (not packaged), replayed in a CUDA graph as mode="reduce-overhead"
//                         does; the next token is picked by ATen's argmax in the same graph
//           (CPU): eager  the ATen step (no own kernels and no graphs on the CPU; int4 through
//                         _weight_int4pack_mm_for_cpu); inductor, no graph
// Check before timing: the own kernels' or the package's logits against the ATen forward at the first
// three positions (relative RMS error <= kLogitsRelRms), ATen made to follow the experts the step under
// test chose (a router near-tie may break either way; routing is checked apart, decode_test.cpp); a
// graph's 200 tokens equal, token for token, those of the same step run eagerly.
#include <ATen/Context.h>
#include <ATen/TensorOperators.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "decode/case_util.h"
#include "decode/generate.h"
#include "decode/model.h"
#include "opbench/check.h"
#include "opbench/family.h"
#include "opbench/inductor.h"

#ifdef OPBENCH_HAVE_CUDA
#include "decode/own_step.h"
#endif

namespace opbench {
namespace {

using decode::config_of;
using decode::Decoder;
using decode::Model;
using decode::ModelConfig;
using decode::StepKernels;

// Where a step under test logs its experts' choices for one token: [layers, 1, top_k] each.
decode::Routes routes_of_one_token(const Model& model) {
  const ModelConfig& c = model.cfg;
  auto longs = at::TensorOptions().device(model.tok_emb.device()).dtype(c10::kLong);
  return {at::zeros({c.n_layers, 1, c.top_k}, longs), at::zeros({c.n_layers, 1, c.top_k}, longs.dtype(c10::kFloat))};
}

// The own kernels' step, routed as the ATen forward is then made to route.
void check_own_logits(Model& model, const std::vector<int64_t>& prompt) {
#ifdef OPBENCH_HAVE_CUDA
  const ModelConfig& c = model.cfg;
  decode::Routes routes = c.moe() ? routes_of_one_token(model) : decode::Routes{};
  decode::OwnStep own(model);
  decode::check_logits(model, prompt, [&](const at::Tensor& token, const at::Tensor& pos, decode::Routes* r) {
    own.log_routes(r);
    return own.forward(token, pos);
  }, c.moe() ? &routes : nullptr, "own decode kernels'");
#else
  (void)model;
  (void)prompt;
#endif
}

// The C++ model's tensors under the names model.py's DecodeStep gives them: its package leaves weights
// and KV cache out and reads these in place (a layer's cache is a view of the model's).
std::unordered_map<std::string, at::Tensor> step_constants(Model& m) {
  std::unordered_map<std::string, at::Tensor> named;
  auto linear = [&](const std::string& name, const decode::Linear& l) {
    named[name + ".w"] = l.w;
    if (l.int8()) named[name + ".scale"] = l.scale;
  };
  named["model.tok_emb"] = m.tok_emb;
  named["model.norm"] = m.norm;
  named["model.cos"] = m.rope_cos;
  named["model.sin"] = m.rope_sin;
  linear("model.output", m.output);
  for (size_t i = 0; i < m.layers.size(); ++i) {
    const std::string layer = "model.layers." + std::to_string(i);
    const decode::Layer& l = m.layers[i];
    named[layer + ".attn_norm"] = l.attn_norm;
    named[layer + ".ffn_norm"] = l.ffn_norm;
    linear(layer + ".wqkv", l.wqkv);
    linear(layer + ".wo", l.wo);
    linear(layer + ".w13", l.w13);
    linear(layer + ".w2", l.w2);
    if (m.cfg.moe()) linear(layer + ".gate", l.gate);
    named[layer + ".k_cache"] = m.k_cache.select(0, static_cast<int64_t>(i));
    named[layer + ".v_cache"] = m.v_cache.select(0, static_cast<int64_t>(i));
  }
  return named;
}

void run_decode(CaseContext& ctx) {
  const auto start = std::chrono::steady_clock::now();
  const CaseInfo& info = ctx.info();
  const ModelConfig cfg = config_of(info.dims);
  const decode::WeightQuant quant = decode::quant_of_dtype(info.scalar_type);
  const bool on_gpu = ctx.device().is_cuda();
  const c10::ScalarType act = c10::kBFloat16;
  const std::string& backend = info.backend;
  const bool compiled = backend == "inductor";
  const StepKernels kernels = compiled                             ? StepKernels::kCompiled
                              : !on_gpu || backend == "aten_graph" ? StepKernels::kAten
                              : backend == "graph_serial"          ? StepKernels::kOwnSerial
                                                                   : StepKernels::kOwn;
  const bool graph = on_gpu && backend != "eager";   // inductor: replayed in a graph, as reduce-overhead does
  std::shared_ptr<inductor::Package> package;
  if (compiled) package = inductor::Package::open(ctx);   // before the weights: a missing one costs nothing
  const double streamed = decode::streamed_bytes_per_token(cfg, quant, act);
  std::fprintf(stderr, "  %s: %.3f GB streamed per token (weights, scales, norms, output head; embedding table "
               "excluded); gpt-fast's count with the KV cache: %.3f GB; in memory: %.2f GB\n",
               info.name().c_str(), streamed / 1e9, decode::gpt_fast_model_bytes(cfg, quant, act) / 1e9,
               decode::resident_bytes(cfg, quant, act) / 1e9);
  if (on_gpu) decode::require_device_memory(decode::resident_bytes(cfg, quant, act) + 2e9);

  at::manual_seed(0);
  Model model = decode::make_model(cfg, act, quant, ctx.device());
  const std::vector<int64_t> prompt = decode::prompt_of(cfg);
  std::unordered_map<std::string, at::Tensor> constants;
  decode::StepForward compiled_step;
  if (compiled) {
    constants = step_constants(model);
    package->set_constants(constants);
    compiled_step = [package](const at::Tensor& token, const at::Tensor& pos) { return package->run({token, pos})[0]; };
    decode::Routes routes = cfg.moe() ? routes_of_one_token(model) : decode::Routes{};
    decode::check_logits(model, prompt, [&](const at::Tensor& token, const at::Tensor& pos, decode::Routes* r) {
      std::vector<at::Tensor> out = package->run({token, pos});   // experts: logits, route indices, weights
      if (r) {
        r->idx.copy_(out.at(1));
        r->weights.copy_(out.at(2));
      }
      return out[0];
    }, cfg.moe() ? &routes : nullptr, "the inductor package's");
  } else if (kernels != StepKernels::kAten) {
    check_own_logits(model, prompt);
  }
  Decoder decoder(model, kernels, graph, prompt, compiled_step);
  decoder.generate();
  const std::vector<int64_t> tokens = decoder.tokens();
  const double startup_seconds = decode::seconds_since(start);
  if (graph) {
    decoder.generate(/*eager=*/true);
    if (decoder.tokens() != tokens) throw Error("the graph's tokens differ from the same step run eagerly");
  }

  TimingRequest request;
  request.timer = TimerKind::kHost;
  request.rule = StoppingRule{.warmup_iterations = 0, .min_samples = 5, .max_samples = 5, .max_noise = 1,
                              .max_seconds = 1e9};
  request.note = decoder.kernels_label();
  const decode::EnergyWindow energy(ctx.device_info().pci_bus_id);
  const Work work = decoder.own_kernels() ? decode::own_kernel_generation_work(cfg, info.scalar_type)
                                          : decode::generation_work(cfg, info.scalar_type);
  ctx.time([&] { decoder.generate(); decoder.synchronize(); }, work, request);
  const std::vector<double> ms = decoder.new_token_milliseconds();
  auto& counters = ctx.state().counters;
  if (const auto used = energy.stop()) {
    counters["avg_power_W"] = used->joules / used->seconds;
    counters["J/token"] = used->joules / static_cast<double>(request.rule->max_samples * cfg.new_tokens);
  }
  counters["startup_s"] = startup_seconds;
  counters["token_p50_ms"] = decode::percentile(ms, 0.5);
  counters["token_p90_ms"] = decode::percentile(ms, 0.9);
  counters["model_GB"] = streamed / 1e9;
}

Work decode_work(c10::ScalarType dtype, const Dims& dims) { return decode::generation_work(config_of(dims), dtype); }

// `inductor_dtypes`: the dtypes model.py's DecodeStep spells (empty: all of the family's).
std::vector<Backend> decode_backends(std::vector<c10::ScalarType> inductor_dtypes = {}) {
  return {{"eager"}, {"graph", true}, {"graph_serial", true}, {"aten_graph", true}, {"inductor", false, inductor_dtypes}};
}

// The rows of an experiment no inductor case runs (no compilation-time row).
std::vector<Experiment> rows_without_compilation(const std::string& name, c10::ScalarType dtype) {
  std::vector<Experiment> rows = decode::model_rows(name, dtype);
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [](const Experiment& e) { return e.metric == Metric::kCompilationSeconds; }),
             rows.end());
  return rows;
}

}  // namespace

OPBENCH_FAMILY(Llama2) {
  std::vector<Experiment> experiments = decode::model_rows("llama2_7b_bf16", c10::kBFloat16);
  for (auto& e : decode::model_rows("llama2_7b_int8", c10::kChar)) experiments.push_back(e);
  for (auto& e : rows_without_compilation("llama2_7b_int4", c10::ScalarType::Int4)) experiments.push_back(e);
  return {.name = "Llama2",
          .summary = "Llama-2-7B greedy decode, batch 1, 200 tokens (bf16; int8 and int4 weight-only): tok/s, GB/s",
          .experiments = experiments, .dtypes = {c10::kBFloat16, c10::kChar, c10::ScalarType::Int4},
          .gpu_shapes = {{0, 32}}, .cpu_shapes = {{2, 2}},
          .backends = decode_backends({c10::kBFloat16, c10::kChar}), .work = decode_work, .run = run_decode,
          .name_shape = decode::model_shape_name, .layers_axis = 1, .python_module = "decode/model.py"};
}

OPBENCH_FAMILY(Llama3) {
  std::vector<Experiment> experiments = decode::model_rows("llama3_8b_bf16", c10::kBFloat16);
  for (auto& e : decode::model_rows("llama3_8b_int8", c10::kChar)) experiments.push_back(e);
  return {.name = "Llama3",
          .summary = "Llama-3-8B greedy decode, batch 1, 200 tokens (8 KV heads, vocab 128256; bf16, int8 "
                     "weight-only): tok/s, GB/s",
          .experiments = experiments, .dtypes = {c10::kBFloat16, c10::kChar}, .gpu_shapes = {{6, 32}},
          .cpu_shapes = {{5, 2}}, .backends = decode_backends(), .work = decode_work, .run = run_decode,
          .name_shape = decode::model_shape_name, .layers_axis = 1, .python_module = "decode/model.py"};
}

OPBENCH_FAMILY(Mixtral) {
  return {.name = "Mixtral",
          .summary = "Mixtral-8x7B greedy decode (int8 weight-only, top-2 of 8 experts, 16 layers): tok/s, GB/s",
          .experiments = decode::model_rows("mixtral_8x7b_int8", c10::kChar), .dtypes = {c10::kChar},
          .gpu_shapes = {{1, 16}}, .cpu_shapes = {{3, 2}}, .backends = decode_backends(), .work = decode_work,
          .run = run_decode, .name_shape = decode::model_shape_name, .layers_axis = 1,
          .python_module = "decode/model.py"};
}

}  // namespace opbench
