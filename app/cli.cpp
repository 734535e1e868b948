#include "cli.h"

#include <optional>
#include <regex>
#include <stdexcept>

#include "flag_values.h"

namespace opbench {
namespace {

// Google Benchmark flags that would be silently ignored or misleading here: refused with what to use.
void refuse_ignored_gbench_flag(const std::string& arg, bool full_console) {
  auto is = [&](const char* name) { return arg == name || arg.rfind(std::string(name) + "=", 0) == 0; };
  if (is("--benchmark_min_time") || is("--benchmark_min_warmup_time"))
    throw std::invalid_argument(arg.substr(0, arg.find('=')) +
                                ": each opbench case samples until its median is steady; set that rule with "
                                "--opbench_max_noise, --opbench_min_samples and --opbench_max_time");
  if (is("--benchmark_counters_tabular") && !full_console)
    throw std::invalid_argument("--benchmark_counters_tabular applies to Google Benchmark's table: add "
                                "--opbench_console=full (the default view is always one line per case)");
}

// PCT[:REGEX], e.g. 5 or 5:^Gemv/bf16/
InjectedSlowdown parse_injection(const std::string& text) {
  const size_t colon = text.find(':');
  InjectedSlowdown inject;
  inject.fraction = parse_number("--opbench_inject_slowdown", text.substr(0, colon), 0.01, 1000) / 100;
  if (colon != std::string::npos) inject.pattern = text.substr(colon + 1);
  try {
    std::regex check(inject.pattern);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("--opbench_inject_slowdown=" + text + ": '" + inject.pattern +
                                "' is not a regular expression (" + e.what() + ")");
  }
  return inject;
}

}  // namespace

CliOptions parse_cli(const std::vector<std::string>& args, const MoreFlags& more_flags) {
  CliOptions cli;
  StoppingRule& rule = cli.run.rule;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i == 0) {
      cli.passthrough.push_back(args[0]);
    } else if (args[i] == "--help" || args[i] == "-h") {
      cli.help = true;
    } else if (args[i] == "--version") {
      cli.version = true;
    } else if (args[i] == "--opbench_list") {
      cli.list = true;
    } else if (auto v = flag_value(args, i, "--opbench_console")) {
      if (*v != "compact" && *v != "full")
        throw std::invalid_argument("--opbench_console=" + *v + ": expected compact or full");
      cli.full_console = *v == "full";
    } else if (auto v = flag_value(args, i, "--opbench_markdown")) {
      cli.markdown = *v;
    } else if (auto v = flag_value(args, i, "--opbench_gpu_lock")) {
      cli.gpu_lock = *v;
    } else if (auto v = flag_value(args, i, "--output")) {
      cli.output = *v;
    } else if (auto v = flag_value(args, i, "--targets")) {
      cli.targets = *v;
    } else if (auto v = flag_value(args, i, "--opbench_cache")) {
      if (*v != "cold" && *v != "warm")
        throw std::invalid_argument("--opbench_cache=" + *v + ": expected cold or warm");
      cli.run.cache = *v == "cold" ? CacheMode::kCold : CacheMode::kWarm;
    } else if (auto v = flag_value(args, i, "--opbench_timer")) {
      if (*v != "events" && *v != "graph" && *v != "cupti")
        throw std::invalid_argument("--opbench_timer=" + *v + ": expected events, graph or cupti");
      cli.run.gpu_timer = *v == "events" ? TimerKind::kEvents : *v == "graph" ? TimerKind::kGraph : TimerKind::kCupti;
    } else if (auto v = flag_value(args, i, "--opbench_throttle_threshold")) {
      cli.run.throttle_threshold = parse_number("--opbench_throttle_threshold", *v, 0, 10);
    } else if (auto v = flag_value(args, i, "--opbench_inject_slowdown")) {
      cli.run.inject = parse_injection(*v);
    } else if (auto v = flag_value(args, i, "--opbench_max_noise")) {
      rule.max_noise = parse_number("--opbench_max_noise", *v, 0, 1);
    } else if (auto v = flag_value(args, i, "--opbench_max_time")) {
      rule.max_seconds = parse_number("--opbench_max_time", *v, 0.001, 3600);
    } else if (auto v = flag_value(args, i, "--opbench_min_samples")) {
      rule.min_samples = parse_integer("--opbench_min_samples", *v, 1, 1e6);
    } else if (auto v = flag_value(args, i, "--opbench_model_layers")) {
      cli.run.model_layers = parse_integer("--opbench_model_layers", *v, 1, 1024);
    } else if (auto v = flag_value(args, i, "--opbench_cpu_threads")) {
      cli.cpu_threads = parse_integer("--opbench_cpu_threads", *v, 1, 4096);
    } else if (auto v = flag_value(args, i, "--opbench_trace")) {
      cli.trace.dir = *v;
    } else if (auto v = flag_value(args, i, "--opbench_trace_iters")) {
      cli.trace.iterations = parse_integer("--opbench_trace_iters", *v, 1, 1e6);
    } else if (auto v = flag_value(args, i, "--opbench_shard")) {
      cli.shard = parse_shard(*v);
    } else if (auto v = flag_value(args, i, "--opbench_shard_times")) {
      cli.shard_times = *v;
    } else if (auto v = flag_value(args, i, "--opbench_run_id")) {
      if (v->empty() || v->size() > 64 || v->find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
        throw std::invalid_argument("--opbench_run_id=" + *v + ": expected 1 to 64 hex digits");
      cli.run_id = *v;
    } else if (auto v = flag_value(args, i, "--opbench_inductor_cache")) {
      cli.inductor_cache = *v;
    } else if (auto v = flag_value(args, i, "--opbench_inductor_settings")) {
      cli.inductor_settings = *v;
    } else if (auto v = flag_value(args, i, "--opbench_inductor_plan")) {
      cli.inductor_plan = *v;
    } else if (args[i] == "--opbench_inductor_build") {
      cli.inductor_build = true;
    } else if (more_flags && more_flags(args, i)) {
      // another program's flag (operator replay's), taken by more_flags
    } else {
      cli.passthrough.push_back(args[i]);
    }
  }
  for (size_t i = 1; i < cli.passthrough.size(); ++i) refuse_ignored_gbench_flag(cli.passthrough[i], cli.full_console);
  if (cli.run.gpu_timer == TimerKind::kCupti && !cli.trace.dir.empty())
    throw std::invalid_argument("--opbench_timer=cupti and --opbench_trace both need CUPTI, which serves one client "
                                "per process: trace with the events or graph timer");
  if (cli.shard_times && !cli.shard)
    throw std::invalid_argument("--opbench_shard_times applies to a sharded run: add --opbench_shard=I/N");
  return cli;
}

