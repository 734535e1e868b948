// Llama2TP and Llama2_70bTP: tensor-parallel greedy decode at batch 1 over every process of a distributed
// launch (torchrun, or RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT: opbench/world.h), the way
// gpt-fast's tp.py runs a model on several GPUs. Each rank holds its shard (decode/shard.h: wqkv and w13
// column-parallel, wo and w2 row-parallel, norms, embedding and output head replicated, the KV cache of
// its kv heads) and the step sums wo's and w2's partial outputs over the ranks -- an all-reduce of a
// [1, dim] activation each, through the Collective family's Communicator (NCCL on a GPU, gloo on the
// CPU) -- before each residual add. On a GPU the step is the own-kernel step (own_step.h), all of it in
// the step's CUDA graph, and by default it sums the partials without an NCCL collective: NCCL's device
// API maps each rank's window into every rank, and one kernel a sum stores the rank's partial into every
// rank's window as flagged words, waits in its own window for every rank's, and adds them into h
// (collective/lsa_sum.h; one host, every pair load/store accessible). Where the build has
// no device API or the loaded NCCL is not its headers' release (lsa_sum_unavailable) the step falls back
// to ncclAllReduce, enqueued on its stream, then the residual add; OPBENCH_TP_ALLREDUCE=nccl asks for
// that path, =lsa requires the one-shot sums (the case skips as unavailable without them).
// OPBENCH_NCCL_SYMMETRIC=1 (with the nccl path) puts the partial outputs in a symmetric NCCL window, where
// NCCL sums a [1, dim] activation with its symmetric kernels (into ordinary memory: Model::reduce_buffer);
// on 2xH200 the step with its sums in the window too failed its checks (int8 logits 67% RMS off, bf16
// graph tokens unlike eager: NVIDIA/nccl#1924), and the window-in, ordinary-out form passes and is no
// faster: it stays opt-in. The case's note says which path ran.
//
// Cases: Llama2TP/<bf16|int8>/7b-32L-tp<2|4>/<backend>, Llama2_70bTP/bf16/70b-80L-tp4/<backend>
// (Llama-2-70B: dim 8192, 80 layers, 64 heads, 8 KV heads, FFN 28672), on the CPU
// Llama2TP/<bf16|int8>/tiny-gqa-2L-tp2/eager. They exist only in a launch of two or more processes
// (Family::min_world_size), run on every rank together (Family::every_rank), and one whose tp is not
// WORLD_SIZE skips as unavailable, so a filter names the launch's cases:
//   torchrun --standalone --nproc-per-node=4 --no-python build/bench_ops \
//     --benchmark_filter='^(Ceiling/.*/read(_cuda)?|Llama2(_70b)?TP/.*-tp4/graph)(/|$)'
// (the Ceiling read cases, which run on rank 0 first, give %ceiling). NCCL_NVLS_ENABLE stays 0.
// Backends (GPU): eager (own kernels launched per token), graph (the same step in a CUDA graph, the
// all-reduces captured), aten_graph (forward_aten on the shard with the same all-reduces, in a graph);
// (CPU): eager, the ATen step under gloo.
//
// Weights: make_shard(seed 0): each rank makes only its shard, a function of (seed, rank, tp); the
// replicated tensors' checksums are compared across the ranks. Checks before timing (a rank that fails
// one skips the case on every rank, with the reason; ranks at different cases skip it too):
//   - where the whole model fits (the tiny configurations): the TP forward (forward_aten on the shards
//     with the all-reduces) against the whole model's forward_aten, the logits of the prompt's first
//     three tokens within kLogitsRelRms (relative RMS);
//   - own kernels (GPU): the own-kernel TP step against the ATen TP forward, the same limit;
//   - graph: its tokens equal those of the same step run eagerly, and every rank generated the same.
// Timing as the Llama2 family's: 5 generations of 200 new tokens (tiny: 16), the host clock with the
// device synchronized, the same count on every rank. Rows (rank 0 writes them), <experiment>_n<processes>:
//   token_per_sec      its %ceiling is the share of the aggregate read bound, the sum of the GPUs' read
//                      ceilings / the bytes all GPUs stream per token. Each rank streams its shard
//                      (streamed_bytes_per_token of its config: the replicated output head and norms
//                      included) and every shard streams as many bytes, so with alike GPUs that is rank
//                      0's read ceiling / rank 0's bytes: the case's Work counts one GPU's bytes.
//   memory_bandwidth(GB/s)   one GPU's (its shard's bytes x tok/s); counter aggregate_GB/s = x tp
//   startup_time(s), token_latency_p50(ms), token_latency_p90(ms)   as Llama2's
//   power(W), energy_per_token(J)   all the GPUs' energy over the timed generations (each rank's NVML
//                      energy counter, summed) / their wall time, / their new tokens; "-" on the CPU
//   allreduce_share(%) the share of the token time spent in all-reduce: 2 x layers all-reduces of a bf16
//                      [1, dim] activation (in the step's buffer: the symmetric window or not; with
//                      the one-shot sums, those kernels, their residual add included),
//                      captured alone in a CUDA graph and replayed 20 times after a
//                      warm-up (CUDA events), i.e. one token's all-reduces without the step around them,
//                      / the token time (1 / tok/s). CPU: the same all-reduces back to back, host clock.
// Counters: allreduce_ms/token, allreduce_%token, ranks, model_GB (the whole model's bytes per token),
// rank_GB (one GPU's), aggregate_GB/s, startup_s, token_p50_ms, token_p90_ms.
// Limits: the ranks agree after each step, between collectives; a rank that dies or throws inside a
// forward (between two of the step's all-reduces) leaves its peers in the next one until the
// communicator's wait gives up (OPBENCH_COLLECTIVE_TIMEOUT_S; the generations wait through it). The
// shards are seeded for tp 1, 2, 4 and 8 (shard.h).
#include <ATen/ops/zeros.h>
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>

