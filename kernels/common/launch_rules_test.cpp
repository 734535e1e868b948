// Which launch rules a device gets (launch_rules.h): the nearest tuned GPU by DRAM bandwidth per SM, the
// environment's choice and its refusal of unknown names, the scoped override; on a GPU, that the H100
// and the H200 classify as the GPUs the rules were tuned on.
#include <gtest/gtest.h>

#include <string>

#include "kernels/common/launch_rules.h"
#include "opbench/check.h"
#include "opbench/device.h"

namespace opbench::kernels {
namespace {

TEST(LaunchRules, DevicesGetTheRulesOfTheNearestTunedGpuInBandwidthPerSm) {
  EXPECT_EQ(nearest_launch_rules(3352.3 / 132), LaunchRules::kH100);   // H100 SXM: 2619 MHz x 5120 bits
  EXPECT_EQ(nearest_launch_rules(4800.0 / 132), LaunchRules::kH200);
  EXPECT_EQ(nearest_launch_rules(2039.0 / 108), LaunchRules::kH100);   // A100 80GB: below both
  EXPECT_EQ(nearest_launch_rules(8000.0 / 148), LaunchRules::kH200);   // B200: above both
  // The boundary is the geometric mean of the two tuned points (log scale), about 30.4 GB/s an SM.
  EXPECT_EQ(nearest_launch_rules(30.0), LaunchRules::kH100);
  EXPECT_EQ(nearest_launch_rules(30.8), LaunchRules::kH200);
  EXPECT_EQ(nearest_launch_rules(0.0), LaunchRules::kH100);   // a device that reports no memory clock
  EXPECT_LT(tuned_dram_gbps_per_sm(LaunchRules::kH100), tuned_dram_gbps_per_sm(LaunchRules::kH200));
}

TEST(LaunchRules, EnvironmentNamesASetOrIsRefusedWithTheAcceptedNames) {
  EXPECT_EQ(launch_rules_from_environment(nullptr), std::nullopt);
  EXPECT_EQ(launch_rules_from_environment(""), std::nullopt);
  EXPECT_EQ(launch_rules_from_environment("h100"), LaunchRules::kH100);
  EXPECT_EQ(launch_rules_from_environment("h200"), LaunchRules::kH200);
  try {
    launch_rules_from_environment("H200x");
    FAIL() << "an unknown set was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "OPBENCH_LAUNCH_RULES=H200x: expected h100 or h200");
  }
  for (LaunchRules r : {LaunchRules::kH100, LaunchRules::kH200})
    EXPECT_EQ(parse_launch_rules(launch_rules_name(r)), r);
}

TEST(LaunchRules, ScopedRulesNestAndRestore) {
  ScopedLaunchRules outer(LaunchRules::kH200);
  EXPECT_EQ(current_launch_rules(), LaunchRules::kH200);
  {
    ScopedLaunchRules inner(LaunchRules::kH100);
    EXPECT_EQ(current_launch_rules(), LaunchRules::kH100);
  }
  EXPECT_EQ(current_launch_rules(), LaunchRules::kH200);
}

TEST(LaunchRules, TheTunedGpusClassifyAsThemselves) {
  const DeviceInfo& device = current_device();
  if (!device.is_gpu) GTEST_SKIP() << "no CUDA device";
  const double per_sm = current_dram_gbps_per_sm();
  SCOPED_TRACE(device.name + ": " + std::to_string(per_sm) + " GB/s an SM");
  EXPECT_GT(per_sm, 1.0);
  if (device.name.find("H100") != std::string::npos) EXPECT_EQ(nearest_launch_rules(per_sm), LaunchRules::kH100);
  if (device.name.find("H200") != std::string::npos) EXPECT_EQ(nearest_launch_rules(per_sm), LaunchRules::kH200);
}

}  // namespace
}  // namespace opbench::kernels
