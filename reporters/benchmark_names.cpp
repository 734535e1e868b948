// Google Benchmark names of the cases and filters over them (contract: benchmark_names.h).
#include "benchmark_names.h"

namespace opbench {
namespace {

const std::string kSuffixes[] = {"/iterations:1", "/manual_time"};

}  // namespace

std::string strip_harness_suffix(const std::string& name) {
  std::string out = name;
  for (const auto& suffix : kSuffixes)
    for (size_t at = out.find(suffix); at != std::string::npos; at = out.find(suffix, at))
      out.erase(at, suffix.size());
  return out;
}

std::string filter_for_registered_names(const std::string& filter) {
  if (filter.empty() || filter.back() != '$') return filter;
  return filter.substr(0, filter.size() - 1) + "(/iterations:1)?(/manual_time)?$";
}

std::string exact_names_filter(const std::vector<std::string>& names) {
  std::string alternatives;
  for (const auto& name : names) {
    std::string escaped;
    for (char c : name) {
      if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) escaped += '\\';
      escaped += c;
    }
    alternatives += (alternatives.empty() ? "" : "|") + escaped;
  }
  return filter_for_registered_names("^(" + alternatives + ")$");
}

}  // namespace opbench
