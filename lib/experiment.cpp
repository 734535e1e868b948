#include "opbench/experiment.h"

#include <algorithm>

namespace opbench {

const char* metric_name(Metric metric) {
  static const char* const names[] = {"memory_bandwidth(GB/s)", "flops_utilization", "token_per_sec"};   // Metric's order
  return names[static_cast<int>(metric)];
}

std::optional<Metric> metric_from_name(const std::string& name) {
  for (Metric m : {Metric::kMemoryBandwidth, Metric::kFlopsUtilization, Metric::kTokensPerSecond})
    if (name == metric_name(m)) return m;
  return std::nullopt;
}

bool Experiment::covers(c10::ScalarType dtype) const {
  return dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

MetricShares metric_shares(Metric metric, const Figures& f) {
  switch (metric) {
    case Metric::kMemoryBandwidth: return {f.gbps, f.bandwidth_of_peak, f.bandwidth_of_ceiling};
    case Metric::kFlopsUtilization: return {f.compute_of_peak, f.compute_of_peak, f.compute_of_ceiling};
    case Metric::kTokensPerSecond: return {f.items_per_second, f.bandwidth_of_peak, f.bandwidth_of_ceiling};
  }
  return {};
}

}  // namespace opbench
