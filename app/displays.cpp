#include "displays.h"

#include <unistd.h>

#include <iostream>
#include <sstream>
#include <vector>

#include "compact_console.h"
#include "benchmark_names.h"
#include "forwarding_reporter.h"
#include "opbench/cases.h"
#include "opbench/gbench_compat.h"
#include "opbench/world.h"

namespace opbench {
namespace {

// What a rank other than 0 of a distributed launch shows: only its failed cases, on stderr, with the
// rank (rank 0 reports the results). A failure still counts for this process's exit code.
class RankErrorReporter : public benchmark::BenchmarkReporter {
 public:
  explicit RankErrorReporter(int rank) : rank_(rank) {}
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs)
      if (gbench::run_skipped(run) && gbench::skip_message(run).rfind(kUnavailablePrefix, 0) != 0)
        std::cerr << "bench_ops: rank " << rank_ << ": " << run.benchmark_name() << ": " << gbench::skip_message(run) << "\n";
  }

 private:
  int rank_;
};

}  // namespace

std::unique_ptr<benchmark::BenchmarkReporter> make_format_reporter(const std::string& format) {
  if (format == "json") return std::make_unique<benchmark::JSONReporter>();
  if (format == "csv") return std::make_unique<benchmark::CSVReporter>();
  auto options = isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Defaults
                                       : benchmark::ConsoleReporter::OO_Tabular;
  return std::make_unique<benchmark::ConsoleReporter>(options);
}

std::unique_ptr<benchmark::BenchmarkReporter> make_display(const CliOptions& cli, const GbenchFlags& flags,
                                                           const RunInfo& info) {
  const World& world = current_world();
  if (!world.is_root()) return std::make_unique<RankErrorReporter>(world.rank);
  if (flags.format == "console" && !cli.full_console)
    return std::make_unique<CompactConsoleReporter>(run_title(info), !flags.time_unit_given);
  return make_format_reporter(flags.format);
}

int list_cases() {
  auto display = make_format_reporter("console");
  ForwardingReporter forward({display.get()});
  std::ostringstream listing;
  forward.SetOutputStream(&listing);
  benchmark::RunSpecifiedBenchmarks(&forward);
  if (listing.str().empty()) {
    std::cerr << "bench_ops: --benchmark_filter=" << benchmark::GetBenchmarkFilter()
              << " matches no case on this device (bench_ops --benchmark_list_tests lists them)\n";
    return 2;
  }
  std::cout << strip_harness_suffix(listing.str());
  return 0;
}

}  // namespace opbench
