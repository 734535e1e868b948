// The compact console view and its title (contract: compact_console.h).
#include "compact_console.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "line_wrap.h"
#include "opbench/cases.h"
#include "opbench/gbench_compat.h"

namespace opbench {
namespace {

constexpr const char* kSuffix = "/iterations:1/manual_time";

std::string counter(const benchmark::BenchmarkReporter::Run& run, const char* name, const char* format) {
  auto it = run.counters.find(name);
  if (it == run.counters.end() || !std::isfinite(static_cast<double>(it->second))) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, format, static_cast<double>(it->second));
  return buffer;
}

double counter_or(const benchmark::BenchmarkReporter::Run& run, const char* name, double fallback) {
  auto it = run.counters.find(name);
  return it == run.counters.end() ? fallback : static_cast<double>(it->second);
}

// " THROTTLED(k/n)" when more than kThrottledShareFlag of the samples taken were discarded as throttled,
// and/or " INJECTED_SLOWDOWN", or "": read from the counters CaseContext::time sets.
std::string run_flags(const benchmark::BenchmarkReporter::Run& run) {
  std::string flags;
  const double throttled = counter_or(run, "throttled_samples", 0), kept = counter_or(run, "samples", 0);
  if (throttled_share_exceeded(throttled, kept))
    flags += " THROTTLED(" + std::to_string(static_cast<long>(throttled)) + "/" +
             std::to_string(static_cast<long>(throttled + kept)) + ")";
  if (counter_or(run, "injected_delay_us", 0) > 0) flags += " INJECTED_SLOWDOWN";
  return flags;
}

bool is_percentage(const benchmark::BenchmarkReporter::Run& run) {
  return run.run_type == benchmark::BenchmarkReporter::Run::RT_Aggregate &&
         run.aggregate_unit == benchmark::StatisticUnit::kPercentage;
}

// The median time in the run's unit; with `auto_unit`, a time of 10^5 units or more moves to a larger
// unit (ms, s), so a long replay call reads 16.9 s, not 16905995 us.
std::string time_cell(const benchmark::BenchmarkReporter::Run& run, bool auto_unit) {
  double t = run.GetAdjustedRealTime();
  char buffer[32];
  if (!std::isfinite(t)) return "-";
  if (is_percentage(run)) {   // cv: a ratio, not a time
    std::snprintf(buffer, sizeof buffer, "%.2f %%", 100 * t / benchmark::GetTimeUnitMultiplier(run.time_unit));
    return buffer;
  }
  benchmark::TimeUnit unit = run.time_unit;
  const benchmark::TimeUnit larger[] = {benchmark::kNanosecond, benchmark::kMicrosecond, benchmark::kMillisecond,
                                        benchmark::kSecond};
  for (int i = 0; auto_unit && i < 3 && t >= 1e5; ++i) {
    if (larger[i] != unit) continue;
    t *= benchmark::GetTimeUnitMultiplier(larger[i + 1]) / benchmark::GetTimeUnitMultiplier(unit);
    unit = larger[i + 1];
  }
  std::snprintf(buffer, sizeof buffer, t >= 100 ? "%.1f %s" : "%.3g %s", t, benchmark::GetTimeUnitString(unit));
  return buffer;
}

}  // namespace

std::string run_title(const RunInfo& info) {
  std::string title = wrap_line("bench_ops on " + info.device.name + " (" + (info.device.is_gpu ? "GPU" : "CPU") +
                                "; timer " + info.timer + ", cache " + info.cache + "; opbench " +
                                info.opbench_sha + ", torch " + info.torch_version + ")");
#ifndef NDEBUG
  title += "\nopbench itself was built without optimization: timings of its own kernels may suffer";
#endif
  return title;
}

bool CompactConsoleReporter::ReportContext(const Context& context) {
  int suffix = static_cast<int>(std::strlen(kSuffix));
  name_width_ = std::clamp(static_cast<int>(context.name_field_width) - suffix, 24, 72);
  GetOutputStream() << title_ << "\n";
  return true;
}

void CompactConsoleReporter::print_header() {
  char line[256];
  std::snprintf(line, sizeof line, "%-*s %12s %9s %9s %7s %7s %7s\n", name_width_, "case", "time", "GB/s",
                "TFLOP/s", "%peak", "%ceil", "noise");
  GetOutputStream() << line << std::string(std::strlen(line) - 1, '-') << "\n";
  header_printed_ = true;
}

void CompactConsoleReporter::ReportRuns(const std::vector<Run>& runs) {
  if (!header_printed_) print_header();
  auto& out = GetOutputStream();
  for (const auto& run : runs) {
    std::string name = run.benchmark_name();
    if (gbench::run_skipped(run)) {   // an unavailable backend says so; any other skip is a failure
      const std::string why = gbench::skip_message(run);
      out << name << (why.rfind(kUnavailablePrefix, 0) == 0 ? "  " : "  skipped: ") << why << "\n";
      continue;
    }
    char line[512];
    if (run.run_type == Run::RT_Aggregate && (run.aggregate_name == "stddev" || is_percentage(run))) {
      // The spread of the time across repetitions; the counters' spread would read as values.
      std::snprintf(line, sizeof line, "%-*s %12s\n", name_width_, name.c_str(), time_cell(run, auto_unit_).c_str());
      out << line;
      continue;
    }
    std::snprintf(line, sizeof line, "%-*s %12s %9s %9s %7s %7s %7s", name_width_, name.c_str(),
                  time_cell(run, auto_unit_).c_str(), counter(run, "GB/s", "%.1f").c_str(),
                  counter(run, "TFLOP/s", "%.3g").c_str(), counter(run, "%peak", "%.1f").c_str(),
                  counter(run, "%ceiling", "%.1f").c_str(), counter(run, "median_noise_pct", "%.2f%%").c_str());
    out << line << run_flags(run) << "\n";
  }
  out.flush();
}

}  // namespace opbench
