// bench_ops: parses opbench's flags, registers every family's cases for this device, and runs them
// through Google Benchmark with the console display and the experiment reporter.
#include <benchmark/benchmark.h>

#include <iostream>

#include "cli.h"
#include "benchmark_names.h"
#include "driver.h"
#include "info.h"
#include "opbench/check.h"
#include "opbench/world.h"
#include "selection.h"
#include "split.h"

int main(int argc, char** argv) {
  using namespace opbench;
  CliOptions cli;
  try {
    cli = parse_cli(std::vector<std::string>(argv, argv + argc));
  } catch (const std::invalid_argument& e) {
    std::cerr << "bench_ops: " << e.what() << "\n(see bench_ops --help)\n";
    return 2;
  }
  if (cli.version) {
    print_version(std::cout, build_info());
    return 0;
  }
  try {   // a distributed launch (RANK, WORLD_SIZE, ...): checked, and this rank's GPU made current, first
    bind_local_device(current_world());
  } catch (const Error& e) {
    std::cerr << "bench_ops: " << e.what() << "\n";
    return 2;
  }
  const World& world = current_world();
  for (auto& arg : cli.passthrough)   // rank R > 0 of a distributed launch: its own Google Benchmark file
    if (arg.rfind("--benchmark_out=", 0) == 0 && !world.is_root())
      arg = "--benchmark_out=" + per_rank_path(arg.substr(16), world.rank);
  GbenchFlags flags = gbench_flags(cli.passthrough);
  cli.run.time_unit = flags.time_unit;
  std::vector<char*> gb_argv;
  for (auto& arg : cli.passthrough) {
    if (arg.rfind("--benchmark_filter=", 0) == 0)
      arg = "--benchmark_filter=" + filter_for_registered_names(anchored_to_family(arg.substr(19)));
    gb_argv.push_back(arg.data());
  }
  if (cli.help) {
    std::cout << cli_help() << std::endl;
    static char help_flag[] = "--help";
    gb_argv.push_back(help_flag);
  }
  int gb_argc = static_cast<int>(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());
  if (benchmark::ReportUnrecognizedArguments(gb_argc, gb_argv.data())) return 2;
  return run_benchmarks(cli, flags);
}
