#include "shard_selection.h"

#include <algorithm>
#include <numeric>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "benchmark_names.h"
#include "opbench/bounded_read.h"
#include "opbench/check.h"

namespace opbench {
namespace {

// Nominal speeds for the balance estimate only (never reported): a recent datacenter GPU, one CPU core.
constexpr double kGpuBytesPerSecond = 2e12, kGpuFlopsPerSecond = 2e14, kGpuLaunchSeconds = 5e-6;
constexpr double kCpuBytesPerSecond = 1e10, kCpuFlopsPerSecond = 2e10, kCpuCallSeconds = 2e-6;
constexpr int kTypicalSamples = 300;      // samples a case takes before its median is steady, typically
constexpr double kCheckFactor = 20;       // inputs + reference check, in units of one iteration's work
constexpr double kCaseOverheadSeconds = 1e-3;

// The keys that tie cases to one share: each experiment row the case feeds; a case that feeds none
// stays with its family's cases of the same dtype.
std::vector<std::string> share_keys(const CaseInfo& info) {
  std::vector<std::string> keys;
  for (const auto& e : info.experiments)
    keys.push_back("row|" + e.name + "|" + metric_name(e.metric) + "|" + info.dtype + "|" + info.backend);
  if (keys.empty()) keys.push_back("case|" + info.family + "|" + info.dtype);
  return keys;
}

size_t find_root(std::vector<size_t>& parent, size_t i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

}  // namespace

Shard parse_shard(const std::string& text) {
  auto bad = [&] {
    return std::invalid_argument("--opbench_shard=" + text +
                                 ": expected I/N with 0 <= I < N <= 4096 (0/4: the first of four shards)");
  };
  size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) throw bad();
  auto whole = [&](const std::string& part) {
    if (part.size() > 4 || part.find_first_not_of("0123456789") != std::string::npos) throw bad();
    return std::stoi(part);
  };
  Shard shard{whole(text.substr(0, slash)), whole(text.substr(slash + 1))};
  if (shard.count < 1 || shard.count > 4096 || shard.index >= shard.count) throw bad();
  return shard;
}

double expected_seconds(const CaseInfo& info, bool gpu, const StoppingRule& rule) {
  const double bytes = info.work.bytes_read + info.work.bytes_written;
  const double work = gpu ? bytes / kGpuBytesPerSecond + info.work.flops / kGpuFlopsPerSecond
                          : bytes / kCpuBytesPerSecond + info.work.flops / kCpuFlopsPerSecond;
  const double iteration = std::max(work, gpu ? kGpuLaunchSeconds : kCpuCallSeconds);
  const double sampling = std::min(rule.max_seconds, std::max(rule.min_samples, kTypicalSamples) * iteration);
  return kCaseOverheadSeconds + kCheckFactor * work + rule.warmup_iterations * iteration + sampling;
}

std::map<std::string, double> seconds_from_json(const std::string& path) {
  FileText file = read_bounded(path, kTableLimitBytes, "a JSON file");
  if (!file.error.empty()) throw Error("--opbench_shard_times " + path + ": " + file.error);
  nlohmann::json doc = nlohmann::json::parse(file.text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw Error("--opbench_shard_times " + path + ": not Google Benchmark JSON (an object with a \"benchmarks\" list)");
  const std::map<std::string, double> unit = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
  std::map<std::string, double> wall;                       // the case_wall_s counters, summed
  std::map<std::string, std::pair<double, int>> sampled;    // median x samples, summed and counted
  for (const auto& entry : doc["benchmarks"]) {
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string()) continue;
    if (entry.value("run_type", std::string("iteration")) != "iteration") continue;
    const std::string name = strip_harness_suffix(entry["name"].get<std::string>());
    if (entry.contains(kCaseWallSecondsCounter) && entry[kCaseWallSecondsCounter].is_number()) {
      wall[name] += std::max(entry[kCaseWallSecondsCounter].get<double>(), 0.0);
      continue;
    }
    if (entry.value("error_occurred", false) || entry.value("skipped", false)) {
      wall.try_emplace(name, 0.0);   // Google Benchmark writes no counters for a skipped case: its skip cost ~nothing
      continue;
    }
    auto scale = unit.find(entry.value("time_unit", std::string("ns")));
    if (scale == unit.end() || !entry.contains("real_time") || !entry["real_time"].is_number()) continue;
    double samples = entry.contains("samples") && entry["samples"].is_number() ? entry["samples"].get<double>() : 1;
    auto& [sum, n] = sampled[name];
    sum += entry["real_time"].get<double>() * scale->second * std::max(samples, 1.0);
    ++n;
  }
  std::map<std::string, double> seconds = wall;
  for (const auto& [name, sum_n] : sampled) seconds.emplace(name, sum_n.first / sum_n.second);
  return seconds;
}

std::vector<std::set<std::string>> plan_shards(const CaseRegistry& cases, const std::set<std::string>& selected,
                                               int count, const std::function<double(const CaseInfo&)>& cost) {
  std::vector<const CaseInfo*> order, ceilings;   // registration order
  for (const CaseInfo* info : cases.all())
    if (selected.count(info->name())) (info->measures ? ceilings : order).push_back(info);
  // Cases that feed one row (or share a family and dtype without a row) form one unit.
  std::vector<size_t> parent(order.size());
  std::iota(parent.begin(), parent.end(), 0);
  std::map<std::string, size_t> first_with_key;
  for (size_t i = 0; i < order.size(); ++i)
    for (const auto& key : share_keys(*order[i])) {
      auto [it, fresh] = first_with_key.emplace(key, i);
      if (!fresh) parent[find_root(parent, i)] = find_root(parent, it->second);
    }
  struct Unit {
    size_t first = 0;
    double seconds = 0;
    std::vector<const CaseInfo*> members;
  };
  std::map<size_t, Unit> by_root;
  for (size_t i = 0; i < order.size(); ++i) {
    Unit& unit = by_root.try_emplace(find_root(parent, i), Unit{i, 0, {}}).first->second;
    unit.seconds += cost(*order[i]);
    unit.members.push_back(order[i]);
  }
  std::vector<Unit> units;
  for (auto& [root, unit] : by_root) units.push_back(std::move(unit));
  // Longest first; ties in registration order. Each unit goes to the least loaded share (lowest index).
  std::sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) {
    return a.seconds != b.seconds ? a.seconds > b.seconds : a.first < b.first;
  });
  std::vector<std::set<std::string>> shares(static_cast<size_t>(count));
  std::vector<double> load(static_cast<size_t>(count), 0);
  for (const Unit& unit : units) {
    size_t target = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[target] += unit.seconds;
    for (const CaseInfo* info : unit.members) shares[target].insert(info->name());
  }
  for (auto& share : shares)
    if (!share.empty())
      for (const CaseInfo* info : ceilings) share.insert(info->name());
  return shares;
}

}  // namespace opbench
