// GatherGemv: out = W[idx].to(bf16) @ x with W (8 x D x D) in bf16 or int8, idx = [3, 5] (int64, on the
// device) and x (D,) in bf16; out is (2, D) -- the gpt-fast `gather_gemv` micro-benchmark (experiment
// gather_gemv), the expert-selection GEMV of a mixture-of-experts layer at batch 1 (Mixtral: 8
// experts, 2 chosen). Bandwidth-bound: GB/s of the two gathered matrices against HBM bandwidth.
//
// Backends:
//   aten  the seed's eager semantics: at::index(W, {idx}) (a copy of the two matrices), .to(bf16) (a
//         second copy for int8), at::matmul. Its GB/s, counted as the seed does, understates traffic.
//   cuda  opbench's own kernel (kernels/gemv/gemv.h) in gather mode: it reads idx on the device and runs the
//         GEMV on W + idx[e] * D * D for e = 0, 1 directly, no copies (int8: fused dequantize).
//   inductor  `W[idx].to(x.dtype) @ x` as gather_gemv.py spells it, compiled by AOTInductor
//         (opbench/inductor.h).
// Bytes: the two gathered matrices read once, 2*D*D*itemsize (the seed's count; x, idx and out are not
// counted: < 0.2% at D >= 1024). FLOPs 2*2*D*D (gather_gemv_work below).
// Inputs: bf16 W = randn; int8 W = uniform integers in [-127, 127]; x = randn.
// Check: against the kernel's float64 reference W.index_select(0, idx).to(double) @ x on the same device,
// rtol 1.6e-2 and atol 1.6e-2 * sqrt(D) * rms(W[idx]) * rms(x) (kernels/gemv/gemv_reference.h).
#include <ATen/core/List.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>

#include "common/common.h"
#include "kernels/gemv/gemv_reference.h"
#include "opbench/check.h"
#include "opbench/family.h"
#include "opbench/inductor.h"
#include "opbench/reference.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>

#include "kernels/gemv/gemv.h"
#endif

namespace opbench {
namespace {

constexpr int64_t kExperts = 8;    // W holds 8 matrices (Mixtral's experts) ...
constexpr int64_t kSelected = 2;   // ... of which idx = [3, 5] are gathered

void run_gather_gemv(CaseContext& ctx) {
  const c10::ScalarType dtype = ctx.info().scalar_type;
  const int64_t d = ctx.info().dims[0];
  const std::string& backend = ctx.info().backend;
  auto options = at::TensorOptions().device(ctx.device());
  at::Tensor w = families::random_weights({kExperts, d, d}, dtype, ctx.device());
  at::Tensor x = at::randn({d}, options.dtype(c10::kBFloat16));
  at::Tensor idx = at::tensor(std::vector<int64_t>{3, 5}, options.dtype(c10::kLong));
  at::Tensor out = at::empty({kSelected, d}, x.options());

  std::function<void()> iteration;
  if (backend == "aten") {
    c10::List<std::optional<at::Tensor>> indices;
    indices.push_back(idx);
    iteration = [&, indices] { out = at::matmul(at::index(w, indices).to(c10::kBFloat16), x); };
  } else if (backend == "inductor") {
    auto package = inductor::Package::open(ctx);
    iteration = [&, package] { out = package->run({w, idx, x})[0]; };
  }
#ifdef OPBENCH_HAVE_CUDA
  else if (backend == "cuda") {
    auto w_type = dtype == c10::kChar ? kernels::WeightType::kInt8 : kernels::WeightType::kBf16;
    kernels::GemvArgs args =
        kernels::square_gemv_args(w.data_ptr(), w_type, d, x.data_ptr(), out.data_ptr());
    args.expert_idx = idx.data_ptr<int64_t>();
    args.num_selected = kSelected;
    args.expert_stride = d * d;
    args.num_experts = kExperts;
    iteration = [&, args] { kernels::launch_gemv(args, c10::cuda::getCurrentCUDAStream().stream()); };
  }
#endif
  else {
    throw Error("GatherGemv: unknown backend " + backend);
  }

  ctx.check_and_time(iteration, [&] {
    at::Tensor selected = w.index_select(0, idx);
    expect_close(out, kernels::gemv_reference(selected, x), kernels::gemv_tolerance(selected, x), "GatherGemv output");
  });
}

// The kSelected gathered matrices read once: kSelected*D*D*itemsize(W) (the seed's count; x, idx and
// out are not counted). FLOPs kSelected*2*D*D.
Work gather_gemv_work(c10::ScalarType weight_dtype, const Dims& dims) {
  const double d = static_cast<double>(dims[0]);
  return {kSelected * d * d * c10::elementSize(weight_dtype), 0, kSelected * 2.0 * d * d};
}

}  // namespace

OPBENCH_FAMILY(GatherGemv) {
  return {.name = "GatherGemv", .summary = "out = W[idx].to(bf16) @ x, W 8 x D x D, idx [3, 5]: gpt-fast's gather_gemv, GB/s",
          .experiments = {{"gather_gemv", Metric::kMemoryBandwidth}}, .dtypes = {c10::kBFloat16, c10::kChar},
          .gpu_shapes = families::gemv_gpu_shapes(), .cpu_shapes = families::gemv_cpu_shapes(),
          .backends = {{"aten"}, {"cuda", true}, {"inductor"}}, .work = gather_gemv_work, .run = run_gather_gemv,
          .python_module = "gather_gemv/gather_gemv.py"};
}

}  // namespace opbench
