#include "opbench/timer.h"

#include "opbench/check.h"
#include "opbench/interrupt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>

namespace opbench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class HostSampler final : public Sampler {
 public:
  double time_one(const std::function<void()>& iteration) override {
    auto start = Clock::now();
    iteration();
    return seconds_since(start);
  }
  TimerKind kind() const override { return TimerKind::kHost; }
};

}  // namespace

double median_of(std::vector<double> samples) {
  if (samples.empty()) return 0;
  size_t mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + mid, samples.end());
  double upper = samples[mid];
  if (samples.size() % 2 == 1) return upper;
  double lower = *std::max_element(samples.begin(), samples.begin() + mid);
  return 0.5 * (lower + upper);
}

double relative_noise(std::vector<double> samples) {
  size_t n = samples.size();
  size_t trim = n >= 10 ? std::max<size_t>(1, n / 20) : 0;
  if (n - 2 * trim < 2) return 0;
  std::sort(samples.begin(), samples.end());
  double sum = 0, sum_sq = 0;
  size_t kept = n - 2 * trim;
  for (size_t i = trim; i < n - trim; ++i) sum += samples[i];
  double mean = sum / static_cast<double>(kept);
  for (size_t i = trim; i < n - trim; ++i) sum_sq += (samples[i] - mean) * (samples[i] - mean);
  if (mean <= 0) return 0;
  return std::sqrt(sum_sq / static_cast<double>(kept - 1)) / mean;
}

double median_noise(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0;
  return 1.2533 * relative_noise(samples) / std::sqrt(static_cast<double>(samples.size()));
}

bool rule_satisfied(const std::vector<double>& samples, double elapsed_seconds,
                    const StoppingRule& rule) {
  auto n = static_cast<int>(samples.size());
  if (n >= rule.max_samples || elapsed_seconds >= rule.max_seconds) return true;
  return n >= rule.min_samples && median_noise(samples) < rule.max_noise;
}

const char* timer_kind_name(TimerKind kind) {
  switch (kind) {
    case TimerKind::kHost: return "host";
    case TimerKind::kEvents: return "events";
    case TimerKind::kGraph: return "graph";
    case TimerKind::kCupti: return "cupti";
  }
  return "unknown";
}

std::unique_ptr<Sampler> make_host_sampler() { return std::make_unique<HostSampler>(); }

void inject_delay(TimerKind timer, double seconds) {
  if (timer != TimerKind::kHost) return detail::inject_gpu_delay(seconds);
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < until) {
  }
}

Measurement measure(Sampler& sampler, const std::function<void()>& iteration,
                    const StoppingRule& rule, const ThrottleRule& throttle) {
  for (int i = 0; i < rule.warmup_iterations; ++i) sampler.warm_up(iteration);
  Measurement m;
  m.timer = sampler.kind();
  auto start = Clock::now();
  // The rule costs a sort: check it at geometrically spaced sample counts, not after every sample.
  size_t next_check = static_cast<size_t>(std::max(1, rule.min_samples));
  while (true) {
    if (interrupt_signal() != 0) throw Error("interrupted");   // the case in flight is dropped
    double seconds = sampler.time_one(iteration);
    std::optional<double> clock_mhz = sampler.last_sm_clock_mhz();
    if (clock_mhz && throttle.throttled(*clock_mhz)) {
      ++m.throttled_samples;
      std::this_thread::sleep_for(std::chrono::duration<double>(throttle.recovery_seconds));
    } else {
      m.samples.push_back(seconds);
      if (clock_mhz) m.sm_clock_mhz.push_back(*clock_mhz);
    }
    double elapsed = seconds_since(start);
    bool capped = elapsed >= rule.max_seconds ||
                  static_cast<int>(m.samples.size() + m.throttled_samples) >= rule.max_samples;
    if (m.samples.empty()) {
      if (!capped) continue;
      throw Error("every sample (" + std::to_string(m.throttled_samples) + ") was taken below " +
                  std::to_string(static_cast<int>(throttle.threshold * throttle.expected_sm_clock_mhz)) +
                  " MHz, the throttle threshold (" + std::to_string(throttle.threshold) + " x the rated " +
                  std::to_string(static_cast<int>(throttle.expected_sm_clock_mhz)) + " MHz SM clock)");
    }
    if (capped || m.samples.size() >= next_check) {
      if (capped || rule_satisfied(m.samples, elapsed, rule)) {
        m.noise = relative_noise(m.samples);
        m.median_noise = median_noise(m.samples);
        m.converged = static_cast<int>(m.samples.size()) >= rule.min_samples &&
                      m.median_noise < rule.max_noise;
        break;
      }
      next_check = m.samples.size() + std::max<size_t>(1, m.samples.size() / 8);
    }
  }
  m.median = median_of(m.samples);
  return m;
}

}  // namespace opbench

#ifndef OPBENCH_HAVE_CUDA
namespace opbench {
std::unique_ptr<Sampler> make_event_sampler(CacheMode) {
  throw Error("CUDA event timing needs a CUDA build of opbench; this build has no CUDA");
}
std::unique_ptr<Sampler> make_graph_sampler(CacheMode) {
  throw Error("CUDA graph timing needs a CUDA build of opbench; this build has no CUDA");
}
std::unique_ptr<Sampler> make_cupti_sampler(CacheMode) {
  throw Error("CUPTI timing needs a CUDA build of opbench; this build has no CUDA");
}
std::string cupti_unavailable_reason() { return "this build of opbench has no CUDA"; }
void detail::inject_gpu_delay(double) {
  throw Error("a GPU delay needs a CUDA build of opbench; this build has no CUDA");
}
}  // namespace opbench
#endif
