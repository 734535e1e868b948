// RMSNorm: y = x * rsqrt(mean(x^2) + eps) * w over the last dim of x (BS x D), eps 1e-5 -- the
// normalization of Llama-style decoders (experiment rms_norm). A bandwidth-bound op: its figure of
// merit is GB/s against the device's HBM bandwidth and this run's copy ceiling.
//
// Backends:
//   aten  the composite ops as Llama's reference writes them: x.float(), x * rsqrt(x.pow(2).mean(-1,
//         keepdim) + eps), .type_as(x), * w -- several kernels and fp32 intermediates, as eager runs it.
//   cuda  opbench's own kernel (kernels/row_norm/row_norm.h): x read from memory once.
//   inductor  the same composite as rms_norm.py spells it, compiled by AOTInductor (opbench/inductor.h).
// Bytes per iteration: x read once + y written once = 2 * BS * D * itemsize. w (D * itemsize) is read
// too but not counted (< 0.05% at BS = 4096), as for LayerNorm.
// Inputs: x, w = randn (never zeros). Check: against the kernel's float64 reference (the same formula,
// kernels/row_norm/row_norm_reference.h) on the same (rounded) inputs, per-dtype tolerances
// (reference.h); both backends round the normalized value to the dtype before the weight multiply, as
// Llama's reference does, which is within them.
#include <ATen/TensorOperators.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/rsqrt.h>

#include "common/common.h"
#include "kernels/row_norm/row_norm_reference.h"
#include "opbench/check.h"
#include "opbench/family.h"
#include "opbench/inductor.h"
#include "opbench/reference.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include "kernels/row_norm/row_norm.h"
#endif

namespace opbench {
namespace {

constexpr double kRmsNormEps = 1e-5;

// Llama's RMSNorm: normalize in fp32, round to the input dtype, then multiply by the weight.
at::Tensor rms_norm_composite(const at::Tensor& x, const at::Tensor& w) {
  at::Tensor xf = x.to(at::kFloat);
  at::Tensor normed = xf * at::rsqrt(xf.pow(2).mean({-1}, /*keepdim=*/true) + kRmsNormEps);
  return normed.to(x.scalar_type()) * w;
}

void run_rms_norm(CaseContext& ctx) {
  const CaseInfo& c = ctx.info();
  const int64_t batch = c.dims[0], dim = c.dims[1];
  auto options = at::TensorOptions().dtype(c.scalar_type).device(ctx.device());
  at::Tensor x = at::randn({batch, dim}, options);
  at::Tensor w = at::randn({dim}, options);
  at::Tensor y = at::empty_like(x);
  std::function<void()> iteration;
  if (c.backend == "aten") {
    iteration = [&] { y = rms_norm_composite(x, w); };
  } else if (c.backend == "inductor") {
    auto package = inductor::Package::open(ctx);
    iteration = [&, package] { y = package->run({x, w})[0]; };
  }
#ifdef OPBENCH_HAVE_CUDA
  else if (c.backend == "cuda") {
    kernels::NormArgs args = kernels::norm_args(x, w, at::Tensor(), y, kRmsNormEps);
    iteration = [&, args] { kernels::launch_rms_norm(args, c10::cuda::getCurrentCUDAStream().stream()); };
  }
#endif
  else {
    throw Error("RMSNorm: unknown backend " + c.backend);
  }

  ctx.check_and_time(iteration, [&] {
    expect_close(y, kernels::rms_norm_reference(x, w, kRmsNormEps), tolerance_for(c.scalar_type), "RMSNorm output");
  });
}

}  // namespace

OPBENCH_FAMILY(RMSNorm) {
  return families::norm_family("RMSNorm", "y = x * rsqrt(mean(x^2) + eps) * w over the last dim of x (BS x D): Llama's norm, GB/s",
                               "rms_norm", run_rms_norm, "rms_norm/rms_norm.py");
}

}  // namespace opbench
