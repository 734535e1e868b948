// opbench's own GEMV kernels (gemv_kernel.cu, gemv_vector.cuh): y = W @ x with W in bf16 or int8 (dequantized on the fly,
// no scales unless `row_scale` is given: then y is scaled per output row, per expert when gathering with
// row_scale_expert_stride), x and y in bf16 (one x per selected expert with x_stride), fp32
// accumulation. Groups of warps per few output rows, 16-byte loads of W and x with several in flight
// per lane where the layout allows it (else a scalar loop), shuffle and shared-memory reductions, one
// bf16 store per row. With `expert_idx` the same kernel gathers:
// output row block e uses W + expert_idx[e] * expert_stride (the index is read on the device).
// Plain C++ interface (no ATen) so that .cpp files and tests can call it.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace opbench::kernels {

enum class WeightType { kBf16, kInt8 };

struct GemvArgs {
  const void* w = nullptr;        // [num_experts x] rows x cols, element type `w_type`
  WeightType w_type = WeightType::kBf16;
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
  // Programmatic dependent launch (sm_90+, common/launch.cuh): the kernel may start while the previous
  // kernel of the stream finishes, and prefetches W before it waits for x. Every kernel before it that
  // writes x, y or the index must let it (the decode step's kernels do); off: an ordinary launch.
  bool programmatic = false;
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
// 16 / sizeof(W element), and W and x 16-byte aligned. Otherwise it runs the scalar loop.
bool gemv_vectorizable(const GemvArgs& args);

// Enqueues the kernel on `stream` and checks the launch (cudaGetLastError). Throws opbench::Error on
// invalid arguments or a failed launch. Does not synchronize.
void launch_gemv(const GemvArgs& args, cudaStream_t stream);

}  // namespace opbench::kernels
