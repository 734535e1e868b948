// bench_ops' own flags, parsed before Google Benchmark sees argv. Every Google Benchmark flag
// (--benchmark_filter, --benchmark_out, --benchmark_repetitions, ...) passes through untouched.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "opbench/cases.h"
#include "opbench/trace.h"

namespace opbench {

// --oplog: replay a recorded operator-input log (or a folder of them) instead of the families.
struct OplogOptions {
  std::string path;                   // FILE or DIR
  std::optional<std::string> dtype;   // --oplog_dtype f16|bf16|f32: recast floating inputs
  int max_inputs = 0;                 // --oplog_max_inputs N: per operator, 0 = all
  bool channels_last = false;         // --channels_last: 4-d inputs in channels-last layout
};

struct CliOptions {
  RunOptions run;                     // cache mode, GPU timer, stopping rule
  std::optional<std::string> output;  // --output FILE: experiment rows CSV (+ <base>.json)
  std::optional<std::string> targets; // --targets FILE|DIR (default: the build's targets/)
  std::optional<OplogOptions> oplog;
  TraceOptions trace;                 // --opbench_trace DIR, --opbench_trace_iters N
  int cpu_threads = 1;                // --opbench_cpu_threads: ATen intra-op threads on CPU runs
  bool help = false;
  std::vector<std::string> passthrough;   // argv[0] and every flag not ours, in order
};

// REQUIRES: args[0] is the program name. Throws std::invalid_argument naming the flag and the
// accepted values on a bad value (e.g. --opbench_cache=lukewarm) or a missing one.
CliOptions parse_cli(const std::vector<std::string>& args);

// The text --help prints before Google Benchmark's own flags.
std::string cli_help();

}  // namespace opbench
