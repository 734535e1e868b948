// GEMV launch: argument checks, the choice of configuration, the launch (gemv_vector.cuh has the
// kernels and their mapping; gemv_kernel.h says what they compute).
#include <cuda_bf16.h>

#include <cstdint>
#include <string>

#include "common/gemv_vector.cuh"
#include "common/launch.cuh"
#include "common/launch_rules.h"
#include "gemv_kernel.h"
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
                static_cast<const __nv_bfloat16*>(a.fusion.norm_w),
                a.fusion.norm_eps,
                a.fusion.rope};
}

bool pairs_rows(const GemvArgs& a) {
  return a.fusion.epilogue == GemvEpilogue::kSwiglu || a.fusion.epilogue == GemvEpilogue::kRopeCache;
}

// A plain GEMV: no gather, no fusion.
bool plain(const GemvArgs& a) {
  return a.expert_idx == nullptr && a.fusion.norm_w == nullptr && a.fusion.epilogue == GemvEpilogue::kStore;
}

// The launch is programmatic (asked for, and the device supports it).
bool runs_programmatic(const GemvArgs& a) { return a.programmatic && programmatic_launch_supported(); }

// The fusions' own argument rules (gemv_kernel.h); "" when they hold.
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

// One vector-path configuration (gemv_vector.cuh): blocks of kWarps warps in row groups of kGroup warps,
// kRows rows a group, kSteps column steps in flight.
template <int kWarps, int kGroup, int kRows, int kSteps>
struct Config {
  static constexpr int warps = kWarps, group = kGroup, rows = kRows, steps = kSteps;
};

