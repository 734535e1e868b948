// Exploration: a persistent, pipelined row norm. Each block owns rows blockIdx.x, + gridDim.x, ...;
// each thread copies its share of the next kStages - 1 rows into shared memory with cp.async (16 bytes
// a copy, no register held while in flight, x streamed with L2 evict_first), then works on the row that
// has landed: statistics from shared memory, the output from shared memory again. x is read from DRAM
// once (no second pass over L2), and every block keeps rows in flight while it reduces and writes.
// A thread reads back only the slots it copied itself, so the ring needs no barrier; the statistics as
// two_pass_kernel's.
#pragma once
#include "common/row_norm.cuh"

namespace opbench::kernels::row_norm {

__device__ __forceinline__ void copy_async16(uint4* smem, const uint4* gmem, uint64_t policy) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2;" ::"r"(s), "l"(gmem), "l"(policy)
               : "memory");
#else
  (void)policy;
  *smem = *gmem;
#endif
}
__device__ __forceinline__ void commit_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int kPending>
__device__ __forceinline__ void wait_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
#endif
}

template <int kThreads, int kVec, int kStages>
constexpr int pipelined_smem_bytes = kStages * kVec * kThreads * kVectorBytes;

// kHold: keep the row's vectors in registers from the statistics to the output (else read shared memory
// again).
template <typename T, typename Norm, int kThreads, int kVec, int kStages, int kMinBlocks, bool kHold>
__global__ void __launch_bounds__(kThreads, kMinBlocks) pipelined_kernel(Row<T> r, int64_t rows) {
  constexpr int kPer = kVectorBytes / sizeof(T);
  extern __shared__ uint4 staged[];   // [kStages][kVec][kThreads]
  const int vectors = static_cast<int>(r.cols / kPer);
  const uint64_t drop = opbench::detail::l2_policy(false);
  auto slot = [&](int stage, int i) { return staged + (stage * kVec + i) * kThreads + threadIdx.x; };
  auto issue = [&](int64_t row, int stage) {
    if (row < rows) {
      const uint4* xr = reinterpret_cast<const uint4*>(r.x + row * r.row_stride);
#pragma unroll
      for (int i = 0; i < kVec; ++i) {
        const int v = threadIdx.x + i * kThreads;
        if (v < vectors) copy_async16(slot(stage, i), xr + v, drop);
      }
    }
    commit_copies();
  };
  const int64_t step = gridDim.x;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) issue(blockIdx.x + s * step, s);
  const bool bias = Norm::kBias && r.b;
  const uint4* w = reinterpret_cast<const uint4*>(r.w);
  const uint4* b = reinterpret_cast<const uint4*>(r.b);
  const float cols = static_cast<float>(r.cols);
  int stage = 0;
  for (int64_t row = blockIdx.x; row < rows; row += step) {
    float row_first = 0.f;
    if constexpr (Norm::kCentered) row_first = to_f(r.x[row * r.row_stride]);
    issue(row + (kStages - 1) * step, (stage + kStages - 1) % kStages);
    wait_copies<kStages - 1>();
    uint4 q[kVec];
#pragma unroll
    for (int i = 0; i < kVec; ++i)
      if (threadIdx.x + i * kThreads < vectors) q[i] = *slot(stage, i);
    float sum = 0.f, sum_sq = 0.f, shift = 0.f;
    if (Norm::kCentered && static_cast<int>(threadIdx.x) < vectors) shift = element<T>(q[0], 0);
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      if (threadIdx.x + i * kThreads >= vectors) continue;
#pragma unroll
      for (int k = 0; k < kPer; ++k) {
        const float d = element<T>(q[i], k) - shift;
        sum += d;
        sum_sq = fmaf(d, d, sum_sq);
      }
    }
    float mean = 0.f;
    if constexpr (Norm::kCentered) {
      const int t = threadIdx.x, mine = t < vectors ? (vectors - t + kThreads - 1) / kThreads : 0;
      const float n = static_cast<float>(mine * kPer), shifted_mean = n > 0.f ? sum / n : 0.f;
      const float thread_mean = (shift - row_first) + shifted_mean;
      const float row_mean = group_sum(n * thread_mean, kThreads) / cols;
      mean = row_first + row_mean;
      const float deviation = thread_mean - row_mean;
      sum_sq = group_sum(fmaxf(sum_sq - sum * shifted_mean, 0.f) + n * deviation * deviation, kThreads);
    } else {
      sum_sq = group_sum(sum_sq, kThreads);
    }
    const float scale = Norm::scale(sum_sq, cols, r.eps);
    uint4* yr = reinterpret_cast<uint4*>(r.y + row * r.cols);
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const int v = threadIdx.x + i * kThreads;
      if (v >= vectors) continue;
      const uint4 xq = kHold ? q[i] : *slot(stage, i);
      __stcs(yr + v, out_vector<T, Norm>(xq, __ldg(w + v), bias ? __ldg(b + v) : uint4{}, bias, mean, scale));
    }
    stage = (stage + 1) % kStages;
  }
  wait_copies<0>();
}

