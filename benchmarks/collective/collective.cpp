// Collective: all_reduce (sum), all_gather, reduce_scatter (sum), all_to_all and broadcast (root 0)
// through torch.distributed's c10d — NCCL on a GPU, gloo on the CPU — over every process of the launch
// (opbench/world.h: torchrun, or RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR/MASTER_PORT from any launcher;
// a world of one without them).
//   Collective/bf16/1MiB/all_reduce      backend = the collective, shape = nccl-tests' message size
// GPU sizes 8 B, 64 B, ... 1 GiB (x8 steps: ten sizes), CPU sizes 8 B, 1 KiB, 1 MiB; bf16 and fp32.
// Per case: GB/s = algorithm bandwidth (nccl-tests' size / time, collective_ops.h), counter busbw_GB/s
// = GB/s x the bus factor, counter ranks. Rows: experiment collective_n<ranks>, metric
// bus_bandwidth(GB/s), one per collective x dtype, the mean over sizes (nccl-tests' "Avg bus
// bandwidth"); targets per GPU model and rank count. No %peak or %ceiling: the bytes cross links.
//
// Every rank runs these cases (Family::every_rank) in the same order, and each case keeps the ranks in
// step: (1) each rank builds its known input and the exact expected output, then all agree by an
// all_reduce of [case fingerprint, setup failed] before any collective of the case runs — a rank at
// another case, or one that could not allocate, makes every rank skip the case with the reason, none
// waits forever; (2) the collective runs once and each rank compares its output exactly with the
// expected one, and the ranks agree again, so a wrong result on one rank skips the case on all;
// (3) timing: a fixed number of samples (max(20, --opbench_min_samples)) after max(5, warm-up)
// warm-ups, no time cap, so every rank runs exactly as many collectives whatever its noise.
//
// Timer: the host clock, each sample one collective run to completion on this rank (NCCL: on the
// current stream, then synchronized), not the CUDA-event timer. That timer holds the stream with a
// kernel while the work is enqueued and, when the hold times out (100 ms), runs the sample again on
// this rank alone, which would put it one collective ahead of its peers, a mismatch NCCL cannot survive;
// and an enqueue that waits on the GPU (NCCL's, when its queue is full) would wait on that held stream.
// So small-message times include the launch and the synchronization (a few microseconds); nccl-tests
// averages 20 back-to-back launches instead. Rank 0's own times are reported. No L2 flush (a
// collective's data comes through links; nccl-tests does not flush either).
//
// A test hook: OPBENCH_COLLECTIVE_CORRUPT_RANK=R changes one element of rank R's output before the check
// (tests/python/test_collective.py shows every rank then skips every case and none hangs).
#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "collective/collective_ops.h"
#include "collective/communicator.h"
#include "opbench/check.h"
#include "opbench/family.h"
#include "opbench/world.h"

namespace opbench {
namespace {

using collective::Communicator;
using collective::Op;

constexpr int kSamples = 20;   // nccl-tests' default iteration count
constexpr int kWarmups = 5;    // nccl-tests' default warm-up count

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
int64_t fingerprint(const std::string& name) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : name) hash = (hash ^ c) * 1099511628211ull;
  return static_cast<int64_t>(hash >> 2);
}

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
  const Op op = collective::op_named(c.backend);
  const int ranks = comm.size(), rank = comm.rank();
  const collective::Layout layout = layout_for(op, c.scalar_type, c.dims, ranks);

  at::Tensor input, output, expected;
  std::string problem;
  try {
    auto options = at::TensorOptions().dtype(c.scalar_type).device(ctx.device());
    input = collective::known_input(op, layout, rank, ranks, options);
    output = layout.in_place ? input : at::empty({layout.output_elements}, options);
    expected = collective::expected_output(op, layout, rank, ranks, options);
  } catch (const std::exception& e) {
    problem = error_text(e);
  }
  agree(comm, c.name(), problem, "setting up the inputs");

  comm.run(op, input, output);
  const char* corrupt = std::getenv("OPBENCH_COLLECTIVE_CORRUPT_RANK");
  if (corrupt && std::atoi(corrupt) == rank) output.reshape({-1}).narrow(0, 0, 1).add_(1);
  agree(comm, c.name(), collective::first_difference(output, expected), "the exact check");
  expected.reset();

  TimingRequest request;
  request.timer = TimerKind::kHost;
  request.cache = CacheMode::kWarm;
  StoppingRule rule = ctx.options().rule;
  rule.warmup_iterations = std::max(rule.warmup_iterations, kWarmups);
  rule.min_samples = rule.max_samples = std::max(rule.min_samples, kSamples);
  rule.max_seconds = std::numeric_limits<double>::infinity();
  request.rule = rule;
  request.note = comm.backend() + " ranks=" + std::to_string(ranks) + " samples=" + std::to_string(rule.max_samples);
  ctx.time([&] { comm.run(op, input, output); }, request);

  auto& counters = ctx.state().counters;
  counters["busbw_GB/s"] = counters["GB/s"].value * collective::bus_factor(op, ranks);
  counters["ranks"] = ranks;
}

Backend collective_backend(Op op) {
  Backend b{collective::op_name(op)};
  b.work = [op](c10::ScalarType dtype, const Dims& dims) { return work_of(op, dtype, dims); };
  return b;
}

}  // namespace

OPBENCH_FAMILY(Collective) {
  Family f;
  f.name = "Collective";
  f.summary = "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast through c10d (NCCL on a GPU, gloo "
              "on the CPU) over every rank of the launch; GB/s = algorithm bandwidth, busbw_GB/s = nccl-tests' bus "
              "bandwidth; exact check first";
  Experiment bus{"collective", Metric::kBusBandwidth};
  bus.per_world_size = true;
  f.experiments = {bus};
  f.dtypes = {c10::kBFloat16, c10::kFloat};
  f.gpu_shapes = gpu_sizes();
  f.cpu_shapes = {{8}, {1024}, {1 << 20}};
  for (Op op : collective::kAllOps) f.backends.push_back(collective_backend(op));
  f.work = [](c10::ScalarType dtype, const Dims& dims) { return work_of(Op::kAllReduce, dtype, dims); };
  f.run = run_collective;
  f.name_shape = size_name;
  f.every_rank = true;
  return f;
}

}  // namespace opbench
