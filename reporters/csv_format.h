// The CSV format itself, for any table (the rows file, the replay CSV): minimal RFC 4180, quotes around
// cells holding , " or a newline, "" inside quotes. No LibTorch, so the reader can be fuzzed
// (tests/fuzz/inputs_fuzz.cpp).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace opbench {

// Rows of cells. Throws opbench::Error "<name>:<line>: ..." for a quoted cell that is never closed
// (instead of folding the rest of the file into one cell).
std::vector<std::vector<std::string>> parse_csv(std::string_view text, const std::string& name);
// parse_csv of a file; throws opbench::Error when it cannot be read, is not a regular file or is larger
// than kTableLimitBytes (opbench/bounded_read.h).
std::vector<std::vector<std::string>> read_csv(const std::string& path);
std::string csv_line(const std::vector<std::string>& cells);

}  // namespace opbench
