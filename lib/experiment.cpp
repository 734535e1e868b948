#include "opbench/experiment.h"

#include <algorithm>

namespace opbench {

const char* metric_name(Metric metric) {
  static const char* const names[] = {"memory_bandwidth(GB/s)", "flops_utilization", "token_per_sec",
                                      "startup_time(s)", "token_latency_p50(ms)", "token_latency_p90(ms)",
                                      "bus_bandwidth(GB/s)", "compilation_time(s)", "allreduce_share(%)",
                                      "power(W)", "energy_per_token(J)"};   // Metric's order
  return names[static_cast<int>(metric)];
}

std::optional<Metric> metric_from_name(const std::string& name) {
  for (Metric m : {Metric::kMemoryBandwidth, Metric::kFlopsUtilization, Metric::kTokensPerSecond,
                   Metric::kStartupSeconds, Metric::kTokenLatencyP50, Metric::kTokenLatencyP90,
                   Metric::kBusBandwidth, Metric::kCompilationSeconds, Metric::kAllReduceShare,
                   Metric::kPowerWatts, Metric::kEnergyPerToken})
    if (name == metric_name(m)) return m;
  return std::nullopt;
}

const char* metric_counter(Metric metric) {
  switch (metric) {
    case Metric::kStartupSeconds: return "startup_s";
    case Metric::kTokenLatencyP50: return "token_p50_ms";
    case Metric::kTokenLatencyP90: return "token_p90_ms";
    case Metric::kBusBandwidth: return "busbw_GB/s";
    case Metric::kCompilationSeconds: return "compile_s";
    case Metric::kAllReduceShare: return "allreduce_%token";
    case Metric::kPowerWatts: return "avg_power_W";
    case Metric::kEnergyPerToken: return "J/token";
    default: return nullptr;
  }
}

bool metric_lower_is_better(Metric metric) {
  return metric == Metric::kStartupSeconds || metric == Metric::kTokenLatencyP50 ||
         metric == Metric::kTokenLatencyP90 || metric == Metric::kCompilationSeconds ||
         metric == Metric::kAllReduceShare || metric == Metric::kPowerWatts || metric == Metric::kEnergyPerToken;
}

std::string experiment_row_name(const Experiment& experiment, int world_size, bool on_gpu) {
  const std::string& name = on_gpu || experiment.cpu_name.empty() ? experiment.name : experiment.cpu_name;
  return experiment.per_world_size ? name + "_n" + std::to_string(world_size) : name;
}

bool Experiment::covers(c10::ScalarType dtype) const {
  return dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

bool Experiment::covers(const std::string& backend) const {
  return backends.empty() || std::find(backends.begin(), backends.end(), backend) != backends.end();
}

MetricShares metric_shares(Metric metric, const Figures& f) {
  switch (metric) {
    case Metric::kMemoryBandwidth: return {f.gbps, f.bandwidth_of_peak, f.bandwidth_of_ceiling};
    case Metric::kFlopsUtilization: return {f.compute_of_peak, f.compute_of_peak, f.compute_of_ceiling};
    case Metric::kTokensPerSecond: return {f.items_per_second, f.bandwidth_of_peak, f.bandwidth_of_ceiling};
    default: return {};   // counter metrics: read from the case's counter
  }
  return {};
}

}  // namespace opbench
