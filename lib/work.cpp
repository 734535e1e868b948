#include "opbench/work.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <iterator>

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

std::optional<double> larger(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::max(*a, *b);
}

std::optional<double> percent(std::optional<double> share) {
  if (!share) return std::nullopt;
  return 100 * *share;
}

}  // namespace

const char* ceiling_kind_name(CeilingKind kind) {
  switch (kind) {
    case CeilingKind::kRead: return "read";
    case CeilingKind::kWrite: return "write";
    case CeilingKind::kCopy: return "copy";
    case CeilingKind::kGemm: return "gemm";
  }
  return "?";
}

void StreamCurve::record(double bytes, double gbps) {
  if (!(bytes > 0) || !(gbps > 0)) return;
  double& fastest = gbps_by_bytes_[bytes];
  fastest = std::max(fastest, gbps);
}

std::optional<double> StreamCurve::gbps_at(double bytes) const {
  if (gbps_by_bytes_.empty()) return std::nullopt;
  auto seconds = [](const std::pair<const double, double>& p) { return p.first / (p.second * 1e9); };
  auto above = gbps_by_bytes_.lower_bound(bytes);
  if (above == gbps_by_bytes_.begin()) return above->second;   // at or below the smallest
  if (above != gbps_by_bytes_.end() && above->first == bytes) return above->second;
  auto below = std::prev(above);
  if (above == gbps_by_bytes_.end()) {   // beyond the largest: the last segment's marginal rate
    if (below == gbps_by_bytes_.begin()) return below->second;
    auto before = std::prev(below);
    const double slope = (seconds(*below) - seconds(*before)) / (below->first - before->first);   // s per byte
    if (!(slope > 0)) return below->second;
    return bytes / ((seconds(*below) + (bytes - below->first) * slope) * 1e9);
  }
  const double f = (bytes - below->first) / (above->first - below->first);
  return bytes / (((1 - f) * seconds(*below) + f * seconds(*above)) * 1e9);
}

void Ceilings::record(CeilingKind kind, double bytes, double value) {
  switch (kind) {
    case CeilingKind::kRead: read.record(bytes, value); break;
    case CeilingKind::kWrite: write.record(bytes, value); break;
    case CeilingKind::kCopy: copy.record(bytes, value); break;
    case CeilingKind::kGemm:
      if (!gemm_tflops || value > *gemm_tflops) gemm_tflops = value;
      break;
  }
}

std::optional<double> bandwidth_bound_seconds(double bytes_read, double bytes_written, const Ceilings& c) {
  const double total = bytes_read + bytes_written;
  const std::optional<double> measured_read = c.read.gbps_at(total), measured_write = c.write.gbps_at(total);
  std::optional<double> copy = c.copy.gbps_at(total);
  if (!copy && measured_read && measured_write) copy = 2 / (1 / *measured_read + 1 / *measured_write);
  const std::optional<double> read = measured_read ? measured_read : copy;
  const std::optional<double> write = measured_write ? measured_write : copy;
  double balanced = std::min(bytes_read, bytes_written);
  double seconds = 0;
  if (balanced > 0) {
    if (!copy) return std::nullopt;
    seconds += 2 * balanced / (*copy * 1e9);
  }
  if (bytes_read > balanced) {
    if (!read) return std::nullopt;
    seconds += (bytes_read - balanced) / (*read * 1e9);
  }
  if (bytes_written > balanced) {
    if (!write) return std::nullopt;
    seconds += (bytes_written - balanced) / (*write * 1e9);
  }
  if (seconds <= 0) return std::nullopt;
  return seconds;
}

std::optional<double> Figures::percent_of_peak() const {
  return percent(larger(bandwidth_of_peak, compute_of_peak));
}

std::optional<double> Figures::percent_of_ceiling() const {
  return percent(larger(bandwidth_of_ceiling, compute_of_ceiling));
}

Figures figures_of(const Work& work, double seconds, const std::optional<DatasheetPeaks>& peaks,
                   const Ceilings& ceilings) {
  Figures f;
  f.seconds = seconds;
  double bytes = work.bytes_read + work.bytes_written;
  f.gbps = bytes / seconds / 1e9;
  f.tflops = work.flops / seconds / 1e12;
  f.items_per_second = work.items / seconds;
  const bool memory_bytes = bytes > 0 && work.through_memory;
  if (peaks) {
    if (memory_bytes) f.bandwidth_of_peak = f.gbps / peaks->hbm_gbps;
    double peak_tflops = compute_peak_tflops(work.compute_peak, *peaks);
    if (peak_tflops > 0 && work.flops > 0) f.compute_of_peak = f.tflops / peak_tflops;
  }
  if (memory_bytes)
    if (auto bound = bandwidth_bound_seconds(work.bytes_read, work.bytes_written, ceilings))
      f.bandwidth_of_ceiling = *bound / seconds;
  if (work.flops > 0 && ceilings.gemm_tflops && *ceilings.gemm_tflops > 0)
    f.compute_of_ceiling = f.tflops / *ceilings.gemm_tflops;
  return f;
}

void set_figure_counters(benchmark::State& state, const Work& work, const Figures& f) {
  if (work.bytes_read + work.bytes_written > 0) state.counters["GB/s"] = f.gbps;
  if (work.flops > 0) state.counters["TFLOP/s"] = f.tflops;
  if (work.items > 0) state.counters["items/s"] = f.items_per_second;
  if (auto p = f.percent_of_peak()) state.counters["%peak"] = *p;
  if (auto p = f.percent_of_ceiling()) state.counters["%ceiling"] = *p;
  state.counters["bytes"] = work.bytes_read + work.bytes_written;
  state.counters["flops"] = work.flops;
}

}  // namespace opbench
