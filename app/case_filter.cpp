#include "case_filter.h"

#include <regex>

#include "opbench/check.h"
#include "opbench/family.h"

namespace opbench {

std::string anchored_to_family(const std::string& filter) {
  for (const auto& family : registered_families())
    if (filter.rfind(family.name + "/", 0) == 0) return "^" + filter;
  return filter;
}

std::set<std::string> selected_cases(const CaseRegistry& cases, const std::string& filter) {
  std::string pattern = filter.empty() || filter == "all" ? "." : filter;
  bool negated = pattern[0] == '-';
  if (negated) pattern = pattern.substr(1);
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::extended);
  } catch (const std::regex_error& e) {
    throw Error("--benchmark_filter=" + filter + ": not a valid regular expression (" + e.what() + ")");
  }
  std::set<std::string> selected;
  for (const CaseInfo* info : cases.all()) {
    std::string registered = info->name() + "/iterations:1/manual_time";   // as Google Benchmark matches it
    if (std::regex_search(registered, re) != negated) selected.insert(info->name());
  }
  return selected;
}

}  // namespace opbench
