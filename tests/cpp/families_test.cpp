// The GEMV-like families (Gemv, GatherGemv, MLP, Ceiling): the shared dot-product tolerance rule,
// every family's cases end to end through Google Benchmark (on CPU: all, small; on a GPU: each
// family's first shape of every backend, and the ceilings), and the cuBLAS calls against float64 on
// the GPU (the own GEMV kernel: kernels/gemv/gemv_test.cpp). GPU tests skip cleanly
// without a CUDA device.
// Needs the family sources (and, in CUDA builds, their kernels and cuBLAS) linked in. Each family's own
// work formula is tested in its folder (benchmarks/<family>/*_test.cpp).
#include <ATen/ATen.h>
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "common/common.h"
#include "benchmark_names.h"
#include "opbench/family.h"
#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/gbench_compat.h"
#include "opbench/reference.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include "common/cublas_ops.h"
#endif

namespace opbench {
namespace {

using namespace families;

TEST(FamilyTolerance, DotToleranceScalesWithSqrtKAndTheInputs) {
  Tolerance t = dot_tolerance(1024, 1.0, 1.0);
  EXPECT_DOUBLE_EQ(t.rtol, 1.6e-2);
  EXPECT_DOUBLE_EQ(t.atol, 1.6e-2 * 32);
  EXPECT_DOUBLE_EQ(dot_tolerance(4096, 2.0, 3.0).atol, 1.6e-2 * 64 * 6);
}

// The rule passes an fp32-accumulated bf16 GEMV and fails one that keeps a bf16 running sum.
TEST(FamilyTolerance, PassesFp32AccumulationAndCatchesABf16RunningSum) {
  const int64_t k = 2048, rows = 64;
  at::manual_seed(0);
  at::Tensor w = at::randn({rows, k}).to(at::kBFloat16);
  at::Tensor x = at::randn({k}).to(at::kBFloat16);
  at::Tensor wd = w.to(at::kDouble), xd = x.to(at::kDouble);
  at::Tensor expected = at::matmul(wd, xd);
  Tolerance tol = dot_tolerance(k, rms(wd), rms(xd));

  at::Tensor fp32 = at::matmul(w.to(at::kFloat), x.to(at::kFloat)).to(at::kBFloat16);
  EXPECT_NO_THROW(expect_close(fp32, expected, tol, "fp32 accumulation"));

  at::Tensor running = at::zeros({rows}, at::kBFloat16);
  for (int64_t j = 0; j < k; ++j) running = running + w.select(1, j) * x[j];   // bf16 each step
  EXPECT_THROW(expect_close(running, expected, tol, "bf16 running sum"), Error);
}

// --- Every registered case of this device through Google Benchmark ------------------------------

class CapturingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs)
      if (run.run_type == Run::RT_Iteration) this->runs.push_back(run);
  }
  std::vector<Run> runs;
};

double counter(const benchmark::BenchmarkReporter::Run& run, const char* name) {
  auto it = run.counters.find(name);
  return it == run.counters.end() ? -1 : static_cast<double>(it->second);
}

// An int4 GEMV case whose D is no whole number of gpt-fast's groups of 128: skipped as unavailable.
bool partial_int4_group(const CaseInfo& info) {
  return info.dtype == "int4" && (info.family == "Gemv" || info.family == "GatherGemv") && info.dims.at(0) % 128 != 0;
}

