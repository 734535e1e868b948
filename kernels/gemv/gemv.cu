// GEMV launch: argument checks, the configuration the table picks (gemv_configs.h), the launch
// (gemv_kernels.cuh has the kernels; gemv_args.h says what they compute).
#include <cuda_bf16.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels/common/launch.cuh"
#include "kernels/common/launch_rules.h"
#include "kernels/gemv/gemv.h"
#include "kernels/gemv/gemv_configs.h"
#include "kernels/gemv/gemv_kernels.cuh"
#include "kernels/gemv/gemv_mma.cuh"
#include "opbench/check.h"

namespace opbench::kernels {
namespace {

using gemv::kScalarWarps;
using gemv::kVectorBytes;
using gemv::kWarpSize;
using gemv::Params;

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0; }

Params params_of(const GemvArgs& a) {
  return Params{a.w,
                a.rows,
                a.cols,
                a.row_stride,
                static_cast<const __nv_bfloat16*>(a.x),
                a.x_stride,
                static_cast<__nv_bfloat16*>(a.y),
                a.expert_idx,
                a.expert_stride,
                a.num_experts,
                static_cast<const __nv_bfloat16*>(a.row_scale),
                a.row_scale_expert_stride,
                static_cast<const __nv_bfloat162*>(a.group_qparams),
                static_cast<const __nv_bfloat16*>(a.fusion.norm_w),
                a.fusion.norm_eps,
                a.fusion.rope};
}

bool pairs_rows(const GemvArgs& a) {
  return a.fusion.epilogue == GemvEpilogue::kSwiglu || a.fusion.epilogue == GemvEpilogue::kRopeCache;
}

// The launch is programmatic (asked for, and the device supports it).
bool runs_programmatic(const GemvArgs& a) { return a.programmatic && programmatic_launch_supported(); }

// The fusions' own argument rules (gemv_args.h); "" when they hold.
std::string fusion_error(const GemvArgs& a, bool vectorized) {
  const GemvFusion& f = a.fusion;
  if ((f.norm_w != nullptr || f.epilogue != GemvEpilogue::kStore) && !vectorized)
    return "fusions need the vector path (aligned W and x, cols a multiple of the vector width)";
  if (f.norm_w != nullptr && !aligned(f.norm_w)) return "norm_w not 16-byte aligned";
  if (pairs_rows(a) && a.rows % 2 != 0) return "the swiglu and rope epilogues need an even row count";
  if (f.epilogue == GemvEpilogue::kRopeCache) {
    const RopeCacheOut& r = f.rope;
    if (!r.pos || !r.cos || !r.sin || !r.k_cache || !r.v_cache) return "rope epilogue: null pointer";
    if (r.head_dim <= 0 || r.head_dim % 2 != 0 || r.max_len <= 0) return "rope epilogue: bad head_dim or max_len";
    if (r.q_rows % r.head_dim != 0 || r.kv_rows % r.head_dim != 0 || a.rows != r.q_rows + 2 * r.kv_rows)
      return "rope epilogue: rows must be q_rows + 2 kv_rows, whole heads";
    if (a.expert_idx != nullptr) return "rope epilogue: no gather";
  }
  return "";
}

// int4's own argument rules (gemv_args.h: whole groups, qparams and no row scale); "" when they hold.
std::string int4_error(const GemvArgs& a) {
  if (a.w_type != WeightType::kInt4) return "";
  if (a.group_qparams == nullptr) return "int4 weights need group_qparams";
  if (a.row_scale != nullptr) return "int4 weights take group qparams, not row_scale";
  if (a.cols % kInt4GroupSize != 0 || a.row_stride % kInt4GroupSize != 0 ||
      (a.expert_idx != nullptr && a.expert_stride % kInt4GroupSize != 0))
    return "int4: cols, row_stride and expert_stride must be multiples of the group size 128";
  if (reinterpret_cast<uintptr_t>(a.group_qparams) % 4 != 0) return "int4: group_qparams not 4-byte aligned";
  return "";
}

// One vector-path configuration (gemv_kernels.cuh): blocks of kWarps warps in row groups of kGroup warps,
// kRows rows a group, kSteps column steps in flight.
template <int kWarps, int kGroup, int kRows, int kSteps>
struct Config {
  static constexpr bool mma = false;
  static constexpr int warps = kWarps, group = kGroup, rows = kRows, steps = kSteps;
};
// A tensor-core configuration (gemv_mma.cuh): its tiles pair rows, as the paired epilogues need.
template <int kWarps, int kTiles, int kSteps>
struct MmaConfig {
  static constexpr bool mma = true;
  static constexpr int warps = kWarps, tiles = kTiles, rows = 2, steps = kSteps;
};

// The kernel of one configuration, prologue and epilogue: fusions and the programmatic launch's code are
// template parameters, so the plain GEMV runs none of their code.
template <typename T, typename C, bool kMayGather, bool kProgrammatic, bool kNorm, GemvEpilogue kEpilogue>
void launch_fused(const GemvArgs& a, cudaStream_t stream) {
  const unsigned slices = static_cast<unsigned>(a.num_selected);
  if constexpr (C::mma) {
    const dim3 grid(gemv::mma_blocks<C::tiles>(a.rows, kEpilogue == GemvEpilogue::kSwiglu), slices);
    constexpr auto kKernel = gemv::mma_kernel<T, C::warps, C::tiles, C::steps, kMayGather, kProgrammatic, kNorm, kEpilogue>;
    gemv::allow_mma_shared_bytes<kKernel>();
    launch_kernel(kKernel, grid, dim3(C::warps * kWarpSize), gemv::mma_shared_bytes<T>(a.cols), stream, a.programmatic,
                  params_of(a));
  } else {
    const dim3 grid(gemv::vector_blocks<C::warps, C::group, C::rows>(a.rows), slices);
    launch_kernel(gemv::vector_kernel<T, C::warps, C::group, C::rows, C::steps, kMayGather, kProgrammatic, kNorm, kEpilogue>,
                  grid, dim3(C::warps * kWarpSize), 0, stream, a.programmatic, params_of(a));
  }
}

template <typename T, typename C, bool kMayGather, bool kProgrammatic, bool kNorm>
void launch_epilogue(const GemvArgs& a, cudaStream_t stream) {
  switch (a.fusion.epilogue) {
    case GemvEpilogue::kStore: return launch_fused<T, C, kMayGather, kProgrammatic, kNorm, GemvEpilogue::kStore>(a, stream);
    case GemvEpilogue::kAddToY: return launch_fused<T, C, kMayGather, kProgrammatic, kNorm, GemvEpilogue::kAddToY>(a, stream);
    case GemvEpilogue::kSwiglu:
    case GemvEpilogue::kRopeCache:
      if constexpr (C::rows == 2) {
        if (a.fusion.epilogue == GemvEpilogue::kSwiglu)
          return launch_fused<T, C, kMayGather, kProgrammatic, kNorm, GemvEpilogue::kSwiglu>(a, stream);
        return launch_fused<T, C, kMayGather, kProgrammatic, kNorm, GemvEpilogue::kRopeCache>(a, stream);
      }
  }
  throw Error("launch_gemv: the paired epilogues need a configuration of two rows a group");
}

// Only a programmatic launch's kernel carries the launch-control instructions and the early reads
// (gemv_kernels.cuh, gemv_mma.cuh).
template <typename T, typename C, bool kMayGather, bool kProgrammatic>
void launch_prologue(const GemvArgs& a, cudaStream_t stream) {
  if (a.fusion.norm_w != nullptr)
    launch_epilogue<T, C, kMayGather, kProgrammatic, true>(a, stream);
  else
    launch_epilogue<T, C, kMayGather, kProgrammatic, false>(a, stream);
}

// The table gives the tensor cores programmatic launches only (gemv_configs.h asserts it), so their
// kernels for ordinary launches are not compiled.
template <typename T, typename C, bool kMayGather>
void launch_by_mode(const GemvArgs& a, cudaStream_t stream) {
  if (runs_programmatic(a)) return launch_prologue<T, C, kMayGather, true>(a, stream);
  if constexpr (C::mma)
    throw Error("launch_gemv: a tensor-core configuration for an ordinary launch");
  else
    launch_prologue<T, C, kMayGather, false>(a, stream);
}

// A bf16 GEMV without a gather runs a kernel without the expert's code: half the instructions before the
// first load of W (80 -> 40 on sm_90). int8 and the gathers keep the one kernel: compiled without that
// code, they hold other registers (int8 46 instead of 64, gathers 36 instead of 32) and run slower. The
// tensor-core kernel has both.
// kGathers: the table row may take gathers; a row that takes none compiles no gather kernel.
template <typename T, typename C, bool kGathers>
void launch_vector(const GemvArgs& a, cudaStream_t stream) {
  if constexpr (std::is_same_v<T, __nv_bfloat16> || C::mma || !kGathers)
    if (a.expert_idx == nullptr) return launch_by_mode<T, C, false>(a, stream);
  if constexpr (kGathers)
    launch_by_mode<T, C, true>(a, stream);
  else
    throw Error("launch_gemv: a gather under a table row for GEMVs without one");
}

// The exact-fit kernels (gemv_kernels.cuh): a block per row, an ordinary launch.
template <typename T, int kWarps, int kChunks, int kMinBlocks>
void launch_row_kernel(const GemvArgs& a, cudaStream_t stream) {
  launch_kernel(gemv::row_kernel<T, kWarps, kChunks, kMinBlocks>, dim3(static_cast<unsigned>(a.rows)),
                dim3(kWarps * kWarpSize), 0, stream, false, params_of(a));
}
template <typename T, int kWarps, int kChunks, int kMinBlocks>
void launch_gather_pair(const GemvArgs& a, cudaStream_t stream) {
  launch_kernel(gemv::gather_pair_kernel<T, kWarps, kChunks, kMinBlocks>, dim3(static_cast<unsigned>(a.rows)),
                dim3(kWarps * kWarpSize), 0, stream, false, params_of(a));
}

// kGemvRules[kRule]'s configuration, compiled for the rule's weight type only.
template <typename T, int kRule>
void launch_rule(const GemvArgs& a, cudaStream_t stream) {
  constexpr GemvRule rule = kGemvRules[kRule];
  constexpr GemvConfig c = rule.config;
  constexpr bool kGathers = rule.when.gathered != GemvCondition::kNo;
  if constexpr (rule.w_type != gemv::kWeightType<T>)
    throw Error("launch_gemv: table row " + std::to_string(kRule) + " is for the other weight type");
  else if constexpr (c.path == GemvPath::kVector)
    launch_vector<T, Config<c.warps, c.group, c.rows, c.steps>, kGathers>(a, stream);
  else if constexpr (c.path == GemvPath::kMma && !std::is_same_v<T, __nv_bfloat16>)
    launch_vector<T, MmaConfig<c.warps, c.tiles, c.steps>, kGathers>(a, stream);
  else if constexpr (std::is_same_v<T, gemv::Int4>)
    throw Error("launch_gemv: table row " + std::to_string(kRule) + " names an exact-fit kernel for int4");
  else if constexpr (c.path == GemvPath::kExactRow)
    launch_row_kernel<T, c.warps, c.chunks, c.min_blocks>(a, stream);
  else if constexpr (c.path == GemvPath::kGatherPair)
    launch_gather_pair<T, c.warps, c.chunks, c.min_blocks>(a, stream);
  else
    throw Error("launch_gemv: table row " + std::to_string(kRule) + " names the scalar kernel");
}

template <typename T, int... kRules>
void launch_rule_at(int rule, const GemvArgs& a, cudaStream_t stream, std::integer_sequence<int, kRules...>) {
  ((rule == kRules ? launch_rule<T, kRules>(a, stream) : void()), ...);
}

template <typename T>
void launch_typed(const GemvArgs& a, cudaStream_t stream) {
  const int rule = gemv_rule_index(current_launch_rules(), a, runs_programmatic(a));
  if (rule >= 0) return launch_rule_at<T>(rule, a, stream, std::make_integer_sequence<int, kGemvRuleCount>{});
  const dim3 grid(static_cast<unsigned>((a.rows + kScalarWarps - 1) / kScalarWarps), static_cast<unsigned>(a.num_selected));
  launch_kernel(gemv::scalar_kernel<T>, grid, dim3(kScalarWarps * kWarpSize), 0, stream, a.programmatic, params_of(a));
}

}  // namespace

