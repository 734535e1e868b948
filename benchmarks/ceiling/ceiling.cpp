// Ceiling: what this GPU actually reaches, measured in the same run as every other case, so that a
// case's throughput can be read as a share of the achievable and not only of the datasheet peak.
//   Ceiling/bf16/32768x16384/copy                 device-to-device copy of a 1 GiB bf16 buffer with
//                                                 cudaMemcpyAsync: GB/s counting read + write (the
//                                                 bandwidth ceiling; datasheet HBM peak is higher)
//   Ceiling/bf16/8192x8192x8192/cublas            C = A @ B, bf16 in and out, fp32 compute, through
//                                                 cublasGemmEx called directly (common/cublas_ops.h,
//                                                 not ATen's mm): TFLOP/s with FLOPs 2*M*N*K (the
//                                                 compute ceiling)
// The reporters (reporters/forwarding.cpp, experiments.cpp) join on these names: "copy" gives the
// GB/s ceiling, "cublas" the TFLOP/s ceiling, and each other case gets %ceiling beside %peak. The
// harness registers the Ceiling family first so the ceilings are known when the other cases report;
// a run whose filter leaves out Ceiling/ has no %ceiling.
// GPU only: a CPU "ceiling" would say nothing about the GPU figures it is meant to scale, so nothing is
// registered on CPU.
// Inputs: randn (never zeros: GEMM power and clocks depend on the data). Checks: the copy, exactly
// (at::equal on the device, and a strided sample through expect_close with zero tolerance); the GEMM,
// 64 sampled elements against float64 dot products of the row of A and the column of B (a full
// float64 GEMM of 8192^3 on the CPU would take minutes), rtol 1.6e-2 and
// atol 1.6e-2 * sqrt(K) * rms(A) * rms(B) (common/common.h).
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <benchmark/benchmark.h>

#include "common/common.h"
#include "opbench/cases.h"
#include "opbench/check.h"
#include "opbench/reference.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include "common/cublas_ops.h"
#endif

namespace opbench {
namespace {

constexpr int64_t kCopyRows = 32768, kCopyCols = 16384;   // 2^29 bf16 = 1 GiB
constexpr int64_t kGemmM = 8192, kGemmN = 8192, kGemmK = 8192;
constexpr int64_t kGemmSamples = 64;

void run_copy(benchmark::State& state) {
  if (!families::backend_can_run(state, "copy")) return;
#ifdef OPBENCH_HAVE_CUDA
  auto options = at::TensorOptions().device(bench_device()).dtype(c10::kBFloat16);
  at::Tensor src = at::randn({kCopyRows, kCopyCols}, options);
  at::Tensor dst = at::empty_like(src);
  const size_t bytes = static_cast<size_t>(src.numel()) * src.element_size();
  auto iteration = [&] {
    OPBENCH_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), bytes, cudaMemcpyDeviceToDevice,
                                       c10::cuda::getCurrentCUDAStream().stream()));
  };

  iteration();
  if (!at::equal(dst, src)) throw Error("Ceiling copy: the destination differs from the source");
  const int64_t stride = 4099;   // prime: samples every row at a different column
  expect_close(dst.flatten().slice(0, 0, c10::nullopt, stride),
               src.flatten().slice(0, 0, c10::nullopt, stride).to(at::kDouble), {0, 0},
               "Ceiling copy (sample)");

  time_iterations(state, iteration, families::copy_work(src.numel(), c10::kBFloat16));
#endif
}

void run_gemm(benchmark::State& state) {
  if (!families::backend_can_run(state, "cublas")) return;
#ifdef OPBENCH_HAVE_CUDA
  auto options = at::TensorOptions().device(bench_device()).dtype(c10::kBFloat16);
  at::Tensor a = at::randn({kGemmM, kGemmK}, options);
  at::Tensor b = at::randn({kGemmK, kGemmN}, options);
  at::Tensor c = at::empty({kGemmM, kGemmN}, options);
  auto iteration = [&] {
    kernels::cublas_gemm_bf16(a.data_ptr(), b.data_ptr(), c.data_ptr(), kGemmM, kGemmN, kGemmK,
                              c10::cuda::getCurrentCUDAStream().stream());
  };

  iteration();
  auto long_options = at::TensorOptions().device(bench_device()).dtype(c10::kLong);
  at::Tensor rows = at::randint(0, kGemmM, {kGemmSamples}, long_options);
  at::Tensor cols = at::randint(0, kGemmN, {kGemmSamples}, long_options);
  at::Tensor a_rows = a.index_select(0, rows).to(at::kDouble);        // samples x K
  at::Tensor b_cols = b.index_select(1, cols).t().to(at::kDouble);    // samples x K
  at::Tensor expected = a_rows.mul(b_cols).sum(1);
  at::Tensor actual = c.flatten().index_select(0, rows.mul(kGemmN).add(cols));
  expect_close(actual, expected,
               families::dot_tolerance(kGemmK, families::rms(a), families::rms(b)),
               "Ceiling GEMM (64 sampled elements)");

  time_iterations(state, iteration, families::gemm_work(kGemmM, kGemmN, kGemmK));
#endif
}

void register_ceiling(const DeviceInfo& device) {
  if (!device.is_gpu) return;   // GPU only (see the header comment)
  register_case(CaseName{"Ceiling", "bf16", shape_name({kCopyRows, kCopyCols}), "copy"}, run_copy);
  register_case(CaseName{"Ceiling", "bf16", shape_name({kGemmM, kGemmN, kGemmK}), "cublas"}, run_gemm);
}

}  // namespace

OPBENCH_FAMILY(Ceiling, register_ceiling);

}  // namespace opbench
