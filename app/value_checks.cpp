// Google Benchmark's flags and bench_ops' environment, checked (contract: value_checks.h).
#include "value_checks.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "flag_values.h"

namespace opbench {
namespace {

// What a value may be: one of `choices` ("a|b|c"), a whole number in [min, max], a number in
// [min, max], key=value pairs, or anything.
enum class Accepts { kChoice, kWhole, kNumber, kKeyValues, kAnything };

struct ValueRule {
  const char* name;      // the flag without "--"; its variable is the name in upper case
  Accepts accepts;
  const char* choices;   // kChoice
  double min, max;       // kWhole, kNumber
};

constexpr const char* kBool = "true|false|yes|no|1|0";

// Google Benchmark 1.7 and 1.8's flags, less the two parse_cli refuses (--benchmark_min_time and
// --benchmark_min_warmup_time: the stopping rule governs).
const std::vector<ValueRule>& gbench_rules() {
  static const std::vector<ValueRule> rules = {
      {"benchmark_filter", Accepts::kAnything, nullptr, 0, 0},
      {"benchmark_list_tests", Accepts::kChoice, kBool, 0, 0},
      {"benchmark_repetitions", Accepts::kWhole, nullptr, 1, 1e6},
      {"benchmark_enable_random_interleaving", Accepts::kChoice, kBool, 0, 0},
      {"benchmark_report_aggregates_only", Accepts::kChoice, kBool, 0, 0},
      {"benchmark_display_aggregates_only", Accepts::kChoice, kBool, 0, 0},
      {"benchmark_format", Accepts::kChoice, "console|json|csv", 0, 0},
      {"benchmark_out_format", Accepts::kChoice, "console|json|csv", 0, 0},
      {"benchmark_out", Accepts::kAnything, nullptr, 0, 0},
      {"benchmark_color", Accepts::kChoice, "auto|true|false|yes|no", 0, 0},
      {"benchmark_counters_tabular", Accepts::kChoice, kBool, 0, 0},
      {"benchmark_perf_counters", Accepts::kAnything, nullptr, 0, 0},
      {"benchmark_context", Accepts::kKeyValues, nullptr, 0, 0},
      {"benchmark_time_unit", Accepts::kChoice, "ns|us|ms|s", 0, 0},
      {"v", Accepts::kWhole, nullptr, 0, 100},
  };
  return rules;
}

// The choices as a sentence: "console, json or csv".
std::string choice_list(const std::string& choices) {
  std::vector<std::string> items;
  for (size_t begin = 0, bar; begin <= choices.size(); begin = bar + 1) {
    bar = std::min(choices.find('|', begin), choices.size());
    items.push_back(choices.substr(begin, bar - begin));
  }
  std::string text;
  for (size_t i = 0; i < items.size(); ++i)
    text += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
  return text;
}

bool is_choice(const std::string& value, const std::string& choices) {
  const std::string bounded = "|" + choices + "|";
  return !value.empty() && value.find('|') == std::string::npos && bounded.find("|" + value + "|") != std::string::npos;
}

// `shown` is how the user wrote it: "--benchmark_format=xml" or "BENCHMARK_FORMAT=xml".
void check_value(const ValueRule& rule, const std::string& label, const std::string& value) {
  const std::string shown = label + "=" + value;
  switch (rule.accepts) {
    case Accepts::kChoice:
      if (!is_choice(value, rule.choices))
        throw std::invalid_argument(shown + ": expected " + choice_list(rule.choices));
      return;
    case Accepts::kWhole:
      parse_digits(label, value, rule.min, rule.max);
      return;
    case Accepts::kNumber:
      parse_number(label, value, rule.min, rule.max);
      return;
    case Accepts::kKeyValues:
      for (size_t begin = 0, comma; begin <= value.size(); begin = comma + 1) {
        comma = std::min(value.find(',', begin), value.size());
        const std::string pair = value.substr(begin, comma - begin);
        if (pair.find('=') == std::string::npos || pair.front() == '=')
          throw std::invalid_argument(shown + ": expected key=value pairs separated by commas");
      }
      return;
    case Accepts::kAnything:
      return;
  }
}

std::string known_flags() {
  std::string text;
  for (const auto& rule : gbench_rules()) text += std::string(text.empty() ? "--" : ", --") + rule.name;
  return text;
}

const ValueRule* gbench_rule(const std::string& name) {
  for (const auto& rule : gbench_rules())
    if (name == rule.name) return &rule;
  return nullptr;
}

void check_gbench_flag(const std::string& arg) {
  if (arg.rfind("--", 0) != 0)
    throw std::invalid_argument(arg + ": not a flag (bench_ops takes no positional arguments; see --help)");
  const size_t equals = arg.find('=');
  const std::string name = arg.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
  const ValueRule* rule = gbench_rule(name);
  if (!rule) throw std::invalid_argument(arg + ": unknown flag (Google Benchmark's: " + known_flags() + ")");
  if (equals == std::string::npos) {
    if (rule->choices && std::string(rule->choices) == kBool) return;   // a bare boolean flag means true
    throw std::invalid_argument("--" + name + " needs a value: --" + name + "=VALUE");
  }
  const std::string value = arg.substr(equals + 1);
  if (name == "benchmark_out" && value.empty())
    throw std::invalid_argument("--benchmark_out= needs a file name");
  check_value(*rule, "--" + name, value);
}

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
  return text;
}

// OPBENCH_PYTHON: the python that builds inductor packages; OPBENCH_INDUCTOR_CACHE: their folder.
void check_path_variable(const std::string& name, const std::string& value) {
  struct stat info {};
  const bool exists = ::stat(value.c_str(), &info) == 0;
  if (name == "OPBENCH_PYTHON" && (!exists || !S_ISREG(info.st_mode) || ::access(value.c_str(), X_OK) != 0))
    throw std::invalid_argument(name + "=" + value + ": expected an executable python (unset: the python of this build)");
  if (name == "OPBENCH_INDUCTOR_CACHE" && exists && !S_ISDIR(info.st_mode))
    throw std::invalid_argument(name + "=" + value + ": expected a folder (it exists and is not one)");
}

const std::vector<ValueRule>& opbench_rules() {
  static const std::vector<ValueRule> rules = {
      {"OPBENCH_LAUNCH_RULES", Accepts::kChoice, "h100|h200", 0, 0},
      {"OPBENCH_COLLECTIVE_TIMEOUT_S", Accepts::kNumber, nullptr, 0.001, 1e7},
      {"OPBENCH_COLLECTIVE_EXIT_RANK", Accepts::kWhole, nullptr, 0, 1e6},
      {"OPBENCH_COLLECTIVE_CORRUPT_RANK", Accepts::kWhole, nullptr, 0, 1e6},
      {"OPBENCH_COLLECTIVE_EXIT_AT", Accepts::kAnything, nullptr, 0, 0},
      {"OPBENCH_NCCL_SYMMETRIC", Accepts::kChoice, "0|1", 0, 0},
      {"OPBENCH_TP_ALLREDUCE", Accepts::kChoice, "nccl|lsa", 0, 0},
      {"OPBENCH_INDUCTOR_CACHE", Accepts::kAnything, nullptr, 0, 0},
      {"OPBENCH_PYTHON", Accepts::kAnything, nullptr, 0, 0},
  };
  return rules;
}

}  // namespace

void check_gbench_flags(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) check_gbench_flag(args[i]);
}

void check_environment(const EnvLookup& env) {
  for (const auto& rule : gbench_rules()) {
    const std::string name = upper(rule.name);
    std::optional<std::string> value = env(name);
    if (value && !value->empty() && rule.accepts != Accepts::kAnything) check_value(rule, name, *value);
  }
  for (const auto& rule : opbench_rules()) {
    std::optional<std::string> value = env(rule.name);
    if (!value || value->empty()) continue;
    check_value(rule, rule.name, *value);
    check_path_variable(rule.name, *value);
  }
}

std::vector<std::string> checked_variables() {
  std::vector<std::string> names;
  for (const auto& rule : gbench_rules()) names.push_back(upper(rule.name));
  for (const auto& rule : opbench_rules()) names.push_back(rule.name);
  return names;
}

}  // namespace opbench
