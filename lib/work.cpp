#include "opbench/work.h"

#include <benchmark/benchmark.h>

#include <algorithm>

namespace opbench {
namespace {

double compute_peak_tflops(PeakKind kind, const DatasheetPeaks& peaks) {
  switch (kind) {
    case PeakKind::kBf16: return peaks.bf16_dense_tflops;
    case PeakKind::kFp32: return peaks.fp32_tflops;
    case PeakKind::kInt8: return peaks.int8_dense_tops;
    case PeakKind::kBandwidth: return 0;
  }
  return 0;
}

}  // namespace

Throughput throughput(const Work& work, double seconds, const std::optional<DatasheetPeaks>& peaks) {
  Throughput t;
  t.gbps = (work.bytes_read + work.bytes_written) / seconds / 1e9;
  t.tflops = work.flops / seconds / 1e12;
  if (peaks) {
    double bandwidth_share = t.gbps / peaks->hbm_gbps;
    double peak_tflops = compute_peak_tflops(work.compute_peak, *peaks);
    double compute_share = peak_tflops > 0 ? t.tflops / peak_tflops : 0;
    t.percent_of_peak = 100 * std::max(bandwidth_share, compute_share);
  }
  return t;
}

void set_work_counters(benchmark::State& state, const Work& work, double seconds,
                       const std::optional<DatasheetPeaks>& peaks) {
  Throughput t = throughput(work, seconds, peaks);
  if (work.bytes_read + work.bytes_written > 0) state.counters["GB/s"] = t.gbps;
  if (work.flops > 0) state.counters["TFLOP/s"] = t.tflops;
  if (t.percent_of_peak) state.counters["%peak"] = *t.percent_of_peak;
  state.counters["bytes"] = work.bytes_read + work.bytes_written;
  state.counters["flops"] = work.flops;
}

}  // namespace opbench
