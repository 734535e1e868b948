// Reading one flag of bench_ops' command line and checking its value: shared by the sweep's flags
// (cli.cpp) and operator replay's (app/replay_flags.cpp). Each throws std::invalid_argument naming
// the flag and what it accepts.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace opbench {

// Matches `--name=value` or `--name value` (consuming the next argument); nullopt if not this flag.
inline std::optional<std::string> flag_value(const std::vector<std::string>& args, std::size_t& i,
                                             const std::string& name) {
  const std::string& arg = args[i];
  if (arg.rfind(name + "=", 0) == 0) return arg.substr(name.size() + 1);
  if (arg != name) return std::nullopt;
  if (i + 1 >= args.size()) throw std::invalid_argument(name + " needs a value");
  return args[++i];
}

// A bound as a user would write it: 0.001, 3600, 1e+06.
inline std::string bound_text(double bound) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", bound);
  return text;
}

// A decimal number in [min, max]: "1e3" and "0.5" are; " 1", "0x10", "nan" and "inf" are not.
inline double parse_number(const std::string& flag, const std::string& text, double min, double max) {
  std::size_t used = 0;
  double value = 0;
  const bool decimal = !text.empty() && text.find_first_not_of("0123456789+-.eE") == std::string::npos;
  try {
    if (decimal) value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (!decimal || used != text.size() || !(value >= min && value <= max))
    throw std::invalid_argument(flag + "=" + text + ": expected a number in [" + bound_text(min) + ", " +
                                bound_text(max) + "]");
  return value;
}

inline std::invalid_argument not_whole(const std::string& flag, const std::string& text, double min, double max) {
  char range[64];
  std::snprintf(range, sizeof range, "[%.0f, %.0f]", min, max);
  return std::invalid_argument(flag + "=" + text + ": expected a whole number in " + range);
}

// A whole number: "1.5" is refused, not truncated.
inline int parse_integer(const std::string& flag, const std::string& text, double min, double max) {
  double value = 0;
  try {
    value = parse_number(flag, text, min, max);
  } catch (const std::invalid_argument&) {
    throw not_whole(flag, text, min, max);
  }
  if (value != std::floor(value)) throw not_whole(flag, text, min, max);
  return static_cast<int>(value);
}

// A whole number written in digits only, as Google Benchmark and atoi read one: 1e2, +3 and 3.0 are refused.
inline int parse_digits(const std::string& flag, const std::string& text, double min, double max) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) throw not_whole(flag, text, min, max);
  return parse_integer(flag, text, min, max);
}

}  // namespace opbench
