// bench_ops' command line: its own flags, parsed before Google Benchmark sees argv (operator replay's
// are parsed by app/replay_flags.h through MoreFlags), and the Google Benchmark flags bench_ops
// must know. Every Google Benchmark flag (--benchmark_filter, --benchmark_out,
// --benchmark_repetitions, ...) passes through untouched.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "opbench/cases.h"
#include "opbench/trace.h"
#include "shard_selection.h"

namespace opbench {

struct CliOptions {
  RunOptions run;                     // cache mode, GPU timer, stopping rule
  std::optional<std::string> output;  // --output FILE: experiment rows CSV (+ <base>.json)
  std::optional<std::string> targets; // --targets FILE|DIR (default: the build's targets/)
  TraceOptions trace;                 // --opbench_trace DIR, --opbench_trace_iters N
  int cpu_threads = 1;                // --opbench_cpu_threads: ATen intra-op threads on CPU runs
  bool help = false;
  bool version = false;               // --version
  bool list = false;                  // --opbench_list
  bool full_console = false;          // --opbench_console=full: Google Benchmark's own table
  std::optional<std::string> markdown;   // --opbench_markdown FILE
  std::optional<std::string> gpu_lock;   // --opbench_gpu_lock FILE: measure only while holding its lock
  std::optional<Shard> shard;            // --opbench_shard=I/N: this process runs share I of N (shard_selection.h)
  std::optional<std::string> shard_times;   // --opbench_shard_times FILE.json: a previous run's times
  std::optional<std::string> run_id;     // --opbench_run_id: the run id the rows carry (opbench-shard
                                         // gives its shards one); default: a new one
  std::optional<std::string> inductor_cache;      // --opbench_inductor_cache DIR (inductor_packages.h)
  std::optional<std::string> inductor_settings;   // --opbench_inductor_settings FILE.json
  std::optional<std::string> inductor_plan;       // --opbench_inductor_plan FILE|-: write it and exit
  bool inductor_build = false;                    // --opbench_inductor_build: build before running
  std::vector<std::string> passthrough;   // argv[0] and every flag not ours, in order
};

// Another program's flags (operator replay's): takes args[i] (and its value, advancing i) and returns
// true, or returns false for an argument it does not know, which then passes through.
using MoreFlags = std::function<bool(const std::vector<std::string>& args, std::size_t& i)>;

// REQUIRES: args[0] is the program name. Throws std::invalid_argument naming the flag and the
// accepted values on a bad value (e.g. --opbench_cache=lukewarm) or a missing one.
CliOptions parse_cli(const std::vector<std::string>& args, const MoreFlags& more_flags = nullptr);

// The text --help prints before Google Benchmark's own flags; `more_help` (replay's flags) comes after
// the flags of several processes.
std::string cli_help(const std::string& more_help = "");

// The Google Benchmark flags bench_ops must know to build its reporters (GB takes `--flag=value`).
struct GbenchFlags {
  std::string format = "console";     // --benchmark_format
  std::string out;                    // --benchmark_out
  std::string out_format = "json";    // --benchmark_out_format
  bool list_tests = false;            // --benchmark_list_tests
  std::string time_unit = "us";       // --benchmark_time_unit: ns, us, ms or s
  bool time_unit_given = false;
  std::string filter = ".";           // --benchmark_filter as the user gave it (every case: ".")
};
GbenchFlags gbench_flags(const std::vector<std::string>& args);

}  // namespace opbench
