// bench_ops: parses its flags and dispatches to one of its two programs: operator replay with --oplog
// (app/replay_entry.h), else the sweep of every family's cases (driver.h). Both run through Google
// Benchmark with the console display and their own results reporter.
#include <benchmark/benchmark.h>

#include <iostream>
#include <optional>

#include "case_filter.h"
#include "benchmark_names.h"
#include "cli.h"
#include "driver.h"
#include "opbench/check.h"
#include "opbench/world.h"
#include "rank_selection.h"
#include "replay_flags.h"
#include "replay_entry.h"
#include "run_identity.h"

int main(int argc, char** argv) {
  using namespace opbench;
  CliOptions cli;
  std::optional<replay::OplogOptions> oplog;   // --oplog and its flags: operator replay instead of the sweep
  try {
    auto replay_flag = [&](const std::vector<std::string>& args, size_t& i) {
      return replay::parse_replay_flag(args, i, oplog);
    };
    cli = parse_cli(std::vector<std::string>(argv, argv + argc), replay_flag);
    if (oplog) replay::check_replay_flags(*oplog, cli.shard.has_value());
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
  try {   // anchoring a filter reads the registered families, each validated on first use
    for (auto& arg : cli.passthrough) {
      if (arg.rfind("--benchmark_filter=", 0) == 0)
        arg = "--benchmark_filter=" + filter_for_registered_names(anchored_to_family(arg.substr(19)));
      gb_argv.push_back(arg.data());
    }
  } catch (const Error& e) {
    std::cerr << "bench_ops: " << e.what() << "\n";
    return 2;
  }
  if (cli.help) {
    std::cout << cli_help(replay::replay_help()) << std::endl;
    static char help_flag[] = "--help";
    gb_argv.push_back(help_flag);
  }
  int gb_argc = static_cast<int>(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());
  if (benchmark::ReportUnrecognizedArguments(gb_argc, gb_argv.data())) return 2;
  return oplog ? replay::run_replay(cli, *oplog, flags) : run_sweep(cli, flags);
}
