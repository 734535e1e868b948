// Which registered cases a --benchmark_filter selects, decided before anything runs, with Google
// Benchmark's own rules: an extended regular expression searched in the registered name (which carries
// the /iterations:1/manual_time suffix), a leading '-' negates, empty or "all" selects everything.
#pragma once
#include <set>
#include <string>

#include "opbench/cases.h"

namespace opbench {

// A filter that starts with a family's name and '/' means that family: it is anchored at the start, so
// `Gemv/` does not also select `GatherGemv/` (Google Benchmark searches anywhere in the name).
std::string anchored_to_family(const std::string& filter);

// Throws opbench::Error for a filter that is not a valid regular expression.
std::set<std::string> selected_cases(const CaseRegistry& cases, const std::string& filter);

}  // namespace opbench
