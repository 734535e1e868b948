// Ceiling: what this GPU actually reaches, measured in the same run as every other case, so that a
// case's throughput can be read as a share of the achievable and not only of the datasheet peak.
//   Ceiling/bf16/32768x16384/read                 a read-only stream over a 1 GiB buffer: ATen's sum
//   Ceiling/bf16/<shape>/read_cuda                the same read by our own stream kernel
//                                                 (kernels/stream/: the access pattern of our fastest
//                                                 GEMVs, 4-9% ahead of the sum on the H100 and H200):
//                                                 GB/s read, the bound of read-dominated ops (GEMV, decode)
//   Ceiling/bf16/32768x16384/write                a write-only stream: ATen's fill_
//   Ceiling/bf16/<shape>/write_cuda               the same by our own stream kernel (37% ahead of fill_
//                                                 on the H200, level on the H100): GB/s written
//   Ceiling/bf16/<shape>/copy                     device-to-device copy with cudaMemcpyAsync: GB/s
//                                                 counting read + write (the bandwidth ceiling;
//                                                 datasheet HBM peak is higher)
//   Ceiling/bf16/8192x8192x8192/cublas            C = A @ B, bf16 in and out, fp32 compute, through
//                                                 cublasGemmEx called directly (common/cublas_ops.h,
//                                                 not ATen's mm): TFLOP/s with FLOPs 2*M*N*K (the
//                                                 compute ceiling)
// <shape>: 2048x4096, 4096x8192, 8192x16384 and 32768x16384 bf16 (16 MiB, 64 MiB, 256 MiB, 1 GiB): a
// stream's fixed cost weighs more the fewer bytes it moves (the H200's read stream: 3507 GB/s over
// 64 MiB, 4611 over 1 GiB), so each case is held to the streams of its own byte count (work.h:
// StreamCurve). ATen's streams, slower than ours at 1 GiB, run at that size only.
// Each backend declares which ceiling it measures (Backend::measures): the fastest figure of a kind and
// size becomes this run's ceiling there (a bound that a faster stream beats is no bound), and every
// later case gets %ceiling beside %peak (work.h: figures_of). Families that measure ceilings register
// first, so the ceilings are known when the other cases time; a run whose filter leaves out Ceiling/
// has no %ceiling.
// GPU only: a CPU "ceiling" would say nothing about the GPU figures it is meant to scale, so nothing is
// registered on CPU.
// Inputs: randn (never zeros: GEMM power and clocks depend on the data). Checks: the copy, exactly
// (at::equal on the device, and a strided sample through expect_close with zero tolerance); the GEMM,
// 64 sampled elements against float64 dot products of the row of A and the column of B (a full
// float64 GEMM of 8192^3 on the CPU would take minutes), rtol 1.6e-2 and
// atol 1.6e-2 * sqrt(K) * rms(A) * rms(B) (kernels/common/dot_tolerance.h); the own streams against
// their float64 references (kernels/stream/stream_reference.h).
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/randn.h>

#include <limits>

#include "common/common.h"
#include "kernels/stream/stream_reference.h"
#include "opbench/check.h"
#include "opbench/family.h"
#include "opbench/reference.h"

#ifdef OPBENCH_HAVE_CUDA
#include <ATen/ops/full.h>
#include <c10/cuda/CUDAStream.h>

#include "common/cublas_ops.h"
#include "kernels/stream/stream_kernels.h"
#endif

namespace opbench {
namespace {

constexpr int64_t kCopyRows = 32768, kCopyCols = 16384;   // 2^29 bf16 = 1 GiB
// Our streams and the copy at 16 MiB, 64 MiB, 256 MiB and 1 GiB of bf16.
const std::vector<Dims> kStreamShapes = {{2048, 4096}, {4096, 8192}, {8192, 16384}, {kCopyRows, kCopyCols}};
constexpr int64_t kGemmM = 8192, kGemmN = 8192, kGemmK = 8192;
constexpr int64_t kGemmSamples = 64;

void run_copy(CaseContext& ctx) {
#ifdef OPBENCH_HAVE_CUDA
  auto options = at::TensorOptions().device(ctx.device()).dtype(c10::kBFloat16);
  at::Tensor src = at::randn(ctx.info().dims, options);
  at::Tensor dst = at::empty_like(src);
  const size_t bytes = static_cast<size_t>(src.numel()) * src.element_size();
  auto iteration = [&] {
    OPBENCH_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), bytes, cudaMemcpyDeviceToDevice,
                                       c10::cuda::getCurrentCUDAStream().stream()));
  };

  ctx.check_and_time(iteration, [&] {
    if (!at::equal(dst, src)) throw Error("Ceiling copy: the destination differs from the source");
    const int64_t stride = 4099;   // prime: samples every row at a different column
    expect_close(dst.flatten().slice(0, 0, c10::nullopt, stride),
                 src.flatten().slice(0, 0, c10::nullopt, stride).to(at::kDouble), {0, 0}, "Ceiling copy (sample)");
  });
