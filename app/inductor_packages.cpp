#include "inductor_packages.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "atomic_file.h"
#include "opbench/bounded_read.h"
#include "opbench/inductor.h"

#ifndef OPBENCH_PYTHON
#define OPBENCH_PYTHON "python3"
#endif

namespace opbench {
namespace {

namespace fs = std::filesystem;

std::vector<const CaseInfo*> inductor_cases(const RunContext& run, const std::set<std::string>& selected) {
  std::vector<const CaseInfo*> cases;
  for (const CaseInfo* info : run.cases.all())
    if (info->backend == "inductor" && selected.count(info->name())) cases.push_back(info);
  return cases;
}

std::string this_program() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string("bench_ops") : self.string();
}

// Runs `argv` and waits; its exit status, or -1 when it could not be started.
int run_program(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    execvp(args[0], args.data());
    std::perror(args[0]);
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// inductor/build_packages.py over the plan; the cases whose packages it could not build then skip.
void build_packages(const std::string& plan, const inductor::PackageCache& cache) {
  const fs::path plan_file = fs::temp_directory_path() / ("opbench_inductor_plan_" + std::to_string(getpid()) + ".json");
  write_file_atomically(plan_file.string(), plan);
  std::cerr << "bench_ops: building the selected cases' inductor packages (" << cache.dir << ")\n";
  const int status = run_program({cache.python, cache.source_dir + "/inductor/build_packages.py", "--plan", plan_file.string()});
  std::error_code ignored;
  fs::remove(plan_file, ignored);
  if (status != 0)
    std::cerr << "bench_ops: building inductor packages exited " << status
              << ": the cases whose package is not current skip as unavailable\n";
}

// A settings file the user named must be a readable JSON object of inductor options.
void check_settings(const std::string& path) {
  FileText file = read_bounded(path, kTableLimitBytes, "a JSON file");
  if (!file.error.empty()) throw Error("--opbench_inductor_settings " + path + ": " + file.error);
  const nlohmann::json settings = nlohmann::json::parse(file.text, nullptr, /*allow_exceptions=*/false);
  if (!settings.is_object())
    throw Error("--opbench_inductor_settings " + path + ": expected a JSON object of inductor options");
}

}  // namespace

inductor::PackageCache package_cache(const CliOptions& cli) {
  inductor::PackageCache cache;
  const char* env = std::getenv("OPBENCH_INDUCTOR_CACHE");
  cache.dir = cli.inductor_cache ? *cli.inductor_cache
              : env && *env      ? std::string(env)
                                 : fs::path(this_program()).parent_path().string() + "/inductor-packages";
  cache.source_dir = OPBENCH_SOURCE_DIR;
  cache.settings_path = cli.inductor_settings.value_or(cache.source_dir + "/inductor/settings.json");
  const char* python = std::getenv("OPBENCH_PYTHON");
  cache.python = python && *python ? python : OPBENCH_PYTHON;
  cache.bench_ops = this_program();
  return cache;
}

std::optional<int> plan_or_build_packages(const CliOptions& cli, const RunContext& run,
                                          const std::set<std::string>& selected) {
  try {
    if (cli.inductor_settings) check_settings(*cli.inductor_settings);
  } catch (const Error& e) {
    std::cerr << "bench_ops: " << e.what() << "\n";
    return 2;
  }
  if (!cli.inductor_plan && !cli.inductor_build) return std::nullopt;
  const std::vector<const CaseInfo*> cases = inductor_cases(run, selected);
  std::string plan;
  try {
    plan = inductor::plan_json(cases, run.options.inductor, run.device);
    if (cli.inductor_plan && *cli.inductor_plan == "-") {
      std::cout << plan << "\n";
    } else if (cli.inductor_plan) {
      write_file_atomically(*cli.inductor_plan, plan + "\n");
      std::cerr << "bench_ops: the plan of " << cases.size() << " inductor package(s) in " << *cli.inductor_plan << "\n";
    }
  } catch (const Error& e) {
    std::cerr << "bench_ops: " << e.what() << "\n";
    return 2;
  }
  if (cli.inductor_plan) return 0;
  if (!cases.empty()) build_packages(plan, run.options.inductor);
  return std::nullopt;
}

void advise_package_builds(const RunContext& run, const std::string& filter) {
  int wanting = 0;
  for (const CaseInfo* info : run.cases.all())
    for (const CaseResult& result : run.results.last(info->name(), SIZE_MAX))
      if (info->backend == "inductor" && result.failure.find("(--opbench_inductor_build)") != std::string::npos)
        ++wanting;
  if (wanting == 0) return;
  std::cerr << "bench_ops: " << wanting << " inductor case(s) skipped for want of a current package in "
            << run.options.inductor.dir << ": rerun with --opbench_inductor_build, or build them with\n  "
            << inductor::build_command(filter, run.options.inductor) << "\n";
}

}  // namespace opbench
