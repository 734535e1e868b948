// The breakdown of a trace's GPU time by kernel kind (contract: kernel_breakdown.h).
#include "opbench/kernel_breakdown.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include "opbench/check.h"

namespace opbench {

const std::vector<KernelKind>& default_kernel_kinds() {
  static const std::vector<KernelKind> kinds = {
      {"all_reduce", {"nccl", "allreduce", "all_reduce"}},
      {"gemv", {"gemv"}},
      {"attention", {"attention", "flash", "fmha", "sdpa"}},
      {"gemm", {"gemm", "nvjet", "cutlass", "xmma", "cublas"}},
      {"norm", {"norm"}},
      {"copy", {"memcpy", "memset"}},
      {"sampling", {"argmax", "topk", "top2", "next_token", "indexselect", "index_select", "embedding"}},
      {"elementwise", {"elementwise", "vectorized", "residual", "swiglu", "rope", "triton_poi", "unrolled"}},
  };
  return kinds;
}

std::string kind_of(const std::string& kernel_name, const std::vector<KernelKind>& kinds) {
  std::string lower = kernel_name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const KernelKind& kind : kinds)
    for (const std::string& pattern : kind.patterns)
      if (lower.find(pattern) != std::string::npos) return kind.name;
  return "other";
}

KernelBreakdown kernel_breakdown(const std::vector<GpuInterval>& intervals, double wall_us,
                                 const std::vector<KernelKind>& kinds) {
  // Edges in time order (an end before a start at the same instant); the running kernels ordered by
  // start, the first-started one in front.
  struct Edge {
    double at;
    bool start;
    size_t kernel;
  };
  std::vector<Edge> edges;
  std::map<std::string, KindTime> by_kind;
  std::vector<std::string> kind_of_kernel;
  for (size_t i = 0; i < intervals.size(); ++i) {
    kind_of_kernel.push_back(kind_of(intervals[i].name, kinds));
    KindTime& k = by_kind[kind_of_kernel.back()];
    k.kind = kind_of_kernel.back();
    ++k.kernels;
    if (intervals[i].duration_us <= 0) continue;
    edges.push_back({intervals[i].start_us, true, i});
    edges.push_back({intervals[i].start_us + intervals[i].duration_us, false, i});
  }
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    return a.at != b.at ? a.at < b.at : (!a.start && b.start);
  });
  std::set<std::pair<double, size_t>> running;
  double busy = 0;
  for (size_t e = 0; e < edges.size(); ++e) {
    const Edge& edge = edges[e];
    if (edge.start) running.insert({edge.at, edge.kernel});
    else running.erase({intervals[edge.kernel].start_us, edge.kernel});
    if (running.empty() || e + 1 == edges.size()) continue;
    const double slice = edges[e + 1].at - edge.at;
    by_kind[kind_of_kernel[running.begin()->second]].us += slice;
    busy += slice;
  }
  KernelBreakdown breakdown;
  breakdown.window_us = std::max(wall_us, busy);
  breakdown.idle_us = breakdown.window_us - busy;
  for (auto& [name, time] : by_kind) breakdown.kinds.push_back(time);
  std::sort(breakdown.kinds.begin(), breakdown.kinds.end(),
            [](const KindTime& a, const KindTime& b) { return a.us != b.us ? a.us > b.us : a.kind < b.kind; });
  return breakdown;
}

std::optional<double> KindTime::gbps() const {
  if (!(bytes_read > 0) || !(us > 0)) return std::nullopt;
  return bytes_read / us / 1e3;   // bytes per microsecond / 1e3 = GB/s
}

std::optional<double> KindTime::pct_of_read_ceiling() const {
  const std::optional<double> achieved = gbps();
  if (!achieved || !read_ceiling_gbps || !(*read_ceiling_gbps > 0)) return std::nullopt;
  return 100 * *achieved / *read_ceiling_gbps;
}

namespace {
struct CounterSpelling {
  KindFigure figure;
  const char* prefix;
  const char* suffix;
};
constexpr CounterSpelling kSpellings[] = {{KindFigure::kSharePct, "time_", "_%"},
                                          {KindFigure::kGbps, "GB/s_", ""},
                                          {KindFigure::kPctOfReadCeiling, "%read_ceiling_", ""}};
}  // namespace

std::string kind_counter(const std::string& kind, KindFigure figure) {
  for (const CounterSpelling& s : kSpellings)
    if (s.figure == figure) return s.prefix + kind + s.suffix;
  throw Error("kind_counter: an unknown figure");
}

std::optional<KindCounter> kind_counter_of(const std::string& counter) {
  for (const CounterSpelling& s : kSpellings) {
    const std::string prefix = s.prefix, suffix = s.suffix;
    if (counter.size() <= prefix.size() + suffix.size() || counter.rfind(prefix, 0) != 0 ||
        counter.compare(counter.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    return KindCounter{counter.substr(prefix.size(), counter.size() - prefix.size() - suffix.size()), s.figure};
  }
  return std::nullopt;
}

std::string write_breakdown_csv(const KernelBreakdown& b, int iterations, const std::string& trace_path) {
  const double n = std::max(iterations, 1);
  const std::string suffix = ".trace.json";
  std::string path = trace_path;
  if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
    path.resize(path.size() - suffix.size());
  path += ".breakdown.csv";
  std::ofstream out(path);
  out << "kind,us_per_iteration,share_pct,kernels_per_iteration,gbps,pct_of_read_ceiling\n";
  auto optional_cell = [&](const std::optional<double>& value) {
    if (value) out << *value;
  };
  auto row = [&](const KindTime& k) {
    out << k.kind << "," << k.us / n << "," << (b.window_us > 0 ? 100 * k.us / b.window_us : 0) << ","
        << k.kernels / n << ",";
    optional_cell(k.gbps());
    out << ",";
    optional_cell(k.pct_of_read_ceiling());
    out << "\n";
  };
  for (const KindTime& k : b.kinds) row(k);
  row(KindTime{.kind = "idle", .us = b.idle_us});
  out.flush();
  if (!out) throw Error("cannot write " + path);
  return path;
}

}  // namespace opbench
