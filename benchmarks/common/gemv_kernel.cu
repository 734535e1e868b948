// GEMV kernels: see gemv_kernel.h for what they compute and the layout rules.
//
// Mapping: a block of kWarpsPerBlock warps, each warp one (bf16) or two (int8, many rows) output
// rows (grid.x covers the rows),
// grid.y one slice per selected expert (1 for a plain GEMV). Lane l of a warp reads the 16-byte chunks
// l, l + 32, l + 64, ... of its rows (consecutive lanes read consecutive chunks: a warp reads 512
// contiguous bytes of a row per step), multiplies with the matching elements of x in fp32 (converted
// once per chunk for all of the warp's rows), and the warp sums its 32 partial sums with shuffles. W
// is streamed past L1 (__ldcs); x is re-read by every warp and is served from L1/L2.
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
  int64_t x_stride;
  __nv_bfloat16* y;
  const int64_t* expert_idx;
  int64_t expert_stride, num_experts;
  const __nv_bfloat16* row_scale;
  int64_t row_scale_expert_stride;
};

__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(int8_t v) { return static_cast<float>(v); }

// x's elements matching one 16-byte chunk of W, in fp32: 8 for bf16 weights, 16 for int8.
template <typename T>
struct XChunk {
  static constexpr int kElems = kVectorBytes / sizeof(T);
  float v[kElems];
  __device__ __forceinline__ void load(const __nv_bfloat16* x) {
#pragma unroll
    for (int q = 0; q < kElems / 8; ++q) {
      uint4 raw = reinterpret_cast<const uint4*>(x)[q];
      const __nv_bfloat162* x2 = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        float2 f = __bfloat1622float2(x2[i]);
        v[8 * q + 2 * i] = f.x;
        v[8 * q + 2 * i + 1] = f.y;
      }
    }
  }
};

// acc + dot(one 16-byte chunk of W, the matching x).
__device__ __forceinline__ float dot_chunk(uint4 wv, const XChunk<__nv_bfloat16>& x, float acc) {
  const __nv_bfloat162* w2 = reinterpret_cast<const __nv_bfloat162*>(&wv);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 wf = __bfloat1622float2(w2[i]);
    acc = fmaf(wf.x, x.v[2 * i], acc);
    acc = fmaf(wf.y, x.v[2 * i + 1], acc);
  }
  return acc;
}

// int8 -> fp32 without I2F (a quarter-rate instruction, 16 per 16-byte load: the int8 path's limit):
// b ^ 0x80 placed in the low mantissa byte of 2^23 is the float 2^23 + 128 + b, exactly; one byte
// permute and one add recover b. Two accumulation chains halve the dependent-FMA latency.
__device__ __forceinline__ float dot_chunk(uint4 wv, const XChunk<int8_t>& x, float acc) {
  constexpr float kBias = 8388608.f + 128.f;
  const uint32_t words[4] = {wv.x ^ 0x80808080u, wv.y ^ 0x80808080u, wv.z ^ 0x80808080u, wv.w ^ 0x80808080u};
  float a0 = 0.f, a1 = 0.f;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float w0 = __uint_as_float(__byte_perm(words[k], 0x4B000000u, 0x7540)) - kBias;
    const float w1 = __uint_as_float(__byte_perm(words[k], 0x4B000000u, 0x7541)) - kBias;
    const float w2 = __uint_as_float(__byte_perm(words[k], 0x4B000000u, 0x7542)) - kBias;
    const float w3 = __uint_as_float(__byte_perm(words[k], 0x4B000000u, 0x7543)) - kBias;
    a0 = fmaf(w0, x.v[4 * k], a0);
    a1 = fmaf(w1, x.v[4 * k + 1], a1);
    a0 = fmaf(w2, x.v[4 * k + 2], a0);
    a1 = fmaf(w3, x.v[4 * k + 3], a1);
  }
  return acc + (a0 + a1);
}

// The expert a slice reads (0 without gathering), or -1 for an index out of range: the slice's rows
// then become NaN, so the check fails, and W is never read out of bounds.
__device__ __forceinline__ int64_t expert_of(const Params& p, int64_t slice) {
  if (p.expert_idx == nullptr) return 0;
  const int64_t e = p.expert_idx[slice];
  return e >= 0 && e < p.num_experts ? e : -1;
}

