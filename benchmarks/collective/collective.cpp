// Collective: all_reduce (sum), all_gather, reduce_scatter (sum), all_to_all and broadcast (root 0) over
// every process of the launch (opbench/world.h: torchrun, or RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/
// MASTER_PORT from any launcher; a world of one without them) through this process's communicator
// (communicator.h: NCCL's C API on a GPU, c10d's gloo on the CPU).
//   Collective/bf16/1MiB/all_reduce         eager: one collective a sample
//   Collective/bf16/8B/all_reduce_graph     GPU only: kGraphCollectives collectives in one CUDA graph
// GPU sizes 8 B, 64 B, ... 1 GiB (x8 steps: ten sizes), CPU sizes 8 B, 1 KiB, 1 MiB; bf16 and fp32.
// Per case: GB/s = algorithm bandwidth (nccl-tests' size / time, collective_ops.h), counter busbw_GB/s
// = GB/s x the bus factor — absent where the factor is 0 (all but broadcast in a world of one: nothing
// crosses a bus, so the figure does not apply and its row has no actual), counter ranks. Rows:
// experiment collective_n<ranks>, metric bus_bandwidth(GB/s), one per backend x dtype, the mean over
// sizes (nccl-tests' "Avg bus bandwidth"); targets per GPU model and rank count. No %peak or %ceiling:
// the bytes cross links.
//
// Every rank runs these cases (Family::every_rank) in the same order, and each case keeps the ranks in
// step: (1) each rank builds its known input and the exact expected output, then all agree by an
// all_reduce of [case fingerprint, setup failed] before any collective of the case runs — a rank at
// another case, or one that could not allocate, makes every rank skip the case with the reason, none
// waits forever; (2) the collective runs once (graph mode: the graph is captured and replayed once) and
// each rank compares its output exactly with the expected one, and the ranks agree again, so a wrong
// result on one rank skips the case on all; (3) timing: a fixed number of samples
// (max(20, --opbench_min_samples)) after max(5, warm-up) warm-ups, no time cap, so every rank runs
// exactly as many collectives whatever its noise. A peer that dies fails the case on the others within
// the communicator's timeout (communicator.h), and every later case at once.
//
// Timer: the host clock, each sample run to completion on this rank (NCCL: a poll of the current stream
// until it is idle), not the CUDA-event timer. That timer holds the stream with a kernel while the work
// is enqueued and, when the hold times out (100 ms), runs the sample again on this rank alone, which
// would put it one collective ahead of its peers, a mismatch NCCL cannot survive; and an enqueue that
// waits on the GPU (NCCL's, when its queue is full) would wait on that held stream. Eager: a sample is
// one collective, so small-message times include its launch and the wait (a few microseconds).
// Graph mode (<op>_graph): kGraphCollectives = 20 collectives captured back to back on a side stream
// into one CUDA graph, a sample one replay waited for, divided by 20 (TimingRequest::
// operations_per_iteration): the launch and the wait are spread over 20 collectives, as nccl-tests
// averages 20 back-to-back launches — the figure for small messages without host overhead. Graph cases
// run out of place (output buffers apart from the inputs, filled with -1 before the check) so the 20
// collectives leave the exact expected output whatever their count. Rank 0's own times are reported. No
// L2 flush (a collective's data comes through links; nccl-tests does not flush either).
//
// Test hooks: OPBENCH_COLLECTIVE_CORRUPT_RANK=R changes one element of rank R's output before the check
// (every rank then skips the case; none hangs). OPBENCH_COLLECTIVE_EXIT_RANK=R makes rank R _exit(3) at
// its first collective, or at the first collective of the first case whose name contains
// OPBENCH_COLLECTIVE_EXIT_AT when that is set (the others fail with a message; tests/python/
// test_collective.py).
#include <ATen/ATen.h>

#ifdef OPBENCH_HAVE_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>

#include "collective/collective_ops.h"
#include "collective/communicator.h"
#include "opbench/check.h"
#include "opbench/family.h"
#include "opbench/fnv1a.h"
#include "opbench/world.h"

