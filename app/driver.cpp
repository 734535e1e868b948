#include "driver.h"

#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <torch/headeronly/version.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <cstdio>
#include <ctime>
#include <random>
#include <sstream>

#include "kernels/common/launch_rules.h"
#include "console.h"
#include "experiments.h"
#include "info.h"
#include "outputs.h"
#include "summary.h"
#include "forwarding.h"
#include "opbench/check.h"
#include "opbench/targets.h"
#include "opbench/telemetry.h"
#include "opbench/device.h"
#include "opbench/family.h"
#include "opbench/gbench_compat.h"
#include "replay.h"
#include "replay/register.h"
#include "row_file.h"
#include "selection.h"
#include "split.h"
#include "opbench/world.h"

#ifdef OPBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#ifndef OPBENCH_GIT_SHA
#define OPBENCH_GIT_SHA "unknown"
#endif

namespace opbench {
namespace {

std::string cuda_runtime_version() {
#ifdef OPBENCH_HAVE_CUDA
  int version = 0;
  if (cudaRuntimeGetVersion(&version) == cudaSuccess)
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
#endif
  return "";
}

// The run's identity in Google Benchmark's JSON context: the same RunInfo the rows and summary use.
void add_context(const RunInfo& info) {
  benchmark::AddCustomContext("opbench_device", info.device.name);
  benchmark::AddCustomContext("opbench_arch", info.device.arch_name);
  benchmark::AddCustomContext("opbench_peaks", info.device.peaks ? info.device.peaks->model : "none");
  benchmark::AddCustomContext("opbench_timer", info.timer);
  benchmark::AddCustomContext("opbench_cache", info.cache);
  benchmark::AddCustomContext("torch_version", info.torch_version);
  benchmark::AddCustomContext("cuda_version", info.cuda_version);
  benchmark::AddCustomContext("opbench_sha", info.opbench_sha);
  benchmark::AddCustomContext("opbench_run_id", info.run_id);
}

// How this run judged clocks, and what it injected: in the JSON context and said on stderr.
void add_measurement_context(const DeviceInfo& device, const RunOptions& options) {
  if (device.is_gpu) {
    benchmark::AddCustomContext("opbench_rated_sm_clock_mhz", std::to_string(device.rated_sm_clock_mhz));
    benchmark::AddCustomContext("opbench_throttle_threshold", std::to_string(options.throttle_threshold));
    const std::string& nvml = Nvml::instance().unavailable_reason();
    benchmark::AddCustomContext("opbench_nvml", nvml.empty() ? "available" : "unavailable: " + nvml);
    if (!nvml.empty()) std::cerr << "bench_ops: no power or NVML clock readings: " << nvml << "\n";
  }
  if (!options.inject) return;
  char pct[32];
  std::snprintf(pct, sizeof pct, "%g%%", 100 * options.inject->fraction);
  std::string what = pct + std::string(" on ") +
                     (options.inject->pattern.empty() ? std::string("every case") : "cases matching " + options.inject->pattern);
  benchmark::AddCustomContext("opbench_injected_slowdown", what);
  std::cerr << "bench_ops: INJECTING a slowdown of " << what
            << " (--opbench_inject_slowdown): these times are made slower on purpose\n";
}

// --opbench_gpu_lock: blocks until this process holds the lock; it is released when the process exits.
// The CUDA context is made first, outside the lock, so that its creation overlaps other processes' runs
// (it runs no work on the device). On the H100 a process still took ~2.2 s, four started at a time
// (results/NVIDIA_H100_80GB_HBM3/gate_selftest/): what else costs under the lock is not yet measured.
// Whether starting neighbours disturb the timed process is what gate_selftest.py's A/A rounds measure.
void hold_gpu_lock(const std::string& path, const DeviceInfo& device) {
#ifdef OPBENCH_HAVE_CUDA
  if (device.is_gpu) OPBENCH_CUDA_CHECK(cudaFree(nullptr));
#else
  (void)device;
#endif
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) throw Error("--opbench_gpu_lock " + path + ": cannot open: " + std::strerror(errno));
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) throw Error("--opbench_gpu_lock " + path + ": cannot lock: " + std::strerror(errno));
  }
}

