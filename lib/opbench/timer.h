// How one benchmark case is timed. A Sampler times one iteration (CUDA events on the current stream,
// a CUDA graph replay, the iteration's kernels from CUPTI activity records, or the host clock on CPU);
// measure() repeats it under the stopping rule, discards samples taken while the GPU throttled, and
// returns the kept samples' median and noise. Times are seconds unless a name says otherwise.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

// When to stop sampling: once `min_samples` are in and the median's noise (median_noise below) is
// < `max_noise`, or when `max_seconds` of wall time have passed (then `converged` is false), or at
// `max_samples`. Why the median's noise and not the samples' spread: a 15 us kernel jitters ~1% from
// sample to sample however long it is sampled, so a rule on the spread never converges and every
// short case runs to the cap; the median's noise shrinks with sqrt(samples) and is what decides how
// well the reported figure repeats.
struct StoppingRule {
  int warmup_iterations = 3;
  int min_samples = 10;
  int max_samples = 100000;
  double max_noise = 0.005;   // relative, 0.005 = 0.5%
  double max_seconds = 1.0;   // wall-clock cap per case, warmup excluded
};

// Relative noise of samples: standard deviation / mean after dropping the 5% most extreme samples at
// each end (at least one each once there are 10), so one preempted sample does not hold a case
// hostage while a bimodal case still reads as noisy (a MAD would call a 60/40 split noiseless).
// 0 when fewer than 2 samples remain.
double relative_noise(std::vector<double> samples);
double median_of(std::vector<double> samples);

// Relative standard error of the median: 1.2533 * relative_noise / sqrt(n) (normal approximation).
double median_noise(const std::vector<double>& samples);

// REQUIRES: samples.size() >= 1. True when the rule says sampling may end.
bool rule_satisfied(const std::vector<double>& samples, double elapsed_seconds,
                    const StoppingRule& rule);

// Throttle detection: a sample whose SM clock (estimated from GPU timestamps around it, as nvbench
// does) is below `threshold` x `expected_sm_clock_mhz` is discarded and counted, and sampling pauses
// `recovery_seconds` before the next one. Samplers that cannot read the clock (host) are never judged.
struct ThrottleRule {
  double expected_sm_clock_mhz = 0;   // the device's rated (boost) SM clock; 0: no check
  double threshold = 0.75;            // nvbench's default; 0 turns discarding off
  double recovery_seconds = 0.05;
  bool throttled(double sm_clock_mhz) const {
    return expected_sm_clock_mhz > 0 && sm_clock_mhz < threshold * expected_sm_clock_mhz;
  }
};

enum class CacheMode { kCold, kWarm };   // cold: L2 flushed before every timed iteration
enum class TimerKind { kHost, kEvents, kGraph, kCupti };
const char* timer_kind_name(TimerKind kind);   // "host", "events", "graph", "cupti"

struct Measurement {
  std::vector<double> samples;   // seconds per iteration, in the order taken
  double median = 0;
  double noise = 0;              // relative_noise(samples): sample-to-sample spread
  double median_noise = 0;       // median_noise(samples): what the stopping rule looks at
  bool converged = false;        // stopped by the noise rule, not by a cap
  TimerKind timer = TimerKind::kHost;
  int throttled_samples = 0;     // discarded by the ThrottleRule (not in `samples`)
  std::vector<double> sm_clock_mhz;   // per kept sample, where the sampler estimates it
};

// Times one iteration of `iteration` and returns seconds. Implementations own their resources
// (events, flush buffer, graphs) for the life of the sampler.
class Sampler {
 public:
  virtual ~Sampler() = default;
  virtual void warm_up(const std::function<void()>& iteration) { iteration(); }
  virtual double time_one(const std::function<void()>& iteration) = 0;
  virtual TimerKind kind() const = 0;
  // The SM clock while the last time_one ran (MHz), from GPU timestamps before and after it;
  // nullopt where the sampler cannot tell (host) or the window was too short to resolve it.
  virtual std::optional<double> last_sm_clock_mhz() const { return std::nullopt; }
};

std::unique_ptr<Sampler> make_host_sampler();
// CUDA events around the iteration on the current stream; a host-released blocking kernel holds the
// stream until the iteration is enqueued, so launch latency is not timed. Cold cache zeroes a buffer
// of >= 2x L2 before each sample. REQUIRES: a CUDA build and a CUDA device (throws opbench::Error).
std::unique_ptr<Sampler> make_event_sampler(CacheMode cache);
// Captures a batch of back-to-back iterations into one CUDA graph and times its replays with events;
// a sample is replay time / batch size, so per-kernel launch overhead is amortized away. Cold cache
// flushes L2 before each replay only (inside a batch, iterations run back to back).
// REQUIRES: as make_event_sampler, and an iteration that is capturable (no host sync inside).
std::unique_ptr<Sampler> make_graph_sampler(CacheMode cache);
// Kernel-only time from CUPTI activity records: a sample is the GPU busy time of the kernels, memcpys
// and memsets the iteration launched (activity_span.h: the union of their [start, end) spans, so serial
// kernels add up as ncu's gpu__time_duration does and launch gaps between them are not counted). The
// stream is held and flushed as with events; the flush and the hold are not the iteration's activities.
// REQUIRES: as make_event_sampler, CUPTI (cupti_unavailable_reason() empty), and no other CUPTI client
// in the process (the profiler of --opbench_trace).
std::unique_ptr<Sampler> make_cupti_sampler(CacheMode cache);
// Empty when this build and machine can run the cupti timer, else why not (one line).
std::string cupti_unavailable_reason();

// Samples until `rule` says stop. Samples the throttle rule rejects are not kept (Measurement::
// throttled_samples counts them); if none is kept before the rule's caps, throws opbench::Error.
// Adds `seconds` to an iteration on `timer`: a kernel spinning on the current stream (GPU timers) or
// a busy wait (host). Only --opbench_inject_slowdown (the gate's self-test) calls it.
void inject_delay(TimerKind timer, double seconds);
namespace detail {
void inject_gpu_delay(double seconds);   // the GPU half of inject_delay (timer_cuda.cpp)
}  // namespace detail

Measurement measure(Sampler& sampler, const std::function<void()>& iteration,
                    const StoppingRule& rule, const ThrottleRule& throttle = {});

}  // namespace opbench