// The launch: as many blocks as fit the GPU at once (registers, threads, the ring's shared memory).
template <typename T, typename Norm, int kThreads, int kVec, int kStages, int kMinBlocks, bool kHold>
void launch_pipelined(Row<T> r, int64_t rows, cudaStream_t stream) {
  auto kernel = pipelined_kernel<T, Norm, kThreads, kVec, kStages, kMinBlocks, kHold>;
  constexpr int bytes = pipelined_smem_bytes<kThreads, kVec, kStages>;
  static int blocks = 0;
  if (blocks == 0) {
    OPBENCH_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    int per_sm = 0, device = 0, sms = 0;
    OPBENCH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, bytes));
    OPBENCH_CUDA_CHECK(cudaGetDevice(&device));
    OPBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    blocks = per_sm * sms;
    std::fprintf(stderr, "pipelined<%d threads, %d vec, %d stages, m%d, hold %d>: %d blocks an SM, %d bytes\n",
                 kThreads, kVec, kStages, kMinBlocks, kHold ? 1 : 0, per_sm, bytes);
  }
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(rows, blocks));
  kernel<<<grid, kThreads, bytes, stream>>>(r, rows);
}

}  // namespace opbench::kernels::row_norm

// Exploration: exact-fit gather-GEMV of two slices with one x (the seed's gather_gemv): a block takes
// row blockIdx.x of both selected experts, both expert indices loaded together first, then every W load
// of both rows before any arithmetic; x read chunk by chunk from L1 and converted once for both rows.
namespace opbench::kernels::gemv {
template <typename T, int kWarps, int kChunks, int kMinBlocks>
__global__ void __launch_bounds__(kWarps * kWarpSize, kMinBlocks) paired_kernel(Params p) {
  constexpr int kThreads = kWarps * kWarpSize, kElems = XChunk<T>::kElems;
  __shared__ float partial[kWarps][2];
  const int64_t row = blockIdx.x;
  const int64_t e0 = expert_of(p, 0), e1 = expert_of(p, 1);
  const T* base = static_cast<const T*>(p.w) + row * p.row_stride;
  const uint4* w0 = reinterpret_cast<const uint4*>(base + (e0 < 0 ? 0 : e0) * p.expert_stride) + threadIdx.x;
  const uint4* w1 = reinterpret_cast<const uint4*>(base + (e1 < 0 ? 0 : e1) * p.expert_stride) + threadIdx.x;
  uint4 wv[2][kChunks];
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    wv[0][i] = __ldcs(w0 + i * kThreads);
    wv[1][i] = __ldcs(w1 + i * kThreads);
  }
  float acc0 = 0.f, acc1 = 0.f;
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    XChunk<T> xc;
    xc.load(p.x + (threadIdx.x + i * kThreads) * kElems);
    acc0 = dot_chunk(wv[0][i], xc, acc0);
    acc1 = dot_chunk(wv[1][i], xc, acc1);
  }
  acc0 = warp_sum(acc0);
  acc1 = warp_sum(acc1);
  if (threadIdx.x % kWarpSize == 0) {
    partial[threadIdx.x / kWarpSize][0] = acc0;
    partial[threadIdx.x / kWarpSize][1] = acc1;
  }
  __syncthreads();
  if (threadIdx.x >= 2) return;
  float total = 0.f;
#pragma unroll
  for (int g = 0; g < kWarps; ++g) total += partial[g][threadIdx.x];
  const int64_t e = threadIdx.x == 0 ? e0 : e1;
  p.y[threadIdx.x * p.rows + row] = e < 0 ? nan_bf16() : finish_row(p, e, row, total);
}
}  // namespace opbench::kernels::gemv