// Runs the registered cases of every family through Google Benchmark as bench_ops does: each passes
// its reference check and reports the bytes and FLOPs its family declared (the registry's CaseInfo).
// CPU: every case (all small). GPU: each family's first shape of every backend (a backend with its
// own shapes: its first), so a new family is run end to end here without editing this test.
TEST(FamilyCases, EveryFamilysCasesPassTheirCheckAndCountTheirWork) {
  const DeviceInfo& device = current_device();
  RunOptions options;
  options.rule.max_seconds = 0.05;
  options.rule.min_samples = 3;
  static RunContext run(device, options);   // outlives the registered benchmarks
  static bool registered = [&] {
    register_families(run);
    return true;
  }();
  (void)registered;
  std::vector<std::string> selected;
  std::map<std::string, int> expected_per_family;
  std::map<std::string, std::vector<int64_t>> first_dims;   // family/backend -> its first shape
  for (const CaseInfo* info : run.cases.all()) {
    auto first = first_dims.emplace(info->family + "/" + info->backend, info->dims).first->second;
    if (device.is_gpu && info->dims != first) continue;
    selected.push_back(info->name());
    if (info->backend != "inductor" && !partial_int4_group(*info)) ++expected_per_family[info->family];
  }
  ASSERT_FALSE(selected.empty());
  CapturingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter, exact_names_filter(selected));

  std::map<std::string, int> per_family;
  for (const auto& run_result : reporter.runs) {
    std::string text = run_result.run_name.function_name;
    const CaseInfo* info = run.cases.find(text);
    ASSERT_NE(info, nullptr) << text;
    // inductor: its packages are built by inductor/build_packages.py, not here; int4 GEMVs need whole
    // groups of 128 (the CPU's D = 64)
    if (info->backend == "inductor" || partial_int4_group(*info)) {
      EXPECT_EQ(gbench::skip_message(run_result).rfind(kUnavailablePrefix, 0), 0u) << text;
      continue;
    }
    EXPECT_FALSE(gbench::run_skipped(run_result)) << text << ": " << gbench::skip_message(run_result);
    if (gbench::run_skipped(run_result)) continue;
    EXPECT_DOUBLE_EQ(counter(run_result, "bytes"), info->work.bytes_read + info->work.bytes_written) << text;
    EXPECT_DOUBLE_EQ(counter(run_result, "flops"), info->work.flops) << text;
    EXPECT_GT(counter(run_result, "GB/s"), 0) << text;
    ++per_family[info->family];
  }
  EXPECT_EQ(per_family, expected_per_family);
  if (device.is_gpu) {
    EXPECT_EQ(per_family["Gemv"], 7);         // bf16: aten cublas cuda; int8, int4: aten cuda (D = 1024)
    EXPECT_EQ(per_family["GatherGemv"], 6);   // {bf16, int8, int4} x {aten, cuda}
    EXPECT_EQ(per_family["Ceiling"], 6);      // read, read_cuda, write, write_cuda, copy, cublas
  } else {
    EXPECT_EQ(per_family["Gemv"], 5);         // {bf16, int8} x {64, 256}, int4 x {256}, aten
    EXPECT_EQ(per_family["GatherGemv"], 5);
    EXPECT_EQ(per_family["MLP"], 1);          // 64x256
    EXPECT_EQ(per_family.count("Ceiling"), 0u);   // GPU only
  }
}

// --- Own kernels and cuBLAS calls on the GPU -------------------------------------------------------
#ifdef OPBENCH_HAVE_CUDA

class FamilyGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!current_device().is_gpu) GTEST_SKIP() << "no CUDA device";
    at::manual_seed(1);
  }
  static at::TensorOptions cuda(c10::ScalarType dtype) {
    return at::TensorOptions().device(at::kCUDA).dtype(dtype);
  }
  static at::Tensor weights(std::vector<int64_t> shape, c10::ScalarType dtype) {
    if (dtype == c10::kChar) return at::randint(-127, 128, shape, cuda(c10::kChar));
    return at::randn(shape, cuda(dtype));
  }
  static cudaStream_t stream() { return c10::cuda::getCurrentCUDAStream().stream(); }
};

TEST_F(FamilyGpu, CublasGemvMatchesFloat64) {
  const int64_t rows = 768, cols = 1024;
  at::Tensor wide = at::randn({rows, cols + 32}, cuda(c10::kBFloat16));
  at::Tensor w = wide.slice(1, 0, cols);   // leading dimension cols + 32
  at::Tensor x = at::randn({cols}, cuda(c10::kBFloat16));
  at::Tensor y = at::empty({rows}, cuda(c10::kBFloat16));
  kernels::cublas_gemv_bf16(w.data_ptr(), rows, cols, w.stride(0), x.data_ptr(), y.data_ptr(), stream());
  at::Tensor wd = w.to(at::kDouble), xd = x.to(at::kDouble);
  expect_close(y, at::matmul(wd, xd), dot_tolerance(cols, rms(wd), rms(xd)), "cublas gemv");
}

TEST_F(FamilyGpu, CublasGemmMatchesFloat64OnANonSquareShape) {
  const int64_t m = 192, n = 320, k = 448;   // distinct so a transposition error cannot pass
  at::Tensor a = at::randn({m, k}, cuda(c10::kBFloat16));
  at::Tensor b = at::randn({k, n}, cuda(c10::kBFloat16));
  at::Tensor c = at::empty({m, n}, cuda(c10::kBFloat16));
  kernels::cublas_gemm_bf16(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k, stream());
  at::Tensor ad = a.to(at::kDouble), bd = b.to(at::kDouble);
  expect_close(c, at::matmul(ad, bd), dot_tolerance(k, rms(ad), rms(bd)), "cublas gemm");
}

#endif  // OPBENCH_HAVE_CUDA

}  // namespace
}  // namespace opbench
