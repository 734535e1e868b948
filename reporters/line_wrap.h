// Console lines that fit a terminal: a header line longer than kConsoleColumns (a long device name, a
// run's many ceilings) is broken after its "; " separators onto indented continuation lines.
#pragma once
#include <cstddef>
#include <string>

namespace opbench {

inline constexpr size_t kConsoleColumns = 100;

// `line` (no newline in it) as lines of at most `columns` characters where its "; " separators allow:
// each break goes after the last separator that keeps the line within `columns` (or, when none does,
// after the first one), and each continuation starts with two spaces. A line that fits is unchanged;
// lines are joined by "\n", with no newline at the end.
std::string wrap_line(const std::string& line, size_t columns = kConsoleColumns);

}  // namespace opbench
