// What one iteration moves and computes, and the counters that turn a time into throughput.
// Bytes are counted once per tensor read and once per tensor written (no cache reuse, no re-reads);
// each family documents what it counts. FLOPs: 2*M*N*K for matmul-like work, per family otherwise.
#pragma once
#include <optional>
#include <string>

#include "opbench/device.h"

namespace benchmark {
class State;
}

namespace opbench {

enum class PeakKind { kBandwidth, kBf16, kFp32, kInt8 };

struct Work {
  double bytes_read = 0;
  double bytes_written = 0;
  double flops = 0;
  PeakKind compute_peak = PeakKind::kBf16;   // which datasheet FLOP/s peak the FLOPs are held against
};

struct Throughput {
  double gbps = 0;            // (bytes_read + bytes_written) / seconds / 1e9
  double tflops = 0;          // flops / seconds / 1e12
  // 100 * the larger of gbps / peak HBM and tflops / peak FLOP/s (the roofline-limiting resource);
  // nullopt when the device has no datasheet peaks (CPU, unknown GPU).
  std::optional<double> percent_of_peak;
};

// REQUIRES: seconds > 0.
Throughput throughput(const Work& work, double seconds, const std::optional<DatasheetPeaks>& peaks);

// Sets the counters: "GB/s" (when bytes are counted), "TFLOP/s" (when FLOPs are), "%peak" (when the
// device has datasheet peaks), and the raw "bytes" and "flops" per iteration.
void set_work_counters(benchmark::State& state, const Work& work, double seconds,
                       const std::optional<DatasheetPeaks>& peaks);

}  // namespace opbench