namespace opbench {
namespace {

using collective::Communicator;
using collective::Op;

constexpr int kSamples = 20;   // nccl-tests' default iteration count
constexpr int kWarmups = 5;    // nccl-tests' default warm-up count
constexpr int kGraphCollectives = 20;   // collectives in one graph replay (nccl-tests' iteration count)
constexpr const char* kGraphSuffix = "_graph";

// A case's backend: the collective, and whether it runs in a CUDA graph.
struct Mode {
  Op op;
  bool graph = false;
};

Mode mode_named(const std::string& backend) {
  const size_t suffix = std::strlen(kGraphSuffix);
  if (backend.size() > suffix && backend.compare(backend.size() - suffix, suffix, kGraphSuffix) == 0)
    return {collective::op_named(backend.substr(0, backend.size() - suffix)), true};
  return {collective::op_named(backend), false};
}

#ifdef OPBENCH_HAVE_CUDA
// kGraphCollectives collectives captured back to back on a side stream into one CUDA graph; replayed on
// the current stream.
class CollectiveGraph {
 public:
  CollectiveGraph(Communicator& comm, Op op, const at::Tensor& input, const at::Tensor& output) {
    comm.run(op, input, output);   // NCCL connects lazily: not during the capture; the inputs are ready
    c10::cuda::CUDAStreamGuard side(c10::cuda::getStreamFromPool());
    graph_.capture_begin();
    try {
      for (int i = 0; i < kGraphCollectives; ++i) comm.enqueue(op, input, output);
    } catch (...) {
      try {
        graph_.capture_end();
      } catch (...) {   // the capture's own error is the one reported
        cudaGraph_t partial = nullptr;
        if (cudaStreamEndCapture(c10::cuda::getCurrentCUDAStream().stream(), &partial) == cudaSuccess && partial)
          cudaGraphDestroy(partial);
        (void)cudaGetLastError();
      }
      throw;
    }
    graph_.capture_end();
  }
  void replay() { graph_.replay(); }

