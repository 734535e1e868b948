// bench_ops' checks of hostile input, in-process: a generated table of command lines and environments
// (Google Benchmark's flags, bench_ops' own, OPBENCH_* and BENCHMARK_* variables, and every path a run
// reads or writes, each against every other), each asserting the exit code and the message of
// verdict_for (app/invocation.h), and that checking left every file as it was.
#include <gtest/gtest.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "invocation.h"
#include "test_files.h"

namespace opbench {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::write_text;

struct Probe {
  std::vector<std::string> args;            // after argv[0]
  std::map<std::string, std::string> env;   // the whole environment bench_ops sees
  int exit_code;
  std::string message;                      // parts of the line it prints, " && " between them ("" for exit 0)
};

// The folder every path probe points into, with one file of each kind a user can hand bench_ops.
class HostileInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("opbench_hostile_" + std::to_string(::getpid()));
    testing::remove_tree(dir_);
    write_text(dir_ / "rows.csv", "name,metric\nkeep,me\n");
    write_text(dir_ / "plain", "a file\n");
    write_text(dir_ / "t.json", "{}\n");
    fs::create_directories(dir_ / "dir.csv");
    ASSERT_EQ(::mkfifo(path("fifo.csv").c_str(), 0644), 0);
    fs::create_symlink("loop.csv", dir_ / "loop.csv");
    fs::create_symlink("missing.csv", dir_ / "dangling.csv");
    fs::create_symlink("rows.csv", dir_ / "link.csv");
    fs::create_hard_link(dir_ / "rows.csv", dir_ / "hard.csv");
    before_ = listing();
  }
  void TearDown() override { testing::remove_tree(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Every name in the folder with its text (a FIFO's as "fifo"): what checking must leave as it was.
  std::map<std::string, std::string> listing() const {
    std::map<std::string, std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
      std::error_code error;
      const bool regular = entry.is_regular_file(error);
      files[entry.path().string()] = regular ? read_text(entry.path()) : "other";
    }
    return files;
  }

  fs::path dir_;
  std::map<std::string, std::string> before_;
};

void add(std::vector<Probe>& probes, std::vector<std::string> args, int exit_code, std::string message,
         std::map<std::string, std::string> env = {}) {
  probes.push_back({std::move(args), std::move(env), exit_code, std::move(message)});
}

// Google Benchmark's flags: every value it would misread, and the ones it takes.
void gbench_flag_probes(std::vector<Probe>& probes) {
  const std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> values = {
      {"--benchmark_format", {{"xml", "JSON", "", "json ", "js"}, {"console", "json", "csv"}}},
      {"--benchmark_out_format", {{"xml", "tabular", ""}, {"console", "json", "csv"}}},
      {"--benchmark_time_unit", {{"fortnight", "sec", "NS", "", "1"}, {"ns", "us", "ms", "s"}}},
      {"--benchmark_color", {{"purple", "2", "", "TRUE"}, {"auto", "true", "false", "yes", "no"}}},
      {"--benchmark_repetitions", {{"0", "-1", "1.5", "abc", "", "1e2", "0x10", " 3", "nan", "inf", "2000000"},
                                   {"1", "3", "1000"}}},
      {"--benchmark_list_tests", {{"maybe", "2", "tru"}, {"true", "false", "1", "0", "yes", "no"}}},
      {"--benchmark_report_aggregates_only", {{"maybe", ""}, {"true", "false"}}},
      {"--benchmark_display_aggregates_only", {{"maybe"}, {"true"}}},
      {"--benchmark_enable_random_interleaving", {{"sometimes"}, {"false"}}},
      {"--v", {{"-1", "x", "101", "1.5"}, {"0", "3"}}},
      {"--benchmark_context", {{"novalue", "=x", "a=1,b", ""}, {"a=1", "a=1,b=2"}}},
  };
  for (const auto& [flag, lists] : values) {
    for (const auto& bad : lists.first) add(probes, {flag + "=" + bad}, 2, flag + "=" + bad + ": expected");
    for (const auto& good : lists.second) add(probes, {flag + "=" + good}, 0, "");
  }
  for (const char* unknown : {"--benchmark_formats=json", "--benchmark_minn_time=1", "--benchmark", "--bogus", "--v3"})
    add(probes, {unknown}, 2, "unknown flag");
  for (const char* positional : {"positional", "-x", "LayerNorm/", "-benchmark_format=json"})
    add(probes, {positional}, 2, "not a flag");
  for (const char* bare : {"--benchmark_format", "--benchmark_repetitions", "--benchmark_time_unit", "--v"})
    add(probes, {bare}, 2, "needs a value");
  add(probes, {"--benchmark_out="}, 2, "needs a file name");
  add(probes, {"--benchmark_list_tests"}, 0, "");
  add(probes, {"--benchmark_min_time=1"}, 2, "until its median is steady");
  add(probes, {"--benchmark_counters_tabular=true"}, 2, "--opbench_console=full");
  add(probes, {"--opbench_console=full", "--benchmark_counters_tabular=wide"}, 2, "expected true, false");
  add(probes, {"--opbench_console=full", "--benchmark_counters_tabular"}, 0, "");
}

// bench_ops' own flags and replay's: values out of range, of the wrong kind, or missing.
void own_flag_probes(std::vector<Probe>& probes) {
  const std::map<std::string, std::vector<std::string>> bad = {
      {"--opbench_max_noise", {"-1", "2", "abc", "nan", "inf", "", "0x1", " 0.1"}},
      {"--opbench_max_time", {"0", "-1", "1e9", "abc", "1s"}},
      {"--opbench_min_samples", {"0", "1.5", "abc", "-3", "1e7"}},
      {"--opbench_model_layers", {"0", "2000", "x"}},
      {"--opbench_cpu_threads", {"0", "5000", "-1"}},
      {"--opbench_trace_iters", {"0", "0.5"}},
      {"--opbench_throttle_threshold", {"-1", "11", "x"}},
      {"--opbench_cache", {"lukewarm", "", "COLD"}},
      {"--opbench_timer", {"gpu", "event"}},
      {"--opbench_console", {"tiny", ""}},
      {"--opbench_shard", {"2/2", "1/0", "a/b", "-1/2", "1", "0/5000"}},
      {"--opbench_run_id", {"xyz", "", std::string(65, 'a')}},
      {"--opbench_inject_slowdown", {"0", "abc", "5:(", "5000"}},
      {"--oplog_dtype", {"fp8", ""}},
      {"--oplog_max_inputs", {"0", "1.5"}},
      {"--oplog_case_budget_s", {"0", "-5"}},
      {"--oplog_max_input_mb", {"-1", "x"}},
  };
  for (const auto& [flag, values] : bad)
    for (const auto& value : values) add(probes, {flag + "=" + value}, 2, flag + "=" + value + ": ");
  for (const char* flag : {"--output", "--targets", "--opbench_markdown", "--opbench_trace", "--opbench_gpu_lock",
                           "--opbench_shard_times", "--oplog", "--opbench_inductor_cache", "--opbench_max_time"})
    add(probes, {flag}, 2, std::string(flag) + " needs a value");
  add(probes, {"--oplog_dtype=f16"}, 2, "need --oplog");
  add(probes, {"--opbench_shard_times=x.json"}, 2, "add --opbench_shard");
  add(probes, {"--opbench_timer=cupti", "--opbench_trace=t"}, 2, "CUPTI");
}

// Every OPBENCH_* variable bench_ops reads, and Google Benchmark's BENCHMARK_* defaults.
void environment_probes(std::vector<Probe>& probes) {
  const std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> values = {
      {"OPBENCH_LAUNCH_RULES", {{"a100", "H100", "h100 "}, {"h100", "h200", ""}}},
      {"OPBENCH_COLLECTIVE_TIMEOUT_S", {{"0", "-1", "abc", "nan", "inf", "10s"}, {"30", "0.5"}}},
      {"OPBENCH_COLLECTIVE_EXIT_RANK", {{"abc", "-1", "1.5", "one"}, {"0", "3"}}},
      {"OPBENCH_COLLECTIVE_CORRUPT_RANK", {{"x", "-2"}, {"1"}}},
      {"OPBENCH_NCCL_SYMMETRIC", {{"2", "yes"}, {"1"}}},
      {"OPBENCH_TP_ALLREDUCE", {{"ring", "LSA"}, {"lsa"}}},
      {"OPBENCH_PYTHON", {{"/nonexistent/python", "/etc/passwd", "/tmp"}, {"/bin/sh"}}},
      {"OPBENCH_INDUCTOR_CACHE", {{"/etc/passwd"}, {"/tmp", "/nonexistent/cache"}}},
      {"BENCHMARK_FORMAT", {{"xml"}, {"json"}}},
      {"BENCHMARK_REPETITIONS", {{"0", "-1"}, {"2"}}},
      {"BENCHMARK_TIME_UNIT", {{"fortnight"}, {"ms"}}},
      {"BENCHMARK_COLOR", {{"purple"}, {"auto"}}},
      {"BENCHMARK_LIST_TESTS", {{"maybe"}, {"false"}}},
      {"BENCHMARK_OUT_FORMAT", {{"yaml"}, {"csv"}}},
      {"RANK", {{"x"}, {}}},
      {"WORLD_SIZE", {{"2"}, {}}},
  };
  for (const auto& [name, lists] : values) {
    for (const auto& bad : lists.first) add(probes, {}, 2, name + "=" + bad, {{name, bad}});
    for (const auto& good : lists.second) add(probes, {}, 0, "", {{name, good}});
  }
}

// The flags that name a file a run writes, each as a command line (--opbench_shard_times needs a shard).
std::vector<std::string> output_args(const std::string& flag, const std::string& path) {
  if (flag == "--benchmark_out") return {"--benchmark_out=" + path};
  return {flag, path};
}

const std::vector<std::string>& output_flags() {
  static const std::vector<std::string> flags = {"--output", "--benchmark_out", "--opbench_markdown",
                                                 "--opbench_gpu_lock", "--opbench_inductor_plan"};
  return flags;
}

std::vector<std::string> input_args(const std::string& flag, const std::string& path) {
  if (flag == "--opbench_shard_times") return {"--opbench_shard=0/1", flag, path};
  return {flag, path};
}

// Paths that no output can be written to and no input read from, with what the refusal says.
void unusable_path_probes(std::vector<Probe>& probes, const HostileInput& fixture_dir, const std::string& dir) {
  (void)fixture_dir;
  const std::string too_long = dir + "/" + std::string(PATH_MAX, 'x') + ".csv";
  const std::string long_name = dir + "/" + std::string(NAME_MAX + 1, 'n') + ".csv";
  const std::vector<std::pair<std::string, std::string>> outputs = {
      {dir + "/fifo.csv", "is a FIFO"},         {"/dev/null", "is a device"},
      {dir + "/dir.csv", "is a folder"},        {dir + "/loop.csv", "symbolic link loop"},
      {dir + "/dangling.csv", "does not exist"}, {dir + "/plain/x.csv", "which is not a folder"},
      {dir + "/plain/deeper/x.csv", "which is not a folder"}, {too_long, "longer than PATH_MAX"},
      {long_name, "longer than NAME_MAX"},     {"/proc/opbench_x.csv", "cannot be written"},
      {dir + "/loop.csv/x.csv", "symbolic link loop"}, {dir + "/new/", "expected a file name"},
  };
  for (const auto& flag : output_flags())
    for (const auto& [path, why] : outputs) {
      if (flag == "--output" && (path.back() == '/' || path == "/dev/null")) continue;
      add(probes, output_args(flag, path), 2, why);
    }
  add(probes, {"--output", "/dev/null"}, 2, "expected a .csv file");
  for (const auto& [path, why] : std::vector<std::pair<std::string, std::string>>{
           {dir + "/plain", "expected a folder"}, {dir + "/fifo.csv", "is a FIFO"}, {dir + "/loop.csv", "loop"},
           {dir + "/plain/trace", "which is not a folder"}, {"/proc/opbench_trace", "cannot be written"},
           {too_long, "PATH_MAX"}}) {
    add(probes, {"--opbench_trace", path}, 2, why);
    add(probes, {"--opbench_inductor_build", "--opbench_inductor_cache", path}, 2, why);
  }
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {dir + "/missing.json", "no such file"},   {dir + "/fifo.csv", "is a FIFO"},
      {dir + "/loop.csv", "symbolic link loop"}, {dir + "/plain/x.json", "which is not a folder"},
      {too_long, "PATH_MAX"},                    {long_name, "NAME_MAX"},
      {dir + "/dangling.csv", "a file that does not exist"}, {"", ""},
  };
  for (const char* flag : {"--targets", "--oplog", "--opbench_shard_times", "--opbench_inductor_settings"})
    for (const auto& [path, why] : inputs) add(probes, input_args(flag, path), 2, why);
  for (const char* flag : {"--opbench_shard_times", "--opbench_inductor_settings"})
    add(probes, input_args(flag, dir + "/dir.csv"), 2, "is a folder");
}

