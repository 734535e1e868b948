// libFuzzer target for the two user inputs bench_ops reads besides operator logs: targets files
// (lib/targets.cpp) and an existing rows CSV (reporters/csv_format.cpp). Build and run:
// scripts/fuzz.sh inputs.
// The first byte picks the reader. Besides "no crash, no sanitizer report", it checks their promises:
// they either return or throw opbench::Error (never another exception), a parsed targets file holds
// only positive finite targets, and CSV rows written back with csv_line parse to the same cells.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "csv_format.h"
#include "opbench/check.h"
#include "opbench/targets.h"

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "inputs_fuzz: invariant broken: %s\n", what);
  std::abort();
}

void fuzz_targets(const std::string& text) {
  try {
    opbench::TargetFile file = opbench::parse_target_text(text, "fuzz.json");
    for (const auto& t : file.targets) {
      if (t.bound_fraction) {   // a share of the row's bound instead of a number
        if (!(*t.bound_fraction > 0 && *t.bound_fraction <= 1)) broken("a bound_fraction outside (0, 1]");
      } else if (!(t.value > 0) || !std::isfinite(t.value)) {
        broken("a target that is not a positive finite number");
      }
    }
  } catch (const opbench::Error&) {
  }
}

void fuzz_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  try {
    rows = opbench::parse_csv(text, "fuzz.csv");
  } catch (const opbench::Error&) {
    return;
  }
  std::string written;
  for (const auto& row : rows) written += opbench::csv_line(row);
  if (opbench::parse_csv(written, "rewritten.csv") != rows) broken("csv_line does not round-trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0)
    fuzz_targets(text);
  else
    fuzz_csv(text);
  return 0;
}
