// The console summary after a run: experiment x dtype x backend with target, actual, percent of
// target, of datasheet peak and of the measured ceiling, and status.
#pragma once
#include <ostream>
#include <vector>

#include "experiments.h"

namespace opbench {
void print_summary(std::ostream& out, const std::vector<ExperimentRow>& rows, const RunInfo& info,
                   const Ceilings& ceilings);
}  // namespace opbench
