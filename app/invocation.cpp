// bench_ops' command line and environment, checked as a whole (contract: invocation.h).
#include "invocation.h"

#include <filesystem>
#include <stdexcept>

#include "opbench/check.h"
#include "opbench/world.h"
#include "rank_selection.h"
#include "replay_flags.h"
#include "row_file_append.h"

namespace opbench {
namespace {

std::optional<std::string> gbench_value(const std::vector<std::string>& args, const std::string& name) {
  std::optional<std::string> value;
  for (const auto& arg : args)
    if (arg.rfind(name + "=", 0) == 0) value = arg.substr(name.size() + 1);
  return value;
}

bool lists_only(const Invocation& invocation) {
  const CliOptions& cli = invocation.cli;
  return cli.help || cli.version || cli.list || gbench_flags(cli.passthrough).list_tests;
}

}  // namespace

std::vector<NamedPath> run_paths(const Invocation& invocation, int rank) {
  const CliOptions& cli = invocation.cli;
  std::vector<NamedPath> paths;
  if (cli.inductor_plan && *cli.inductor_plan != "-")   // the plan is all such a run writes
    return {{"--opbench_inductor_plan", *cli.inductor_plan, PathUse::kOutputFile, ""}};
  if (cli.output) {
    paths.push_back({"--output", *cli.output, PathUse::kOutputFile, ""});
    if (!invocation.oplog && std::filesystem::path(*cli.output).extension() == ".csv")
      paths.push_back({"--output", dashboard_path(*cli.output), PathUse::kOutputFile, "dashboard sidecar"});
  }
  if (auto out = gbench_value(cli.passthrough, "--benchmark_out"))
    paths.push_back({"--benchmark_out", rank == 0 ? *out : per_rank_path(*out, rank), PathUse::kOutputFile, ""});
  if (cli.markdown) paths.push_back({"--opbench_markdown", *cli.markdown, PathUse::kOutputFile, ""});
  if (!cli.trace.dir.empty()) paths.push_back({"--opbench_trace", cli.trace.dir, PathUse::kOutputFolder, ""});
  if (cli.gpu_lock) paths.push_back({"--opbench_gpu_lock", *cli.gpu_lock, PathUse::kOutputFile, ""});
  if (cli.inductor_build && cli.inductor_cache)
    paths.push_back({"--opbench_inductor_cache", *cli.inductor_cache, PathUse::kOutputFolder, ""});
  if (cli.targets) paths.push_back({"--targets", *cli.targets, PathUse::kInputFileOrFolder, ""});
  if (invocation.oplog) paths.push_back({"--oplog", invocation.oplog->path, PathUse::kInputFileOrFolder, ""});
  if (cli.shard_times) paths.push_back({"--opbench_shard_times", *cli.shard_times, PathUse::kInputFile, ""});
  if (cli.inductor_settings)
    paths.push_back({"--opbench_inductor_settings", *cli.inductor_settings, PathUse::kInputFile, ""});
  return paths;
}

Invocation checked_invocation(const std::vector<std::string>& args, const EnvLookup& env) {
  Invocation invocation;
  auto replay_flag = [&](const std::vector<std::string>& all, size_t& i) {
    return replay::parse_replay_flag(all, i, invocation.oplog);
  };
  invocation.cli = parse_cli(args, replay_flag);
  if (invocation.oplog) replay::check_replay_flags(*invocation.oplog, invocation.cli.shard.has_value());
  check_gbench_flags(invocation.cli.passthrough);
  check_environment(env);
  const World world = world_from_env(env);
  if (invocation.cli.output && !invocation.oplog && std::filesystem::path(*invocation.cli.output).extension() != ".csv")
    throw std::invalid_argument("--output " + *invocation.cli.output + ": expected a .csv file (the dashboard records "
                                "go beside it as FILE.json)");
  if (!lists_only(invocation)) check_run_paths(run_paths(invocation, world.rank));
  return invocation;
}

Verdict verdict_for(const std::vector<std::string>& args, const EnvLookup& env) {
  try {
    checked_invocation(args, env);
    return {};
  } catch (const std::exception& e) {   // std::invalid_argument, opbench::Error
    return {2, std::string("bench_ops: ") + e.what()};
  }
}

}  // namespace opbench
