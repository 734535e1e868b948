// bench_ops: checks its command line, environment and paths (invocation.h), then dispatches to one of
// its two programs: operator replay with --oplog (app/replay_entry.h), else the sweep of every family's
// cases (driver.h). Both run through Google Benchmark with the console display and their own results
// reporter. Every exception ends in one line on stderr and an exit code, never an abort.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "case_filter.h"
#include "benchmark_names.h"
#include "driver.h"
#include "invocation.h"
#include "opbench/check.h"
#include "opbench/interrupt.h"
#include "opbench/world.h"
#include "rank_selection.h"
#include "replay_entry.h"
#include "run_identity.h"

namespace {

std::optional<std::string> from_environment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (!value) return std::nullopt;
  return std::string(value);
}

// Google Benchmark's argv: the flags bench_ops passes through, a filter anchored to its family, the
// file of --benchmark_out as this rank writes it.
std::vector<std::string> gbench_args(std::vector<std::string> args, const opbench::World& world) {
  using namespace opbench;
  for (auto& arg : args) {
    if (arg.rfind("--benchmark_out=", 0) == 0 && !world.is_root())
      arg = "--benchmark_out=" + per_rank_path(arg.substr(16), world.rank);
    if (arg.rfind("--benchmark_filter=", 0) == 0)   // reads the registered families, each validated on first use
      arg = "--benchmark_filter=" + filter_for_registered_names(anchored_to_family(arg.substr(19)));
  }
  return args;
}

int run(int argc, char** argv) {
  using namespace opbench;
  Invocation invocation;
  try {
    invocation = checked_invocation(std::vector<std::string>(argv, argv + argc), from_environment);
  } catch (const std::invalid_argument& e) {   // a flag, a variable or a path
    std::cerr << "bench_ops: " << e.what() << "\n(see bench_ops --help)\n";
    return 2;
  } catch (const Error& e) {                    // the distributed launch's variables (opbench/world.h)
    std::cerr << "bench_ops: " << e.what() << "\n";
    return 2;
  }
  CliOptions& cli = invocation.cli;
  if (cli.version) {
    print_version(std::cout, build_info());
    return 0;
  }
  bind_local_device(current_world());   // a distributed launch: this rank's GPU made current first
  GbenchFlags flags = gbench_flags(cli.passthrough);
  cli.run.time_unit = flags.time_unit;
  std::vector<std::string> args = gbench_args(cli.passthrough, current_world());
  if (cli.help) {
    std::cout << cli_help(replay::replay_help()) << std::endl;
    args.push_back("--help");
  }
  std::vector<char*> gb_argv;
  for (auto& arg : args) gb_argv.push_back(arg.data());
  int gb_argc = static_cast<int>(gb_argv.size());
  install_interrupt_handlers();
  benchmark::Initialize(&gb_argc, gb_argv.data());
  if (benchmark::ReportUnrecognizedArguments(gb_argc, gb_argv.data())) return 2;
  return invocation.oplog ? replay::run_replay(cli, *invocation.oplog, flags) : run_sweep(cli, flags);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bench_ops: " << e.what() << "\n";
    return 2;
  } catch (...) {
    std::cerr << "bench_ops: stopped by an exception of unknown type\n";
    return 2;
  }
}