// Exploration: two_pass_kernel with L1 hints. kMode bit 0: x (both passes) not allocated in L1
// (L1::no_allocate), so that L1 keeps w and b; bit 1: w and b loaded with L1::evict_last.
namespace opbench::kernels::row_norm {
template <int kMode>
__device__ __forceinline__ uint4 load_x_l1(const uint4* p, uint64_t policy) {
  uint4 v;
  if constexpr (kMode & 1)
    asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(policy));
  else
    v = opbench::detail::load_with_policy(p, policy);
  return v;
}
template <int kMode>
__device__ __forceinline__ uint4 load_wb(const uint4* p) {
  if constexpr (kMode & 2) {
    uint4 v;
    asm volatile("ld.global.nc.L1::evict_last.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
  } else {
    return __ldg(p);
  }
}
template <typename T, typename Norm, int kThreads, int kVec, bool kKeepY, int kMinBlocks, int kMode>
__global__ void __launch_bounds__(kThreads, kMinBlocks) two_pass_l1_kernel(Row<T> r) {
  constexpr int kPer = kVectorBytes / sizeof(T);
  const int64_t vectors = r.cols / kPer, step = int64_t{kThreads} * kVec;
  const uint4* xr = reinterpret_cast<const uint4*>(r.x + blockIdx.x * r.row_stride);
  const uint64_t keep = opbench::detail::l2_policy(true), drop = opbench::detail::l2_policy(false);
  auto load_step = [&](int64_t first, uint64_t policy, uint4 (&q)[kVec]) {
#pragma unroll
    for (int i = 0; i < kVec; ++i)
      if (first + i * kThreads < vectors) q[i] = load_x_l1<kMode>(xr + first + i * kThreads, policy);
  };
  float sum = 0.f, sum_sq = 0.f, shift = 0.f;
  for (int64_t first = threadIdx.x; first < vectors; first += step) {
    uint4 q[kVec];
    load_step(first, keep, q);
    if (Norm::kCentered && first == threadIdx.x) shift = element<T>(q[0], 0);
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      if (first + i * kThreads >= vectors) continue;
#pragma unroll
      for (int k = 0; k < kPer; ++k) {
        const float d = element<T>(q[i], k) - shift;
        sum += d;
        sum_sq = fmaf(d, d, sum_sq);
      }
    }
  }
  const float cols = static_cast<float>(r.cols);
  float mean = 0.f;
  if constexpr (Norm::kCentered) {
    const int64_t mine = threadIdx.x < vectors ? (vectors - threadIdx.x + kThreads - 1) / kThreads : 0;
    const float n = static_cast<float>(mine * kPer), shifted_mean = n > 0.f ? sum / n : 0.f;
    const float row_first = to_f(r.x[blockIdx.x * r.row_stride]);
    const float thread_mean = (shift - row_first) + shifted_mean;
    const float row_mean = group_sum(n * thread_mean, kThreads) / cols;
    mean = row_first + row_mean;
    const float deviation = thread_mean - row_mean;
    sum_sq = group_sum(fmaxf(sum_sq - sum * shifted_mean, 0.f) + n * deviation * deviation, kThreads);
  } else {
    sum_sq = group_sum(sum_sq, kThreads);
  }
  const float scale = Norm::scale(sum_sq, cols, r.eps);
  const bool bias = Norm::kBias && r.b;
  const uint4* w = reinterpret_cast<const uint4*>(r.w);
  const uint4* b = reinterpret_cast<const uint4*>(r.b);
  uint4* yr = reinterpret_cast<uint4*>(r.y + blockIdx.x * r.cols);
  for (int64_t first = threadIdx.x; first < vectors; first += step) {
    uint4 q[kVec];
    load_step(first, drop, q);
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const int64_t v = first + i * kThreads;
      if (v >= vectors) continue;
      const uint4 out = out_vector<T, Norm>(q[i], load_wb<kMode>(w + v), bias ? load_wb<kMode>(b + v) : uint4{}, bias, mean, scale);
      if constexpr (kKeepY)
        opbench::detail::store_with_policy(yr + v, out, keep);
      else
        yr[v] = out;
    }
  }
}
}  // namespace opbench::kernels::row_norm

