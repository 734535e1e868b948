// The arguments of opbench's GEMV (gemv.h): y = W @ x with W in bf16, int8 (dequantized on the fly,
// no scales unless `row_scale` is given: then y is scaled per output row, per expert when gathering with
// row_scale_expert_stride) or int4 (gpt-fast's group-wise weight-only quantization, dequantized on the
// fly with its group's bf16 scale and zero: w = (q - 8) * scale + zero), x and y in bf16 (one x per selected expert with x_stride), fp32 accumulation.
// With `expert_idx` the same kernel gathers: output row block e uses W + expert_idx[e] * expert_stride
// (the index is read on the device). Optional fusions fold the decode step's small kernels into it.
// Plain C++ (no ATen, no CUDA headers) so that .cpp files, the configuration table and CPU tests can
// fill it.
#pragma once
#include <cstdint>

namespace opbench::kernels {

enum class WeightType { kBf16, kInt8, kInt4 };

// Bits a weight of `w` occupies in memory.
constexpr int weight_bits(WeightType w) { return w == WeightType::kBf16 ? 16 : w == WeightType::kInt8 ? 8 : 4; }

// int4 weights (kernels/gemv/int4_weights.h makes them): two per byte, row-major like the other types,
// the even column in the high nibble (the byte layout torch's _convert_weight_to_int4pack takes on CUDA);
// unsigned values q in [0, 15]. One (scale, zero) bf16 pair per kInt4GroupSize consecutive weights of a
// row, gpt-fast's group size along the input dimension: `group_qparams` holds, for the weight at element
// offset e of W (e = expert * expert_stride + row * row_stride + col), its pair at index e / 128. So a
// contiguous [rows, cols] W has qparams [rows, cols / 128, 2].
constexpr int64_t kInt4GroupSize = 128;

// What the kernel does with a row's result r = bf16(W[row] . x * row_scale) (decode/own_step.cpp fuses
// the decode step's small kernels into its GEMVs this way). The rounding is the unfused steps'.
enum class GemvEpilogue {
  kStore,       // y[row] = r
  kAddToY,      // y[row] = bf16(y[row] + r): a residual stream updated in place
  kSwiglu,      // W holds 2n rows [a | b] (per expert): y[o] = bf16(silu(r[o]) * r[n + o]), o < n, y has n rows
  kRopeCache,   // rows [q heads | k heads | v heads]: y = q rotated, k rotated and v stored in the caches
};

// kRopeCache's tables and destinations (the model's layouts, kernels/decode/decode_kernels.h): RoPE on
// row pairs (2i, 2i+1) of a head with cos/sin fp32 [max_len, head_dim / 2] at position *pos; caches bf16
// [kv_heads, max_len, head_dim].
struct RopeCacheOut {
  const int64_t* pos = nullptr;
  const float* cos = nullptr;
  const float* sin = nullptr;
  void* k_cache = nullptr;
  void* v_cache = nullptr;
  int64_t q_rows = 0, kv_rows = 0, head_dim = 0, max_len = 0;
};

// Optional fusions; each needs the vector path (gemv_vectorizable), else launch_gemv throws.
struct GemvFusion {
  // The rms norm prologue: when set, x is a residual stream h and the kernel computes W . norm(h) with
  // norm(h) = h * rsqrt(mean(h^2) + norm_eps) * norm_w (bf16, cols elements; the row_norm home's
  // RmsPolicy), in fp32: the normalized x is not rounded to bf16 as the unfused norm kernel's output is.
  const void* norm_w = nullptr;
  float norm_eps = 1e-5f;
  GemvEpilogue epilogue = GemvEpilogue::kStore;
  RopeCacheOut rope;   // kRopeCache only
};

struct GemvArgs {
  const void* w = nullptr;        // [num_experts x] rows x cols, element type `w_type`
  WeightType w_type = WeightType::kBf16;
  // int4 only (and required there): the groups' bf16 (scale, zero) pairs (see kInt4GroupSize). cols,
  // row_stride and expert_stride must then be multiples of kInt4GroupSize, and row_scale unset.
  const void* group_qparams = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_stride = 0;         // elements between consecutive rows of W (>= cols)
  const void* x = nullptr;        // bf16, cols elements, contiguous
  int64_t x_stride = 0;           // elements between the x of consecutive selected slices; 0: one x for all
  void* y = nullptr;              // bf16, num_selected x rows, contiguous
  // Gather (GatherGemv): when set, a device pointer to num_selected int64 expert indices.
  const int64_t* expert_idx = nullptr;
  int64_t num_selected = 1;       // output row blocks; 1 without expert_idx
  int64_t expert_stride = 0;      // elements between consecutive experts of W
  int64_t num_experts = 1;        // valid indices are [0, num_experts); others yield NaN rows
  // Optional per-output-row bf16 scale (rows elements, shared by every selected expert): y = (W @ x) *
  // row_scale, the int8 per-channel dequantization of the decode models. nullptr: no scale.
  const void* row_scale = nullptr;
  int64_t row_scale_expert_stride = 0;   // elements between consecutive experts' scales; 0: shared
  // Programmatic dependent launch (sm_90+, kernels/common/launch.cuh): the kernel may start while the
  // previous kernel of the stream finishes (the tensor-core kernel loads its first W before it waits for
  // x). Every kernel before it that writes x, y or the index must let it (the decode step's kernels do);
  // off: an ordinary launch.
  bool programmatic = false;
  GemvFusion fusion;
};

// The arguments for y = W @ x with a contiguous square W (d x d); gather fields left unset.
inline GemvArgs square_gemv_args(const void* w, WeightType w_type, int64_t d, const void* x, void* y) {
  GemvArgs args;
  args.w = w;
  args.w_type = w_type;
  args.rows = d;
  args.cols = d;
  args.row_stride = d;
  args.x = x;
  args.y = y;
  return args;
}

// True when the kernel takes the 16-byte-load path: cols, row_stride (and expert_stride) multiples of
// the weights in 16 bytes (8 bf16, 16 int8, 32 int4), and W and x 16-byte aligned. Otherwise it runs the scalar loop.
bool gemv_vectorizable(const GemvArgs& args);

}  // namespace opbench::kernels