// --opbench_timer=cupti where CUPTI cannot run: an error on a GPU, a note on the CPU (host timing there).
bool cupti_usable(const DeviceInfo& device, const RunOptions& options) {
  if (options.gpu_timer != TimerKind::kCupti) return true;
  const std::string why = cupti_unavailable_reason();
  if (why.empty()) return true;
  if (!device.is_gpu) {
    std::cerr << "bench_ops: --opbench_timer=cupti is unavailable here (" << why << "): CPU cases use the host clock\n";
    return true;
  }
  std::cerr << "bench_ops: --opbench_timer=cupti is unavailable: " << why << "\n";
  return false;
}

// The first line of the compact view: what ran where, with what.
std::string run_title(const RunInfo& info) {
  std::string title = "bench_ops on " + info.device.name + " (" + (info.device.is_gpu ? "GPU" : "CPU") +
                      "; timer " + info.timer + ", cache " + info.cache + "; opbench " + info.opbench_sha +
                      ", torch " + info.torch_version + ")";
#ifndef NDEBUG
  title += "\nopbench itself was built without optimization: timings of its own kernels may suffer";
#endif
  return title;
}

std::unique_ptr<benchmark::BenchmarkReporter> make_format_reporter(const std::string& format) {
  if (format == "json") return std::make_unique<benchmark::JSONReporter>();
  if (format == "csv") return std::make_unique<benchmark::CSVReporter>();
  auto options = isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Defaults
                                       : benchmark::ConsoleReporter::OO_Tabular;
  return std::make_unique<benchmark::ConsoleReporter>(options);
}

// What a rank other than 0 of a distributed launch shows: only its failed cases, on stderr, with the
// rank (rank 0 reports the results). A failure still counts for this process's exit code.
class RankErrorReporter : public benchmark::BenchmarkReporter {
 public:
  explicit RankErrorReporter(int rank) : rank_(rank) {}
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs)
      if (gbench::run_skipped(run) && gbench::skip_message(run).rfind(kUnavailablePrefix, 0) != 0)
        std::cerr << "bench_ops: rank " << rank_ << ": " << run.benchmark_name() << ": " << gbench::skip_message(run) << "\n";
  }

 private:
  int rank_;
};

// The part of `selected` this process runs: its rank's (split.h), then its shard's.
std::set<std::string> cases_of_this_process(const RunContext& run, std::set<std::string> selected,
                                            const World& world, const CliOptions& cli) {
  if (world.size > 1) {
    std::set<std::string> every_rank;
    for (const auto& family : registered_families())
      if (family.every_rank) every_rank.insert(family.name);
    selected = cases_for_rank(run.cases, selected, world, every_rank);
  }
  if (cli.shard) {
    std::map<std::string, double> measured;
    if (cli.shard_times) measured = seconds_from_json(*cli.shard_times);
    auto cost = [&](const CaseInfo& info) {
      auto it = measured.find(info.name());
      return it != measured.end() ? it->second : expected_seconds(info, run.device.is_gpu, run.options.rule);
    };
    selected = plan_shards(run.cases, selected, cli.shard->count, cost)[static_cast<size_t>(cli.shard->index)];
  }
  return selected;
}

int list_cases() {
  auto display = make_format_reporter("console");
  ForwardingReporter forward({display.get()});
  std::ostringstream listing;
  forward.SetOutputStream(&listing);
  benchmark::RunSpecifiedBenchmarks(&forward);
  std::cout << strip_harness_suffix(listing.str());
  return 0;
}

}  // namespace

