// bench_ops' default console view: a title (the device, the run's timer and cache, the versions),
// one header, then one line per case that fits a terminal — name, median time, GB/s, TFLOP/s, %peak,
// %ceiling and the median's noise — with skipped cases and their reason on their own line; a case that
// lost over 5% of its samples to low clocks ends with THROTTLED(discarded/taken), one slowed by
// --opbench_inject_slowdown with INJECTED_SLOWDOWN. Formats only what each case put in its run (time
// and counters). Google Benchmark's full table (every counter, its CPU column) is --opbench_console=full.
#pragma once
#include <benchmark/benchmark.h>

#include <string>

#include "run_info.h"

namespace opbench {

// The title: "bench_ops on <device> (GPU|CPU; timer ..., cache ...; opbench <sha>, torch <version>)",
// wrapped to the terminal (line_wrap.h), and a second line when opbench was built without optimization.
std::string run_title(const RunInfo& info);

class CompactConsoleReporter : public benchmark::BenchmarkReporter {
 public:
  // `title`: printed first (run_title). `auto_unit`: long times move to a larger unit (false when the
  // user chose one with --benchmark_time_unit).
  CompactConsoleReporter(std::string title, bool auto_unit) : title_(std::move(title)), auto_unit_(auto_unit) {}
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;

 private:
  void print_header();
  std::string title_;
  bool auto_unit_;
  int name_width_ = 40;
  bool header_printed_ = false;
};

}  // namespace opbench
