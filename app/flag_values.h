// Reading one flag of bench_ops' command line and checking its value: shared by the sweep's flags
// (cli.cpp) and operator replay's (app/replay_flags.cpp). Each throws std::invalid_argument naming
// the flag and what it accepts.
#pragma once
#include <cmath>
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

inline double parse_number(const std::string& flag, const std::string& text, double min, double max) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !(value >= min && value <= max))
    throw std::invalid_argument(flag + "=" + text + ": expected a number in [" + std::to_string(min) +
                                ", " + std::to_string(max) + "]");
  return value;
}

// A whole number: "1.5" is refused, not truncated.
inline int parse_integer(const std::string& flag, const std::string& text, double min, double max) {
  double value = parse_number(flag, text, min, max);
  if (value != std::floor(value)) throw std::invalid_argument(flag + "=" + text + ": expected a whole number");
  return static_cast<int>(value);
}

}  // namespace opbench
