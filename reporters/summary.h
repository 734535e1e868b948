// The summary after a run: experiment x dtype x backend with target, actual, percent of target, of
// datasheet peak and of the measured ceiling, and status; as a console table or as markdown.
#pragma once
#include <ostream>
#include <vector>

#include "experiments.h"

namespace opbench {
void print_summary(std::ostream& out, const std::vector<ExperimentRow>& rows, const RunInfo& info,
                   const Ceilings& ceilings);
// The same table as GitHub-flavoured markdown, headed by the device, run and ceilings (for PR comments).
void print_markdown_summary(std::ostream& out, const std::vector<ExperimentRow>& rows, const RunInfo& info,
                            const Ceilings& ceilings);
}  // namespace opbench