// Exploration: the row held in registers from its one read to the output (no second pass over L2), a
// row a block in one step (vectors <= kThreads * kVec); statistics as two_pass_kernel's. kOrdered: the
// second pass's w and b loads and y stores in program order, a vector at a time (coherent loads and
// stores ptxas may not reorder), so that w and b never hold more than one vector's registers.
namespace opbench::kernels::row_norm {
__device__ __forceinline__ uint4 load_ordered(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_ordered(uint4* p, uint4 v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
template <typename T, typename Norm, int kThreads, int kVec, int kMinBlocks, bool kOrdered>
__global__ void __launch_bounds__(kThreads, kMinBlocks) held_kernel(Row<T> r) {
  constexpr int kPer = kVectorBytes / sizeof(T);
  const int vectors = static_cast<int>(r.cols / kPer);
  const int t = threadIdx.x;
  const uint4* xr = reinterpret_cast<const uint4*>(r.x + blockIdx.x * r.row_stride);
  uint4 q[kVec];
#pragma unroll
  for (int i = 0; i < kVec; ++i)
    if (t + i * kThreads < vectors) q[i] = __ldcs(xr + t + i * kThreads);
  float sum = 0.f, sum_sq = 0.f, shift = 0.f;
  if (Norm::kCentered && t < vectors) shift = element<T>(q[0], 0);
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    if (t + i * kThreads >= vectors) continue;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const float d = element<T>(q[i], k) - shift;
      sum += d;
      sum_sq = fmaf(d, d, sum_sq);
    }
  }
  const float cols = static_cast<float>(r.cols);
  float mean = 0.f;
  if constexpr (Norm::kCentered) {
    const int mine = t < vectors ? (vectors - t + kThreads - 1) / kThreads : 0;
    const float n = static_cast<float>(mine * kPer), shifted_mean = n > 0.f ? sum / n : 0.f;
    const float row_first = to_f(r.x[blockIdx.x * r.row_stride]);
    const float thread_mean = (shift - row_first) + shifted_mean;
    const float row_mean = group_sum(n * thread_mean, kThreads) / cols;
    mean = row_first + row_mean;
    const float deviation = thread_mean - row_mean;
    sum_sq = group_sum(fmaxf(sum_sq - sum * shifted_mean, 0.f) + n * deviation * deviation, kThreads);
  } else {
    sum_sq = group_sum(sum_sq, kThreads);
  }
  const float scale = Norm::scale(sum_sq, cols, r.eps);
  const bool bias = Norm::kBias && r.b;
  const uint4* w = reinterpret_cast<const uint4*>(r.w) + t;
  const uint4* b = reinterpret_cast<const uint4*>(r.b) + t;
  uint4* yr = reinterpret_cast<uint4*>(r.y + blockIdx.x * r.cols) + t;
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    if (t + i * kThreads >= vectors) continue;
    if constexpr (kOrdered) {
      const uint4 wq = load_ordered(w + i * kThreads);
      const uint4 bq = bias ? load_ordered(b + i * kThreads) : uint4{};
      store_ordered(yr + i * kThreads, out_vector<T, Norm>(q[i], wq, bq, bias, mean, scale));
    } else {
      __stcs(yr + i * kThreads, out_vector<T, Norm>(q[i], __ldg(w + i * kThreads), bias ? __ldg(b + i * kThreads) : uint4{},
                                                    bias, mean, scale));
    }
  }
}
}  // namespace opbench::kernels::row_norm