#else
  ctx.skip_unavailable("the copy ceiling needs a CUDA build");
#endif
}

// The read-only stream: ATen's sum over the buffer (a reduction that reads it once), checked against
// the float64 sum.
void run_read(CaseContext& ctx) {
  auto options = at::TensorOptions().device(ctx.device());
  at::Tensor data = at::randn(ctx.info().dims, options.dtype(c10::kBFloat16));
  at::Tensor total = at::empty({}, options.dtype(c10::kFloat));
  auto iteration = [&] { at::sum_out(total, data, at::OptionalIntArrayRef{}, false, c10::kFloat); };
  ctx.check_and_time(iteration, [&] {
    expect_close(total.reshape({1}), data.to(at::kDouble).sum().reshape({1}),
                 dot_tolerance(data.numel(), 1.0, rms(data)), "Ceiling read (sum)");
  });
}

// The read-only stream of our own kernel, checked chunk by chunk against float64 sums (chunk_sums
// starts as NaN, so a kernel that wrote nothing fails).
void run_read_cuda(CaseContext& ctx) {
#ifdef OPBENCH_HAVE_CUDA
  auto options = at::TensorOptions().device(ctx.device());
  at::Tensor data = at::randn(ctx.info().dims, options.dtype(c10::kBFloat16));
  const int64_t bytes = data.numel() * data.element_size(), chunks = bytes / kernels::kStreamChunkBytes;
  at::Tensor chunk_sums = at::full({chunks}, std::numeric_limits<float>::quiet_NaN(), options.dtype(c10::kFloat));
  auto iteration = [&] {
    kernels::launch_read_stream(data.data_ptr(), bytes, chunk_sums.data_ptr<float>(),
                                c10::cuda::getCurrentCUDAStream().stream());
  };
  ctx.check_and_time(iteration, [&] {
    expect_close(chunk_sums, kernels::read_stream_reference(data, chunks), kernels::read_stream_tolerance(data, chunks),
                 "Ceiling read_cuda (chunk sums)");
  });
#else
  ctx.skip_unavailable("the own read stream needs a CUDA build");
#endif
}

// The write-only stream of our own kernel: bf16 ones over a zeroed buffer, checked by reading it back.
void run_write_cuda(CaseContext& ctx) {
#ifdef OPBENCH_HAVE_CUDA
  at::Tensor data = at::zeros(ctx.info().dims, at::TensorOptions().device(ctx.device()).dtype(c10::kBFloat16));
  constexpr uint32_t kTwoBf16Ones = 0x3F803F80u;   // the buffer is then bf16 ones
  auto iteration = [&] {
    kernels::launch_write_stream(data.data_ptr(), data.numel() * data.element_size(), kTwoBf16Ones,
                                 c10::cuda::getCurrentCUDAStream().stream());
  };
  ctx.check_and_time(iteration, [&] {
    if (!kernels::holds_word(data, kTwoBf16Ones)) throw Error("Ceiling write_cuda: the buffer does not hold the value written");
  });
#else
  ctx.skip_unavailable("the own write stream needs a CUDA build");
#endif
}

// The write-only stream: ATen's fill_ of the buffer with a constant, checked by reading it back.
void run_write(CaseContext& ctx) {
  at::Tensor data = at::zeros(ctx.info().dims, at::TensorOptions().device(ctx.device()).dtype(c10::kBFloat16));
  auto iteration = [&] { data.fill_(1.0); };
  ctx.check_and_time(iteration, [&] {
    if (!data.eq(1.0).all().item<bool>()) throw Error("Ceiling write: the buffer does not hold the value written");
  });
}

