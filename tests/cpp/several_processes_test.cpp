// Running over several processes: the shard selection (app/shard_selection.h), the rank selection
// (app/rank_selection.h) and the distributed launch's environment (opbench/world.h): the shard plan is stable and balanced and keeps every experiment's cases together,
// ranks other than 0 run only the every-rank families, and an unusable environment is refused with one
// line naming the variable.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>

#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/experiment.h"
#include "opbench/targets.h"
#include "opbench/world.h"
#include "rank_selection.h"
#include "shard_selection.h"

namespace opbench {
namespace {

CaseInfo make_case(const std::string& family, const std::string& dtype, const std::string& shape,
                   const std::string& backend, double bytes, std::vector<Experiment> experiments) {
  CaseInfo info;
  info.family = family;
  info.dtype = dtype;
  info.shape = shape;
  info.backend = backend;
  info.work.bytes_read = bytes;
  info.experiments = std::move(experiments);
  return info;
}

// A sweep like the CPU one: two experiments of several shapes each, single-case rows, and ceilings.
CaseRegistry& sweep() {
  static CaseRegistry cases = [] {
    CaseRegistry r;
    Experiment norm{"norm", Metric::kMemoryBandwidth}, gemv{"gemv", Metric::kMemoryBandwidth};
    Experiment mlp{"mlp", Metric::kFlopsUtilization};
    CaseInfo read = make_case("Ceiling", "fp32", "1GiB", "read", 1e9, {});
    read.measures = CeilingKind::kRead;
    r.add(read);
    for (std::string dtype : {"bf16", "fp16", "fp32"})
      for (int d : {256, 1024, 4096}) r.add(make_case("Norm", dtype, std::to_string(d), "aten", 64.0 * d, {norm}));
    for (std::string dtype : {"bf16", "int8"})
      for (int d : {64, 256}) r.add(make_case("Gemv", dtype, std::to_string(d), "aten", 1.0 * d * d, {gemv}));
    r.add(make_case("Mlp", "bf16", "64x256", "aten", 5e5, {mlp}));
    return r;
  }();
  return cases;
}

std::set<std::string> all_names(const CaseRegistry& r) {
  std::set<std::string> names;
  for (const CaseInfo* info : r.all()) names.insert(info->name());
  return names;
}

double bytes_cost(const CaseInfo& info) { return info.work.bytes_read; }

TEST(ShardPlan, EveryCaseRunsInExactlyOneShareAndTheCeilingsInEach) {
  for (int count : {1, 2, 3, 4, 8}) {
    auto shares = plan_shards(sweep(), all_names(sweep()), count, bytes_cost);
    ASSERT_EQ(shares.size(), static_cast<size_t>(count));
    std::map<std::string, int> runs;
    for (const auto& share : shares)
      for (const auto& name : share) ++runs[name];
    for (const CaseInfo* info : sweep().all()) {
      int expected = 1;
      if (info->measures)
        expected = static_cast<int>(std::count_if(shares.begin(), shares.end(), [](const auto& s) { return !s.empty(); }));
      EXPECT_EQ(runs[info->name()], expected) << info->name() << " with " << count << " shards";
    }
  }
}

TEST(ShardPlan, AnExperimentRowsCasesStayTogether) {
  auto shares = plan_shards(sweep(), all_names(sweep()), 4, bytes_cost);
  std::map<std::string, std::set<size_t>> row_shares;   // experiment/dtype/backend -> shares holding its cases
  for (size_t s = 0; s < shares.size(); ++s)
    for (const auto& name : shares[s]) {
      const CaseInfo* info = sweep().find(name);
      for (const auto& e : info->experiments) row_shares[e.name + "/" + info->dtype + "/" + info->backend].insert(s);
    }
  EXPECT_EQ(row_shares.size(), 6u);   // norm x 3 dtypes, gemv x 2, mlp
  for (const auto& [row, held_by] : row_shares) EXPECT_EQ(held_by.size(), 1u) << row;
}

TEST(ShardPlan, IsStableAndDoesNotDependOnTheOrderOfTheSelection) {
  auto first = plan_shards(sweep(), all_names(sweep()), 3, bytes_cost);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(plan_shards(sweep(), all_names(sweep()), 3, bytes_cost), first);
  // Two processes register the same cases; each computes the plan on its own: they agree.
  CaseRegistry again;
  for (const CaseInfo* info : sweep().all()) again.add(*info);
  EXPECT_EQ(plan_shards(again, all_names(again), 3, bytes_cost), first);
}

TEST(ShardPlan, BalancesByExpectedTimeLongestFirst) {
  // Rows of cost 8, 7, 6, 5 and four of cost 1: greedy longest-first into two shares gives 15 | 15
  // (8 | 7, then 6 to the lighter, 5 to the lighter, the 1s alternating).
  CaseRegistry r;
  const double costs[] = {1, 8, 1, 7, 1, 6, 1, 5};
  for (int i = 0; i < 8; ++i)
    r.add(make_case("F", "fp32", std::to_string(i), "aten", costs[i], {{"row" + std::to_string(i)}}));
  auto shares = plan_shards(r, all_names(r), 2, bytes_cost);
  std::vector<double> load;
  for (const auto& share : shares) {
    double sum = 0;
    for (const auto& name : share) sum += r.find(name)->work.bytes_read;
    load.push_back(sum);
  }
  EXPECT_EQ(load, (std::vector<double>{15, 15}));
  EXPECT_TRUE(shares[0].count("F/fp32/1/aten") && shares[1].count("F/fp32/3/aten"));   // 8 -> 0, 7 -> 1
  // More shares than rows: the extra shares are empty (and get no ceiling).
  EXPECT_EQ(plan_shards(r, {"F/fp32/1/aten"}, 3, bytes_cost)[2].size(), 0u);
}

TEST(ShardPlan, TheEstimateGrowsWithTheWorkAndIsCappedByTheStoppingRule) {
  StoppingRule rule;
  CaseInfo small = make_case("F", "fp32", "1", "aten", 1e3, {});
  CaseInfo large = make_case("F", "fp32", "2", "aten", 1e9, {});
  EXPECT_LT(expected_seconds(small, true, rule), expected_seconds(large, true, rule));
  EXPECT_LT(expected_seconds(large, true, rule), expected_seconds(large, false, rule));   // a CPU core is slower
  CaseInfo huge = make_case("F", "fp32", "3", "aten", 1e12, {});   // 0.5 s an iteration: sampling is capped
  StoppingRule longer = rule;
  longer.max_seconds = rule.max_seconds + 1;
  EXPECT_NEAR(expected_seconds(huge, true, longer) - expected_seconds(huge, true, rule), 1, 1e-9);
}

TEST(ShardPlan, ReadsAPreviousRunsTimes) {
  auto path = std::filesystem::temp_directory_path() / "opbench_split_times.json";
  std::ofstream(path) << R"({"context": {}, "benchmarks": [
    {"name": "A/fp32/1/aten", "run_type": "iteration", "real_time": 100, "time_unit": "us", "samples": 50},
    {"name": "A/fp32/1/aten", "run_type": "iteration", "real_time": 300, "time_unit": "us", "samples": 50},
    {"name": "A/fp32/1/aten_median", "run_type": "aggregate", "real_time": 200, "time_unit": "us"},
    {"name": "B/fp32/1/aten/iterations:1/manual_time", "real_time": 2, "time_unit": "ms"},
    {"name": "C/fp32/1/aten", "error_occurred": true},
    {"name": "D/fp32/1/aten", "run_type": "iteration", "real_time": 1, "time_unit": "us", "samples": 9,
     "case_wall_s": 7.5},
    {"name": "D/fp32/1/aten", "run_type": "iteration", "real_time": 1, "time_unit": "us", "case_wall_s": 2.5},
    {"name": "E/fp32/1/aten", "error_occurred": true, "case_wall_s": 0.25}]})";
  auto seconds = seconds_from_json(path.string());
  EXPECT_EQ(seconds.size(), 5u);
  EXPECT_EQ(seconds["C/fp32/1/aten"], 0);               // skipped, no counters: its skip costs ~nothing
  EXPECT_NEAR(seconds["D/fp32/1/aten"], 10, 1e-12);     // the wall time of both repetitions, not 9 us
  EXPECT_NEAR(seconds["E/fp32/1/aten"], 0.25, 1e-12);   // a skipped case costs what its skip took
  EXPECT_NEAR(seconds["A/fp32/1/aten"], 0.01, 1e-12);   // (0.005 + 0.015) / 2 repetitions
  EXPECT_NEAR(seconds["B/fp32/1/aten"], 0.002, 1e-12);  // suffix removed; no samples counter: one sample
  std::ofstream(path) << "[1, 2]";
  EXPECT_THROW(seconds_from_json(path.string()), Error);
  std::filesystem::remove(path);
}

