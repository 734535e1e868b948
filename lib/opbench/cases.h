// How op x shape x dtype x backend cases are named, registered, kept and timed.
// Names are `Family/dtype/shape/backend` (e.g. `LayerNorm/bf16/4096x8192/aten`): stable keys that
// compare and gate match on, with the family first so `--benchmark_filter=LayerNorm/.*` picks one.
// Every registered case keeps its CaseInfo in the run's CaseRegistry; reporters look cases up there
// by name and never parse one. What each repetition of a case measured is kept in the run's
// CaseResults (opbench/case_result.h). Families describe their cases through opbench/family.h.
#pragma once
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "opbench/case_result.h"
#include "opbench/device.h"
#include "opbench/experiment.h"
#include "opbench/package_cache.h"
#include "opbench/timer.h"
#include "opbench/trace.h"
#include "opbench/work.h"

namespace benchmark {
class State;
}

namespace opbench {

std::string dtype_name(c10::ScalarType type);               // bf16 fp16 fp32 fp64 int8 int4 ...
std::string shape_name(const std::vector<int64_t>& dims);   // {4096, 8192} -> "4096x8192"

// --opbench_inject_slowdown: the gate's self-test makes selected cases slower on purpose. Each such
// case is timed once as it is, then timed again with a delay added to every iteration (a spinning kernel
// on the GPU, a busy wait on the host) calibrated to make it `fraction` slower (a second pass corrects
// for the delay's own overhead); the label and counters (injected_delay_us, injected_slowdown_pct) say so.
struct InjectedSlowdown {
  double fraction = 0;   // 0.05: 5%
  std::string pattern;   // a regular expression searched in the case name; empty: every case
};

// Run-wide measurement settings from the command line (see bench_ops --help).
struct RunOptions {
  CacheMode cache = CacheMode::kCold;
  TimerKind gpu_timer = TimerKind::kEvents;   // kEvents, kGraph or kCupti
  StoppingRule rule;
  double throttle_threshold = 0.75;           // of the rated SM clock (ThrottleRule); 0: off
  std::optional<InjectedSlowdown> inject;
  std::string time_unit = "us";               // the unit of Google Benchmark's time column: ns us ms s
  std::optional<int64_t> model_layers;        // --opbench_model_layers: layer count of the model families
  inductor::PackageCache inductor;            // the inductor backend's packages (opbench/inductor.h)
};

// What one case is, kept for the whole run after registration.
struct CaseInfo {
  std::string family;    // first name element: "LayerNorm" (replay: "Replay/<model>")
  std::string dtype;     // second: "bf16" (replay: the operator)
  std::string shape;     // third: "4096x8192" (replay: the input index)
  std::string backend;   // last: "aten", "cuda", ...
  c10::ScalarType scalar_type = c10::ScalarType::Undefined;
  std::vector<int64_t> dims;
  Work work;                              // per iteration
  std::vector<Experiment> experiments;    // the rows this case feeds (none for ceilings and replay)
  std::optional<CeilingKind> measures;    // a Ceiling case: its figure becomes this run's ceiling
  std::string python_module;              // its family's Python module, under benchmarks/ (Family::python_module)
  std::string name() const;               // Family/dtype/shape/backend
};

// The registered cases by name, in registration order. Addresses are stable.
class CaseRegistry {
 public:
  // Throws opbench::Error when a case of the same name is already registered.
  const CaseInfo& add(CaseInfo info);
  const CaseInfo* find(const std::string& name) const;
  const std::vector<const CaseInfo*>& all() const { return order_; }

