// Runs one definition's variants: under callgrind, the instruction counts of the measured loops
// (dumped by callgrind, one dump per phase, read by opbench-instr: tools/opbench_tools/instr_server.py);
// natively, the wall time per call.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "definitions.h"

namespace opbench::instr {

struct MeasureOptions {
  std::vector<std::string> variants;  // subset of variants_of(def); empty: all
  std::vector<int> threads{1, 2};
  int iters = 0;         // measured iterations per repeat; 0: the definition's, else kDefaultIters
  int repeats = 3;       // measured repeats (each with its own empty-loop baseline)
  bool extra_work = false;  // A/B: the statement runs twice per iteration
};

constexpr int kDefaultIters = 100;

// One (variant, threads) of a definition.
struct VariantResult {
  std::string variant;
  int threads = 1;
  int iters = 0;
  // Under callgrind: the dump labels, "<variant>.t<threads>.r<i>.base" then ".stmt", per repeat.
  std::vector<std::string> dumps;
  // Natively: wall ns per call, one per repeat (the median goes to the results).
  std::vector<double> wall_ns;
};

bool on_callgrind();

// Counts under callgrind (on_callgrind()), wall time otherwise. Throws on a bad variant.
std::vector<VariantResult> measure(const Definition& def, const MeasureOptions& opts);

}  // namespace opbench::instr
