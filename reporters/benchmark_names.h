// The names Google Benchmark gives opbench's cases, and filters over them. Every case is registered with
// Iterations(1) and UseManualTime() (the harness does its own sampling), so Google Benchmark appends
// "/iterations:1/manual_time" to its name; outputs show the stable case name `Family/dtype/shape/backend`
// (ForwardingReporter clears the suffix from each run), and the user's filters are written against it.
#pragma once
#include <string>
#include <vector>

namespace opbench {

// Removes the suffixes Iterations(1) and UseManualTime() add to a name, wherever they stand
// ("X/iterations:1/manual_time_mean" -> "X_mean"). Used for names printed outside a Run.
std::string strip_harness_suffix(const std::string& name);

// A filter regex as the user meant it against the stable names: every end anchor '$' (outside a
// bracket expression, unescaped: each alternative's of `A$|B$` too) also accepts the harness suffix.
std::string filter_for_registered_names(const std::string& filter);

// A filter regex that selects exactly these case names (special characters escaped), as registered.
std::string exact_names_filter(const std::vector<std::string>& names);

}  // namespace opbench