// Two flags naming one file, spelt every way a path can be: each pair refused, naming both flags.
void clash_probes(std::vector<Probe>& probes, const std::string& dir) {
  const std::vector<std::pair<std::string, std::string>> spellings = {
      {dir + "/rows.csv", dir + "/rows.csv"},      {dir + "/rows.csv", dir + "/./rows.csv"},
      {dir + "/rows.csv", dir + "/dir.csv/../rows.csv"}, {dir + "/rows.csv", dir + "/link.csv"},
      {dir + "/rows.csv", dir + "/hard.csv"},      {dir + "/new.csv", dir + "//new.csv"},
      {dir + "/new.csv", dir + "/dir.csv/../new.csv"},
  };
  for (size_t a = 0; a < output_flags().size(); ++a)
    for (size_t b = 0; b < output_flags().size(); ++b) {
      const std::string &first = output_flags()[a], &second = output_flags()[b];
      if (a == b || first == "--opbench_inductor_plan" || second == "--opbench_inductor_plan") continue;
      for (const auto& [one, other] : spellings) {
        std::vector<std::string> args = output_args(first, one);
        for (const auto& arg : output_args(second, other)) args.push_back(arg);
        add(probes, args, 2, "the same file as && " + first + " && " + second);
      }
    }
  for (const char* flag : {"--benchmark_out", "--opbench_markdown", "--opbench_gpu_lock"}) {
    std::vector<std::string> args = {"--output", dir + "/new.csv"};
    for (const auto& arg : output_args(flag, dir + "/new.json")) args.push_back(arg);
    add(probes, args, 2, "its dashboard sidecar && the same file as");
  }
  for (const char* input : {"--targets", "--oplog", "--opbench_shard_times", "--opbench_inductor_settings"})
    for (const auto& flag : {std::string("--benchmark_out"), std::string("--opbench_markdown"), std::string("--output")}) {
      std::vector<std::string> args = input_args(input, dir + "/t.json");
      const std::string out = flag == "--output" ? dir + "/t.csv" : dir + "/t.json";
      if (flag == "--output") args = input_args(input, dir + "/rows.csv");
      for (const auto& arg : output_args(flag, flag == "--output" ? dir + "/link.csv" : out)) args.push_back(arg);
      add(probes, args, 2, "which this run reads");
    }
}

