// The identity of one bench_ops run, written beside every row (CSV cells, dashboard records) and shown
// in the console title, the summaries and Google Benchmark's JSON context. Its timer and cache are the
// run's settings (--opbench_timer, --opbench_cache); a row names the timer and cache mode that measured
// its own cases (ExperimentRow, opbench/rows.h), which a case may choose for itself.
#pragma once
#include <string>

#include "opbench/device.h"

namespace opbench {

struct RunInfo {
  DeviceInfo device;
  std::string torch_version, cuda_version, opbench_sha;
  std::string timer, cache;        // the run's: "events"/"graph"/"cupti"/"host", "cold"/"warm"/"none"
  std::string host_cpu;            // CPU model of the host
  double host_memory_gb = 0;
  std::string run_id;              // 12 hex digits, new for every bench_ops run: tells appended runs apart
  std::string timestamp;           // when the run started, ISO 8601 UTC ("2026-11-23T20:50:00Z")
  int world_size = 1;              // processes of a distributed launch (opbench/world.h); 1 otherwise
};

}  // namespace opbench
