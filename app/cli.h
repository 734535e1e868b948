// bench_ops' own flags, parsed before Google Benchmark sees argv. Every Google Benchmark flag
// (--benchmark_filter, --benchmark_out, --benchmark_repetitions, ...) passes through untouched.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "opbench/cases.h"
#include "opbench/trace.h"
#include "replay/register.h"
#include "split.h"

namespace opbench {

struct CliOptions {
  RunOptions run;                     // cache mode, GPU timer, stopping rule
  std::optional<std::string> output;  // --output FILE: experiment rows CSV (+ <base>.json)
  std::optional<std::string> targets; // --targets FILE|DIR (default: the build's targets/)
  std::optional<OplogOptions> oplog;
  TraceOptions trace;                 // --opbench_trace DIR, --opbench_trace_iters N
  int cpu_threads = 1;                // --opbench_cpu_threads: ATen intra-op threads on CPU runs
  bool help = false;
  bool version = false;               // --version
  bool list = false;                  // --opbench_list
  bool full_console = false;          // --opbench_console=full: Google Benchmark's own table
  std::optional<std::string> markdown;   // --opbench_markdown FILE
  std::optional<std::string> gpu_lock;   // --opbench_gpu_lock FILE: measure only while holding its lock
  std::optional<Shard> shard;            // --opbench_shard=I/N: this process runs share I of N (split.h)
  std::optional<std::string> shard_times;   // --opbench_shard_times FILE.json: a previous run's times
  std::optional<std::string> run_id;     // --opbench_run_id: the run id the rows carry (opbench-shard
                                         // gives its shards one); default: a new one
  std::vector<std::string> passthrough;   // argv[0] and every flag not ours, in order
};

// REQUIRES: args[0] is the program name. Throws std::invalid_argument naming the flag and the
// accepted values on a bad value (e.g. --opbench_cache=lukewarm) or a missing one.
CliOptions parse_cli(const std::vector<std::string>& args);

// The text --help prints before Google Benchmark's own flags.
std::string cli_help();

}  // namespace opbench