 private:
  at::cuda::CUDAGraph graph_;
};
#endif

// The test hook OPBENCH_COLLECTIVE_EXIT_RANK (header comment): a rank that dies without a word to its peers.
void exit_if_asked(int rank, const std::string& case_name) {
  const char* exit_rank = std::getenv("OPBENCH_COLLECTIVE_EXIT_RANK");
  if (!exit_rank || std::atoi(exit_rank) != rank) return;
  const char* at = std::getenv("OPBENCH_COLLECTIVE_EXIT_AT");
  if (at && *at && case_name.find(at) == std::string::npos) return;
  std::fprintf(stderr, "OPBENCH_COLLECTIVE_EXIT_RANK: rank %d exits at %s\n", rank, case_name.c_str());
  std::fflush(stderr);
  std::_Exit(3);
}

std::vector<Dims> gpu_sizes() {
  std::vector<Dims> sizes;
  for (int64_t bytes = 8; bytes <= (int64_t{1} << 30); bytes *= 8) sizes.push_back({bytes});
  return sizes;
}

std::string size_name(const Dims& dims) {
  int64_t bytes = dims.at(0);
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  while (unit < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + units[unit];
}

collective::Layout layout_for(Op op, c10::ScalarType dtype, const Dims& dims, int ranks) {
  return collective::layout_of(op, dims.at(0), static_cast<int64_t>(c10::elementSize(dtype)), ranks);
}

Work work_of(Op op, c10::ScalarType dtype, const Dims& dims) {
  Work w;
  w.bytes_read = layout_for(op, dtype, dims, current_world().size).bytes;
  w.through_memory = false;
  return w;
}

// FNV-1a of the case name: the same on every rank and host.
int64_t fingerprint(const std::string& name) { return static_cast<int64_t>(fnv1a_hash(name) >> 2); }

// Every rank says whether it can go on with this case: all go on, or all stop with the reason.
void agree(Communicator& comm, const std::string& name, const std::string& problem, const std::string& step) {
  const int64_t mine = fingerprint(name);
  std::vector<int64_t> most = comm.max_over_ranks({mine, -mine, problem.empty() ? 0 : comm.rank() + 1});
  if (most[0] != -most[1])
    throw Error("the ranks are at different cases (this rank: " + name + "): every rank must run the same "
                "Collective cases in the same order (the same binary, filter and flags on each)");
  if (!problem.empty()) throw Error(step + " failed on rank " + std::to_string(comm.rank()) + ": " + problem);
  if (most[2] > 0)
    throw Error(step + " failed on rank " + std::to_string(most[2] - 1) + " (its own output says why); "
                "every rank skips this case");
}

std::string error_text(const std::exception& e) {
  if (auto* c10_error = dynamic_cast<const c10::Error*>(&e)) return c10_error->what_without_backtrace();
  return e.what();
}

void run_collective(CaseContext& ctx) {
  const CaseInfo& c = ctx.info();
  const bool gpu = ctx.device().is_cuda();
  if (auto why = Communicator::unavailable(gpu)) return ctx.skip_unavailable(*why);
  Communicator& comm = Communicator::of_world(gpu);
  const Mode mode = mode_named(c.backend);
  const Op op = mode.op;
  const int ranks = comm.size(), rank = comm.rank();
  const collective::Layout layout = layout_for(op, c.scalar_type, c.dims, ranks);
  exit_if_asked(rank, c.name());

  at::Tensor input, output, expected;
  std::string problem;
  try {
    auto options = at::TensorOptions().dtype(c.scalar_type).device(ctx.device());
    input = collective::known_input(op, layout, rank, ranks, options);
    output = layout.in_place && !mode.graph ? input : at::full({layout.output_elements}, -1, options);
    expected = collective::expected_output(op, layout, rank, ranks, options);
  } catch (const std::exception& e) {
    problem = error_text(e);
  }
  agree(comm, c.name(), problem, "setting up the inputs");

  std::function<void()> iteration = [&] { comm.run(op, input, output); };
#ifdef OPBENCH_HAVE_CUDA
  std::unique_ptr<CollectiveGraph> graph;
  if (mode.graph) {
    try {
      graph = std::make_unique<CollectiveGraph>(comm, op, input, output);
      problem.clear();
    } catch (const std::exception& e) {
      problem = error_text(e);
    }
    agree(comm, c.name(), problem, "capturing the graph");
    iteration = [&] {
      graph->replay();
      comm.wait();
    };
  }
#else
  if (mode.graph) throw Error("Collective: graph mode needs a CUDA build");
#endif
  iteration();
  const char* corrupt = std::getenv("OPBENCH_COLLECTIVE_CORRUPT_RANK");
  if (corrupt && std::atoi(corrupt) == rank) output.reshape({-1}).narrow(0, 0, 1).add_(1);
  agree(comm, c.name(), collective::first_difference(output, expected), "the exact check");
  expected.reset();

  TimingRequest request;
  request.timer = TimerKind::kHost;
  request.cache = CacheMode::kWarm;
  request.operations_per_iteration = mode.graph ? kGraphCollectives : 1;
  StoppingRule rule = ctx.options().rule;
  rule.warmup_iterations = std::max(rule.warmup_iterations, kWarmups);
  rule.min_samples = rule.max_samples = std::max(rule.min_samples, kSamples);
  rule.max_seconds = std::numeric_limits<double>::infinity();
  request.rule = rule;
  request.note = comm.backend() + " ranks=" + std::to_string(ranks) + " samples=" + std::to_string(rule.max_samples);
  if (mode.graph) request.note += " graph of " + std::to_string(kGraphCollectives);
  ctx.time(iteration, request);

  auto& counters = ctx.state().counters;
  const double factor = collective::bus_factor(op, ranks);
  if (factor > 0) counters["busbw_GB/s"] = counters["GB/s"].value * factor;   // else: not applicable
  counters["ranks"] = ranks;
}

Backend collective_backend(Op op, bool graph) {
  Backend b{std::string(collective::op_name(op)) + (graph ? kGraphSuffix : "")};
  b.needs_cuda = graph;
  b.work = [op](c10::ScalarType dtype, const Dims& dims) { return work_of(op, dtype, dims); };
  return b;
}

}  // namespace

OPBENCH_FAMILY(Collective) {
  Family f;
  f.name = "Collective";
  f.summary = "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast over every rank of the launch (NCCL's "
              "C API on a GPU, eager and <op>_graph: 20 in a CUDA graph; c10d's gloo on the CPU); GB/s = algorithm "
              "bandwidth, busbw_GB/s = nccl-tests' bus bandwidth (absent where it does not apply); exact check first";
  Experiment bus{"collective", Metric::kBusBandwidth};
  bus.per_world_size = true;
  f.experiments = {bus};
  f.dtypes = {c10::kBFloat16, c10::kFloat};
  f.gpu_shapes = gpu_sizes();
  f.cpu_shapes = {{8}, {1024}, {1 << 20}};
  for (bool graph : {false, true})
    for (Op op : collective::kAllOps) f.backends.push_back(collective_backend(op, graph));
  f.work = [](c10::ScalarType dtype, const Dims& dims) { return work_of(Op::kAllReduce, dtype, dims); };
  f.run = run_collective;
  f.name_shape = size_name;
  f.every_rank = true;
  return f;
}

}  // namespace opbench
