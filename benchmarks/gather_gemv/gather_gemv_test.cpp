// GatherGemv's declaration: the two gathered matrices read once, 2*2*D*D FLOPs.
#include <gtest/gtest.h>

#include "opbench/family.h"

namespace opbench {
namespace {

TEST(GatherGemv, CountsTheTwoGatheredMatrices) {
  const Family& gather = family_named("GatherGemv");
  Work bf16 = gather.work(c10::kBFloat16, {1024});
  EXPECT_DOUBLE_EQ(bf16.bytes_read, 2.0 * 1024 * 1024 * 2);
  EXPECT_DOUBLE_EQ(bf16.flops, 2.0 * 2 * 1024 * 1024);
  Work int8 = gather.work(c10::kChar, {8192});
  EXPECT_DOUBLE_EQ(int8.bytes_read, 2.0 * 8192 * 8192);
  EXPECT_DOUBLE_EQ(int8.bytes_written, 0);
}

}  // namespace
}  // namespace opbench
