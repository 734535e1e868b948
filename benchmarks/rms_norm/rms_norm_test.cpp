// RMSNorm: its declaration (bytes, shapes, backends). Its kernel is tested with LayerNorm's in
// kernels/row_norm/row_norm_test.cpp.
#include <gtest/gtest.h>

#include "opbench/family.h"

namespace opbench {
namespace {

TEST(RmsNorm, CountsXReadAndYWrittenOnce) {
  const Family& f = family_named("RMSNorm");
  Work w = f.work(c10::kBFloat16, {4096, 8192});
  EXPECT_DOUBLE_EQ(w.bytes_read, 4096.0 * 8192 * 2);
  EXPECT_DOUBLE_EQ(w.bytes_written, 4096.0 * 8192 * 2);
  EXPECT_DOUBLE_EQ(w.flops, 0);
  DeviceInfo gpu;
  gpu.is_gpu = true;
  auto cases = cases_of(f, gpu);
  ASSERT_EQ(cases.size(), 3u * 4 * 3);   // {bf16, fp16, fp32} x 4 shapes x {aten, cuda, inductor}
  EXPECT_EQ(cases[0].name(), "RMSNorm/bf16/4096x1024/aten");
  EXPECT_EQ(cases[1].name(), "RMSNorm/bf16/4096x1024/cuda");
  EXPECT_EQ(cases[2].name(), "RMSNorm/bf16/4096x1024/inductor");
  EXPECT_EQ(cases_of(f, DeviceInfo{}).size(), 3u * 2 * 2);   // CPU: aten and inductor, two small shapes
}

}  // namespace
}  // namespace opbench
