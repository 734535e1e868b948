// The row norms' configuration table (row_norm_configs.h) picks, for each rule set, the configuration
// written out below for rows of every width class (in 16-byte vectors) and for layouts the vector paths
// cannot take. The expectations are written out by hand from the rules as tuned, not read from the
// table. No GPU needed.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/row_norm/row_norm_configs.h"

namespace opbench::kernels {
namespace {

TEST(RowNormConfigs, EachWidthPicksTheTunedConfigurationOnBothGpus) {
  // (vectors a row, configuration): bf16 widths are 8 a vector, fp32 4.
  const std::vector<std::pair<int64_t, const char*>> expected = {
      {1, "r4s.b128"},          {128, "r4s.b128"},          {256, "r4s.b128"},          // up to 2048 bf16
      {257, "t.b128v4.m12"},    {512, "t.b128v4.m12"},                                  // 4096 bf16
      {513, "t.b256v4k.m6"},    {1024, "t.b256v4k.m6"},                                 // 8192 bf16
      {1025, "t.b512v4k.m3"},   {2048, "t.b512v4k.m3"},     {8192, "t.b512v4k.m3"},     // to 128 KiB
  };
  for (LaunchRules rules : {LaunchRules::kH100, LaunchRules::kH200})
    for (const auto& [vectors, config] : expected) {
      SCOPED_TRACE(std::string(launch_rules_name(rules)) + " " + std::to_string(vectors) + " vectors");
      EXPECT_EQ(row_norm_config_name(row_norm_config(rules, true, vectors)), config);
      EXPECT_EQ(row_norm_config_name(row_norm_config(rules, false, vectors)), "scalar");
    }
}

TEST(RowNormConfigs, NamesAreTheTunersCsvNames) {
  EXPECT_EQ(row_norm_config_name(registers_config(8, false, 256)), "r8c.b256");
  EXPECT_EQ(row_norm_config_name(two_pass_config(512, 2, false, 4)), "t.b512v2.m4");
  EXPECT_EQ(row_norm_config_name(RowNormConfig{}), "scalar");
}

}  // namespace
}  // namespace opbench::kernels
