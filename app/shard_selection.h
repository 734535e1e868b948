// The shard selection: which of the selected cases shard I of a sharded sweep runs (--opbench_shard=I/N;
// opbench-shard is the launcher that starts the N processes, one per GPU, and merges their outputs).
// The selected cases are cut into N shares balanced by expected time (greedy, longest first), every
// experiment's cases in one share so that its row is complete, and the Ceiling cases in every non-empty
// share (each process measures the ceilings of its own device). The plan depends only on the selected
// cases, N, whether the device is a GPU and the optional times file, so every shard computes the same
// plan, decided before anything runs, and each case runs in exactly one shard.
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "opbench/cases.h"

namespace opbench {

struct Shard {
  int index = 0;
  int count = 1;
};
// "I/N" with 0 <= I < N <= 4096; throws std::invalid_argument naming the flag otherwise.
Shard parse_shard(const std::string& text);

// A rough estimate of the seconds a case takes (inputs and check, warm-up, sampling under `rule`), from
// its work and nominal speeds of a GPU or a CPU core; only used to balance shards.
double expected_seconds(const CaseInfo& info, bool gpu, const StoppingRule& rule);

// Seconds each case took in a previous run, from its Google Benchmark JSON (bench_ops --benchmark_out):
// the case_wall_s counters of its repetitions summed (setup, check and sampling), 0 for a skipped case
// (Google Benchmark writes no counters for one); for entries without it (older runs), median time x samples per repetition averaged over the timed
// repetitions. Throws opbench::Error naming the file when it cannot be read or is not Google Benchmark JSON.
std::map<std::string, double> seconds_from_json(const std::string& path);

// The shares of `selected` (names registered in `cases`), `count` of them, as described above;
// `cost` gives a case's expected seconds. Shares may be empty (more shards than experiments).
std::vector<std::set<std::string>> plan_shards(const CaseRegistry& cases, const std::set<std::string>& selected,
                                               int count, const std::function<double(const CaseInfo&)>& cost);

}  // namespace opbench