#include "collective/communicator.h"
#include "decode/case_util.h"
#include "decode/generate.h"
#include "decode/model.h"
#include "decode/shard.h"
#include "opbench/check.h"
#include "opbench/family.h"
#include "opbench/fnv1a.h"
#include "opbench/world.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include <map>

#include "collective/lsa_sum.h"
#include "decode/own_step.h"
#endif

namespace opbench {
namespace {

using collective::Communicator;
using collective::Op;
using decode::Model;
using decode::ModelConfig;

constexpr uint64_t kSeed = 0;
constexpr int kAllReduceReplays = 20;
constexpr double kWholeModelCheckBytes = 1e9;   // the whole model is made as a reference below this

std::string tp_shape_name(const Dims& dims) {
  return decode::model_shape_name(dims) + "-tp" + std::to_string(dims.at(2));
}

ModelConfig rank_config(const Dims& dims) { return decode::shard_config(decode::config_of(dims), dims.at(2)); }

Work tp_work(c10::ScalarType dtype, const Dims& dims) { return decode::generation_work(rank_config(dims), dtype); }

// 62 bits of FNV-1a over bytes: equal on every rank and host for equal input.
int64_t fingerprint(const void* data, size_t size) {
  return static_cast<int64_t>(fnv1a_hash(std::string_view(static_cast<const char*>(data), size)) >> 2);
}

std::string error_text(const std::exception& e) {
  if (auto* c10_error = dynamic_cast<const c10::Error*>(&e)) return c10_error->what_without_backtrace();
  return e.what();
}

// The ranks of one case, kept in step: after each step every rank learns whether it failed anywhere and
// whether the ranks hold the same value; all go on, or all stop with the reason.
class Ranks {
 public:
  Ranks(Communicator& comm, const std::string& name) : comm_(comm), case_(fingerprint(name.data(), name.size())) {}
  Communicator& comm() { return comm_; }
  void agree(const std::string& step, const std::string& problem, int64_t value = 0, const std::string& differs = "") {
    std::vector<int64_t> most =
        comm_.max_over_ranks({case_, -case_, value, -value, problem.empty() ? 0 : comm_.rank() + 1});
    if (most[0] != -most[1])
      throw Error("the ranks are at different cases: every rank must run the same cases in the same order");
    if (!problem.empty()) throw Error(step + " failed on rank " + std::to_string(comm_.rank()) + ": " + problem);
    if (most[4] > 0) throw Error(step + " failed on rank " + std::to_string(most[4] - 1) + " (its output says why)");
    if (most[2] != -most[3]) throw Error(step + ": " + differs + " differ between the ranks");
  }

