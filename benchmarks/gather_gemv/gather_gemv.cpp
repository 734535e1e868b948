// GatherGemv: out = W[idx].to(bf16) @ x with W (8 x D x D) in bf16 or int8, idx = [3, 5] (int64, on the
// device) and x (D,) in bf16; out is (2, D) -- the gpt-fast `gather_gemv` micro-benchmark (experiment
// gather_gemv), the expert-selection GEMV of a mixture-of-experts layer at batch 1 (Mixtral: 8
// experts, 2 chosen). Bandwidth-bound: GB/s of the two gathered matrices against HBM bandwidth.
// int4: W as gpt-fast's int4 weight-only quantization holds it (kernels/gemv/int4_weights.h: groups of 128
// along the input dimension, bf16 scale and zero per group); D a multiple of 128 (else the case is
// skipped as unavailable).
//
// Backends:
//   aten  the seed's eager semantics: at::index(W, {idx}) (a copy of the two matrices), .to(bf16) (a
//         second copy for int8), at::matmul. Its GB/s, counted as the seed does, understates traffic.
//   cuda  opbench's own kernel (kernels/gemv/gemv.h) in gather mode: it reads idx on the device and runs the
//         GEMV on W + idx[e] * D * D for e = 0, 1 directly, no copies (int8: fused dequantize).
//   inductor  `W[idx].to(x.dtype) @ x` as gather_gemv.py spells it, compiled by AOTInductor
//         (opbench/inductor.h). bf16 and int8 only: `.to()` has no int4 spelling.
//   int4: aten  each expert converted once to PyTorch's int4 layout (_convert_weight_to_int4pack, inner-k
//         tiles 8, as gpt-fast); per iteration index_select of the two experts' packed weights and
//         qparams (the seed's copy), then _weight_int4pack_mm for each (the _for_cpu variants on the CPU);
//         cuda  the own GEMV gathering the packed experts by the device index, fused group dequantize.
// Bytes: the two gathered matrices read once, 2*D*D*itemsize (the seed's count; x, idx and out are not
// counted: < 0.2% at D >= 1024); int4: the two packed matrices (D*D/2 each) with their scales and zeros
// (D*D/128 * 4 each), x and out (2*D, 2*2*D). FLOPs 2*2*D*D (gather_gemv_work below).
// Inputs: bf16 W = randn; int8 W = uniform integers in [-127, 127]; x = randn.
// Check: against the kernel's float64 reference W.index_select(0, idx).to(double) @ x on the same device,
// rtol 1.6e-2 and atol 1.6e-2 * sqrt(D) * rms(W[idx]) * rms(x) (kernels/gemv/gemv_reference.h).
#include <ATen/core/List.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/tensor.h>

#include "common/common.h"
#include "kernels/gemv/gemv_reference.h"
#include "kernels/gemv/int4_weights.h"
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

#ifdef OPBENCH_HAVE_CUDA
// The own kernel in gather mode: kSelected of the kExperts D x D matrices at w, chosen by idx on the device.
kernels::GemvArgs gather_args(const void* w, kernels::WeightType w_type, int64_t d, const at::Tensor& x,
                              const at::Tensor& out, const at::Tensor& idx) {
  kernels::GemvArgs args = kernels::square_gemv_args(w, w_type, d, x.data_ptr(), out.data_ptr());
  args.expert_idx = idx.data_ptr<int64_t>();
  args.num_selected = kSelected;
  args.expert_stride = d * d;
  args.num_experts = kExperts;
  return args;
}
#endif

// The int4 cases (see the top).
void run_gather_gemv_int4(CaseContext& ctx) {
  const int64_t d = ctx.info().dims[0];
  const std::string& backend = ctx.info().backend;
  if (auto why = families::int4_width_unavailable(d)) return ctx.skip_unavailable(*why);
  auto options = at::TensorOptions().device(ctx.device());
  const kernels::Int4Weights w = kernels::random_int4({kExperts, d, d}, 0.02, ctx.device());
  at::Tensor x = at::randn({d}, options.dtype(c10::kBFloat16));
  at::Tensor idx = at::tensor(std::vector<int64_t>{3, 5}, options.dtype(c10::kLong));
  at::Tensor out = at::empty({kSelected, d}, x.options());
  std::function<void()> iteration;
  if (backend == "aten") {
    std::vector<at::Tensor> packed, qparams;
    for (int64_t e = 0; e < kExperts; ++e) {
      kernels::AtenInt4 one = kernels::aten_int4_layout({w.packed[e], w.qparams[e]});
      packed.push_back(one.packed);
      qparams.push_back(one.scales_and_zeros);
    }
    const at::Tensor all_packed = at::stack(packed), all_qparams = at::stack(qparams);
    iteration = [&, all_packed, all_qparams] {
      const at::Tensor p = all_packed.index_select(0, idx), q = all_qparams.index_select(0, idx);
      std::vector<at::Tensor> rows;
      for (int64_t s = 0; s < kSelected; ++s) rows.push_back(kernels::aten_int4_mm(x.view({1, d}), {p[s], q[s], d}));
      out = at::cat(rows, 0);
    };
  }
#ifdef OPBENCH_HAVE_CUDA
  else if (backend == "cuda") {
    kernels::GemvArgs args = gather_args(w.packed.data_ptr(), kernels::WeightType::kInt4, d, x, out, idx);
    args.group_qparams = w.qparams.data_ptr();
    iteration = [&, args] { kernels::launch_gemv(args, c10::cuda::getCurrentCUDAStream().stream()); };
  }
#endif
  else {
    throw Error("GatherGemv int4: unknown backend " + backend);
  }
  // the chosen experts only: all of them in float64 would take 8 x 8 B a weight (17 GB at D = 16384)
  const at::Tensor selected =
      kernels::dequantize_int4({w.packed.index_select(0, idx), w.qparams.index_select(0, idx)}, c10::kDouble);
  ctx.check_and_time(iteration, [&] {
    expect_close(out, kernels::gemv_reference(selected, x), kernels::gemv_tolerance(selected, x), "GatherGemv int4 output");
  });
}

void run_gather_gemv(CaseContext& ctx) {
  const c10::ScalarType dtype = ctx.info().scalar_type;
  if (dtype == c10::ScalarType::Int4) return run_gather_gemv_int4(ctx);
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
    const kernels::GemvArgs args = gather_args(w.data_ptr(), w_type, d, x, out, idx);
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
  if (weight_dtype == c10::ScalarType::Int4)
    return {kSelected * kernels::int4_weight_bytes(dims[0], dims[0]) + 2.0 * d + kSelected * 2.0 * d, 0,
            kSelected * 2.0 * d * d};
  return {kSelected * d * d * c10::elementSize(weight_dtype), 0, kSelected * 2.0 * d * d};
}

}  // namespace

OPBENCH_FAMILY(GatherGemv) {
  return {.name = "GatherGemv", .summary = "out = W[idx].to(bf16) @ x, W 8 x D x D, idx [3, 5]: gpt-fast's gather_gemv, GB/s",
          .experiments = {{"gather_gemv", Metric::kMemoryBandwidth}},
          .dtypes = {c10::kBFloat16, c10::kChar, c10::ScalarType::Int4},
          .gpu_shapes = families::gemv_gpu_shapes(), .cpu_shapes = families::gemv_cpu_shapes(),
          .backends = {{"aten"}, {"cuda", true}, {"inductor", false, {c10::kBFloat16, c10::kChar}}},
          .work = gather_gemv_work, .run = run_gather_gemv,
          .python_module = "gather_gemv/gather_gemv.py"};
}

}  // namespace opbench
