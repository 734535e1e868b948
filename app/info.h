// What bench_ops says about itself without running a case: --version and --opbench_list.
#pragma once
#include <ostream>

#include "driver.h"
#include "opbench/device.h"

namespace opbench {

// "bench_ops (opbench <sha>) torch <v>, CUDA <v>|no CUDA, Google Benchmark <1.7|1.8>".
void print_version(std::ostream& out, const BuildInfo& build);

// Every registered family: name, what it measures, experiments (name, metric), dtypes, backends (GPU
// only ones marked), GPU and CPU shapes, and how many cases it has on `device`.
void print_family_list(std::ostream& out, const DeviceInfo& device);

}  // namespace opbench