// Usable paths: bench_ops goes on, and checking them created nothing.
void usable_path_probes(std::vector<Probe>& probes, const std::string& dir) {
  add(probes, {"--output", dir + "/rows.csv", "--benchmark_out=" + dir + "/b.json", "--opbench_markdown",
               dir + "/m.md", "--opbench_trace", dir + "/traces", "--targets", dir + "/t.json"}, 0, "");
  add(probes, {"--output", dir + "/new/deeper/rows.csv", "--opbench_gpu_lock", dir + "/lock"}, 0, "");
  add(probes, {"--output", dir + "/link.csv"}, 0, "");
  add(probes, {"--output", dir + "/hard.csv", "--opbench_markdown", dir + "/dir.csv/m.md"}, 0, "");
  add(probes, {"--oplog", dir + "/t.json", "--output", dir + "/t.csv"}, 0, "");
  add(probes, {"--targets", dir + "/t.json", "--oplog", dir + "/t.json"}, 0, "");   // two inputs may be one file
  add(probes, {"--opbench_inductor_plan=-", "--output", dir + "/rows.csv"}, 0, "");
  add(probes, {"--help", "--output", dir + "/fifo.csv"}, 0, "");                    // --help runs nothing
  add(probes, {"--benchmark_out=" + dir + "/b.json"}, 0, "", {{"RANK", "1"}, {"WORLD_SIZE", "2"},
                                                             {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}});
  add(probes, {"--benchmark_out=" + dir + "/rows.csv"}, 0, "");                     // a file of its own: replaced
}