void run_gemm(CaseContext& ctx) {
#ifdef OPBENCH_HAVE_CUDA
  const int64_t m = ctx.info().dims[0], n = ctx.info().dims[1], k = ctx.info().dims[2];
  auto options = at::TensorOptions().device(ctx.device()).dtype(c10::kBFloat16);
  at::Tensor a = at::randn({m, k}, options);
  at::Tensor b = at::randn({k, n}, options);
  at::Tensor c = at::empty({m, n}, options);
  auto iteration = [&] {
    kernels::cublas_gemm_bf16(a.data_ptr(), b.data_ptr(), c.data_ptr(), m, n, k,
                              c10::cuda::getCurrentCUDAStream().stream());
  };

  ctx.check_and_time(iteration, [&] {
    auto long_options = at::TensorOptions().device(ctx.device()).dtype(c10::kLong);
    at::Tensor rows = at::randint(0, m, {kGemmSamples}, long_options);
    at::Tensor cols = at::randint(0, n, {kGemmSamples}, long_options);
    at::Tensor a_rows = a.index_select(0, rows).to(at::kDouble);        // samples x K
    at::Tensor b_cols = b.index_select(1, cols).t().to(at::kDouble);    // samples x K
    at::Tensor actual = c.flatten().index_select(0, rows.mul(n).add(cols));
    expect_close(actual, a_rows.mul(b_cols).sum(1), dot_tolerance(k, rms(a), rms(b)),
                 "Ceiling GEMM (64 sampled elements)");
  });
#else
  ctx.skip_unavailable("the GEMM ceiling needs a CUDA build");
#endif
}

void run_ceiling(CaseContext& ctx) {
  const std::string& backend = ctx.info().backend;
  if (backend == "cublas")
    run_gemm(ctx);
  else if (backend == "read")
    run_read(ctx);
  else if (backend == "read_cuda")
    run_read_cuda(ctx);
  else if (backend == "write")
    run_write(ctx);
  else if (backend == "write_cuda")
    run_write_cuda(ctx);
  else
    run_copy(ctx);
}

// A stream of `dims` bf16 elements read once and written once.
double stream_bytes(c10::ScalarType dtype, const Dims& dims) {
  return static_cast<double>(dims[0]) * dims[1] * c10::elementSize(dtype);
}
Work copy_work(c10::ScalarType dtype, const Dims& dims) { return {stream_bytes(dtype, dims), stream_bytes(dtype, dims)}; }
Work read_work(c10::ScalarType dtype, const Dims& dims) { return {stream_bytes(dtype, dims), 0}; }
Work write_work(c10::ScalarType dtype, const Dims& dims) { return {0, stream_bytes(dtype, dims)}; }

// C (m x n) = A (m x k) @ B (k x n), bf16: FLOPs 2*m*n*k; A and B read once, C written once.
Work gemm_work(c10::ScalarType, const Dims& dims) {
  const double m = static_cast<double>(dims[0]), n = static_cast<double>(dims[1]), k = static_cast<double>(dims[2]);
  return {2.0 * (m * k + k * n), 2.0 * m * n, 2.0 * m * n * k};
}

}  // namespace

OPBENCH_FAMILY(Ceiling) {
  return {.name = "Ceiling", .summary = "what this GPU reaches in this run: streams and the bf16 GEMM (the %ceiling denominators)",
          .dtypes = {c10::kBFloat16}, .gpu_shapes = kStreamShapes,   // GPU only: a CPU ceiling scales nothing
          .backends = {{"read", true, {}, CeilingKind::kRead, {{kCopyRows, kCopyCols}}, read_work},
                       {"read_cuda", true, {}, CeilingKind::kRead, {}, read_work},
                       {"write", true, {}, CeilingKind::kWrite, {{kCopyRows, kCopyCols}}, write_work},
                       {"write_cuda", true, {}, CeilingKind::kWrite, {}, write_work},
                       {"copy", true, {}, CeilingKind::kCopy},
                       {"cublas", true, {}, CeilingKind::kGemm, {{kGemmM, kGemmN, kGemmK}}, gemm_work}},
          .peak = PeakKind::kBf16, .work = copy_work, .run = run_ceiling};
}

}  // namespace opbench