TEST(ShardFlag, ParsesIOfNAndRefusesTheRest) {
  Shard s = parse_shard("1/4");
  EXPECT_EQ(s.index, 1);
  EXPECT_EQ(s.count, 4);
  for (const char* bad : {"4/4", "-1/4", "1/0", "1", "1/", "/4", "a/b", "1/4/2", "0/5000", " 1/4"})
    EXPECT_THROW(parse_shard(bad), std::invalid_argument) << bad;
}

TEST(Ranks, RankZeroRunsEverythingTheOthersOnlyTheEveryRankFamilies) {
  CaseRegistry r;
  r.add(make_case("Collective", "bf16", "8B", "all_reduce", 8, {{"collective"}}));
  r.add(make_case("Norm", "bf16", "256", "aten", 8, {{"norm"}}));
  std::set<std::string> selected = all_names(r);
  World world;
  world.size = 2;
  EXPECT_EQ(cases_for_rank(r, selected, world, {"Collective"}), selected);
  world.rank = 1;
  EXPECT_EQ(cases_for_rank(r, selected, world, {"Collective"}), (std::set<std::string>{"Collective/bf16/8B/all_reduce"}));
  EXPECT_EQ(per_rank_path("out/run.json", 3), "out/run.rank3.json");
}

World world_of(std::map<std::string, std::string> env) {
  return world_from_env([env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

std::string world_error(std::map<std::string, std::string> env) {
  try {
    world_of(std::move(env));
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(WorldEnv, TorchrunsVariablesMakeTheWorld) {
  World alone = world_of({});
  EXPECT_FALSE(alone.launched);
  EXPECT_EQ(alone.size, 1);
  World w = world_of({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "3"}, {"MASTER_ADDR", "node0"},
                      {"MASTER_PORT", "29500"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"}});
  EXPECT_TRUE(w.launched && w.agent_store && w.has_rendezvous() && !w.is_root());
  EXPECT_EQ(w.rank, 3);
  EXPECT_EQ(w.size, 8);
  EXPECT_EQ(w.local_rank, 3);
  EXPECT_EQ(w.master_port, 29500);
  // torchrun --nproc-per-node=1, or a world of one set by hand without a rendezvous.
  EXPECT_FALSE(world_of({{"RANK", "0"}, {"WORLD_SIZE", "1"}}).has_rendezvous());
}

TEST(WorldEnv, AnUnusableEnvironmentIsRefusedNamingTheVariable) {
  EXPECT_EQ(world_error({{"WORLD_SIZE", "2"}}),
            "WORLD_SIZE=2 is set but RANK is not: a distributed launch sets both (torchrun does)");
  EXPECT_EQ(world_error({{"RANK", "0"}}),
            "RANK=0 is set but WORLD_SIZE is not: a distributed launch sets both (torchrun does)");
  EXPECT_EQ(world_error({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}),
            "RANK=2 is not below WORLD_SIZE=2 (ranks are 0 .. WORLD_SIZE-1)");
  EXPECT_NE(world_error({{"RANK", "x"}, {"WORLD_SIZE", "2"}}).find("RANK=x: expected a whole number"), std::string::npos);
  EXPECT_NE(world_error({{"RANK", "0"}, {"WORLD_SIZE", "0"}}).find("WORLD_SIZE=0: expected a whole number in [1,"),
            std::string::npos);
  EXPECT_NE(world_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}}).find("needs MASTER_ADDR and MASTER_PORT"), std::string::npos);
  EXPECT_NE(world_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}})
                .find("MASTER_PORT=70000: expected a whole number in [1, 65535]"),
            std::string::npos);
  EXPECT_NE(world_error({{"LOCAL_RANK", "-1"}}).find("LOCAL_RANK=-1"), std::string::npos);
}

TEST(DeviceId, NamesTheGpuAsTheHostNumbersIt) {
  EXPECT_EQ(cuda_device_id(0, nullptr), "cuda:0");
  EXPECT_EQ(cuda_device_id(1, nullptr), "cuda:1");
  EXPECT_EQ(cuda_device_id(0, "3"), "cuda:3");
  EXPECT_EQ(cuda_device_id(1, "2, 5"), "cuda:5");
  EXPECT_EQ(cuda_device_id(0, "GPU-1a2b"), "cuda:GPU-1a2b");
  EXPECT_EQ(cuda_device_id(2, "4"), "cuda:2");   // not in the list: the process's own index
}

TEST(ExperimentRows, APerWorldSizeExperimentIsNamedByItsProcessCount) {
  Experiment e{"collective", Metric::kBusBandwidth};
  e.per_world_size = true;
  EXPECT_EQ(experiment_row_name(e, 8), "collective_n8");
  EXPECT_TRUE(per_world_row_name("collective", "collective_n8"));
  EXPECT_TRUE(per_world_row_name("collective", "collective_n16"));
  for (const char* other : {"collective", "collective_n", "collective_n0", "collective_n8x", "collective_8"})
    EXPECT_FALSE(per_world_row_name("collective", other)) << other;
  Experiment plain{"gemv"};
  EXPECT_EQ(experiment_row_name(plain, 8), "gemv");
  EXPECT_STREQ(metric_name(Metric::kBusBandwidth), "bus_bandwidth(GB/s)");
  EXPECT_FALSE(metric_lower_is_better(Metric::kBusBandwidth));
  EXPECT_TRUE(metric_lower_is_better(Metric::kTokenLatencyP50));
}

TEST(ExperimentRows, TargetsMayNameAnyProcessCountOfAPerWorldSizeExperiment) {
  TargetFile file = parse_target_text(R"json({"devices": ["G"], "rule": "r", "targets": [
      {"experiment": "collective_n8", "metric": "bus_bandwidth(GB/s)", "dtype": "bfloat16", "backend": "all_reduce", "target": 300},
      {"experiment": "collective_n2", "metric": "bus_bandwidth(GB/s)", "dtype": "bfloat16", "backend": "all_reduce", "target": 90},
      {"experiment": "collective", "metric": "bus_bandwidth(GB/s)", "dtype": "bfloat16", "backend": "all_reduce", "target": 1}]})json",
                                      "t.json");
  KnownNames known{{"gemv"}, {"bus_bandwidth(GB/s)"}, {"all_reduce"}, {"collective"}};
  auto problems = unknown_target_names({file}, known);
  ASSERT_EQ(problems.size(), 1u);   // only the bare stem, which no row is named
  EXPECT_NE(problems[0].find("targets[2].experiment: \"collective\""), std::string::npos) << problems[0];
  EXPECT_EQ(find_target({file}, "G", "collective_n2", "bus_bandwidth(GB/s)", "bfloat16", "all_reduce")->value, 90);
}

}  // namespace
}  // namespace opbench
