// The family descriptor contract: a family that would produce no row is refused when it is described,
// the harness names no family, and a recorded Google Benchmark run fed through today's reporters gives
// the experiment rows that opbench wrote for that run before the case registry existed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "csv_format.h"
#include "experiment_reporter.h"
#include "opbench/check.h"
#include "opbench/family.h"
#include "opbench/targets.h"
#include "test_files.h"

namespace opbench {
namespace {

namespace fs = std::filesystem;

Family valid_family() {
  Family f;
  f.name = "Toy";
  f.experiments = {{"toy", Metric::kMemoryBandwidth}};
  f.dtypes = {c10::kFloat};
  f.cpu_shapes = {{8}};
  f.backends = {{"aten"}};
  f.work = [](c10::ScalarType, const Dims& dims) {
    Work w;
    w.bytes_read = 4.0 * dims[0];
    return w;
  };
  f.run = [](CaseContext&) {};
  return f;
}

std::string validation_error(const Family& f) {
  try {
    validate_family(f);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(FamilyDescriptor, AFamilyWithoutAnExperimentIsRefused) {
  EXPECT_EQ(validation_error(valid_family()), "no error");
  Family no_experiment = valid_family();
  no_experiment.experiments.clear();
  EXPECT_EQ(validation_error(no_experiment), "family Toy: declares no experiment (its cases would produce no row)");
  // Only a family whose every backend measures a ceiling may go without.
  no_experiment.backends = {{"read", false, {}, CeilingKind::kRead}};
  EXPECT_EQ(validation_error(no_experiment), "no error");
}

TEST(FamilyDescriptor, InconsistentDeclarationsAreRefused) {
  Family f = valid_family();
  f.experiments[0].dtypes = {c10::kBFloat16};
  EXPECT_NE(validation_error(f).find("experiment toy names dtype bf16 the family lacks"), std::string::npos);
  f = valid_family();
  f.backends[0].dtypes = {c10::kChar};
  EXPECT_NE(validation_error(f).find("backend aten names dtype int8"), std::string::npos);
  f = valid_family();
  f.work = nullptr;
  EXPECT_NE(validation_error(f).find("no work formula"), std::string::npos);
  f = valid_family();
  f.name = "A/B";
  EXPECT_NE(validation_error(f).find("without '/'"), std::string::npos);
}

TEST(FamilyDescriptor, CasesCarryTheirWorkExperimentsAndBackendsFilteredByDevice) {
  Family f = valid_family();
  f.backends.push_back({"cuda", true});
  f.gpu_shapes = {{1024}};
  auto cpu_cases = cases_of(f, DeviceInfo{});
  ASSERT_EQ(cpu_cases.size(), 1u);   // the cuda backend needs a CUDA device
  EXPECT_EQ(cpu_cases[0].name(), "Toy/fp32/8/aten");
  EXPECT_DOUBLE_EQ(cpu_cases[0].work.bytes_read, 32);
  ASSERT_EQ(cpu_cases[0].experiments.size(), 1u);
  EXPECT_EQ(cpu_cases[0].experiments[0].name, "toy");
  DeviceInfo gpu;
  gpu.is_gpu = true;
  EXPECT_EQ(cases_of(f, gpu).size(), 2u);
}

// Structural: lib/, reporters/, app/ and replay/ compare against no family or experiment name. A family name
// in a string literal there would mean the harness knows a family (as it once did: a map from family
// to experiment in lib/targets.cpp silently dropped rows of families missing from it).
TEST(FamilyDescriptor, HarnessReportersAndProgramNameNoFamily) {
  std::vector<std::string> names;
  for (const auto& family : registered_families()) {
    names.push_back(family.name);
    for (const auto& e : family.experiments) names.push_back(e.name);
  }
  ASSERT_GE(names.size(), 8u);
  // The allowed literals: CUDA kernel-name patterns in traces (mm kernels, the breakdown's kernel kinds),
  // not a family.
  const std::set<std::string> allowed = {"lib/trace.cpp:\"gemv\"", "lib/kernel_breakdown.cpp:\"gemv\""};
  int files = 0;
  for (const char* dir : {"lib", "reporters", "app", "replay"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(OPBENCH_SOURCE_DIR) / dir)) {
      std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".h" && ext != ".cu") continue;
      ++files;
      std::string text;   // the code without its // comments (examples in comments are fine)
      std::istringstream lines(testing::read_text(entry.path()));
      for (std::string line; std::getline(lines, line);) text += line.substr(0, line.find("//")) + "\n";
      std::string rel = fs::relative(entry.path(), OPBENCH_SOURCE_DIR).string();
      for (const auto& name : names) {
        std::string literal = "\"" + name + "\"";
        if (text.find(literal) != std::string::npos && !allowed.count(rel + ":" + literal))
          ADD_FAILURE() << rel << " contains the family or experiment name " << literal;
      }
    }
  }
  EXPECT_GT(files, 20);
}

// --- A recorded run through today's reporters --------------------------------------------------------
// tests/cpp/golden/h200_recheck/: bench_ops.json (Google Benchmark JSON of the default sweep on an H200,
// sha e3dd1e6676f0, before the registry) and the gpt_fast_benchmark.csv/.json that run wrote, with the
// targets file it used. Each recorded case becomes a result through timed_result, the function
// CaseContext::time derives a case's figures with, from its recorded time and the timer and cache of
// its label; its run then goes through today's ExperimentReporter as Google Benchmark reports it. The
// CSV must match cell for cell (today's rows add run_id, timestamp and device_id after the recorded
// columns), the dashboard JSON record for record with numbers equal to 1e-12 relative (the old code
// divided in another order).

using BRun = benchmark::BenchmarkReporter::Run;

// Equal JSON, numbers to 1e-12 relative; `actual` may hold the keys that came after the recording
// (run_id, timestamp, device_id), nothing else.
void expect_same_json(const nlohmann::json& actual, const nlohmann::json& expected, const std::string& where) {
  if (expected.is_number() && actual.is_number()) {
    double a = actual.get<double>(), e = expected.get<double>();
    EXPECT_NEAR(a, e, 1e-12 * std::max(1.0, std::abs(e))) << where;
  } else if (expected.is_object() && actual.is_object()) {
    for (const auto& [key, value] : actual.items())
      EXPECT_TRUE(expected.contains(key) || key == "run_id" || key == "timestamp" || key == "device_id") << where << "." << key;
    for (const auto& [key, value] : expected.items()) {
      ASSERT_TRUE(actual.contains(key)) << where << "." << key;
      expect_same_json(actual[key], value, where + "." + key);
    }
  } else if (expected.is_array() && actual.is_array()) {
    ASSERT_EQ(actual.size(), expected.size()) << where;
    for (size_t i = 0; i < expected.size(); ++i) expect_same_json(actual[i], expected[i], where + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(actual, expected) << where;
  }
}

TEST(RecordedRun, H200SweepGivesTheRowsTheOldReportersWrote) {
  fs::path golden = fs::path(OPBENCH_SOURCE_DIR) / "tests/cpp/golden/h200_recheck";
  nlohmann::json recorded = nlohmann::json::parse(testing::read_text(golden / "bench_ops.json"));
  const auto& context = recorded["context"];
  RunInfo info;
  info.device.is_gpu = true;
  info.device.name = info.device.arch_name = context["opbench_device"].get<std::string>();
  info.device.peaks = lookup_datasheet(info.device.name);
  info.device.id = "cuda:0";
  info.device.cpu_count = context["num_cpus"].get<int>();
  info.device.memory_bytes = 150'109'880'320;   // the runner record of that run (gpu_mem_info)
  info.torch_version = context["torch_version"].get<std::string>();
  info.cuda_version = context["cuda_version"].get<std::string>();
  info.opbench_sha = context["opbench_sha"].get<std::string>();
  info.timer = context["opbench_timer"].get<std::string>();
  info.cache = context["opbench_cache"].get<std::string>();
  info.host_cpu = "Intel(R) Xeon(R) Processor";
  info.host_memory_gb = 135.14856448;
  info.run_id = "0123456789ab";
  info.timestamp = context["date"].get<std::string>();

  RunContext run(info.device);
  for (const auto& family : registered_families())
    for (auto& c : cases_of(family, info.device)) run.cases.add(std::move(c));
  for (const auto& b : recorded["benchmarks"]) {   // the ceilings that run's Ceiling cases measured
    const CaseInfo* c = run.cases.find(b["name"].get<std::string>());
    ASSERT_NE(c, nullptr) << b["name"] << " is not a case the families register on a GPU";
    if (c->measures)
      run.ceilings.record(*c->measures, c->work.bytes_read + c->work.bytes_written,
                          b.contains("TFLOP/s") ? b["TFLOP/s"].get<double>() : b["GB/s"].get<double>());
  }
  std::vector<BRun> runs;
  for (const auto& b : recorded["benchmarks"]) {
    std::string name = b["name"].get<std::string>();
    std::smatch label;
    std::string text = b["label"].get<std::string>();
    ASSERT_TRUE(std::regex_search(text, label, std::regex("timer=(\\w+) cache=(\\w+)"))) << name << ": " << text;
    ASSERT_EQ(label[1], "events") << name;
    ASSERT_EQ(b["iterations"].get<int64_t>(), 1) << name;
    const std::optional<CacheMode> cache = label[2] == "cold" ? CacheMode::kCold : CacheMode::kWarm;
    run.results.add(name) = timed_result(run.cases.find(name)->work, b["real_time"].get<double>() * 1e-6,   // us
                                         TimerKind::kEvents, cache, info.device.peaks, run.ceilings);
    BRun r;
    r.run_name.function_name = name;
    r.run_type = BRun::RT_Iteration;
    runs.push_back(r);
  }

  fs::path out = fs::temp_directory_path() / ("opbench_recorded_" + std::to_string(::getpid()));
  testing::remove_tree(out);
  {
    std::set<std::string> selected;
    for (const auto& r : runs) selected.insert(r.run_name.function_name);
    ExperimentReporter reporter(run, info, load_targets((golden / "targets_h200.json").string()),
                                RowFile((out / "gpt_fast_benchmark.csv").string()), selected, nullptr);
    for (const auto& r : runs) reporter.ReportRuns({r});
    reporter.Finalize();
  }
  // The CSV: the recorded run's 14 columns cell for cell, then this version's run_id, timestamp, device_id.
  auto actual_csv = read_csv((out / "gpt_fast_benchmark.csv").string());
  auto expected_csv = read_csv((golden / "gpt_fast_benchmark.csv").string());
  ASSERT_EQ(actual_csv.size(), expected_csv.size());
  for (size_t i = 0; i < expected_csv.size(); ++i) {
    std::vector<std::string> recorded_columns(actual_csv[i].begin(), actual_csv[i].begin() + expected_csv[i].size());
    EXPECT_EQ(recorded_columns, expected_csv[i]) << "CSV line " << i + 1;
    std::vector<std::string> added(actual_csv[i].begin() + expected_csv[i].size(), actual_csv[i].end());
    std::vector<std::string> wanted = {"run_id", "timestamp", "device_id"};
    if (i > 0) wanted = {info.run_id, info.timestamp, info.device.id};
    EXPECT_EQ(added, wanted) << "CSV line " << i + 1;
  }
  std::istringstream actual(testing::read_text(out / "gpt_fast_benchmark.json"));
  std::istringstream expected(testing::read_text(golden / "gpt_fast_benchmark.json"));
  std::string a, e;
  int records = 0;
  while (std::getline(expected, e)) {
    ASSERT_TRUE(std::getline(actual, a)) << "record " << records << " missing";
    expect_same_json(nlohmann::json::parse(a), nlohmann::json::parse(e), "record " + std::to_string(records));
    ++records;
  }
  EXPECT_FALSE(std::getline(actual, a)) << "extra record";
  EXPECT_EQ(records, 13);
  testing::remove_tree(out);
}

}  // namespace
}  // namespace opbench