GbenchFlags gbench_flags(const std::vector<std::string>& args) {
  GbenchFlags flags;
  auto value = [](const std::string& arg, const std::string& name) -> std::optional<std::string> {
    if (arg.rfind(name + "=", 0) == 0) return arg.substr(name.size() + 1);
    return std::nullopt;
  };
  for (const auto& arg : args) {
    if (auto v = value(arg, "--benchmark_format")) flags.format = *v;
    if (auto v = value(arg, "--benchmark_filter")) flags.filter = *v;
    if (auto v = value(arg, "--benchmark_out")) flags.out = *v;
    if (auto v = value(arg, "--benchmark_out_format")) flags.out_format = *v;
    if (auto v = value(arg, "--benchmark_time_unit")) {
      flags.time_unit = *v;
      flags.time_unit_given = true;
    }
    if (arg == "--benchmark_list_tests" || value(arg, "--benchmark_list_tests").value_or("") == "true")
      flags.list_tests = true;
  }
  return flags;
}

std::string cli_help(const std::string& more_help) {
  return R"(bench_ops: PyTorch operator benchmarks (Google Benchmark + LibTorch)

Cases are named Family/dtype/shape/backend, e.g. LayerNorm/bf16/4096x8192/aten. A filter is a
regular expression searched in the name; one that starts with a family name and '/' selects that
family only (Gemv/ does not select GatherGemv/).
  bench_ops --benchmark_filter='LayerNorm/.*'      one family
  bench_ops --benchmark_list_tests                 list the cases
  bench_ops --output results/run.csv               + experiment rows (CSV) and dashboard JSON
  bench_ops --opbench_list                         families, their experiments, dtypes, backends, shapes

opbench flags:
  --version                   opbench sha, torch, CUDA and Google Benchmark versions
  --opbench_list              list the families (what each measures, experiments, dtypes, backends,
                              GPU and CPU shapes) and exit
  --output FILE.csv           append experiment rows (target/actual per experiment, dtype, backend)
                              to FILE.csv and dashboard records to FILE.json (JSON Lines: one record
                              per line); each row is written when its experiment's last case is done,
                              under a lock, so concurrent runs may share one file
  --opbench_markdown FILE     also write the experiment summary as a markdown table (PR comments)
  --opbench_gpu_lock FILE     take an exclusive lock on FILE (created if missing) before the first
                              case and hold it to the end: processes started together load and
                              initialize in parallel but measure one at a time (compare.py --jobs)
  --opbench_console=compact|full
                              compact (default): one line per case (time, GB/s, TFLOP/s, %peak,
                              %ceiling, noise); full: Google Benchmark's table with every counter
  --targets FILE|DIR          targets file or folder (default: the source tree's targets/)
  --opbench_cache=cold|warm   cold (default): flush L2 (read a buffer of 2x L2) before every
                              timed iteration; warm: no flush
  --opbench_timer=events|graph|cupti
                              events (default): CUDA events around each iteration; graph: a batch
                              of iterations captured in a CUDA graph, time per replay / batch;
                              cupti: kernel-only time, the GPU busy time of the iteration's kernels,
                              memcpys and memsets from CUPTI activity records (what ncu's
                              gpu__time_duration adds up; launch gaps and the L2 flush excluded)
  --opbench_throttle_threshold=F
                              discard (and count: throttled_samples) a GPU sample whose SM clock,
                              estimated from GPU timestamps around it, is below F x the rated SM
                              clock (default 0.75, nvbench's; 0: keep every sample); a case with
                              over 5% discarded is flagged THROTTLED (label, summary, compare, gate)
  --opbench_inject_slowdown=PCT[:REGEX]
                              for the gate's self-test only (opbench-gate-selftest): time each case
                              (matching REGEX) as usual, then again with PCT% of that time added to
                              every iteration; labelled INJECTED_SLOWDOWN and never on by default
  --opbench_max_noise=F       stop a case once the relative noise of its median < F (default
                              0.005; 1.2533 * sample stdev/mean / sqrt(n), 5% tails trimmed) ...
  --opbench_min_samples=N     ... after at least N samples (default 10) ...
  --opbench_max_time=S        ... or after S seconds of sampling (default 1.0)
  --opbench_model_layers=N    layer count of the whole-model families (Llama2, Mixtral) instead of
                              each model's own (Llama-2-7B 32, Mixtral-8x7B 16; the case name
                              says it: Mixtral/int8/8x7b-32L/graph); model cases time 5 whole
                              generations each, whatever the stopping rule above says
  --opbench_cpu_threads=N     ATen threads for CPU runs (default 1: spinning worker threads make
                              timings on a shared or small machine erratic)
  --opbench_trace DIR         after timing a case, record --opbench_trace_iters=N (default 20)
                              iterations with the profiler to DIR/<case>.trace.json and report
                              gpu_util and mm_util (busy / wall time of the same N iterations
                              run without the profiler), and where the time goes by kernel kind
                              (counters time_<kind>_%, GB/s_<kind> where the case counts the kind's
                              bytes, DIR/<case>.breakdown.csv); analyze any trace with opbench-trace

The inductor backend (docs/inductor.md): what torch.compile makes of each family's Python module, as an
AOTInductor package built ahead of the run (7-80 s a package on a GPU) and loaded here:
  --opbench_inductor_build    first build the selected inductor cases' packages that are missing or
                              stale (inductor/build_packages.py, with the python of this build)
  --opbench_inductor_plan=FILE|-
                              write the selected inductor cases' packages (module, key, current /
                              missing / stale) as JSON and exit: what inductor/build_packages.py reads
  --opbench_inductor_cache DIR
                              where packages live (default $OPBENCH_INDUCTOR_CACHE, else
                              inductor-packages/ beside bench_ops); a case whose package is missing or
                              stale (built for another torch, device, module or settings) is skipped
                              as unavailable with the command that builds it
  --opbench_inductor_settings FILE.json
                              inductor options the packages are built with (default: gpt-fast's,
                              inductor/settings.json); each settings file has its own packages

Several processes (README "Several GPUs"; opbench-shard runs a sharded sweep, one process per GPU):
  --opbench_shard=I/N         run share I of N of the selected cases: balanced by expected time, every
                              experiment's cases in one share, the Ceiling cases in each; every shard
                              computes the same split
  --opbench_shard_times FILE  balance on the times of a previous run's --benchmark_out JSON instead
                              of the estimate from each case's bytes and FLOPs
  --opbench_run_id=HEX        the run id the rows carry (default: a new one per process)
  Under a distributed launch (torchrun: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT)
  every rank runs the Collective cases together on its GPU (LOCAL_RANK); the other cases run on
  rank 0, which alone writes --output, --opbench_markdown and the summary; rank R > 0 writes
  --benchmark_out as FILE.rankR.json and prints only errors.

)" + more_help + R"(Each case reports its median time (Google Benchmark's time column; manual time) and counters
GB/s, TFLOP/s, %peak (datasheet), %ceiling (of the ceiling that fits its traffic: read, write or
copy stream, GEMM; measured by this run's Ceiling cases, when they ran), bytes, flops, samples,
noise_pct (sample spread), median_noise_pct (the median's), converged; on a GPU also
throttled_samples, sm_clock_mhz (median of the kept samples' estimates) and, where NVML (the
driver's libnvidia-ml) is present, nvml_sm_clock_mhz, power_w and temperature_c read after the samples.
Host (CPU) time is not reported: the samples are taken by the case itself, so Google Benchmark's CPU
column (in --opbench_console=full and cpu_time in its JSON) times only its own bookkeeping; ignore it.
On a machine without a CUDA device the CPU cases run, timed with the host clock.

Google Benchmark flags: --benchmark_filter, --benchmark_list_tests, --benchmark_repetitions,
--benchmark_out/_format, --benchmark_format, --benchmark_time_unit work as documented;
--benchmark_color and --benchmark_counters_tabular apply to --opbench_console=full;
--benchmark_min_time is refused (the stopping rule above governs); --v=N logs Google Benchmark's
internal names, which carry the /iterations:1/manual_time suffix that every output removes.

Google Benchmark flags follow.
)";
}

}  // namespace opbench
