// Flags a reporter shows beside a case's figures, read from the counters CaseContext::time sets.
#pragma once
#include <benchmark/benchmark.h>

#include <string>

#include "opbench/cases.h"

namespace opbench {

inline double counter_or(const benchmark::BenchmarkReporter::Run& run, const char* name, double fallback) {
  auto it = run.counters.find(name);
  return it == run.counters.end() ? fallback : static_cast<double>(it->second);
}

// More than kThrottledShareFlag of the samples taken were discarded as throttled.
inline bool run_throttled(const benchmark::BenchmarkReporter::Run& run) {
  return throttled_share_exceeded(counter_or(run, "throttled_samples", 0), counter_or(run, "samples", 0));
}

// " THROTTLED(k/n)" and/or " INJECTED(+d us)", or "".
inline std::string run_flags(const benchmark::BenchmarkReporter::Run& run) {
  std::string flags;
  if (run_throttled(run)) {
    const double throttled = counter_or(run, "throttled_samples", 0);
    flags += " THROTTLED(" + std::to_string(static_cast<long>(throttled)) + "/" +
             std::to_string(static_cast<long>(throttled + counter_or(run, "samples", 0))) + ")";
  }
  if (counter_or(run, "injected_delay_us", 0) > 0) flags += " INJECTED_SLOWDOWN";
  return flags;
}

}  // namespace opbench