__device__ __forceinline__ __nv_bfloat16 nan_bf16() { return __float2bfloat16(__int_as_float(0x7fc00000)); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// The bf16 result of a row: its fp32 sum times the row's bf16 scale (the expert's) when there is one.
__device__ __forceinline__ __nv_bfloat16 finish_row(const Params& p, int64_t expert, int64_t row, float total) {
  if (p.row_scale != nullptr) total *= __bfloat162float(p.row_scale[expert * p.row_scale_expert_stride + row]);
  return __float2bfloat16(total);
}

// 16-byte path: a warp computes kRows consecutive rows, so each chunk of x is loaded and converted once
// for kRows chunks of W (the int8 path's conversions are its cost). The main loop issues all
// kSteps x kRows loads of W before any arithmetic (kSteps x kRows x 16 bytes in flight per lane);
// W is streamed (__ldcs: read once, L1 keeps x).
template <typename T, int kRows, int kSteps>
__global__ void __launch_bounds__(kThreadsPerBlock) gemv_vector(Params p) {
  constexpr int kElems = XChunk<T>::kElems;
  constexpr int64_t kStride = kWarpSize * kElems;
  const int lane = threadIdx.x % kWarpSize;
  const int64_t row0 = (static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize) * kRows;
  const int64_t slice = blockIdx.y;
  if (row0 >= p.rows) return;   // uniform across the warp
  __nv_bfloat16* y = p.y + slice * p.rows + row0;
  const int64_t expert = expert_of(p, slice);
  if (expert < 0) {
    if (lane < kRows && row0 + lane < p.rows) y[lane] = nan_bf16();
    return;
  }
  const T* w = static_cast<const T*>(p.w) + expert * p.expert_stride + row0 * p.row_stride;
  const __nv_bfloat16* x = p.x + slice * p.x_stride;
  const int rows_here = static_cast<int>(p.rows - row0 < kRows ? p.rows - row0 : kRows);
  // A partial row group reads its last row again in place of the missing ones (never out of bounds).
  int64_t row_off[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) row_off[r] = (r < rows_here ? r : rows_here - 1) * p.row_stride;
  float acc[kRows] = {};
  int64_t c = static_cast<int64_t>(lane) * kElems;
  for (; c + (kSteps - 1) * kStride < p.cols; c += kSteps * kStride) {
    uint4 wv[kSteps][kRows];
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
#pragma unroll
      for (int r = 0; r < kRows; ++r) wv[s][r] = __ldcs(reinterpret_cast<const uint4*>(w + row_off[r] + c + s * kStride));
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      XChunk<T> xc;
      xc.load(x + c + s * kStride);
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] = dot_chunk(wv[s][r], xc, acc[r]);
    }
  }
  for (; c < p.cols; c += kStride) {   // fewer than kSteps chunks left
    XChunk<T> xc;
    xc.load(x + c);
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[r] = dot_chunk(__ldcs(reinterpret_cast<const uint4*>(w + row_off[r] + c)), xc, acc[r]);
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const float total = warp_sum(acc[r]);
    if (lane == 0 && r < rows_here) y[r] = finish_row(p, expert, row0 + r, total);
  }
}

// Any shape and alignment: one row per warp, element by element.
template <typename T>
__global__ void __launch_bounds__(kThreadsPerBlock) gemv_scalar(Params p) {
  const int lane = threadIdx.x % kWarpSize;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize;
  const int64_t slice = blockIdx.y;
  if (row >= p.rows) return;
  __nv_bfloat16* y = p.y + slice * p.rows + row;
  const int64_t expert = expert_of(p, slice);
  if (expert < 0) {
    if (lane == 0) *y = nan_bf16();
    return;
  }
  const T* w = static_cast<const T*>(p.w) + expert * p.expert_stride + row * p.row_stride;
  const __nv_bfloat16* x = p.x + slice * p.x_stride;
  float acc = 0.f;
  for (int64_t c = lane; c < p.cols; c += kWarpSize) acc = fmaf(to_float(w[c]), __bfloat162float(x[c]), acc);
  acc = warp_sum(acc);
  if (lane == 0) *y = finish_row(p, expert, row, acc);
}

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
                a.row_scale_expert_stride};
}

// One vector-path configuration: kRows rows per warp, kSteps column steps in flight.
template <typename T, int kRows, int kSteps>
void launch_vector(const GemvArgs& a, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((a.rows + kRows * kWarpsPerBlock - 1) / (kRows * kWarpsPerBlock)),
                  static_cast<unsigned>(a.num_selected));
  gemv_vector<T, kRows, kSteps><<<grid, kThreadsPerBlock, 0, stream>>>(params_of(a));
}

template <typename T>
void launch_typed(const GemvArgs& a, bool vectorized, cudaStream_t stream) {
  if (!vectorized) {
    const dim3 grid(static_cast<unsigned>((a.rows + kWarpsPerBlock - 1) / kWarpsPerBlock),
                    static_cast<unsigned>(a.num_selected));
    gemv_scalar<T><<<grid, kThreadsPerBlock, 0, stream>>>(params_of(a));
  } else if (sizeof(T) == 2) {
    // bf16: one row per warp, 8 chunks in flight per lane (H100, results/.../kernels_gemv: fastest at
    // every D from 1024 to 16384, GEMV and gather; 99% of the read stream at D = 16384).
    launch_vector<T, 1, 8>(a, stream);
  } else if (a.rows * a.num_selected >= 8192) {
    // int8, rows plentiful: two rows per warp (x converted once for both; the conversions are the
    // int8 path's cost), 4 steps in flight.
    launch_vector<T, 2, 4>(a, stream);
  } else {
    launch_vector<T, 1, 4>(a, stream);   // small matrices: blocks are scarce, one row per warp
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
  if ((a.rows + kWarpsPerBlock - 1) / kWarpsPerBlock > 0x7fffffff) invalid("too many rows");
  const bool vectorized = gemv_vectorizable(a);
  if (a.w_type == WeightType::kInt8)
    launch_typed<int8_t>(a, vectorized, stream);
  else
    launch_typed<__nv_bfloat16>(a, vectorized, stream);
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace opbench::kernels
