// --opbench_list: what bench_ops says about its families without running a case.
#pragma once
#include <ostream>

#include "opbench/device.h"

namespace opbench {

// Every registered family: name, what it measures, experiments (name, metric), dtypes, backends (GPU
// only ones marked), GPU and CPU shapes, and how many cases it has on `device`.
void print_family_list(std::ostream& out, const DeviceInfo& device);

}  // namespace opbench
