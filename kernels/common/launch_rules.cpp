#include "kernels/common/launch_rules.h"

#include <atomic>
#include <cmath>
#include <cstdlib>

#include "opbench/check.h"
#ifdef OPBENCH_HAVE_CUDA
#include "kernels/common/per_device.h"
#endif

namespace opbench::kernels {
namespace {

struct TunedOn {
  LaunchRules rules;
  const char* name;
  double dram_gbps_per_sm;   // datasheet: H100 SXM 3350 GB/s, H200 4800 GB/s, 132 SMs each
};
constexpr TunedOn kTunedOn[] = {{LaunchRules::kH100, "h100", 3350.0 / kTunedSms},
                                {LaunchRules::kH200, "h200", 4800.0 / kTunedSms}};

std::optional<LaunchRules> g_scoped;

// OPBENCH_LAUNCH_RULES's set, read once (a bad value throws again at every call).
std::optional<LaunchRules> environment_rules() {
  static const std::optional<LaunchRules> rules = launch_rules_from_environment(std::getenv("OPBENCH_LAUNCH_RULES"));
  return rules;
}

}  // namespace

const char* launch_rules_name(LaunchRules rules) {
  for (const TunedOn& t : kTunedOn)
    if (t.rules == rules) return t.name;
  return "?";
}

std::optional<LaunchRules> parse_launch_rules(const std::string& name) {
  for (const TunedOn& t : kTunedOn)
    if (name == t.name) return t.rules;
  return std::nullopt;
}

std::optional<LaunchRules> launch_rules_from_environment(const char* value) {
  if (value == nullptr || *value == '\0') return std::nullopt;
  if (auto rules = parse_launch_rules(value)) return rules;
  throw Error(std::string("OPBENCH_LAUNCH_RULES=") + value + ": expected h100 or h200");
}

double tuned_dram_gbps_per_sm(LaunchRules rules) {
  for (const TunedOn& t : kTunedOn)
    if (t.rules == rules) return t.dram_gbps_per_sm;
  return 0;
}

LaunchRules nearest_launch_rules(double dram_gbps_per_sm) {
  if (!(dram_gbps_per_sm > 0)) return LaunchRules::kH100;
  const TunedOn* nearest = &kTunedOn[0];
  for (const TunedOn& t : kTunedOn)
    if (std::fabs(std::log(dram_gbps_per_sm / t.dram_gbps_per_sm)) <
        std::fabs(std::log(dram_gbps_per_sm / nearest->dram_gbps_per_sm)))
      nearest = &t;
  return nearest->rules;
}

double current_dram_gbps_per_sm() {
#ifdef OPBENCH_HAVE_CUDA
  int device = 0, memory_khz = 0, bus_bits = 0, sms = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&device));
  OPBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device));
  OPBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device));
  OPBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (sms <= 0) return 0;
  // Double data rate: two transfers of the bus a memory clock.
  return 2.0 * memory_khz * 1e3 * (bus_bits / 8.0) / 1e9 / sms;
#else
  return 0;
#endif
}

LaunchRules current_launch_rules() {
  if (g_scoped) return *g_scoped;
  if (auto rules = environment_rules()) return *rules;
#ifdef OPBENCH_HAVE_CUDA
  static std::atomic<int8_t> cache[kMaxCachedDevices] = {};
  return static_cast<LaunchRules>(
      once_per_device(cache, [](int) { return static_cast<int>(nearest_launch_rules(current_dram_gbps_per_sm())); }));
#else
  return LaunchRules::kH100;
#endif
}

ScopedLaunchRules::ScopedLaunchRules(LaunchRules rules) : previous_(g_scoped) { g_scoped = rules; }
ScopedLaunchRules::~ScopedLaunchRules() { g_scoped = previous_; }

}  // namespace opbench::kernels
