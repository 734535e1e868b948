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
  std::string out;
  bool escaped = false, in_brackets = false;
  for (size_t i = 0; i < filter.size(); ++i) {
    const char c = filter[i];
    if (c == '$' && !escaped && !in_brackets) out += "(/iterations:1)?(/manual_time)?";
    out += c;
    if (escaped) {
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
    } else if (c == '[' && !in_brackets) {
      in_brackets = true;
      if (i + 1 < filter.size() && filter[i + 1] == '^') out += filter[++i];   // "[^" or "[^]": the ']' is literal
      if (i + 1 < filter.size() && filter[i + 1] == ']') out += filter[++i];
    } else if (c == ']' && in_brackets) {
      in_brackets = false;
    }
  }
  return out;
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
