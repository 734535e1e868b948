// What one iteration moves and computes, and the ONE function that turns it and a time into every
// derived figure: GB/s, TFLOP/s, items/s, % of datasheet peak and % of this run's measured ceilings.
// The per-case counters and the experiment rows both come from figures_of(), called once per timed
// repetition (timed_result, opbench/case_result.h); nothing else computes them.
//
// Bytes are counted once per tensor read and once per tensor written (no cache reuse, no re-reads);
// each family documents what it counts. FLOPs: 2*M*N*K for matmul-like work, per family otherwise.
#pragma once
#include <map>
#include <optional>
#include <string>

#include "opbench/device.h"

namespace benchmark {
class State;
}

namespace opbench {

// Which datasheet FLOP/s peak a case's FLOPs are held against; kBandwidth: none (a bandwidth-bound op).
enum class PeakKind { kBandwidth, kBf16, kFp32, kInt8 };

struct Work {
  double bytes_read = 0;
  double bytes_written = 0;
  double flops = 0;
  double items = 0;   // what an experiment counts per iteration beyond bytes (tokens for decode); 0: none
  PeakKind compute_peak = PeakKind::kBandwidth;
  bool through_memory = true;   // false: the bytes cross links between devices (a collective's message),
                                // so GB/s is held to no HBM peak and no memory ceiling (no %peak, %ceiling)
  // Of bytes_read, what the kernels of a kind (kernel_breakdown.h's names: "gemv", ...) read, where the
  // family knows it: a traced case (--opbench_trace) reports each such kind's achieved GB/s.
  std::map<std::string, double> bytes_read_by_kind;
};

// The ceilings this run measured (the Ceiling family runs first). Units: GB/s counting every byte moved
// (a copy counts read + write), TFLOP/s.
enum class CeilingKind { kRead, kWrite, kCopy, kGemm };
const char* ceiling_kind_name(CeilingKind kind);   // "read", "write", "copy", "gemm"

// One kind of stream's GB/s as a function of the bytes it moves. A stream has a fixed cost (launch,
// first-wave latency, the tail) that a small one cannot amortize: on the H200 our read stream reaches
// 3507 GB/s over 64 MiB, 4304 over 256 MiB and 4611 over 1 GiB, so a 256 MiB GEMV held to the 1 GiB
// figure could never pass 93%. The Ceiling streams run at several sizes; a case is held to the stream
// of its own byte count:
//   - record keeps the fastest GB/s of each byte count (ATen's stream and ours: a bound that another
//     stream beats is no bound);
//   - between two recorded sizes the time is interpolated linearly in bytes;
//   - below the smallest, the smallest's GB/s (a smaller stream is slower still, so this bound is too
//     tight, never too loose);
//   - beyond the largest, the last segment's marginal rate (the largest's GB/s when only one was recorded).
class StreamCurve {
 public:
  void record(double bytes, double gbps);
  std::optional<double> gbps_at(double bytes) const;   // nullopt: nothing recorded
  bool empty() const { return gbps_by_bytes_.empty(); }
  const std::map<double, double>& points() const { return gbps_by_bytes_; }   // bytes -> fastest GB/s

 private:
  std::map<double, double> gbps_by_bytes_;
};

struct Ceilings {
  StreamCurve read, write, copy;
  std::optional<double> gemm_tflops;   // the fastest GEMM (one size: a compute bound)
  // `bytes`: what the measuring case moved; `value`: its GB/s, or TFLOP/s for kGemm.
  void record(CeilingKind kind, double bytes, double value);
  bool any() const { return !read.empty() || !write.empty() || !copy.empty() || gemm_tflops; }
};

// The fastest time the measured streams allow for `bytes_read` + `bytes_written`, in seconds, each
// stream's GB/s taken at the case's total bytes:
//   balanced = min(R, W): read and written together, at the copy ceiling (2 * balanced bytes);
//   the rest of the reads at the read ceiling, the rest of the writes at the write ceiling.
// A stream that was not measured is replaced by the nearest one that was: read or write by copy, copy by
// the harmonic mean of read and write. So a read-only GEMV is held to the read stream, a LayerNorm
// (R = W) to the copy, and a case can exceed 100% of its bound only by noise. nullopt when nothing fits.
std::optional<double> bandwidth_bound_seconds(double bytes_read, double bytes_written, const Ceilings& c);

struct Figures {
  double seconds = 0;
  double gbps = 0;                 // (bytes_read + bytes_written) / seconds / 1e9
  double tflops = 0;               // flops / seconds / 1e12
  double items_per_second = 0;     // items / seconds
  // Shares (fractions, not percent); nullopt where the denominator is unknown or does not apply.
  std::optional<double> bandwidth_of_peak;     // gbps / datasheet HBM
  std::optional<double> compute_of_peak;       // tflops / datasheet peak of work.compute_peak
  std::optional<double> bandwidth_of_ceiling;  // bandwidth_bound_seconds / seconds
  std::optional<double> compute_of_ceiling;    // tflops / measured GEMM
  // 100 * the larger share (the roofline-limiting resource), the per-case "%peak" and "%ceiling".
  std::optional<double> percent_of_peak() const;
  std::optional<double> percent_of_ceiling() const;
};

// REQUIRES: seconds > 0.
Figures figures_of(const Work& work, double seconds, const std::optional<DatasheetPeaks>& peaks,
                   const Ceilings& ceilings);

// Sets a case's counters from its figures: "GB/s" (when bytes are counted), "TFLOP/s" (when FLOPs are),
// "items/s" (when items are), "%peak", "%ceiling" (when known), and the raw "bytes" and "flops".
void set_figure_counters(benchmark::State& state, const Work& work, const Figures& figures);

}  // namespace opbench
