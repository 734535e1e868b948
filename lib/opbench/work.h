// What one iteration moves and computes, and the ONE function that turns it and a time into every
// derived figure: GB/s, TFLOP/s, items/s, % of datasheet peak and % of this run's measured ceilings.
// The per-case counters and the experiment rows both come from figures_of(); nothing else computes them.
//
// Bytes are counted once per tensor read and once per tensor written (no cache reuse, no re-reads);
// each family documents what it counts. FLOPs: 2*M*N*K for matmul-like work, per family otherwise.
#pragma once
#include <optional>

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
};

// The ceilings this run measured (the Ceiling family runs first). Units: GB/s counting every byte moved
// (a copy counts read + write), TFLOP/s. Several cases may measure one kind (ATen's read stream and our
// own): record keeps the fastest, since a bound that another stream beats is no bound.
enum class CeilingKind { kRead, kWrite, kCopy, kGemm };
const char* ceiling_kind_name(CeilingKind kind);   // "read", "write", "copy", "gemm"
struct Ceilings {
  std::optional<double> read_gbps, write_gbps, copy_gbps, gemm_tflops;
  void record(CeilingKind kind, double value);
  bool any() const { return read_gbps || write_gbps || copy_gbps || gemm_tflops; }
};

// The fastest time the measured streams allow for `bytes_read` + `bytes_written`, in seconds:
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