 private:
  std::map<std::string, std::unique_ptr<CaseInfo>> by_name_;
  std::vector<const CaseInfo*> order_;
};

// One bench_ops run: the device, the options, the cases, what each repetition of a case measured and
// the ceilings measured so far. Created by the driver (or a test) and passed to whatever registers or
// runs cases; it outlives the run.
struct RunContext {
  explicit RunContext(const DeviceInfo& device_info, RunOptions run_options = {}, TraceOptions trace_options = {})
      : device(device_info), options(run_options), trace(trace_options) {}
  const DeviceInfo& device;
  RunOptions options;
  TraceOptions trace;
  CaseRegistry cases;
  CaseResults results;          // one per repetition of a case, added as it runs (register_case)
  Ceilings ceilings;            // filled by the Ceiling cases as they run (they run first)
  std::function<void(const CaseInfo&)> on_case_start;   // optional: progress before each case runs
  c10::Device torch_device() const;   // the current CUDA device (device.index) on a GPU, else the CPU
};

// What a case may ask of the timer beyond the run-wide options.
struct TimingRequest {
  std::optional<CacheMode> cache;   // e.g. a case that is about warm-cache behaviour
  std::optional<TimerKind> timer;   // e.g. replay's graph backend; kHost: wall time (the iteration syncs)
  std::optional<StoppingRule> rule; // e.g. a model's fixed count of generations
  std::string note;                 // appended to the case label (e.g. which kernels ran)
  int operations_per_iteration = 1; // the iteration runs this many of the case's operations back to back
                                    // (a graph of K collectives): times and figures are per operation
};

// A case whose discarded (throttled) samples exceed this share of all it took is flagged: label,
// summary, compare and gate say so (THROTTLED_SHARE in tools/opbench_tools/benchmark_json.py is the
// same figure).
inline constexpr double kThrottledShareFlag = 0.05;
inline bool throttled_share_exceeded(double discarded, double kept) {
  return discarded > kThrottledShareFlag * (discarded + kept);
}

// Cases whose backend cannot run here are skipped with a message starting with kUnavailablePrefix;
// such skips do not make bench_ops exit non-zero, other skips do.
inline constexpr const char* kUnavailablePrefix = "unavailable: ";

// What a case body gets: its info, the device, and the timer. `result`: where this repetition's
// result goes (register_case adds it to run.results).
class CaseContext {
 public:
  CaseContext(benchmark::State& state, const CaseInfo& info, RunContext& run, CaseResult& result)
      : state_(state), info_(info), run_(run), result_(result) {}
  const CaseInfo& info() const { return info_; }
  c10::Device device() const { return run_.torch_device(); }
  const DeviceInfo& device_info() const { return run_.device; }
  const RunOptions& options() const { return run_.options; }
  benchmark::State& state() { return state_; }

  // Times `iteration` under the stopping rule and hands the median to Google Benchmark as manual time.
  // Keeps the repetition's result (timed_result, case_result.h: its figures, the timer and cache mode it
  // used, whether it throttled) and sets the counters from those figures (set_figure_counters, work.h),
  // "samples", "noise_pct" (sample spread), "median_noise_pct" (the stopping rule's), "converged" (0/1),
  // on a GPU "throttled_samples" (discarded) and, where readable, "sm_clock_mhz" (median over the kept
  // samples, from GPU timestamps) and NVML's "nvml_sm_clock_mhz", "power_w", "temperature_c" after the
  // samples; and a label "timer=<kind>" with " cache=<cold|warm>" unless the timer is the host's (which
  // flushes nothing), + "THROTTLED ..." when over kThrottledShareFlag of the samples were discarded.
  // A Ceiling case records its figure in the run's ceilings.
  // REQUIRES: called once per case body (it runs Google Benchmark's loop). `work` defaults to info().work.
  void time(const std::function<void()>& iteration, const TimingRequest& request = {});
  void time(const std::function<void()>& iteration, const Work& work, const TimingRequest& request = {});
  // Runs `iteration` once, then `check` (it throws when the output is wrong; what it allocates is freed
  // when it returns), then times: the harness's "check before timing", in one call.
  void check_and_time(const std::function<void()>& iteration, const std::function<void()>& check,
                      const TimingRequest& request = {});
  // Skips the case with an error (Google Benchmark's run and the repetition's result say `why`).
  void skip(const std::string& why);
  void skip_unavailable(const std::string& why);   // skip(kUnavailablePrefix + why)
  bool finished() const { return finished_; }

 private:
  Measurement measure_slowed(const std::function<void()>& iteration, double base_seconds, TimerKind kind,
                             CacheMode cache, const StoppingRule& rule, const ThrottleRule& throttle);
  benchmark::State& state_;
  const CaseInfo& info_;
  RunContext& run_;
  CaseResult& result_;
  bool finished_ = false;
};

// The counter every repetition of a case carries, run or skipped: the wall-clock seconds its body took
// (inputs, check, warm-up and sampling), which a sharded sweep balances on (--opbench_shard_times).
inline constexpr const char* kCaseWallSecondsCounter = "case_wall_s";

// Adds `info` to run.cases and registers it with Google Benchmark; the body builds inputs, checks the
// result, then calls ctx.time. Each repetition adds a result to run.results before the body runs and,
// after it, the counters the body set and kCaseWallSecondsCounter. Any exception the body throws skips
// the case with the exception's message (ctx.skip), and the sweep goes on. Throws opbench::Error on a
// duplicate name.
void register_case(RunContext& run, CaseInfo info, std::function<void(CaseContext&)> body);

}  // namespace opbench
