#include "cli.h"

#include <stdexcept>

namespace opbench {
namespace {

// Matches `--name=value` or `--name value` (consuming the next argument); nullopt if not this flag.
std::optional<std::string> flag_value(const std::vector<std::string>& args, size_t& i,
                                      const std::string& name) {
  const std::string& arg = args[i];
  if (arg.rfind(name + "=", 0) == 0) return arg.substr(name.size() + 1);
  if (arg != name) return std::nullopt;
  if (i + 1 >= args.size()) throw std::invalid_argument(name + " needs a value");
  return args[++i];
}

double parse_number(const std::string& flag, const std::string& text, double min, double max) {
  size_t used = 0;
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

OplogOptions& oplog(CliOptions& cli) {
  if (!cli.oplog) cli.oplog.emplace();
  return *cli.oplog;
}

}  // namespace

CliOptions parse_cli(const std::vector<std::string>& args) {
  CliOptions cli;
  StoppingRule& rule = cli.run.rule;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i == 0) {
      cli.passthrough.push_back(args[0]);
    } else if (args[i] == "--help" || args[i] == "-h") {
      cli.help = true;
    } else if (auto v = flag_value(args, i, "--output")) {
      cli.output = *v;
    } else if (auto v = flag_value(args, i, "--targets")) {
      cli.targets = *v;
    } else if (auto v = flag_value(args, i, "--opbench_cache")) {
      if (*v != "cold" && *v != "warm")
        throw std::invalid_argument("--opbench_cache=" + *v + ": expected cold or warm");
      cli.run.cache = *v == "cold" ? CacheMode::kCold : CacheMode::kWarm;
    } else if (auto v = flag_value(args, i, "--opbench_timer")) {
      if (*v != "events" && *v != "graph")
        throw std::invalid_argument("--opbench_timer=" + *v + ": expected events or graph");
      cli.run.gpu_timer = *v == "events" ? TimerKind::kEvents : TimerKind::kGraph;
    } else if (auto v = flag_value(args, i, "--opbench_max_noise")) {
      rule.max_noise = parse_number("--opbench_max_noise", *v, 0, 1);
    } else if (auto v = flag_value(args, i, "--opbench_max_time")) {
      rule.max_seconds = parse_number("--opbench_max_time", *v, 0.001, 3600);
    } else if (auto v = flag_value(args, i, "--opbench_min_samples")) {
      rule.min_samples = static_cast<int>(parse_number("--opbench_min_samples", *v, 1, 1e6));
    } else if (auto v = flag_value(args, i, "--opbench_cpu_threads")) {
      cli.cpu_threads = static_cast<int>(parse_number("--opbench_cpu_threads", *v, 1, 4096));
    } else if (auto v = flag_value(args, i, "--opbench_trace")) {
      cli.trace.dir = *v;
    } else if (auto v = flag_value(args, i, "--opbench_trace_iters")) {
      cli.trace.iterations = static_cast<int>(parse_number("--opbench_trace_iters", *v, 1, 1e6));
    } else if (auto v = flag_value(args, i, "--oplog")) {
      oplog(cli).path = *v;
    } else if (auto v = flag_value(args, i, "--oplog_dtype")) {
      if (*v != "f16" && *v != "bf16" && *v != "f32")
        throw std::invalid_argument("--oplog_dtype=" + *v + ": expected f16, bf16 or f32");
      oplog(cli).dtype = *v;
    } else if (auto v = flag_value(args, i, "--oplog_max_inputs")) {
      oplog(cli).max_inputs = static_cast<int>(parse_number("--oplog_max_inputs", *v, 1, 1e9));
    } else if (args[i] == "--channels_last") {
      oplog(cli).channels_last = true;
    } else {
      cli.passthrough.push_back(args[i]);
    }
  }
  if (cli.oplog && cli.oplog->path.empty())
    throw std::invalid_argument("--oplog_dtype, --oplog_max_inputs and --channels_last need --oplog FILE|DIR");
  return cli;
}

std::string cli_help() {
  return R"(bench_ops: PyTorch operator benchmarks (Google Benchmark + LibTorch)

Cases are named Family/dtype/shape/backend, e.g. LayerNorm/bf16/4096x8192/aten.
  bench_ops --benchmark_filter='LayerNorm/.*'      one family
  bench_ops --benchmark_list_tests                 list the cases
  bench_ops --output results/run.csv               + experiment rows (CSV) and dashboard JSON

opbench flags:
  --output FILE               append experiment rows (target/actual per experiment and dtype) to
                              FILE (CSV) and dashboard records to <FILE without .csv>.json
  --targets FILE|DIR          targets file or folder (default: the source tree's targets/)
  --opbench_cache=cold|warm   cold (default): flush L2 (a buffer of 2x L2 zeroed) before every
                              timed iteration; warm: no flush
  --opbench_timer=events|graph
                              events (default): CUDA events around each iteration; graph: a batch
                              of iterations captured in a CUDA graph, time per replay / batch
  --opbench_max_noise=F       stop a case once the relative noise of its median < F (default
                              0.005; 1.2533 * sample stdev/mean / sqrt(n), 5% tails trimmed) ...
  --opbench_min_samples=N     ... after at least N samples (default 10) ...
  --opbench_max_time=S        ... or after S seconds of sampling (default 1.0)
  --opbench_cpu_threads=N     ATen threads for CPU runs (default 1: spinning worker threads make
                              timings on a shared or small machine erratic)
  --opbench_trace DIR         after timing a case, record --opbench_trace_iters=N (default 20)
                              iterations with the profiler to DIR/<case>.trace.json and report
                              gpu_util and mm_util (busy / wall time of the same N iterations
                              run without the profiler); analyze any trace with tools/trace_util

Operator replay (instead of the families):
  --oplog FILE|DIR            replay every operator input recorded in an operator-input log
  --oplog_dtype=f16|bf16|f32  recast the floating-point inputs
  --oplog_max_inputs=N        at most N inputs per operator
  --channels_last             4-d inputs in channels-last layout

Each case reports its median time (Google Benchmark's time column; manual time) and counters
GB/s, TFLOP/s, %peak (datasheet), %ceiling (of this run's Ceiling cases, when they ran), bytes,
flops, samples, noise_pct (sample spread), median_noise_pct (the median's), converged.
On a machine without a CUDA device the CPU cases run, timed with the host clock.

Google Benchmark flags follow.
)";
}

}  // namespace opbench