// The kernel of one configuration, prologue and epilogue: fusions and the programmatic launch's code are
// template parameters, so the plain GEMV runs none of their code.
template <typename T, typename C, bool kMayGather, bool kProgrammatic, bool kNorm, GemvEpilogue kEpilogue>
void launch_fused(const GemvArgs& a, cudaStream_t stream) {
  const dim3 grid(gemv::vector_blocks<C::warps, C::group, C::rows>(a.rows), static_cast<unsigned>(a.num_selected));
  launch_kernel(gemv::vector_kernel<T, C::warps, C::group, C::rows, C::steps, kMayGather, kProgrammatic, kNorm, kEpilogue>, grid,
                dim3(C::warps * kWarpSize), 0, stream, a.programmatic, params_of(a));
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

// Only a programmatic launch's kernel prefetches W and carries the launch-control instructions
// (gemv_vector.cuh says why).
template <typename T, typename C, bool kMayGather, bool kProgrammatic>
void launch_prologue(const GemvArgs& a, cudaStream_t stream) {
  if (a.fusion.norm_w != nullptr)
    launch_epilogue<T, C, kMayGather, kProgrammatic, true>(a, stream);
  else
    launch_epilogue<T, C, kMayGather, kProgrammatic, false>(a, stream);
}

template <typename T, typename C, bool kMayGather>
void launch_by_mode(const GemvArgs& a, cudaStream_t stream) {
  if (runs_programmatic(a))
    launch_prologue<T, C, kMayGather, true>(a, stream);
  else
    launch_prologue<T, C, kMayGather, false>(a, stream);
}

// A bf16 GEMV without a gather runs a kernel without the expert's code: half the instructions before the
// first load of W (80 -> 40 on sm_90). Same-call A/Bs (results/<gpu>/gemv_plain_ab): on the H100 the launch
// +2.2% at 1024 rows and +3.0% at 4096; on the H200 the 8-warp configuration +8% and +3% (4 warps, its
// launch then, unchanged). int8 and the gathers keep the one kernel: compiled without that code they held
// different registers (int8 46 instead of 64, gathers 36 instead of 32) and ran 2-10% slower on the H100.
template <typename T, typename C>
void launch_vector(const GemvArgs& a, cudaStream_t stream) {
  if constexpr (sizeof(T) == 2)
    if (a.expert_idx == nullptr) return launch_by_mode<T, C, false>(a, stream);
  launch_by_mode<T, C, true>(a, stream);
}

// row_kernel (gemv_vector.cuh) for rows of exactly its span: true when it ran.
template <typename T, int kWarps, int kChunks, int kMinBlocks>
bool launch_row_kernel_if_fits(const GemvArgs& a, cudaStream_t stream) {
  if (a.cols != gemv::row_kernel_cols<T, kWarps, kChunks>) return false;
  launch_kernel(gemv::row_kernel<T, kWarps, kChunks, kMinBlocks>, dim3(static_cast<unsigned>(a.rows)),
                dim3(kWarps * kWarpSize), 0, stream, false, params_of(a));
  return true;
}

// A plain GEMV of an ordinary launch whose rows fit one of the exact-fit kernels, launched; false for any
// other. The kernels by dtype and width, from kernel_tune/exact_rows on each GPU (that exploration's
// figures against the launch before, on the H100 / the H200): bf16 16384 columns 16 warps x 4 chunks,
// 2 blocks an SM (+0.4% / +0.6%), 8192 16 x 2 (+1.2% / +1.9%), 4096 8 x 2 (+1.9% / +3.7%); int8 16384
// on the H100 8 x 4, 4 blocks (+1.5%), on the H200 4 x 8, 8 blocks (+2.9%); int8 8192 4 x 4, 8 blocks
// on the H100 (+1.2%) and 12 on the H200 (+4.4%). int8 4096 keeps vector_kernel, and a gather does not
// run row_kernel (a row a block: int8 7-36% slower on the H200, each block waiting on its index; gathers
// of two slices that share x run launch_gather_pair's kernels, two rows a block).
template <typename T>
bool launch_exact_rows(const GemvArgs& a, cudaStream_t stream) {
  if (!plain(a) || runs_programmatic(a) || a.rows > 0x7fffffff) return false;
  if constexpr (sizeof(T) == 2) {
    return launch_row_kernel_if_fits<T, 16, 4, 2>(a, stream) || launch_row_kernel_if_fits<T, 16, 2, 0>(a, stream) ||
           launch_row_kernel_if_fits<T, 8, 2, 0>(a, stream);
  } else if (current_launch_rules() == LaunchRules::kH200) {
    return launch_row_kernel_if_fits<T, 4, 8, 8>(a, stream) || launch_row_kernel_if_fits<T, 4, 4, 12>(a, stream);
  } else {
    return launch_row_kernel_if_fits<T, 8, 4, 4>(a, stream) || launch_row_kernel_if_fits<T, 4, 4, 8>(a, stream);
  }
}

// gather_pair_kernel (gemv_vector.cuh) for rows of exactly its span: true when it ran.
template <typename T, int kWarps, int kChunks, int kMinBlocks>
bool launch_gather_pair_if_fits(const GemvArgs& a, cudaStream_t stream) {
  if (a.cols != gemv::row_kernel_cols<T, kWarps, kChunks>) return false;
  launch_kernel(gemv::gather_pair_kernel<T, kWarps, kChunks, kMinBlocks>, dim3(static_cast<unsigned>(a.rows)),
                dim3(kWarps * kWarpSize), 0, stream, false, params_of(a));
  return true;
}

// An ordinary launch of an unfused gather of two slices that share x, whose rows fit one of the paired
// kernels, launched; false for any other. The kernels from kernel_tune/gather_pair on each GPU (against
// vector_kernel's launch): on the H200 bf16 16384 16 warps x 4 chunks, 2 blocks an SM (+0.2 to +0.5%),
// bf16 8192 16 x 2, 3 blocks (+1.3 to +1.6%), int8 16384 4 x 8 (+1.1%); on the H100 int8 16384
// 16 x 2, 4 blocks (+1.4%), while its bf16 gathers ran 0.2-1.6% slower paired and keep vector_kernel.
template <typename T>
bool launch_gather_pair(const GemvArgs& a, cudaStream_t stream) {
  const bool pair = a.expert_idx != nullptr && a.num_selected == 2 && a.x_stride == 0 &&
                    a.fusion.norm_w == nullptr && a.fusion.epilogue == GemvEpilogue::kStore;
  if (!pair || runs_programmatic(a) || a.rows > 0x7fffffff) return false;
  const bool h200 = current_launch_rules() == LaunchRules::kH200;
  if constexpr (sizeof(T) == 2)
    return h200 && (launch_gather_pair_if_fits<T, 16, 4, 2>(a, stream) || launch_gather_pair_if_fits<T, 16, 2, 3>(a, stream));
  else
    return h200 ? launch_gather_pair_if_fits<T, 4, 8, 0>(a, stream) : launch_gather_pair_if_fits<T, 16, 2, 4>(a, stream);
}

// The configuration by launch_rules.h's set, from verify/tune on each GPU (results/<gpu>/kernel_tune).
// bf16 on the H100 (run6_f3bf9d2): rows of up to 4 KB by groups of 4 warps, 2 rows x 2 steps in flight;
// longer rows a row per 8-warp block, 2 steps, or per 16-warp block given 8192 rows or more (with fewer,
// the last of the waves of 4 such blocks an SM leaves SMs idle: Llama's w2, 4096 rows of 22 KB, 7%
// slower). On the H200 (run1_9a9f0fa) rows past 4 KB run a row per 4-warp block, 1-9% faster there (and
// 0.4-2% slower on the H100), rows past 16 KB per 8-warp block (0.1-0.4% faster than 4 warps at 32 KB);
// a plain GEMV (no gather, no fusion: the kernel without the expert's code) per 8-warp block at any
// length, as fast or up to 1.6% faster at every plain shape of results/NVIDIA_H200/gemv_plain_ab (Llama's
// wqkv +1.6%, w13 +1.3%), where gathers of 8 KB rows ran 2-4% slower so.
// The paired epilogues need two rows a group: groups of 4 warps then.
template <typename T>
void launch_bf16_rows(const GemvArgs& a, int64_t row_bytes, cudaStream_t stream) {
  if (row_bytes <= 4096 || pairs_rows(a))
    launch_vector<T, Config<8, 4, 2, 2>>(a, stream);
  else if (current_launch_rules() == LaunchRules::kH200)
    row_bytes <= 16384 && !plain(a) ? launch_vector<T, Config<4, 4, 1, 2>>(a, stream)
                                 : launch_vector<T, Config<8, 8, 1, 2>>(a, stream);
  else if (row_bytes <= 8192 || a.rows * a.num_selected < 8192)
    launch_vector<T, Config<8, 8, 1, 2>>(a, stream);
  else
    launch_vector<T, Config<16, 16, 1, 2>>(a, stream);
}

// int8 on the H100: rows under 8 KB by groups of 2 warps, 2 rows x 2 steps; longer rows groups of 4.
// On the H200: rows of 4 KB or more, given more than 4096 of them, a warp a block, 2 rows x 4 steps
// (1-9% faster there, up to 3% slower on the H100; with 4096 rows 2-5% slower on the H200 too, the SMs
// then holding 16 such warps), else groups of 2 warps at any length (Llama's w2, 4096 rows of 11 KB:
// 7.7% faster than 4).
template <typename T>
void launch_int8_rows(const GemvArgs& a, int64_t row_bytes, cudaStream_t stream) {
  if (current_launch_rules() == LaunchRules::kH200) {
    if (row_bytes >= 4096 && a.rows * a.num_selected > 4096)
      launch_vector<T, Config<1, 1, 2, 4>>(a, stream);
    else
      launch_vector<T, Config<8, 2, 2, 2>>(a, stream);
  } else if (row_bytes < 8192) {
    launch_vector<T, Config<8, 2, 2, 2>>(a, stream);
  } else {
    launch_vector<T, Config<8, 4, 2, 2>>(a, stream);
  }
}

template <typename T>
void launch_typed(const GemvArgs& a, bool vectorized, cudaStream_t stream) {
  const int64_t row_bytes = a.cols * static_cast<int64_t>(sizeof(T));
  if (!vectorized) {
    const dim3 grid(static_cast<unsigned>((a.rows + kScalarWarps - 1) / kScalarWarps),
                    static_cast<unsigned>(a.num_selected));
    launch_kernel(gemv::scalar_kernel<T>, grid, dim3(kScalarWarps * kWarpSize), 0, stream, a.programmatic,
                  params_of(a));
  } else if (launch_exact_rows<T>(a, stream) || launch_gather_pair<T>(a, stream)) {
    return;
  } else if constexpr (sizeof(T) == 2) {
    launch_bf16_rows<T>(a, row_bytes, stream);
  } else {
    launch_int8_rows<T>(a, row_bytes, stream);
  }
}

}  // namespace

bool gemv_vectorizable(const GemvArgs& a) {
  const int64_t elems = a.w_type == WeightType::kInt8 ? kVectorBytes : kVectorBytes / 2;
  return a.cols % elems == 0 && a.row_stride % elems == 0 &&
         (a.expert_idx == nullptr || a.expert_stride % elems == 0) && a.x_stride % 8 == 0 && aligned(a.w) &&
         aligned(a.x);
}

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
  const bool vectorized = gemv_vectorizable(a);
  if (const std::string why = fusion_error(a, vectorized); !why.empty()) invalid(why);
  if (a.w_type == WeightType::kInt8)
    launch_typed<int8_t>(a, vectorized, stream);
  else
    launch_typed<__nv_bfloat16>(a, vectorized, stream);
}

}  // namespace opbench::kernels
