// GEMV kernels: see gemv_kernel.h for what they compute and the layout rules.
//
// Mapping: a block of kWarpsPerBlock warps, one warp per output row (grid.x covers the rows), grid.y
// one slice per selected expert (1 for a plain GEMV). Lane l of a warp reads the 16-byte chunks
// l, l + 32, l + 64, ... of its row (consecutive lanes read consecutive chunks: a warp reads 512
// contiguous bytes of W per step), multiplies with the matching elements of x in fp32, and the warp
// sums its 32 partial sums with shuffles. x is re-read by every warp and is served from L1/L2.
#include <cuda_bf16.h>

#include <cstdint>
#include <string>

#include "gemv_kernel.h"
#include "opbench/check.h"

namespace opbench::kernels {
namespace {

constexpr int kWarpSize = 32;
constexpr int kWarpsPerBlock = 8;
constexpr int kThreadsPerBlock = kWarpSize * kWarpsPerBlock;
constexpr int kVectorBytes = 16;

struct Params {
  const void* w;
  int64_t rows, cols, row_stride;
  const __nv_bfloat16* x;
  __nv_bfloat16* y;
  const int64_t* expert_idx;
  int64_t expert_stride, num_experts;
};

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(int8_t v) { return static_cast<float>(v); }

// acc += dot(16 bytes of W starting at w, the matching elements of x starting at x).
// REQUIRES: w and x 16-byte aligned.
__device__ __forceinline__ float dot_chunk(const __nv_bfloat16* w, const __nv_bfloat16* x, float acc) {
  uint4 wv = *reinterpret_cast<const uint4*>(w);
  uint4 xv = *reinterpret_cast<const uint4*>(x);
  const __nv_bfloat162* w2 = reinterpret_cast<const __nv_bfloat162*>(&wv);
  const __nv_bfloat162* x2 = reinterpret_cast<const __nv_bfloat162*>(&xv);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 wf = __bfloat1622float2(w2[i]);
    float2 xf = __bfloat1622float2(x2[i]);
    acc = fmaf(wf.x, xf.x, acc);
    acc = fmaf(wf.y, xf.y, acc);
  }
  return acc;
}

__device__ __forceinline__ float dot_chunk(const int8_t* w, const __nv_bfloat16* x, float acc) {
  uint4 wv = *reinterpret_cast<const uint4*>(w);
  uint4 xv[2] = {reinterpret_cast<const uint4*>(x)[0], reinterpret_cast<const uint4*>(x)[1]};
  const int8_t* wb = reinterpret_cast<const int8_t*>(&wv);
  const __nv_bfloat162* x2 = reinterpret_cast<const __nv_bfloat162*>(xv);
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    float2 xf = __bfloat1622float2(x2[i]);
    acc = fmaf(static_cast<float>(wb[2 * i]), xf.x, acc);
    acc = fmaf(static_cast<float>(wb[2 * i + 1]), xf.y, acc);
  }
  return acc;
}

template <typename T, bool kVectorized>
__global__ void __launch_bounds__(kThreadsPerBlock) gemv_kernel(Params p) {
  const int lane = threadIdx.x % kWarpSize;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize;
  const int64_t slice = blockIdx.y;
  if (row >= p.rows) return;   // the whole warp leaves together: row is uniform across a warp
  __nv_bfloat16* y = p.y + slice * p.rows + row;

  int64_t expert = 0;
  if (p.expert_idx != nullptr) {
    expert = p.expert_idx[slice];
    if (expert < 0 || expert >= p.num_experts) {   // never read out of bounds: make the check fail
      if (lane == 0) *y = __float2bfloat16(__int_as_float(0x7fc00000));
      return;
    }
  }
  const T* w = static_cast<const T*>(p.w) + expert * p.expert_stride + row * p.row_stride;

  float acc = 0.f;
  if constexpr (kVectorized) {
    constexpr int kElems = kVectorBytes / sizeof(T);   // 8 bf16 or 16 int8 per load
#pragma unroll 4
    for (int64_t c = static_cast<int64_t>(lane) * kElems; c < p.cols; c += kWarpSize * kElems)
      acc = dot_chunk(w + c, p.x + c, acc);
  } else {
    for (int64_t c = lane; c < p.cols; c += kWarpSize)
      acc = fmaf(to_float(w[c]), __bfloat162float(p.x[c]), acc);
  }
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    acc += __shfl_xor_sync(0xffffffffu, acc, offset);
  if (lane == 0) *y = __float2bfloat16(acc);
}

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0; }

template <typename T>
void launch_typed(const GemvArgs& a, bool vectorized, dim3 grid, cudaStream_t stream) {
  Params p{a.w,
           a.rows,
           a.cols,
           a.row_stride,
           static_cast<const __nv_bfloat16*>(a.x),
           static_cast<__nv_bfloat16*>(a.y),
           a.expert_idx,
           a.expert_stride,
           a.num_experts};
  if (vectorized)
    gemv_kernel<T, true><<<grid, kThreadsPerBlock, 0, stream>>>(p);
  else
    gemv_kernel<T, false><<<grid, kThreadsPerBlock, 0, stream>>>(p);
}

}  // namespace

bool gemv_vectorizable(const GemvArgs& a) {
  const int64_t elems = a.w_type == WeightType::kInt8 ? kVectorBytes : kVectorBytes / 2;
  return a.cols % elems == 0 && a.row_stride % elems == 0 &&
         (a.expert_idx == nullptr || a.expert_stride % elems == 0) && aligned(a.w) && aligned(a.x);
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
  const int64_t blocks = (a.rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (blocks > 0x7fffffff) invalid("too many rows");
  dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(a.num_selected));
  const bool vectorized = gemv_vectorizable(a);
  if (a.w_type == WeightType::kInt8)
    launch_typed<int8_t>(a, vectorized, grid, stream);
  else
    launch_typed<__nv_bfloat16>(a, vectorized, grid, stream);
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace opbench::kernels
