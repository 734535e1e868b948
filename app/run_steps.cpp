#include "run_steps.h"

#include <ATen/Parallel.h>

#include <csignal>
#include <iostream>
#include <map>
#include <memory>
#include <vector>

#include "kernels/common/launch_rules.h"
#include "displays.h"
#include "family_list.h"
#include "benchmark_names.h"
#include "case_filter.h"
#include "forwarding_reporter.h"
#include "gpu_lock.h"
#include "opbench/family.h"
#include "opbench/interrupt.h"
#include "opbench/timer.h"
#include "opbench/world.h"
#include "rank_selection.h"
#include "run_identity.h"
#include "shard_selection.h"

namespace opbench {
namespace {

// Notes for a run on the CPU: the threads it uses, and why the profiler complains there.
void announce_cpu_run(const CliOptions& cli, const DeviceInfo& device, const World& world) {
  if (device.is_gpu) return;
  if (!cli.trace.dir.empty() && world.is_root())
    std::cerr << "bench_ops: the profiler (Kineto) reports 'gpuGetDeviceCount failed' on a machine without a "
                 "CUDA driver; that is expected here: the traces record CPU activity only\n";
  at::set_num_threads(cli.cpu_threads);
  if (world.is_root())
    std::cerr << "bench_ops: no CUDA device found; running the CPU cases on " << device.name
              << " (host-clock timing, " << cli.cpu_threads << " thread(s))\n";
}

}  // namespace

int error_exit(const Error& error) {
  std::cerr << "bench_ops: " << error.what() << "\n";
  return 2;
}

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

std::optional<int> list_instead_of_running(const CliOptions& cli, const GbenchFlags& flags, const RunContext& run) {
  if (flags.list_tests && !cli.shard) {
    try {   // an invalid filter, or one that matches nothing, is an error here as in a run
      if (selected_cases(run.cases, benchmark::GetBenchmarkFilter()).empty())
        throw Error("--benchmark_filter=" + benchmark::GetBenchmarkFilter() +
                    " matches no case on this device (bench_ops --benchmark_list_tests lists them)");
    } catch (const Error& e) {
      return error_exit(e);
    }
    return list_cases();
  }
  if (!cli.list) return std::nullopt;
  print_family_list(std::cout, run.device);
  return 0;
}

std::set<std::string> cases_of_this_process(const RunContext& run, std::set<std::string> selected,
                                            const CliOptions& cli) {
  if (selected.empty())
    throw Error("--benchmark_filter=" + benchmark::GetBenchmarkFilter() +
                " matches no case on this device (bench_ops --benchmark_list_tests lists them)");
  std::set<std::string> mine = selected;
  const World& world = current_world();
  if (world.size > 1) {
    std::set<std::string> every_rank;
    for (const auto& family : registered_families())
      if (family.every_rank) every_rank.insert(family.name);
    mine = cases_for_rank(run.cases, mine, world, every_rank);
  }
  if (cli.shard) {
    std::map<std::string, double> measured;
    if (cli.shard_times) measured = seconds_from_json(*cli.shard_times);
    auto cost = [&](const CaseInfo& info) {
      auto it = measured.find(info.name());
      return it != measured.end() ? it->second : expected_seconds(info, run.device.is_gpu, run.options.rule);
    };
    mine = plan_shards(run.cases, mine, cli.shard->count, cost)[static_cast<size_t>(cli.shard->index)];
  }
  if (mine != selected)   // Google Benchmark runs exactly this process's cases
    benchmark::SetBenchmarkFilter(exact_names_filter({mine.begin(), mine.end()}));
  return mine;
}

std::string launch_rules_in_force(const DeviceInfo& device) {
  if (!device.is_gpu) return "";
  return kernels::launch_rules_name(kernels::current_launch_rules());
}

int nothing_to_run(const CliOptions& cli, const GbenchFlags& flags) {
  if (flags.list_tests) return 0;
  const World& world = current_world();
  std::cerr << "bench_ops: "
            << (cli.shard ? "shard " + std::to_string(cli.shard->index) + "/" + std::to_string(cli.shard->count)
                          : "rank " + std::to_string(world.rank))
            << " has no case of this selection to run" << (cli.shard ? "" : " (rank 0 runs every case that is not a collective)")
            << "\n";
  return 0;
}

std::ostream* summary_stream(const GbenchFlags& flags) {
  if (!current_world().is_root()) return nullptr;
  return flags.format == "console" ? &std::cout : &std::cerr;
}

std::optional<int> run_cases(const CliOptions& cli, const GbenchFlags& flags, const RunInfo& info,
                             const std::string& launch_rules, benchmark::BenchmarkReporter* results,
                             benchmark::BenchmarkReporter* before_display) {
  const World& world = current_world();
  announce_cpu_run(cli, info.device, world);
  add_run_context(info, cli, launch_rules);
  std::unique_ptr<benchmark::BenchmarkReporter> display = make_display(cli, flags, info);
  if (flags.format == "console" && cli.full_console && world.is_root())
    std::cerr << "bench_ops: if Google Benchmark warns 'Library was built as DEBUG', that is the packaged "
                 "libbenchmark's build (Debian's): each opbench case times itself, so its figures are not affected\n";
  std::vector<benchmark::BenchmarkReporter*> shown{display.get(), results};
  if (before_display) shown.insert(shown.begin(), before_display);
  ForwardingReporter display_forward(shown);
  std::unique_ptr<benchmark::BenchmarkReporter> file;
  std::unique_ptr<ForwardingReporter> file_forward;
  if (!flags.out.empty()) {
    file = make_format_reporter(flags.out_format);
    file_forward = std::make_unique<ForwardingReporter>(std::vector<benchmark::BenchmarkReporter*>{file.get()});
  }
  if (cli.gpu_lock) {
    try {
      hold_gpu_lock(*cli.gpu_lock, info.device);
    } catch (const Error& e) {
      error_exit(e);
      return std::nullopt;
    }
  }
  benchmark::RunSpecifiedBenchmarks(&display_forward, file_forward.get());
  benchmark::Shutdown();
  return display_forward.failed_runs();
}

int failures_exit_code(int failed_cases) {
  if (int signal = interrupt_signal()) {
    std::cerr << "bench_ops: stopped by " << (signal == SIGINT ? "SIGINT" : "SIGTERM")
              << ": the case in flight and those after it did not run; every output holds the cases that finished\n";
    return 128 + signal;
  }
  if (failed_cases == 0) return 0;
  std::cerr << "bench_ops: " << failed_cases << " case(s) failed (messages above); every other result was kept\n";
  return 1;
}

}  // namespace opbench
