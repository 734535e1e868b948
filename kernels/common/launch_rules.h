// Which rule set of the own kernels' configuration tables (kernels/<kernel>/*_configs.h) a launch
// follows on this device. The H100 and the H200 are both sm_90 with 132 SMs, yet their fastest block
// shapes differ, by up to 10% for the GEMV: the H200's HBM3e streams ~1.4x the bytes a second of the
// H100's HBM3 to each SM. Each table holds a set of rows per GPU it was tuned on; a device follows the
// set tuned on the GPU nearest to it in peak DRAM bandwidth per SM (the device's memory clock x bus
// width / SMs), the nearer on a log scale. OPBENCH_LAUNCH_RULES=h100|h200 picks a set (to compare them
// on one GPU); tests run every set's kernels with ScopedLaunchRules.
#pragma once
#include <optional>
#include <string>

namespace opbench::kernels {

enum class LaunchRules { kH100, kH200 };
// The SMs of the GPUs the sets were tuned on: the H100 SXM and the H200 alike.
constexpr int kTunedSms = 132;

const char* launch_rules_name(LaunchRules rules);   // "h100", "h200"
std::optional<LaunchRules> parse_launch_rules(const std::string& name);
// The set OPBENCH_LAUNCH_RULES names, given its value (nullptr or "": unset, nullopt); throws
// opbench::Error naming the accepted values for any other.
std::optional<LaunchRules> launch_rules_from_environment(const char* value);

// Peak DRAM GB/s per SM of the GPU each set was tuned on (datasheet bandwidth / kTunedSms).
double tuned_dram_gbps_per_sm(LaunchRules rules);
// The set tuned on the GPU nearest to `dram_gbps_per_sm` on a log scale; kH100 when it is not positive
// (a device that does not report its memory).
LaunchRules nearest_launch_rules(double dram_gbps_per_sm);

// Peak DRAM GB/s per SM of the current CUDA device, from its attributes; 0 when it reports none.
double current_dram_gbps_per_sm();

// The rules the launches follow now: a ScopedLaunchRules' while one lives, else OPBENCH_LAUNCH_RULES
// when set (another value throws opbench::Error naming the accepted ones), else the nearest set to the
// current device (read once per device).
LaunchRules current_launch_rules();

// Makes current_launch_rules() return `rules` while it lives (not thread-safe: tests and tools only).
class ScopedLaunchRules {
 public:
  explicit ScopedLaunchRules(LaunchRules rules);
  ~ScopedLaunchRules();
  ScopedLaunchRules(const ScopedLaunchRules&) = delete;
  ScopedLaunchRules& operator=(const ScopedLaunchRules&) = delete;

 private:
  std::optional<LaunchRules> previous_;
};

}  // namespace opbench::kernels
