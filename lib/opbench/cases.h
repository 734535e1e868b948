// How op x shape x dtype x backend cases are named, registered and timed.
// Names are `Family/dtype/shape/backend` (e.g. `LayerNorm/bf16/4096x8192/aten`): stable keys that
// compare and gate match on, with the family first so `--benchmark_filter=LayerNorm/.*` picks one.
#pragma once
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opbench/device.h"
#include "opbench/timer.h"
#include "opbench/work.h"

namespace benchmark {
class State;
}

namespace opbench {

struct CaseName {
  std::string family, dtype, shape, backend;
  std::string str() const;
  // nullopt unless the text has exactly four non-empty '/'-separated parts.
  static std::optional<CaseName> parse(std::string_view text);
};

std::string dtype_name(c10::ScalarType type);          // bf16 fp16 fp32 fp64 int8 ...
std::string shape_name(const std::vector<int64_t>& dims);   // {4096, 8192} -> "4096x8192"

// Run-wide settings from the command line (see bench_ops --help).
struct RunOptions {
  CacheMode cache = CacheMode::kCold;
  TimerKind gpu_timer = TimerKind::kEvents;   // kEvents or kGraph
  StoppingRule rule;
};
RunOptions& run_options();

// The device cases allocate on: CUDA device 0 when current_device().is_gpu, else CPU.
c10::Device bench_device();

// What a case may ask of the timer beyond the run-wide options.
struct TimingRequest {
  std::optional<CacheMode> cache;   // e.g. a case that is about warm-cache behaviour
};

// Times `iteration` with the sampler for this device and run options, hands the median to Google
// Benchmark as manual time and sets the counters: the work's throughput (work.h), "samples",
// "noise_pct" (sample spread), "median_noise_pct" (the stopping rule's), "converged" (0/1), and a label "timer=<kind> cache=<cold|warm>".
// REQUIRES: called once per case body, outside the `for (auto _ : state)` loop (it runs that loop).
void time_iterations(benchmark::State& state, const std::function<void()>& iteration,
                     const Work& work, const TimingRequest& request = {});

// Registers one case. The body builds inputs, checks the result, then calls time_iterations; any
// exception it throws becomes SkipWithError with the exception's message, and the sweep goes on.
void register_case(const CaseName& name, std::function<void(benchmark::State&)> body);

// Skips a case whose backend cannot run here (no CUDA device, no cuBLAS): the message starts with
// kUnavailablePrefix, and such skips do not make bench_ops exit non-zero; other skips do.
inline constexpr const char* kUnavailablePrefix = "unavailable: ";
void skip_unavailable(benchmark::State& state, const std::string& why);

// Families register their cases from a function that sees the device (shapes differ on CPU and GPU).
using FamilyRegistration = void (*)(const DeviceInfo& device);
bool add_family(const char* family, FamilyRegistration registration);
void register_all_families(const DeviceInfo& device);

}  // namespace opbench

// At namespace scope in a family's file: OPBENCH_FAMILY(LayerNorm, register_layer_norm);
#define OPBENCH_FAMILY(family, fn) \
  static const bool opbench_family_##family##_registered = ::opbench::add_family(#family, fn)
