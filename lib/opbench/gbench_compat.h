// Google Benchmark 1.7 (Debian) and 1.8 (the GPU image) differ in how a skipped run is flagged:
// 1.7 has Run::error_occurred/error_message, 1.8 has Run::skipped/skip_message. These helpers read
// either, picked at compile time by which members exist.
#pragma once
#include <benchmark/benchmark.h>

#include <string>
#include <type_traits>

namespace opbench::gbench {

template <typename Run, typename = void>
struct HasSkipped : std::false_type {};
template <typename Run>
struct HasSkipped<Run, std::void_t<decltype(std::declval<Run>().skipped)>> : std::true_type {};

template <typename Run>
bool run_skipped(const Run& run) {
  if constexpr (HasSkipped<Run>::value)
    return static_cast<bool>(run.skipped);
  else
    return run.error_occurred;
}

template <typename Run>
std::string skip_message(const Run& run) {
  if constexpr (HasSkipped<Run>::value)
    return run.skip_message;
  else
    return run.error_message;
}

// The Google Benchmark generation this was compiled against (for --version).
inline constexpr const char* kVersionName =
    HasSkipped<benchmark::BenchmarkReporter::Run>::value ? "1.8 or later" : "1.7";

// Marks a run skipped with an error (for tests that build runs by hand).
template <typename Run>
void mark_skipped(Run& run, const std::string& message) {
  if constexpr (HasSkipped<Run>::value) {
    using Skipped = std::remove_reference_t<decltype(run.skipped)>;
    run.skipped = Skipped::SkippedWithError;
    run.skip_message = message;
  } else {
    run.error_occurred = true;
    run.error_message = message;
  }
}

}  // namespace opbench::gbench