  // Runs `body` here, then agrees on its outcome (and on the value it returns).
  void run(const std::string& step, const std::function<int64_t()>& body, const std::string& differs = "") {
    std::string problem;
    int64_t value = 0;
    try {
      value = body();
    } catch (const std::exception& e) {
      problem = error_text(e);
    }
    agree(step, problem, value, differs);
  }

 private:
  Communicator& comm_;
  int64_t case_;
};

int64_t checksum(const std::vector<at::Tensor>& tensors) {
  std::vector<double> sums;
  for (const at::Tensor& t : tensors) sums.push_back(t.sum(c10::kDouble).item<double>());
  return fingerprint(sums.data(), sums.size() * sizeof(double));
}

Model make_rank_shard(CaseContext& ctx, Communicator& comm) {
  const CaseInfo& info = ctx.info();
  const ModelConfig whole = decode::config_of(info.dims), shard = rank_config(info.dims);
  const bool int8 = info.scalar_type == c10::kChar;
  const c10::ScalarType act = c10::kBFloat16;
  std::fprintf(stderr, "  %s rank %d: %.3f GB streamed per token by each of %lld ranks (the whole model: %.3f GB); "
               "in memory per rank: %.2f GB\n", info.name().c_str(), comm.rank(),
               decode::streamed_bytes_per_token(shard, int8, act) / 1e9, static_cast<long long>(shard.tp),
               decode::streamed_bytes_per_token(whole, int8, act) / 1e9, decode::resident_bytes(shard, int8, act) / 1e9);
  if (ctx.device().is_cuda()) decode::require_device_memory(decode::resident_bytes(shard, int8, act) + 2e9);
  Model m = decode::make_shard(whole, comm.rank(), shard.tp, kSeed, act, int8, ctx.device());
  m.all_reduce = [&comm](const at::Tensor& partial, const at::Tensor& sum) { comm.enqueue(Op::kAllReduce, partial, sum); };
  return m;
}

// Whether environment variable `name` is set to `value` (bench_ops checked the values at start):
//   OPBENCH_NCCL_SYMMETRIC=1   the partial outputs in a symmetric window; unset or "0": ordinary memory;
//   OPBENCH_TP_ALLREDUCE       lsa: the own-kernel step's partials summed by one kernel over NCCL's device
//                              API (Model::add_sums), required; nccl: ncclAllReduce, then the residual
//                              add; unset: lsa where available, else nccl.
bool environment_says(const char* name, const std::string& value) {
  const char* set = std::getenv(name);
  return set && value == set;
}

#ifdef OPBENCH_HAVE_CUDA
// Model::add_sums of `partials` (the step's [2, dim] rows). Collective: every rank at once. One LsaSum and
// its window per dim for the process's life: its device communicator is made collectively, and NCCL
// releases it with the communicator; its flag counters run on from one case to the next, alike on
// every rank.
decltype(Model::add_sums) lsa_sums(Communicator& comm, const at::Tensor& partials) {
  struct Made {
    at::Tensor window;
    std::unique_ptr<collective::LsaSum> sum;
  };
  static std::map<int64_t, Made> made;
  const int64_t dim = partials.size(1);
  Made& m = made[dim];
  if (!m.sum) {
    m.window = comm.symmetric_tensor({collective::lsa_sum_window_bytes(comm.size(), dim)}, c10::kByte, "lsa_sum");
    const auto [nccl_comm, window] = comm.nccl_handles(m.window);
    m.sum = std::make_unique<collective::LsaSum>(nccl_comm, window, m.window.data_ptr(), dim,
                                                 collective::collective_timeout_seconds());
  }
  return [s = m.sum.get(), partials](int64_t row, const at::Tensor& h, bool programmatic) {
    s->add_sum(row, partials[row].data_ptr(), h.data_ptr(), c10::cuda::getCurrentCUDAStream().stream(), programmatic);
  };
}
#endif

decode::CheckedStep aten_step(Model& m) {
  return [&m](const at::Tensor& token, const at::Tensor& pos, decode::Routes*) { return decode::forward_aten(m, token, pos); };
}

std::string within_limit(double worst, const std::string& what) {
  if (worst <= decode::kLogitsRelRms) {
    std::fprintf(stderr, "  check: %s within %.3g%% RMS\n", what.c_str(), 100 * worst);
    return "";
  }
  return what + " differ by " + std::to_string(100 * worst) + "% RMS (limit " +
         std::to_string(100 * decode::kLogitsRelRms) + "%)";
}

// The checks of the TP step's logits (the header's), on this rank; "" when they pass.
std::string check_tp_logits(Model& m, const ModelConfig& whole, const std::string& backend) {
  const c10::Device device = m.tok_emb.device();
  const std::vector<int64_t> prompt = decode::prompt_of(m.cfg);
  std::string problem;
  if (decode::resident_bytes(whole, m.int8, m.act_dtype) < kWholeModelCheckBytes) {
    Model reference = decode::make_shard(whole, 0, 1, kSeed, m.act_dtype, m.int8, device);
    problem += within_limit(decode::worst_logits_rel_rms(prompt, device, aten_step(m), aten_step(reference), nullptr),
                            "the TP forward's logits and the whole model's");
  }
#ifdef OPBENCH_HAVE_CUDA
  if (device.is_cuda() && backend != "aten_graph") {
    decode::OwnStep own(m);
    auto own_step = [&own](const at::Tensor& token, const at::Tensor& pos, decode::Routes*) {
      return own.forward(token, pos).clone();
    };
    problem += (problem.empty() ? "" : "; ") +
               within_limit(decode::worst_logits_rel_rms(prompt, device, own_step, aten_step(m), nullptr),
                            "the own-kernel TP step's logits and the ATen TP forward's");
  }
#else
  (void)backend;
#endif
  return problem;
}

void set_counters(CaseContext& ctx, const std::vector<double>& ms, double startup_s, double all_reduce_ms) {
  const CaseInfo& info = ctx.info();
  const ModelConfig whole = decode::config_of(info.dims), shard = rank_config(info.dims);
  const bool int8 = info.scalar_type == c10::kChar;
  auto& counters = ctx.state().counters;
  const double token_ms = 1000.0 / counters["items/s"].value;
  counters["startup_s"] = startup_s;
  counters["token_p50_ms"] = decode::percentile(ms, 0.5);
  counters["token_p90_ms"] = decode::percentile(ms, 0.9);
  counters["model_GB"] = decode::streamed_bytes_per_token(whole, int8, c10::kBFloat16) / 1e9;
  counters["rank_GB"] = decode::streamed_bytes_per_token(shard, int8, c10::kBFloat16) / 1e9;
  counters["aggregate_GB/s"] = counters["GB/s"].value * static_cast<double>(shard.tp);
  counters["ranks"] = static_cast<double>(shard.tp);
  counters["allreduce_ms/token"] = all_reduce_ms;
  counters["allreduce_%token"] = 100.0 * all_reduce_ms / token_ms;
}

// One token's all-reduces alone (the header's allreduce_share), milliseconds.
double all_reduce_ms_per_token(const Model& m, bool gpu) {
  // zeros: stay finite however often summed; the step's buffers, used as the step uses them.
  // With add_sums the rows stay as the last step left them: finite partials, summed a few thousand times
  // into `sum`, stay finite.
  const bool window = m.reduce_buffer.defined();
  at::Tensor sum = at::zeros({1, m.cfg.dim}, m.tok_emb.options());
  at::Tensor partials = window && !m.add_sums ? m.reduce_buffer.zero_() : sum;
  return decode::graphed_milliseconds([&] {
    for (int64_t i = 0; i < 2 * m.cfg.n_layers; ++i) {
      if (m.add_sums)
        m.add_sums(i % 2, sum, /*programmatic=*/true);
      else
        m.all_reduce(partials.narrow(0, window ? i % 2 : 0, 1), sum);
    }
  }, gpu, kAllReduceReplays);
}

// The decoder of `backend` after its first generation, and on a graph its eager check; every rank's
// tokens the same.
std::unique_ptr<decode::Decoder> first_generation(Ranks& ranks, Model& model, const std::string& backend, bool gpu) {
  const decode::StepKernels kernels = gpu && backend != "aten_graph" ? decode::StepKernels::kOwn
                                                                     : decode::StepKernels::kAten;
  const bool graph = gpu && backend != "eager";
  std::unique_ptr<decode::Decoder> decoder;
  std::vector<int64_t> tokens;
  ranks.run("the first generation", [&] {
    decoder = std::make_unique<decode::Decoder>(model, kernels, graph, decode::prompt_of(model.cfg));
    decoder->generate();
    ranks.comm().wait();   // NCCL: a wait that throws, never hangs, when a peer is gone
    tokens = decoder->tokens();
    return fingerprint(tokens.data(), tokens.size() * sizeof(int64_t));
  }, "the generated tokens");
  if (graph) {
    ranks.run("the graph check", [&] {
      decoder->generate(/*eager=*/true);
      ranks.comm().wait();
      if (decoder->tokens() != tokens) throw Error("the graph's tokens differ from the same step's run eagerly");
      return int64_t{0};
    });
  }
  return decoder;
}

// The power and energy rows: every rank's GPU energy over the timed generations, summed (rank r's
// millijoules in slot r of an all-ranks maximum, the other slots -1); none unless every rank read its
// GPU's counter. `tokens`: the new tokens of the window.
void set_energy_counters(CaseContext& ctx, Communicator& comm, const std::optional<decode::EnergyUse>& mine,
                         double tokens) {
  std::vector<int64_t> slots(static_cast<size_t>(comm.size()), -1);
  if (mine) slots[static_cast<size_t>(comm.rank())] = std::llround(mine->joules * 1e3);
  double joules = 0;
  for (int64_t millijoules : comm.max_over_ranks(slots)) {
    if (millijoules < 0) return;
    joules += static_cast<double>(millijoules) / 1e3;
  }
  ctx.state().counters["avg_power_W"] = joules / mine->seconds;
  ctx.state().counters["J/token"] = joules / tokens;
}

// As the Llama2 family: 5 generations, host clock, the device synchronized; the same count on every rank.
void time_generations(CaseContext& ctx, decode::Decoder& decoder, Communicator& comm, const std::string& note) {
  TimingRequest request;
  request.timer = TimerKind::kHost;
  request.rule = StoppingRule{.warmup_iterations = 0, .min_samples = 5, .max_samples = 5, .max_noise = 1,
                              .max_seconds = 1e9};
  request.note = decoder.kernels_label() + " " + note;
  const decode::EnergyWindow energy(ctx.device_info().pci_bus_id);
  const ModelConfig shard = rank_config(ctx.info().dims);
  const Work work = decoder.own_kernels() ? decode::own_kernel_generation_work(shard, ctx.info().scalar_type)
                                : decode::generation_work(shard, ctx.info().scalar_type);
  ctx.time([&] { decoder.generate(); comm.wait(); decoder.synchronize(); }, work, request);
  set_energy_counters(ctx, comm, energy.stop(), static_cast<double>(request.rule->max_samples * shard.new_tokens));
}

void run_tp_decode(CaseContext& ctx) {
  const auto start = std::chrono::steady_clock::now();
  const CaseInfo& info = ctx.info();
  const int64_t tp = info.dims.at(2);
  const int world_size = current_world().size;
  if (tp != world_size)
    return ctx.skip_unavailable("tp " + std::to_string(tp) + " runs in a launch of " + std::to_string(tp) +
                                " processes; this one has " + std::to_string(world_size));
  const bool gpu = ctx.device().is_cuda();
  if (auto why = Communicator::unavailable(gpu)) return ctx.skip_unavailable(*why);
  Communicator& comm = Communicator::of_world(gpu);
  Ranks ranks(comm, info.name());
  Model model;
  ranks.run("making the shard", [&] {
    model = make_rank_shard(ctx, comm);
    std::vector<at::Tensor> replicated = {model.tok_emb, model.norm, model.output.w};
    if (model.int8) replicated.push_back(model.output.scale);
    return checksum(replicated);
  }, "the replicated tensors (token embedding, final norm, output head)");
#ifdef OPBENCH_HAVE_CUDA
  if (gpu && info.backend != "aten_graph" && !environment_says("OPBENCH_TP_ALLREDUCE", "nccl")) {
    const std::optional<std::string> unavailable = collective::lsa_sum_unavailable();   // alike on every rank
    if (unavailable && environment_says("OPBENCH_TP_ALLREDUCE", "lsa"))
      return ctx.skip_unavailable("OPBENCH_TP_ALLREDUCE=lsa: " + *unavailable);
    if (unavailable && comm.rank() == 0)
      std::fprintf(stderr, "  %s: sums through ncclAllReduce: %s\n", info.name().c_str(), unavailable->c_str());
    if (!unavailable)
      ranks.run("making the one-shot sums (NCCL's device API)", [&] {   // collective: after the shards
        model.reduce_buffer = at::zeros({2, model.cfg.dim}, model.tok_emb.options());
        model.add_sums = lsa_sums(comm, model.reduce_buffer);
        return int64_t{0};
      });
  }
#endif
  if (gpu && info.backend != "aten_graph" && !model.add_sums && environment_says("OPBENCH_NCCL_SYMMETRIC", "1")) {
    ranks.run("registering the all-reduce buffer as a symmetric window", [&] {   // collective: after the shards
      model.reduce_buffer = comm.symmetric_tensor({2, model.cfg.dim}, model.act_dtype);
      return int64_t{0};
    });
  }
  ranks.run("the logits check", [&] {
    const std::string problem = check_tp_logits(model, decode::config_of(info.dims), info.backend);
    if (!problem.empty()) throw Error(problem);
    return int64_t{0};
  });
  std::unique_ptr<decode::Decoder> decoder = first_generation(ranks, model, info.backend, gpu);
  const double startup_s = decode::seconds_since(start);
  time_generations(ctx, *decoder, comm, comm.backend() + " ranks=" + std::to_string(tp));
  const std::vector<double> ms = decoder->new_token_milliseconds();
  set_counters(ctx, ms, startup_s, all_reduce_ms_per_token(model, gpu));
}

std::vector<Experiment> tp_rows(const std::string& name, c10::ScalarType dtype) {
  std::vector<Experiment> rows;
  for (const Experiment& e : decode::model_rows(name, dtype, /*per_world_size=*/true))
    if (e.metric != Metric::kCompilationSeconds) rows.push_back(e);
  rows.push_back({.name = name, .metric = Metric::kAllReduceShare, .dtypes = {dtype}, .is_model = true,
                  .per_world_size = true, .cpu_name = decode::tiny_name(name)});
  return rows;
}

Family tp_family(const std::string& name, const std::string& summary) {
  Family f;
  f.name = name;
  f.summary = summary;
  f.backends = {{"eager"}, {"graph", true}, {"aten_graph", true}};
  f.work = tp_work;
  f.run = run_tp_decode;
  f.name_shape = tp_shape_name;
  f.layers_axis = 1;
  f.every_rank = true;
  f.min_world_size = 2;
  return f;
}

}  // namespace

OPBENCH_FAMILY(Llama2TP) {
  Family f = tp_family("Llama2TP", "Llama-2-7B tensor-parallel greedy decode over every rank of the launch (tp = "
                       "WORLD_SIZE: 2 or 4), bf16 and int8: tok/s, GB/s per GPU, all-reduce share");
  f.experiments = tp_rows("llama2_7b_bf16_tp", c10::kBFloat16);
  for (const Experiment& e : tp_rows("llama2_7b_int8_tp", c10::kChar)) f.experiments.push_back(e);
  f.dtypes = {c10::kBFloat16, c10::kChar};
  f.gpu_shapes = {{0, 32, 2}, {0, 32, 4}};
  f.cpu_shapes = {{5, 2, 2}};   // tiny-gqa
  return f;
}

OPBENCH_FAMILY(Llama2_70bTP) {
  Family f = tp_family("Llama2_70bTP", "Llama-2-70B bf16 tensor-parallel greedy decode over 4 ranks: tok/s, "
                       "share of the aggregate read bound, all-reduce share");
  f.experiments = tp_rows("llama2_70b_bf16_tp", c10::kBFloat16);
  f.dtypes = {c10::kBFloat16};
  f.gpu_shapes = {{4, 80, 4}};
  return f;
}

}  // namespace opbench