BuildInfo build_info() {
  return {std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
              std::to_string(TORCH_VERSION_PATCH),
          cuda_runtime_version(), OPBENCH_GIT_SHA};
}

GbenchFlags gbench_flags(const std::vector<std::string>& args) {
  GbenchFlags flags;
  auto value = [](const std::string& arg, const std::string& name) -> std::optional<std::string> {
    if (arg.rfind(name + "=", 0) == 0) return arg.substr(name.size() + 1);
    return std::nullopt;
  };
  for (const auto& arg : args) {
    if (auto v = value(arg, "--benchmark_format")) flags.format = *v;
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

// The targets of --targets (or the source tree's targets/), every name in them one a family declares.
std::vector<TargetFile> targets_for(const CliOptions& cli) {
  std::string bundled = std::string(OPBENCH_SOURCE_DIR) + "/targets";
  if (!cli.targets && !std::filesystem::is_directory(bundled)) {
    std::cerr << "bench_ops: no targets folder at " << bundled << "; rows get no targets\n";
    return {};
  }
  std::vector<TargetFile> files = load_targets(cli.targets.value_or(bundled));
  KnownNames known;
  for (const auto& family : registered_families()) {
    for (const auto& e : family.experiments) {
      (e.per_world_size ? known.per_world_experiments : known.experiments).insert(e.name);
      known.metrics.insert(metric_name(e.metric));
    }
    for (const auto& b : family.backends) known.backends.insert(b.name);
  }
  std::vector<std::string> problems = unknown_target_names(files, known);
  if (problems.empty()) return files;
  for (size_t i = 0; i + 1 < problems.size(); ++i) std::cerr << "bench_ops: " << problems[i] << "\n";
  throw Error(problems.back());
}

// The rows file of --output, checked before anything runs; its dashboard sidecar and the CSV must not be
// --benchmark_out's file.
RowFile checked_row_file(const std::string& output, const GbenchFlags& flags) {
  RowFile rows(output);
  if (!flags.out.empty()) {
    auto same = [](const std::string& a, const std::string& b) {
      return std::filesystem::weakly_canonical(a) == std::filesystem::weakly_canonical(b);
    };
    if (same(flags.out, rows.csv_path()) || same(flags.out, rows.json_path()))
      throw Error("--benchmark_out=" + flags.out + " is also a file --output " + output +
                  " writes (the rows CSV or its dashboard records " + rows.json_path() + "); choose another");
  }
  return rows;
}

// --opbench_markdown: the summary table for a pull-request comment; a failure is reported, not fatal.
void write_markdown(const std::string& path, const ExperimentReporter& experiments, const RunInfo& info,
                    const RunContext& run) {
  std::ostringstream text;
  print_markdown_summary(text, experiments.rows(), info, run.ceilings);
  try {
    write_file_atomically(path, text.str());
    std::cerr << "bench_ops: markdown summary in " << path << "\n";
  } catch (const Error& e) {
    std::cerr << "bench_ops: " << e.what() << "\n";
  }
}

std::string new_run_id() {
  std::random_device random;
  char id[16];
  std::snprintf(id, sizeof id, "%06x%06x", random() & 0xffffff, random() & 0xffffff);
  return id;
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

RunInfo run_info(const DeviceInfo& device, const CliOptions& cli) {
  BuildInfo build = build_info();
  const RunOptions& run = cli.run;
  return {device, build.torch_version, build.cuda_version, build.opbench_sha,
          timer_kind_name(device.is_gpu ? run.gpu_timer : TimerKind::kHost),
          !device.is_gpu ? "none" : run.cache == CacheMode::kCold ? "cold" : "warm",
          host_cpu_model(), static_cast<double>(host_memory_bytes()) / 1e9, cli.run_id.value_or(new_run_id()),
          utc_now(), current_world().size};
}

int run_benchmarks(const CliOptions& cli, const GbenchFlags& flags) {
  const DeviceInfo& device = current_device();
  if (!cupti_usable(device, cli.run)) return 2;
  const World& world = current_world();
  RunContext run(device, cli.run, cli.trace);
  std::optional<replay::ReplayPlan> replay_plan;   // --oplog: replay cases instead of the families
  std::string launch_rules;
  try {
    if (cli.oplog)
      replay_plan = replay::register_replay(run, *cli.oplog);
    else
      register_families(run);
  } catch (const Error& e) {
    std::cerr << "bench_ops: " << e.what() << "\n";
    return 2;
  }
  if (flags.list_tests && !cli.shard) return list_cases();
  if (cli.list) {
    print_family_list(std::cout, device);
    return 0;
  }
  std::set<std::string> selected;
  std::optional<RowFile> rows;
  std::optional<std::string> rows_path = replay_plan ? std::nullopt : cli.output;
  try {
    selected = selected_cases(run.cases, benchmark::GetBenchmarkFilter());
    if (replay_plan && run.cases.all().empty()) {
      for (const auto& n : replay_plan->not_run)
        std::cerr << "bench_ops: " << n.where << ": " << (n.op.empty() ? "" : n.op + ": ") << n.reason << "\n";
      throw Error("--oplog " + cli.oplog->path + ": no input of the log can run here (each is listed above with its reason)");
    }
    if (selected.empty())
      throw Error("--benchmark_filter=" + benchmark::GetBenchmarkFilter() +
                  " matches no case on this device (bench_ops --benchmark_list_tests lists them)");
    std::set<std::string> mine = cases_of_this_process(run, selected, world, cli);
    if (mine != selected) {   // Google Benchmark runs exactly this process's cases
      selected = std::move(mine);
      benchmark::SetBenchmarkFilter(exact_names_filter({selected.begin(), selected.end()}));
    }
    if (!world.is_root()) rows_path.reset();   // rank 0 writes the rows
    if (rows_path) rows = checked_row_file(*rows_path, flags);
    // The own kernels' launch rules (a bad OPBENCH_LAUNCH_RULES stops the run here, before any case).
    if (device.is_gpu) launch_rules = kernels::launch_rules_name(kernels::current_launch_rules());
  } catch (const Error& e) {
    std::cerr << "bench_ops: " << e.what() << "\n";
    return 2;
  }
  if (selected.empty()) {   // a share or a rank with nothing to do; the filter itself matched cases
    if (!flags.list_tests)
      std::cerr << "bench_ops: "
                << (cli.shard ? "shard " + std::to_string(cli.shard->index) + "/" + std::to_string(cli.shard->count)
                              : "rank " + std::to_string(world.rank))
                << " has no case of this selection to run" << (cli.shard ? "" : " (rank 0 runs every case that is not a collective)")
                << "\n";
    return 0;
  }
  if (flags.list_tests) return list_cases();
  const int replay_plan_unparsed = replay_plan ? replay_plan->unparsed_lines : 0;
  const RunInfo info = run_info(device, cli);
  std::unique_ptr<benchmark::BenchmarkReporter> results;   // experiment rows, or the replay's
  ReplayReporter* replay = nullptr;
  ExperimentReporter* experiments = nullptr;
  try {
    std::ostream* summary = !world.is_root() ? nullptr : flags.format == "console" ? &std::cout : &std::cerr;
    if (replay_plan) {
      auto reporter = std::make_unique<ReplayReporter>(std::move(*replay_plan), benchmark::GetBenchmarkFilter(),
                                                       cli.output.value_or(""), summary, &std::cerr,
                                                       isatty(STDERR_FILENO) != 0);
      replay = reporter.get();
      run.on_case_start = [replay](const CaseInfo& info) { replay->case_started(info.name()); };
      results = std::move(reporter);
    } else {
      auto reporter = std::make_unique<ExperimentReporter>(run, info, targets_for(cli), std::move(rows),
                                                           std::move(selected), summary);
      experiments = reporter.get();
      results = std::move(reporter);
    }
  } catch (const Error& e) {
    std::cerr << "bench_ops: " << e.what() << "\n";
    return 2;
  }
  if (!device.is_gpu && !cli.trace.dir.empty() && world.is_root())
    std::cerr << "bench_ops: the profiler (Kineto) reports 'gpuGetDeviceCount failed' on a machine without a "
                 "CUDA driver; that is expected here: the traces record CPU activity only\n";
  if (!device.is_gpu) {
    at::set_num_threads(cli.cpu_threads);
    if (world.is_root())
      std::cerr << "bench_ops: no CUDA device found; running the CPU cases on " << device.name
              << " (host-clock timing, " << cli.cpu_threads << " thread(s))\n";
  }
  add_context(info);
  add_measurement_context(device, cli.run);
  if (!launch_rules.empty()) benchmark::AddCustomContext("opbench_launch_rules", launch_rules);
  benchmark::AddCustomContext("opbench_device_id", device.id);
  if (world.launched)
    benchmark::AddCustomContext("opbench_world", "rank " + std::to_string(world.rank) + " of " + std::to_string(world.size));
  if (cli.shard)
    benchmark::AddCustomContext("opbench_shard", std::to_string(cli.shard->index) + "/" + std::to_string(cli.shard->count));

  std::unique_ptr<benchmark::BenchmarkReporter> display;
  if (!world.is_root())
    display = std::make_unique<RankErrorReporter>(world.rank);
  else if (flags.format == "console" && !cli.full_console)
    display = std::make_unique<CompactConsoleReporter>(run_title(info), !flags.time_unit_given);
  else
    display = make_format_reporter(flags.format);
  if (flags.format == "console" && cli.full_console && world.is_root())
    std::cerr << "bench_ops: if Google Benchmark warns 'Library was built as DEBUG', that is the packaged "
                 "libbenchmark's build (Debian's): each opbench case times itself, so its figures are not affected\n";
  std::vector<benchmark::BenchmarkReporter*> shown{display.get(), results.get()};
  if (replay) shown.insert(shown.begin(), replay->line_clearer());   // erases its progress line
  ForwardingReporter display_forward(shown);
  std::unique_ptr<benchmark::BenchmarkReporter> file;
  std::unique_ptr<ForwardingReporter> file_forward;
  if (!flags.out.empty()) {
    file = make_format_reporter(flags.out_format);
    file_forward = std::make_unique<ForwardingReporter>(
        std::vector<benchmark::BenchmarkReporter*>{file.get()});
  }
  if (cli.gpu_lock) {
    try {
      hold_gpu_lock(*cli.gpu_lock, device);
    } catch (const Error& e) {
      std::cerr << "bench_ops: " << e.what() << "\n";
      return 2;
    }
  }
  benchmark::RunSpecifiedBenchmarks(&display_forward, file_forward.get());
  benchmark::Shutdown();
  if (experiments && cli.markdown && world.is_root()) write_markdown(*cli.markdown, *experiments, info, run);
  if (experiments && rows_path && !experiments->write_failed())
    std::cerr << "bench_ops: experiment rows in " << *rows_path << " and dashboard records (JSON Lines) in "
              << dashboard_path(*rows_path) << "\n";
  if (experiments && experiments->write_failed()) {
    std::cerr << "bench_ops: some experiment rows could not be written to " << *cli.output << " (messages above)\n";
    return 2;
  }
  if (replay && replay_plan_unparsed > 0) {
    std::cerr << "bench_ops: " << replay_plan_unparsed << " line(s) of the log could not be parsed (listed above)\n";
    return 1;
  }
  if (display_forward.failed_runs() > 0) {
    std::cerr << "bench_ops: " << display_forward.failed_runs()
              << " case(s) failed (messages above); every other result was kept\n";
    return 1;
  }
  return 0;
}

}  // namespace opbench