TEST_F(HostileInput, EveryProbeExitsWithItsCodeAndMessageAndLeavesEveryFile) {
  std::vector<Probe> probes;
  gbench_flag_probes(probes);
  own_flag_probes(probes);
  environment_probes(probes);
  unusable_path_probes(probes, *this, dir_.string());
  clash_probes(probes, dir_.string());
  usable_path_probes(probes, dir_.string());
  for (const auto& probe : probes) {
    std::vector<std::string> args = {"bench_ops"};
    args.insert(args.end(), probe.args.begin(), probe.args.end());
    auto env = [&](const std::string& name) -> std::optional<std::string> {
      auto it = probe.env.find(name);
      return it == probe.env.end() ? std::nullopt : std::optional(it->second);
    };
    const Verdict verdict = verdict_for(args, env);
    std::string shown;
    for (const auto& arg : probe.args) shown += " " + arg.substr(0, 80);
    for (const auto& [name, value] : probe.env) shown += " " + name + "=" + value;
    EXPECT_EQ(verdict.exit_code, probe.exit_code) << "bench_ops" << shown << "\n  said: " << verdict.message;
    for (size_t begin = 0, end; begin <= probe.message.size(); begin = end + 4) {
      end = std::min(probe.message.find(" && ", begin), probe.message.size());
      EXPECT_NE(verdict.message.find(probe.message.substr(begin, end - begin)), std::string::npos)
          << "bench_ops" << shown << "\n  said: " << verdict.message << "\n  expected: " << probe.message;
    }
    EXPECT_EQ(verdict.message.find('\n'), std::string::npos) << "one line:" << verdict.message;
  }
  EXPECT_EQ(listing(), before_) << "checking must neither change, create nor remove a file";
  EXPECT_GE(probes.size(), 300u);
  RecordProperty("probes", static_cast<int>(probes.size()));
  std::cout << "[hostile] bench_ops in-process probes: " << probes.size() << "\n";
}

}  // namespace
}  // namespace opbench
