// An experiment: a row of gpt-fast's results table (name, metric, target, actual, ...), aggregated
// from cases. A family declares its experiments; reporters never name one.
#pragma once
#include <c10/core/ScalarType.h>

#include <optional>
#include <string>
#include <vector>

#include "opbench/work.h"

namespace opbench {

// What a row's `actual` holds, and so which share of peak and ceiling the row reports:
//   kMemoryBandwidth   "memory_bandwidth(GB/s)": GB/s; shares of HBM peak and of the bandwidth bound
//   kFlopsUtilization  "flops_utilization": achieved FLOP/s / datasheet peak (a fraction; needs peaks);
//                      shares of the compute peak and of the measured GEMM
//   kTokensPerSecond   "token_per_sec": Work::items per second; bandwidth shares (decode streams weights)
// and, read from a counter the case sets (metric_counter) rather than derived from its time:
//   kStartupSeconds    "startup_time(s)": a model's weight init + graph capture + warm-up generation
//   kTokenLatencyP50   "token_latency_p50(ms)", kTokenLatencyP90 "token_latency_p90(ms)": per-token
//   kBusBandwidth      "bus_bandwidth(GB/s)": a collective's bus bandwidth (nccl-tests' busbw: the
//                      algorithm bandwidth times the collective's factor), counter "busbw_GB/s"
//   kCompilationSeconds  "compilation_time(s)": how long its inductor package took to build (the seed's
//                      compilation_time(s) times torch.compile's first calls), counter "compile_s"
//   kAllReduceShare    "allreduce_share(%)": the share of a tensor-parallel decode token's time its
//                      all-reduces take (benchmarks/decode/tp_decode.cpp), counter "allreduce_%token"
//   kPowerWatts        "power(W)": a model's average GPU power over its timed generations (NVML's
//                      energy counter / their wall time; all the GPUs of a tensor-parallel launch),
//                      counter "avg_power_W"
//   kEnergyPerToken    "energy_per_token(J)": that energy / the new tokens generated, counter "J/token"
enum class Metric {
  kMemoryBandwidth, kFlopsUtilization, kTokensPerSecond, kStartupSeconds, kTokenLatencyP50, kTokenLatencyP90,
  kBusBandwidth, kCompilationSeconds, kAllReduceShare, kPowerWatts, kEnergyPerToken
};
const char* metric_name(Metric metric);
std::optional<Metric> metric_from_name(const std::string& name);
// The case counter a metric's actual is read from; nullptr for the metrics derived from time and work.
const char* metric_counter(Metric metric);
bool metric_lower_is_better(Metric metric);   // times and latencies

// How an experiment's cases become its `actual`: the mean over its cases (the shapes) of each case's
// median over repetitions, as gpt-fast averages its shapes (experiment_row, opbench/rows.h). A family
// that needs another rule adds it here and there.
enum class Aggregate { kMeanOverCases };

struct Experiment {
  std::string name;                      // gpt-fast's name, e.g. "layer_norm"
  Metric metric = Metric::kMemoryBandwidth;
  std::vector<c10::ScalarType> dtypes;   // the dtypes whose cases form it; empty: every dtype
  bool is_model = false;                 // a whole-model row (gpt-fast's is_model)
  Aggregate aggregate = Aggregate::kMeanOverCases;
  bool per_world_size = false;           // its rows are named <name>_n<processes> (a collective's figure
                                         // depends on how many GPUs take part, so do its targets)
  std::vector<std::string> backends;     // the backends whose cases form it; empty: every backend
  std::string cpu_name;                  // its rows' name on a CPU, where a model family runs a tiny
                                         // configuration ("llama2_tiny_bf16"); empty: `name`
  bool covers(c10::ScalarType dtype) const;
  bool covers(const std::string& backend) const;
};

// The name of the experiment's rows in a run of `world_size` processes on a GPU (`on_gpu`) or the CPU:
// `name` (on the CPU `cpu_name` where set), with `_n<world_size>` for a per-world-size experiment
// ("collective_n8"; targets accept any such name: per_world_row_name, opbench/targets.h).
std::string experiment_row_name(const Experiment& experiment, int world_size, bool on_gpu = true);


// The row's three numbers from one case's figures: actual, share of peak, share of ceiling (fractions).
struct MetricShares {
  std::optional<double> actual, of_peak, of_ceiling;
};
MetricShares metric_shares(Metric metric, const Figures& figures);

}  // namespace opbench
