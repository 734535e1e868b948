// Where a traced case's GPU time goes, by kernel kind (--opbench_trace): the kernels of the trace
// (trace.h's GpuInterval) classified by name, each instant of the traced window given to one kernel, so
// that the kinds' times and the idle time add up to the window exactly. Where kernels overlap, the
// instant goes to the kernel that started first: a programmatic dependent launch starts a kernel while
// the one before it still runs, and the new kernel waits (griddepcontrol.wait) until that one has
// finished, so the time is the older kernel's (given to the newer one, a 4096-element residual add
// after Mixtral's expert GEMV took 26 us a call on the H200). Free of CUDA and LibTorch.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "opbench/trace.h"

namespace opbench {

// A kind and the substrings (case-insensitive) of the kernel names that are of it; the first kind with
// a matching pattern wins, a name that matches none is "other".
struct KernelKind {
  std::string name;
  std::vector<std::string> patterns;
};
// gemv, gemm, attention, all_reduce, norm, elementwise, copy (memcpy and memset), sampling (argmax,
// top-k, embedding lookups): the own decode kernels', ATen's and inductor's names.
const std::vector<KernelKind>& default_kernel_kinds();
std::string kind_of(const std::string& kernel_name, const std::vector<KernelKind>& kinds);

struct KindTime {
  std::string kind;
  double us = 0;     // the instants given to this kind's kernels
  int kernels = 0;   // how many of its kernels ran
  // What its kernels read over the window, where the case counts it (Work::bytes_read_by_kind); 0: not
  // counted. The read ceiling (GB/s) this run measured at the bytes one of its kernels reads, where known.
  double bytes_read = 0;
  std::optional<double> read_ceiling_gbps;
  std::optional<double> gbps() const;                  // bytes_read / us; nullopt where not counted
  std::optional<double> pct_of_read_ceiling() const;   // 100 * gbps / read_ceiling_gbps
};

struct KernelBreakdown {
  double window_us = 0;   // max(wall time, GPU busy time): the kinds' us and idle_us add up to it
  double idle_us = 0;     // no kernel running
  std::vector<KindTime> kinds;   // largest first; kinds with no kernel left out
};

// REQUIRES: wall_us >= 0 (the traced iterations' wall time, measured without the profiler).
KernelBreakdown kernel_breakdown(const std::vector<GpuInterval>& intervals, double wall_us,
                                 const std::vector<KernelKind>& kinds = default_kernel_kinds());

// The case counters of a kind: its share of the traced window in percent ("time_gemv_%"; kind "idle" for
// the idle time), its achieved GB/s ("GB/s_gemv") and that as a share of the read ceiling in percent
// ("%read_ceiling_gemv"); and the kind and figure a counter is of (nullopt for any other counter).
enum class KindFigure { kSharePct, kGbps, kPctOfReadCeiling };
std::string kind_counter(const std::string& kind, KindFigure figure);
struct KindCounter {
  std::string kind;
  KindFigure figure;
};
std::optional<KindCounter> kind_counter_of(const std::string& counter);

// The breakdown as CSV rows per iteration (of `iterations` traced): kind,us_per_iteration,share_pct,
// kernels_per_iteration,gbps,pct_of_read_ceiling (the last two empty where unknown), largest first,
// then "idle". Written beside the trace: `trace_path` with
// ".breakdown.csv" for ".trace.json"; returns that path. Throws opbench::Error when it cannot be written.
std::string write_breakdown_csv(const KernelBreakdown& breakdown, int iterations, const std::string& trace_path);

}  // namespace opbench