// Exploration: inductor's LayerNorm structure in our kernel. The centered statistics from one block
// reduction (each thread's count, mean and centered sum of squares combined pairwise, Chan's formula:
// warps by shuffles, then the warps' results by one exchange in shared memory), where two_pass_kernel
// reduces twice; the second pass kPass2 vectors an iteration (1: as inductor's, a vector at a time).
namespace opbench::kernels::row_norm {
struct Moments {
  float n, mean, m2;
};
__device__ __forceinline__ Moments combine(Moments a, Moments b) {
  const float n = a.n + b.n;
  if (n == 0.f) return a;
  const float delta = b.mean - a.mean, fb = b.n / n;
  return Moments{n, fmaf(delta, fb, a.mean), a.m2 + b.m2 + delta * delta * a.n * fb};
}
__device__ __forceinline__ Moments shuffle_xor(Moments m, int offset) {
  return Moments{__shfl_xor_sync(0xffffffffu, m.n, offset), __shfl_xor_sync(0xffffffffu, m.mean, offset),
                 __shfl_xor_sync(0xffffffffu, m.m2, offset)};
}
// Every thread of the block gets the block's moments. REQUIRES: blockDim.x == kThreads, a multiple of 32.
template <int kThreads>
__device__ __forceinline__ Moments block_moments(Moments m) {
  constexpr int kWarps = kThreads / 32;
  __shared__ Moments warp_moments[kWarps];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) m = combine(m, shuffle_xor(m, offset));
  if (threadIdx.x % 32 == 0) warp_moments[threadIdx.x / 32] = m;
  __syncthreads();
  const int lane = threadIdx.x % 32;
  m = lane < kWarps ? warp_moments[lane] : Moments{0.f, 0.f, 0.f};   // lanes past the warps count 0
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) m = combine(m, shuffle_xor(m, offset));
  return Moments{__shfl_sync(0xffffffffu, m.n, 0), __shfl_sync(0xffffffffu, m.mean, 0),
                 __shfl_sync(0xffffffffu, m.m2, 0)};   // lane 0's: one result for every thread of the row
}

template <typename T, typename Norm, int kThreads, int kVec, int kMinBlocks, int kPass2>
__global__ void __launch_bounds__(kThreads, kMinBlocks) chan_kernel(Row<T> r) {
  constexpr int kPer = kVectorBytes / sizeof(T);
  const int vectors = static_cast<int>(r.cols / kPer);
  const int t = threadIdx.x;
  const uint4* xr = reinterpret_cast<const uint4*>(r.x + blockIdx.x * r.row_stride) + t;
  const uint64_t keep = opbench::detail::l2_policy(true), drop = opbench::detail::l2_policy(false);
  float sum = 0.f, sum_sq = 0.f, shift = 0.f;
  {
    uint4 q[kVec];
#pragma unroll
    for (int i = 0; i < kVec; ++i)
      if (t + i * kThreads < vectors) q[i] = opbench::detail::load_with_policy(xr + i * kThreads, keep);
    if (Norm::kCentered && t < vectors) shift = element<T>(q[0], 0);
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      if (t + i * kThreads >= vectors) continue;
#pragma unroll
      for (int k = 0; k < kPer; ++k) {
        const float d = element<T>(q[i], k) - shift;
        sum += d;
        sum_sq = fmaf(d, d, sum_sq);
      }
    }
  }
  const float cols = static_cast<float>(r.cols);
  float mean = 0.f;
  if constexpr (Norm::kCentered) {
    const int mine = t < vectors ? (vectors - t + kThreads - 1) / kThreads : 0;
    const float n = static_cast<float>(mine * kPer), shifted_mean = n > 0.f ? sum / n : 0.f;
    const Moments row = block_moments<kThreads>(Moments{n, shift + shifted_mean, fmaxf(sum_sq - sum * shifted_mean, 0.f)});
    mean = row.mean;
    sum_sq = row.m2;
  } else {
    sum_sq = group_sum(sum_sq, kThreads);
  }
  const float scale = Norm::scale(sum_sq, cols, r.eps);
  const bool bias = Norm::kBias && r.b;
  const uint4* w = reinterpret_cast<const uint4*>(r.w) + t;
  const uint4* b = reinterpret_cast<const uint4*>(r.b) + t;
  uint4* yr = reinterpret_cast<uint4*>(r.y + blockIdx.x * r.cols) + t;
#pragma unroll 1
  for (int first = 0; first < kVec; first += kPass2) {
    uint4 q[kPass2];
#pragma unroll
    for (int i = 0; i < kPass2; ++i)
      if (t + (first + i) * kThreads < vectors) q[i] = opbench::detail::load_with_policy(xr + (first + i) * kThreads, drop);
#pragma unroll
    for (int i = 0; i < kPass2; ++i) {
      const int at = (first + i) * kThreads;
      if (t + at >= vectors) continue;
      opbench::detail::store_with_policy(
          yr + at, out_vector<T, Norm>(q[i], __ldg(w + at), bias ? __ldg(b + at) : uint4{}, bias, mean, scale), keep);
    }
  }
}
}  // namespace opbench::kernels::row_norm