void launch_gemv(const GemvArgs& a, cudaStream_t stream) {
  auto invalid = [](const std::string& why) { throw Error("launch_gemv: " + why); };
  if (a.w == nullptr || a.x == nullptr || a.y == nullptr) invalid("null pointer");
  if (a.rows <= 0 || a.cols <= 0) invalid("empty matrix");
  if (a.row_stride < a.cols) invalid("row_stride < cols");
  if (a.num_selected < 1 || a.num_selected > 65535) invalid("num_selected outside [1, 65535]");
  if (a.expert_idx == nullptr && a.num_selected != 1) invalid("num_selected > 1 needs expert_idx");
  if (a.expert_idx != nullptr && (a.num_experts < 1 || a.expert_stride < a.rows * a.row_stride))
    invalid("expert_stride or num_experts inconsistent with the matrix");
  if (a.x_stride != 0 && a.x_stride < a.cols) invalid("x_stride < cols");
  if (a.row_scale_expert_stride != 0 && (a.expert_idx == nullptr || a.row_scale_expert_stride < a.rows))
    invalid("row_scale_expert_stride needs expert_idx and >= rows");
  if ((a.rows + kScalarWarps - 1) / kScalarWarps > 0x7fffffff) invalid("too many rows");
  if (const std::string why = fusion_error(a, gemv_vectorizable(a)); !why.empty()) invalid(why);
  if (const std::string why = int4_error(a); !why.empty()) invalid(why);
  switch (a.w_type) {
    case WeightType::kInt4: return launch_typed<gemv::Int4>(a, stream);
    case WeightType::kInt8: return launch_typed<int8_t>(a, stream);
    case WeightType::kBf16: return launch_typed<__nv_bfloat16>(a, stream);
  }
  invalid("unknown weight type");
}

}  // namespace opbench::kernels
