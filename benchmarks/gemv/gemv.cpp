// Gemv: y = W.to(bf16) @ x with W (D x D) in bf16 or int8 and x (D,) in bf16 -- the gpt-fast `gemv`
// micro-benchmark (experiment gemv), the matrix-vector product at the heart of batch-1 decoding.
// Bandwidth-bound: its figure of merit is GB/s of W against the device's HBM bandwidth.
// int4: W as gpt-fast's int4 weight-only quantization holds it (kernels/gemv/int4_weights.h: groups of
// 128 along the input dimension, bf16 scale and zero per group, w = (q - 8) * scale + zero); D must be a
// multiple of 128 (the CPU's D = 64 case is skipped as unavailable).
//
// Backends:
//   aten    the seed's eager semantics, at::matmul(W.to(bf16), x). For int8 the .to() materializes a
//           bf16 copy of W every iteration (read 1 + write 2 + read 2 bytes per weight), so its GB/s,
//           counted on the int8 bytes as the seed does, understates the traffic: that is the point of
//           a fused kernel.
//   cublas  bf16 only: cublasGemmEx with n = 1 called directly (common/cublas_ops.h).
//   cuda    opbench's own kernel (kernels/gemv/gemv.h): a plain bf16 GEMV, and for int8 a fused
//           dequantize-and-multiply that reads the int8 weights once.
//   inductor  `W.to(x.dtype) @ x` as gemv.py spells it, compiled by AOTInductor (opbench/inductor.h).
//           bf16 and int8 only: gemv.py's `.to()` has no int4 spelling (an int4 tensor is a packed
//           layout plus qparams, not a dtype .to() converts).
//   int4:   aten  PyTorch's own int4 path as gpt-fast calls it: the weights converted once by
//                 _convert_weight_to_int4pack (inner-k tiles 8), each iteration _weight_int4pack_mm
//                 (on the CPU the _for_cpu variants);
//           cuda  the own GEMV's fused group dequantize (one read of each packed byte, 16-byte loads).
// Bytes: W read once, D*D*itemsize (the seed's count; x and y are not counted: < 0.4% at D >= 1024);
// int4: the packed weights (D*D/2), the groups' scales and zeros (D*D/128 * 4) and x and y (2*D each).
// FLOPs 2*D*D (gemv_work below).
// Inputs: bf16 W = randn; int8 W = uniform integers in [-127, 127] (the seed truncates randn to int8,
// mostly values in [-3, 3]; the bytes moved are the same); x = randn.
// Check: against the kernel's float64 reference W.to(double) @ x on the same device (int8: the
// dequantized weights, which bf16 holds exactly; int4: the weights dequantized in float64), rtol 1.6e-2 and atol 1.6e-2 * sqrt(D) * rms(W) * rms(x)
// (kernels/gemv/gemv_reference.h).
#include <ATen/ops/empty.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/randn.h>

#include "common/common.h"
#include "kernels/gemv/gemv_reference.h"
#include "kernels/gemv/int4_weights.h"
#include "opbench/check.h"
#include "opbench/family.h"
#include "opbench/inductor.h"
#include "opbench/reference.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include "common/cublas_ops.h"
#include "kernels/gemv/gemv.h"
#endif

namespace opbench {
namespace {

// The int4 cases: gpt-fast's int4 layout for aten, the own layout for cuda (see the top).
void run_gemv_int4(CaseContext& ctx) {
  const int64_t d = ctx.info().dims[0];
  const std::string& backend = ctx.info().backend;
  if (auto why = families::int4_width_unavailable(d)) return ctx.skip_unavailable(*why);
  const kernels::Int4Weights w = kernels::random_int4({d, d}, 0.02, ctx.device());
  at::Tensor x = at::randn({d}, at::TensorOptions().device(ctx.device()).dtype(c10::kBFloat16));
  at::Tensor y = at::empty({d}, x.options());
  std::function<void()> iteration;
  if (backend == "aten") {
    const kernels::AtenInt4 packed = kernels::aten_int4_layout(w);
    iteration = [&, packed] { y = kernels::aten_int4_mm(x.view({1, d}), packed).view({d}); };
  }
#ifdef OPBENCH_HAVE_CUDA
  else if (backend == "cuda") {
    kernels::GemvArgs args =
        kernels::square_gemv_args(w.packed.data_ptr(), kernels::WeightType::kInt4, d, x.data_ptr(), y.data_ptr());
    args.group_qparams = w.qparams.data_ptr();
    iteration = [&, args] { kernels::launch_gemv(args, c10::cuda::getCurrentCUDAStream().stream()); };
  }
#endif
  else {
    throw Error("Gemv int4: unknown backend " + backend);
  }
  const at::Tensor wd = kernels::dequantize_int4(w, c10::kDouble);
  ctx.check_and_time(iteration, [&] {
    expect_close(y, kernels::gemv_reference(wd, x), kernels::gemv_tolerance(wd, x), "Gemv int4 output");
  });
}

void run_gemv(CaseContext& ctx) {
  const c10::ScalarType dtype = ctx.info().scalar_type;
  if (dtype == c10::ScalarType::Int4) return run_gemv_int4(ctx);
  const int64_t d = ctx.info().dims[0];
  const std::string& backend = ctx.info().backend;
  at::Tensor w = families::random_weights({d, d}, dtype, ctx.device());
  at::Tensor x = at::randn({d}, at::TensorOptions().device(ctx.device()).dtype(c10::kBFloat16));
  at::Tensor y = at::empty({d}, x.options());

  std::function<void()> iteration;
  if (backend == "aten") {
    iteration = [&] { y = at::matmul(w.to(c10::kBFloat16), x); };
  } else if (backend == "inductor") {
    auto package = inductor::Package::open(ctx);
    iteration = [&, package] { y = package->run({w, x})[0]; };
  }
#ifdef OPBENCH_HAVE_CUDA
  else if (backend == "cublas") {
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

  ctx.check_and_time(iteration, [&] {
    expect_close(y, kernels::gemv_reference(w, x), kernels::gemv_tolerance(w, x), "Gemv output");
  });
}

// W read once: D*D*itemsize(W) (the seed's count; x and y, 2*D bytes each, are not: < 0.4% at
// D >= 1024). FLOPs 2*D*D, held against no compute peak (1 FLOP per byte at bf16, far below any
// GPU's ridge point).
Work gemv_work(c10::ScalarType weight_dtype, const Dims& dims) {
  if (weight_dtype == c10::ScalarType::Int4)
    return {kernels::int4_weight_bytes(dims[0], dims[0]) + 4.0 * dims[0], 0, 2.0 * dims[0] * dims[0]};
  return {static_cast<double>(dims[0]) * dims[0] * c10::elementSize(weight_dtype), 0, 2.0 * dims[0] * dims[0]};
}

}  // namespace

OPBENCH_FAMILY(Gemv) {
  return {.name = "Gemv", .summary = "y = W.to(bf16) @ x, W D x D bf16, int8 or int4 (groups of 128): gpt-fast's gemv, GB/s of W",
          .experiments = {{"gemv", Metric::kMemoryBandwidth}},
          .dtypes = {c10::kBFloat16, c10::kChar, c10::ScalarType::Int4},
          .gpu_shapes = families::gemv_gpu_shapes(), .cpu_shapes = families::gemv_cpu_shapes(),
          .backends = {{"aten"}, {"cublas", true, {c10::kBFloat16}}, {"cuda", true},
                       {"inductor", false, {c10::kBFloat16, c10::kChar}}},
          .work = gemv_work,
          .run = run_gemv, .python_module = "gemv/gemv.py"};
}

}  // namespace opbench
