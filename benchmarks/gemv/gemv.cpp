// Gemv: y = W.to(bf16) @ x with W (D x D) in bf16 or int8 and x (D,) in bf16 -- the gpt-fast `gemv`
// micro-benchmark (experiment gemv), the matrix-vector product at the heart of batch-1 decoding.
// Bandwidth-bound: its figure of merit is GB/s of W against the device's HBM bandwidth.
//
// Backends:
//   aten    the seed's eager semantics, at::matmul(W.to(bf16), x). For int8 the .to() materializes a
//           bf16 copy of W every iteration (read 1 + write 2 + read 2 bytes per weight), so its GB/s,
//           counted on the int8 bytes as the seed does, understates the traffic: that is the point of
//           a fused kernel.
//   cublas  bf16 only: cublasGemmEx with n = 1 called directly (common/cublas_ops.h).
//   cuda    opbench's own kernel (common/gemv_kernel.h): a plain bf16 GEMV, and for int8 a fused
//           dequantize-and-multiply that reads the int8 weights once.
// Bytes: W read once, D*D*itemsize (the seed's count; x and y are not counted: < 0.4% at D >= 1024).
// FLOPs 2*D*D. See common/common.h.
// Inputs: bf16 W = randn; int8 W = uniform integers in [-127, 127] (the seed truncates randn to int8,
// mostly values in [-3, 3]; the bytes moved are the same); x = randn.
// Check: against float64 W.to(double) @ x on the same device (int8: the dequantized weights, which bf16
// holds exactly), rtol 1.6e-2 and atol 1.6e-2 * sqrt(D) * rms(W) * rms(x) (common/common.h).
#include <ATen/ops/empty.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/randn.h>
#include <benchmark/benchmark.h>

#include "common/common.h"
#include "opbench/cases.h"
#include "opbench/check.h"
#include "opbench/reference.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include "common/cublas_ops.h"
#include "common/gemv_kernel.h"
#endif

namespace opbench {
namespace {

using families::dot_tolerance;
using families::rms;

void run_gemv(benchmark::State& state, c10::ScalarType dtype, int64_t d, const std::string& backend) {
  if (!families::backend_can_run(state, backend)) return;
  at::Tensor w = families::random_weights({d, d}, dtype);
  at::Tensor x = at::randn({d}, at::TensorOptions().device(bench_device()).dtype(c10::kBFloat16));
  at::Tensor y = at::empty({d}, x.options());

  std::function<void()> iteration;
  if (backend == "aten") {
    iteration = [&] { y = at::matmul(w.to(c10::kBFloat16), x); };
  }
#ifdef OPBENCH_HAVE_CUDA
  else if (backend == "cublas") {
    if (dtype != c10::kBFloat16) throw Error("Gemv: the cublas backend takes bf16 weights only");
    iteration = [&] {
      kernels::cublas_gemv_bf16(w.data_ptr(), d, d, d, x.data_ptr(), y.data_ptr(),
                                c10::cuda::getCurrentCUDAStream().stream());
    };
  } else if (backend == "cuda") {
    auto w_type = dtype == c10::kChar ? kernels::WeightType::kInt8 : kernels::WeightType::kBf16;
    kernels::GemvArgs args =
        kernels::square_gemv_args(w.data_ptr(), w_type, d, x.data_ptr(), y.data_ptr());
    iteration = [&, args] { kernels::launch_gemv(args, c10::cuda::getCurrentCUDAStream().stream()); };
  }
#endif
  else {
    throw Error("Gemv: unknown backend " + backend);
  }

  iteration();
  at::Tensor wd = w.to(at::kDouble);
  at::Tensor xd = x.to(at::kDouble);
  at::Tensor expected = at::matmul(wd, xd);
  expect_close(y, expected, dot_tolerance(d, rms(wd), rms(xd)), "Gemv output");
  wd.reset();

  time_iterations(state, iteration, families::gemv_work(d, dtype));
}

std::vector<std::string> gemv_gpu_backends(c10::ScalarType dtype) {
  if (dtype == c10::kBFloat16) return {"cublas", "cuda"};
  return {"cuda"};
}

// GPU: the seed's shapes. CPU: small ones so CI runs the aten backend end to end in seconds; the
// cublas and cuda backends are registered only where they can run (a CUDA device).
void register_gemv(const DeviceInfo& device) {
  families::register_gemv_like(device, "Gemv", gemv_gpu_backends, run_gemv);
}

}  // namespace

OPBENCH_FAMILY(Gemv, register_gemv);

}  // namespace opbench
