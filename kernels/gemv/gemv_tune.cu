// The GEMV's tuner entry (kernels/tune/tune.h): on the seed's shapes and the decode models' (Llama-2-7B,
// Mixtral-8x7B), bf16, int8 and int4 weights, every vector_kernel configuration below (int4 also its own
// list; int4 and int8 the tensor-core kernel's), the exact-fit row and paired-gather kernels whose span is the
// case's width (bf16 and int8), then the library's launch (launch_gemv, its configuration in the name),
// each checked against gemv_reference first (for int4, of the dequantized weights in float64). Every
// launch here is ordinary, not programmatic.
#include <ATen/ATen.h>
#include <cuda_bf16.h>

#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/common/launch_rules.h"
#include "kernels/gemv/gemv.h"
#include "kernels/gemv/gemv_configs.h"
#include "kernels/gemv/gemv_kernels.cuh"
#include "kernels/gemv/gemv_mma.cuh"
#include "kernels/gemv/gemv_reference.h"
#include "kernels/gemv/int4_weights.h"
#include "kernels/tune/tune.h"
#include "opbench/reference.h"

namespace opbench::kernels {
namespace {

using bf16 = __nv_bfloat16;
using gemv::kWarpSize;
using gemv::Params;

// The table's vector configurations and others; with min_blocks, registers for full occupancy and x
// loaded with W.
constexpr GemvConfig kVectorConfigs[] = {
    vector_config(8, 4, 2, 2),      vector_config(8, 8, 1, 2),      vector_config(8, 8, 1, 4),
    vector_config(8, 8, 2, 1),      vector_config(8, 8, 2, 2),      vector_config(8, 2, 2, 2),
    vector_config(8, 4, 4, 1),      vector_config(16, 16, 1, 1),    vector_config(16, 16, 1, 2),
    vector_config(16, 16, 2, 1),    vector_config(4, 4, 2, 2),      vector_config(4, 2, 2, 2),
    vector_config(4, 4, 1, 2),      vector_config(2, 2, 2, 2),      vector_config(1, 1, 2, 4),
    vector_config(8, 8, 1, 2, 8),   vector_config(8, 8, 1, 4, 4),   vector_config(4, 4, 1, 4, 8),
    vector_config(4, 4, 1, 2, 16),  vector_config(16, 16, 1, 2, 4), vector_config(16, 16, 1, 1, 4),
    vector_config(2, 2, 2, 2, 16),  vector_config(32, 32, 1, 1, 2)};
// int4's own (a 16-byte load holds 32 weights and needs 64 bytes of x, so more rows a group share each x
// chunk's conversion and sums), timed besides kVectorConfigs on the int4 cases only.
constexpr GemvConfig kInt4VectorConfigs[] = {
    vector_config(8, 2, 4, 1),     vector_config(8, 2, 4, 2),     vector_config(8, 4, 4, 1),
    vector_config(8, 4, 4, 2),     vector_config(8, 1, 4, 2),     vector_config(4, 1, 4, 2),
    vector_config(4, 2, 4, 2),     vector_config(8, 1, 8, 1),     vector_config(8, 2, 8, 1),
    vector_config(4, 4, 4, 1),     vector_config(16, 4, 4, 1),    vector_config(8, 1, 2, 4),
    vector_config(8, 2, 2, 4),     vector_config(4, 1, 2, 4),     vector_config(8, 4, 2, 4),
    vector_config(8, 8, 2, 2),     vector_config(8, 2, 4, 2, 2),  vector_config(8, 4, 4, 1, 4),
    vector_config(4, 1, 4, 2, 4),  vector_config(8, 2, 2, 4, 2),  vector_config(8, 1, 8, 1, 2)};
// The exact-fit kernels: row_kernel (a plain GEMV) and gather_pair_kernel (a gather of two slices that
// share x), each run where its span is the case's width.
constexpr GemvConfig kRowConfigs[] = {
    exact_row_config(16, 4, 2), exact_row_config(16, 4, 0), exact_row_config(32, 2, 0), exact_row_config(8, 8, 0),
    exact_row_config(16, 2, 0), exact_row_config(16, 2, 4), exact_row_config(8, 4, 0),  exact_row_config(8, 4, 4),
    exact_row_config(4, 8, 8),  exact_row_config(8, 2, 0),  exact_row_config(8, 2, 8),  exact_row_config(4, 4, 8),
    exact_row_config(4, 4, 12), exact_row_config(4, 4, 0),  exact_row_config(16, 1, 0), exact_row_config(8, 1, 0),
    exact_row_config(4, 2, 0),  exact_row_config(4, 2, 16)};
constexpr GemvConfig kPairConfigs[] = {
    gather_pair_config(16, 4, 2), gather_pair_config(16, 4, 0), gather_pair_config(8, 8, 0), gather_pair_config(16, 2, 3),
    gather_pair_config(8, 4, 4),  gather_pair_config(16, 2, 0), gather_pair_config(4, 8, 0), gather_pair_config(4, 8, 8),
    gather_pair_config(16, 2, 4), gather_pair_config(8, 4, 0),  gather_pair_config(4, 4, 8), gather_pair_config(16, 1, 0),
    gather_pair_config(8, 2, 8),  gather_pair_config(8, 2, 0),  gather_pair_config(4, 4, 0), gather_pair_config(4, 8, 4),
    gather_pair_config(8, 4, 6),  gather_pair_config(4, 4, 12)};

// int4 and int8 on tensor cores (gemv_mma.cuh): warps, tiles of 16 rows a block, units a warp step.
constexpr GemvConfig kMmaConfigs[] = {
    mma_config(8, 1, 2),  mma_config(8, 1, 1), mma_config(8, 1, 4),  mma_config(4, 1, 2),
    mma_config(4, 1, 4),  mma_config(16, 1, 2), mma_config(8, 2, 2), mma_config(8, 2, 1),
    mma_config(16, 2, 2), mma_config(16, 4, 1), mma_config(8, 4, 2)};

using Launch = void (*)(const Params&, unsigned selected, cudaStream_t);

// As launch_gemv: without a gather, bf16 (and the bounded configurations) run the kernel without the
// expert's code. kConfigs[I]: the configuration (kVectorConfigs or kInt4VectorConfigs).
template <typename T, const auto& kConfigs, int I>
void launch_vector(const Params& p, unsigned selected, cudaStream_t s) {
  constexpr GemvConfig c = kConfigs[I];
  constexpr bool kBounded = c.min_blocks > 0;
  constexpr auto kStore = GemvEpilogue::kStore;
  const dim3 grid(gemv::vector_blocks<c.warps, c.group, c.rows>(p.rows), selected), block(c.warps * kWarpSize);
  if (p.expert_idx == nullptr && (sizeof(T) == 2 || kBounded))
    gemv::vector_kernel<T, c.warps, c.group, c.rows, c.steps, false, false, false, kStore, c.min_blocks, kBounded>
        <<<grid, block, 0, s>>>(p);
  else
    gemv::vector_kernel<T, c.warps, c.group, c.rows, c.steps, true, false, false, kStore, c.min_blocks, kBounded>
        <<<grid, block, 0, s>>>(p);
}
template <typename T, int I>
void launch_row(const Params& p, unsigned, cudaStream_t s) {
  constexpr GemvConfig c = kRowConfigs[I];
  gemv::row_kernel<T, c.warps, c.chunks, c.min_blocks><<<static_cast<unsigned>(p.rows), c.warps * kWarpSize, 0, s>>>(p);
}
template <typename T, int I>
void launch_pair(const Params& p, unsigned, cudaStream_t s) {
  constexpr GemvConfig c = kPairConfigs[I];
  gemv::gather_pair_kernel<T, c.warps, c.chunks, c.min_blocks>
      <<<static_cast<unsigned>(p.rows), c.warps * kWarpSize, 0, s>>>(p);
}
template <typename T, int I>
void launch_mma(const Params& p, unsigned selected, cudaStream_t s) {
  constexpr GemvConfig c = kMmaConfigs[I];
  constexpr auto kStore = GemvEpilogue::kStore;
  const dim3 grid(gemv::mma_blocks<c.tiles>(p.rows, false), selected), block(c.warps * kWarpSize);
  const size_t shared = gemv::mma_shared_bytes<T>(p.cols);
  constexpr auto kPlain = gemv::mma_kernel<T, c.warps, c.tiles, c.steps, false, false, false, kStore>;
  constexpr auto kGather = gemv::mma_kernel<T, c.warps, c.tiles, c.steps, true, false, false, kStore>;
  if (p.expert_idx == nullptr) {
    gemv::allow_mma_shared_bytes<kPlain>();
    kPlain<<<grid, block, shared, s>>>(p);
  } else {
    gemv::allow_mma_shared_bytes<kGather>();
    kGather<<<grid, block, shared, s>>>(p);
  }
}
// Every configuration of each list, compiled for weights of type T.
template <typename T, const auto& kConfigs, int... I>
std::array<Launch, sizeof...(I)> vector_launches(std::integer_sequence<int, I...>) {
  return {&launch_vector<T, kConfigs, I>...};
}
template <typename T, int... I>
std::array<Launch, sizeof...(I)> row_launches(std::integer_sequence<int, I...>) {
  return {&launch_row<T, I>...};
}
template <typename T, int... I>
std::array<Launch, sizeof...(I)> pair_launches(std::integer_sequence<int, I...>) {
  return {&launch_pair<T, I>...};
}
template <typename T, int... I>
std::array<Launch, sizeof...(I)> mma_launches(std::integer_sequence<int, I...>) {
  return {&launch_mma<T, I>...};
}
template <typename Configs>
constexpr auto indices(const Configs&) {
  return std::make_integer_sequence<int, static_cast<int>(std::extent_v<Configs>)>{};
}

// A case: a plain GEMV (experts 0) or a gather of `selected` of `experts`, one x for all (shared_x) or one
// each.
struct GemvCase {
  const char* name;
  int64_t rows, cols, selected, experts;
  bool shared_x;
};
const GemvCase kCases[] = {
    {"Gemv/1024", 1024, 1024, 1, 0, true},          {"Gemv/4096", 4096, 4096, 1, 0, true},
    {"Gemv/8192", 8192, 8192, 1, 0, true},          {"Gemv/16384", 16384, 16384, 1, 0, true},
    {"GatherGemv/1024", 1024, 1024, 2, 8, true},    {"GatherGemv/4096", 4096, 4096, 2, 8, true},
    {"GatherGemv/8192", 8192, 8192, 2, 8, true},    {"GatherGemv/16384", 16384, 16384, 2, 8, true},
    {"llama.wqkv/12288x4096", 12288, 4096, 1, 0, true}, {"llama.w13/22016x4096", 22016, 4096, 1, 0, true},
    {"llama.w2/4096x11008", 4096, 11008, 1, 0, true},   {"llama.output/32000x4096", 32000, 4096, 1, 0, true},
    {"mixtral.wqkv/6144x4096", 6144, 4096, 1, 0, true}, {"mixtral.w13/2of8x28672x4096", 28672, 4096, 2, 8, true},
    {"mixtral.w2/2of8x4096x14336", 4096, 14336, 2, 8, false}};

// The case's weights (int8 uniform in [-127, 127], bf16 randn, int4 random_int4 as the int4 bench cases
// make them), x, indices [3, experts - 1] and output.
struct Inputs {
  at::Tensor w, x, idx, y;
  Int4Weights w4;   // int4 only: w is w4.packed
  Params params;
  GemvArgs args;   // the library's launch of the same GEMV
};
Inputs inputs_for(const GemvCase& gc, WeightType w_type) {
  auto cuda = at::TensorOptions().device(at::kCUDA);
  const int64_t experts = gc.experts ? gc.experts : 1, x_rows = gc.shared_x ? 1 : gc.selected;
  Inputs in;
  if (w_type == WeightType::kInt4) {
    in.w4 = random_int4({experts, gc.rows, gc.cols}, 0.02, at::kCUDA);
    in.w = in.w4.packed;
  } else {
    in.w = w_type == WeightType::kInt8 ? at::randint(-127, 128, {experts, gc.rows, gc.cols}, cuda.dtype(at::kChar))
                                       : at::randn({experts, gc.rows, gc.cols}, cuda.dtype(at::kBFloat16));
  }
  in.x = at::randn({x_rows, gc.cols}, cuda.dtype(at::kBFloat16));
  in.idx = at::tensor(std::vector<int64_t>{3, experts - 1}, cuda.dtype(at::kLong)).narrow(0, 0, gc.selected);
  in.y = at::empty({gc.selected, gc.rows}, cuda.dtype(at::kBFloat16));
  GemvArgs& a = in.args;
  a.w = in.w.data_ptr();
  a.w_type = w_type;
  if (w_type == WeightType::kInt4) a.group_qparams = in.w4.qparams.data_ptr();
  a.rows = gc.rows;
  a.cols = a.row_stride = gc.cols;
  a.x = in.x.data_ptr();
  a.x_stride = gc.shared_x ? 0 : gc.cols;
  a.y = in.y.data_ptr();
  if (gc.experts) {
    a.expert_idx = in.idx.data_ptr<int64_t>();
    a.num_selected = gc.selected;
    a.expert_stride = gc.rows * gc.cols;
    a.num_experts = gc.experts;
  }
  in.params = Params{a.w,          a.rows,           a.cols,
                     a.row_stride, static_cast<const bf16*>(a.x), a.x_stride,
                     static_cast<bf16*>(a.y), a.expert_idx, a.expert_stride,
                     a.num_experts, nullptr,       0,
                     static_cast<const __nv_bfloat162*>(a.group_qparams)};
  return in;
}

// The weights the case's slices read, as the reference takes them: [rows, cols] or [slices, rows, cols];
// int4 dequantized in float64 (selected first: a float64 copy of every expert would not fit).
at::Tensor reference_weights(const Inputs& in, const GemvCase& gc, WeightType w_type) {
  if (w_type != WeightType::kInt4) return gc.experts ? in.w.index_select(0, in.idx) : in.w[0];
  const Int4Weights w4 = gc.experts ? Int4Weights{in.w4.packed.index_select(0, in.idx), in.w4.qparams.index_select(0, in.idx)}
                                    : Int4Weights{in.w4.packed[0], in.w4.qparams[0]};
  return dequantize_int4(w4, at::kDouble);
}

const char* dtype_name(WeightType w_type) {
  return w_type == WeightType::kInt4 ? "int4" : w_type == WeightType::kInt8 ? "int8" : "bf16";
}

template <typename T>
void tune_case(tune::Tuner& tuner, const GemvCase& gc, WeightType w_type) {
  constexpr bool kInt4 = std::is_same_v<T, gemv::Int4>;
  Inputs in = inputs_for(gc, w_type);
  const at::Tensor x = gc.shared_x ? in.x[0] : in.x;
  at::Tensor expected;
  Tolerance tol{};
  {   // the float64 weights freed before the timing
    const at::Tensor w = reference_weights(in, gc, w_type);
    expected = gemv_reference(w, x).reshape(in.y.sizes()).cpu();
    tol = gemv_tolerance(w, x);
  }
  const double slices = static_cast<double>(gc.selected);
  const double bytes = kInt4 ? int4_weight_bytes(gc.rows, gc.cols) * slices
                             : static_cast<double>(gc.rows * gc.cols) * slices * static_cast<double>(sizeof(T));
  const tune::Case c{"gemv", dtype_name(w_type), gc.name, bytes};
  auto reset = [&] { in.y.fill_(NAN); };
  auto check = [&] { expect_close(in.y, expected, tol, gc.name); };
  const unsigned selected = static_cast<unsigned>(gc.selected);
  auto run_list = [&](const auto& configs, const auto& list, bool exact_fit) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (exact_fit && configs[i].span(w_type) != gc.cols) continue;
      tuner.run(c, gemv_config_name(configs[i]), reset, [&](cudaStream_t s) { list[i](in.params, selected, s); },
                check);
    }
  };
  run_list(kVectorConfigs, vector_launches<T, kVectorConfigs>(indices(kVectorConfigs)), false);
  if constexpr (!std::is_same_v<T, bf16>)
    if (mma_fits(w_type, gc.cols)) run_list(kMmaConfigs, mma_launches<T>(indices(kMmaConfigs)), false);
  if constexpr (kInt4) {
    run_list(kInt4VectorConfigs, vector_launches<T, kInt4VectorConfigs>(indices(kInt4VectorConfigs)), false);
  } else {   // the exact-fit kernels take bf16 and int8 only
    if (gc.experts == 0) run_list(kRowConfigs, row_launches<T>(indices(kRowConfigs)), true);
    if (gc.experts != 0 && gc.selected == 2 && gc.shared_x)
      run_list(kPairConfigs, pair_launches<T>(indices(kPairConfigs)), true);
  }
  const std::string picks = gemv_config_name(gemv_config(current_launch_rules(), in.args, false));
  tuner.run(c, "launch(" + picks + ")", reset, [&](cudaStream_t s) { launch_gemv(in.args, s); }, check);
}

}  // namespace
}  // namespace opbench::kernels

OPBENCH_TUNE_ENTRY(gemv) {
  using namespace opbench::kernels;
  for (WeightType w_type : {WeightType::kBf16, WeightType::kInt8, WeightType::kInt4})
    for (const GemvCase& gc : kCases) {
      if (tuner.options().only_cols > 0 && gc.cols != tuner.options().only_cols) continue;
      if (!tuner.options().only_weights.empty() && tuner.options().only_weights != dtype_name(w_type)) continue;
      if (w_type == WeightType::kInt4)
        tune_case<gemv::Int4>(tuner, gc, w_type);
      else if (w_type == WeightType::kInt8)
        tune_case<int8_t>(tuner, gc, w_type);
      else
        tune_case<bf16>(tuner, gc, w_type);
    }
}
