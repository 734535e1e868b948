// Scratch exploration (issue 13, not built by the project): L2 store/load policies in the row norms,
// and a software-pipelined / next-step-prefetching int8 GEMV. Reuses verify/tune/kernel_tune.cu.
#define main kernel_tune_main
#include "../../verify/tune/kernel_tune.cu"
#undef main

namespace {
namespace rx = opbench::kernels::row_norm;
using opbench::detail::l2_policy;
using opbench::detail::load_with_policy;

__device__ __forceinline__ uint64_t policy_normal() {
  uint64_t p;
  asm("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(p));
  return p;
}
// kStore: 0 plain, 1 L2 evict_last hint, 2 __stcs, 3 L2 evict_first hint, 4 evict_normal hint
template <int kStore>
__device__ __forceinline__ void store_y(uint4* p, uint4 v, uint64_t keep, uint64_t drop, uint64_t normal) {
  if constexpr (kStore == 0) {
    *p = v;
  } else if constexpr (kStore == 2) {
    __stcs(p, v);
  } else {
    const uint64_t pol = kStore == 1 ? keep : kStore == 3 ? drop : normal;
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w), "l"(pol)
                 : "memory");
  }
}
// kPass1/kPass2 loads: 0 evict_last hint, 1 evict_first hint, 2 plain, 3 __ldcs, 4 evict_normal hint
template <int kLoad>
__device__ __forceinline__ uint4 load_x(const uint4* p, uint64_t keep, uint64_t drop, uint64_t normal) {
  if constexpr (kLoad == 0) return load_with_policy(p, keep);
  else if constexpr (kLoad == 1) return load_with_policy(p, drop);
  else if constexpr (kLoad == 2) return *p;
  else if constexpr (kLoad == 3) return __ldcs(p);
  else return load_with_policy(p, normal);
}

template <typename T, typename Norm, int kThreads, int kVec, int kPass1, int kPass2, int kStore, int kMin>
__global__ void __launch_bounds__(kThreads, kMin) two_pass_x(rx::Row<T> r) {
  constexpr int kPer = 16 / sizeof(T);
  const int64_t vectors = r.cols / kPer, step = int64_t{kThreads} * kVec;
  const uint4* xr = reinterpret_cast<const uint4*>(r.x + blockIdx.x * r.row_stride);
  const float shift = Norm::kCentered ? rx::to_f(r.x[blockIdx.x * r.row_stride]) : 0.f;
  const uint64_t keep = l2_policy(true), drop = l2_policy(false), normal = policy_normal();
  float sum = 0.f, sum_sq = 0.f;
  for (int64_t first = threadIdx.x; first < vectors; first += step) {
    uint4 q[kVec];
#pragma unroll
    for (int i = 0; i < kVec; ++i)
      if (first + i * kThreads < vectors) q[i] = load_x<kPass1>(xr + first + i * kThreads, keep, drop, normal);
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      if (first + i * kThreads >= vectors) continue;
      const T* e = reinterpret_cast<const T*>(&q[i]);
#pragma unroll
      for (int k = 0; k < kPer; ++k) {
        const float d = rx::to_f(e[k]) - shift;
        sum += d;
        sum_sq = fmaf(d, d, sum_sq);
      }
    }
  }
  const float cols = static_cast<float>(r.cols);
  float mean = 0.f;
  if constexpr (Norm::kCentered) {
    const float sm = rx::group_sum(sum, kThreads) / cols;
    mean = shift + sm;
    sum_sq = fmaxf(rx::group_sum(sum_sq, kThreads) - cols * sm * sm, 0.f);
  } else {
    sum_sq = rx::group_sum(sum_sq, kThreads);
  }
  const float scale = Norm::scale(sum_sq, cols, r.eps);
  const bool bias = Norm::kBias && r.b;
  const uint4* w = reinterpret_cast<const uint4*>(r.w);
  const uint4* b = reinterpret_cast<const uint4*>(r.b);
  uint4* yr = reinterpret_cast<uint4*>(r.y + blockIdx.x * r.cols);
  for (int64_t first = threadIdx.x; first < vectors; first += step) {
    uint4 q[kVec];
#pragma unroll
    for (int i = 0; i < kVec; ++i)
      if (first + i * kThreads < vectors) q[i] = load_x<kPass2>(xr + first + i * kThreads, keep, drop, normal);
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const int64_t v = first + i * kThreads;
      if (v < vectors)
        store_y<kStore>(yr + v, rx::out_vector<T, Norm>(q[i], __ldg(w + v), bias ? __ldg(b + v) : uint4{}, bias, mean, scale),
                        keep, drop, normal);
    }
  }
}
// Rows in registers (as rx::vector_kernel, rows of <= 32 * kVec vectors: a row per warp-sized group).
template <typename T, int kVec, typename Norm, int kLoad, int kStore>
__global__ void reg_x(rx::Row<T> r, int64_t rows, int group_threads) {
  constexpr int kPer = 16 / sizeof(T);
  const int64_t vectors = r.cols / kPer;
  const int t = threadIdx.x % group_threads;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / group_threads) + threadIdx.x / group_threads;
  const bool has_row = row < rows;
  const uint64_t keep = l2_policy(true), drop = l2_policy(false), normal = policy_normal();
  const uint4* xr = reinterpret_cast<const uint4*>(r.x + row * r.row_stride);
  uint4 held[kVec];
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const int64_t v = t + static_cast<int64_t>(i) * group_threads;
    if (has_row && v < vectors) held[i] = load_x<kLoad>(xr + v, keep, drop, normal);
  }
  auto each = [&](auto&& f) {
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const int64_t v = t + static_cast<int64_t>(i) * group_threads;
      if (!has_row || v >= vectors) continue;
      const T* e = reinterpret_cast<const T*>(&held[i]);
#pragma unroll
      for (int k = 0; k < kPer; ++k) f(rx::to_f(e[k]));
    }
  };
  float mean = 0.f;
  if constexpr (Norm::kCentered) {
    float s = 0.f;
    each([&](float v) { s += v; });
    mean = rx::group_sum(s, group_threads) / static_cast<float>(r.cols);
  }
  float sq = 0.f;
  each([&](float v) { sq += (v - mean) * (v - mean); });
  const float scale = Norm::scale(rx::group_sum(sq, group_threads), static_cast<float>(r.cols), r.eps);
  if (!has_row) return;
  const bool bias = Norm::kBias && r.b;
  uint4* yr = reinterpret_cast<uint4*>(r.y + row * r.cols);
#pragma unroll
  for (int i = 0; i < kVec; ++i) {
    const int64_t v = t + static_cast<int64_t>(i) * group_threads;
    if (v >= vectors) continue;
    const uint4 wq = __ldg(reinterpret_cast<const uint4*>(r.w) + v);
    uint4 bq{};
    if (bias) bq = __ldg(reinterpret_cast<const uint4*>(r.b) + v);
    store_y<kStore>(yr + v, rx::out_vector<T, Norm>(held[i], wq, bq, bias, mean, scale), keep, drop, normal);
  }
}

template <typename P, int B, int V, int L1, int L2, int S, int M>
void tp_launch(const rx::Row<bf16>& r, int64_t rows, cudaStream_t s) {
  two_pass_x<bf16, P, B, V, L1, L2, S, M><<<static_cast<unsigned>(rows), B, 0, s>>>(r);
}
template <typename P, int V, int L, int S>
void reg_launch_x(const rx::Row<bf16>& r, int64_t rows, cudaStream_t s) {
  const int group = rx::group_threads<V>(r.cols / 8);
  const int per_block = std::max(1, 128 / group);
  reg_x<bf16, V, P, L, S><<<static_cast<unsigned>((rows + per_block - 1) / per_block), per_block * group, 0, s>>>(r, rows, group);
}
struct XConfig {
  const char* name;
  NormLaunch layer, rms;
  int max_vectors;   // 0: any
};
#define TP(B, V, L1, L2, S, M) XConfig{"tp.b" #B "v" #V ".p" #L1 #L2 ".s" #S ".m" #M, tp_launch<rn::LayerPolicy, B, V, L1, L2, S, M>, tp_launch<rn::RmsPolicy, B, V, L1, L2, S, M>, 0}
#define RG(V, L, S) XConfig{"rg.v" #V ".l" #L ".s" #S, reg_launch_x<rn::LayerPolicy, V, L, S>, reg_launch_x<rn::RmsPolicy, V, L, S>, 32 * V}
// loads: 0 evict_last, 1 evict_first, 2 plain, 3 cs, 4 evict_normal; stores: 0 plain, 1 evict_last, 2 cs, 3 evict_first, 4 evict_normal
const XConfig kX[] = {
    TP(512, 4, 0, 1, 1, 3), TP(512, 4, 0, 1, 1, 1), TP(512, 2, 0, 1, 1, 4), TP(1024, 1, 0, 1, 1, 2),
    TP(1024, 2, 0, 1, 1, 2), TP(512, 4, 0, 2, 1, 3), TP(512, 4, 0, 4, 1, 3), TP(512, 4, 2, 1, 1, 3),
    TP(512, 4, 4, 1, 1, 3), TP(512, 4, 0, 1, 4, 3), TP(512, 4, 0, 1, 0, 3), TP(1024, 2, 0, 1, 0, 2),
    TP(256, 4, 0, 1, 1, 6), TP(256, 8, 0, 1, 1, 4), TP(512, 8, 0, 1, 1, 2)};

void explore_norm(Timer& timer, int64_t rows, int64_t cols, bool layer, int reps) {
  DeviceBuffer x(rows * cols * 2), y(rows * cols * 2), w(cols * 2), b(cols * 2), ref(rows * cols * 8);
  fill_bf16<<<1024, 256>>>(x.as<bf16>(), rows * cols, 3, -2.f, 3.f);
  fill_bf16<<<16, 256>>>(w.as<bf16>(), cols, 4, 0.5f, 1.5f);
  fill_bf16<<<16, 256>>>(b.as<bf16>(), cols, 5, -0.5f, 0.5f);
  const bf16* bias = layer ? b.as<bf16>() : nullptr;
  norm_reference<<<rows, 256>>>(x.as<bf16>(), w.as<bf16>(), bias, cols, 1e-5, ref.as<double>());
  CK(cudaDeviceSynchronize());
  const std::vector<double> ref_h = to_host(ref.as<double>(), rows * cols);
  auto err = [&](float got, int64_t i) { return std::fabs(got - ref_h[i]) / (1.6e-2 * std::fabs(ref_h[i]) + 1e-2); };
  const rn::Row<bf16> r{x.as<bf16>(), w.as<bf16>(), bias, y.as<bf16>(), cols, cols, 1e-5f};
  const std::string name = (layer ? "LayerNorm/" : "RMSNorm/") + std::to_string(rows) + "x" + std::to_string(cols);
  const double gbytes = 2.0 * rows * cols * 2 / 1e9;
  const opbench::kernels::NormArgs args{x.p, w.p, bias, y.p, rows, cols, cols, 1e-5f, opbench::kernels::NormType::kBf16};
  auto lib = [&](const char* c) {
    check_and_time(timer, "norm", "bf16", name, c,
                   [&](cudaStream_t s) {
                     layer ? opbench::kernels::launch_layer_norm(args, s) : opbench::kernels::launch_rms_norm(args, s);
                   },
                   y.as<bf16>(), rows * cols, err, gbytes, reps);
  };
  lib("launch.first");
  for (const XConfig& c : kX) {
    if (c.max_vectors && cols / 8 > c.max_vectors) continue;
    if (!c.max_vectors && cols < 4096) continue;
    const NormLaunch launch = layer ? c.layer : c.rms;
    check_and_time(timer, "norm", "bf16", name, c.name, [&](cudaStream_t s) { launch(r, rows, s); }, y.as<bf16>(),
                   rows * cols, err, gbytes, reps);
  }
  lib("launch");
}

// ---- GEMV: plain (mode 0), software-pipelined (1), next step prefetched into L2 (2).
using namespace opbench::kernels::gemv;
template <typename T, int kWarps, int kGroup, int kRows, int kSteps, int kMode, int kMin>
__global__ void __launch_bounds__(kWarps * 32, kMin) gx_kernel(Params p) {
  constexpr int kElems = XChunk<T>::kElems;
  constexpr int64_t kStride = int64_t{kGroup} * 32 * kElems;
  __shared__ float partial[kWarps][kRows];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, gw = warp % kGroup;
  const int64_t first_row = (static_cast<int64_t>(blockIdx.x) * (kWarps / kGroup) + warp / kGroup) * kRows;
  const int rows_here = first_row >= p.rows ? 0 : static_cast<int>(p.rows - first_row < kRows ? p.rows - first_row : kRows);
  int64_t row_off[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) row_off[r] = (r < rows_here ? r : rows_here - 1) * p.row_stride;
  const T* w = static_cast<const T*>(p.w) + first_row * p.row_stride;
  const __nv_bfloat16* x = p.x;
  float acc[kRows] = {};
  int64_t c = (static_cast<int64_t>(gw) * 32 + lane) * kElems;
  const bool reads = rows_here > 0;
  auto ld = [&](int64_t at, int r) { return __ldcs(reinterpret_cast<const uint4*>(w + row_off[r] + at)); };
  if constexpr (kMode == 1) {
    uint4 cur[kSteps][kRows];
    bool have = reads && c + (kSteps - 1) * kStride < p.cols;
    if (have)
#pragma unroll
      for (int s = 0; s < kSteps; ++s)
#pragma unroll
        for (int r = 0; r < kRows; ++r) cur[s][r] = ld(c + s * kStride, r);
    while (have) {
      const int64_t n = c + kSteps * kStride;
      const bool more = n + (kSteps - 1) * kStride < p.cols;
      uint4 nxt[kSteps][kRows];
      if (more)
#pragma unroll
        for (int s = 0; s < kSteps; ++s)
#pragma unroll
          for (int r = 0; r < kRows; ++r) nxt[s][r] = ld(n + s * kStride, r);
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        XChunk<T> xc;
        xc.load(x + c + s * kStride);
#pragma unroll
        for (int r = 0; r < kRows; ++r) acc[r] = dot_chunk(cur[s][r], xc, acc[r]);
      }
      c = n;
      have = more;
      if (more)
#pragma unroll
        for (int s = 0; s < kSteps; ++s)
#pragma unroll
          for (int r = 0; r < kRows; ++r) cur[s][r] = nxt[s][r];
    }
  } else {
    for (; reads && c + (kSteps - 1) * kStride < p.cols; c += kSteps * kStride) {
      if constexpr (kMode == 2) {
#pragma unroll
        for (int s = 0; s < kSteps; ++s)
#pragma unroll
          for (int r = 0; r < kRows; ++r)
            if (c + (kSteps + s) * kStride < p.cols) opbench::kernels::prefetch_l2(w + row_off[r] + c + (kSteps + s) * kStride);
      }
      uint4 wv[kSteps][kRows];
#pragma unroll
      for (int s = 0; s < kSteps; ++s)
#pragma unroll
        for (int r = 0; r < kRows; ++r) wv[s][r] = ld(c + s * kStride, r);
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        XChunk<T> xc;
        xc.load(x + c + s * kStride);
#pragma unroll
        for (int r = 0; r < kRows; ++r) acc[r] = dot_chunk(wv[s][r], xc, acc[r]);
      }
    }
  }
  for (; reads && c < p.cols; c += kStride) {
    XChunk<T> xc;
    xc.load(x + c);
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[r] = dot_chunk(ld(c, r), xc, acc[r]);
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = warp_sum(acc[r]);
  if constexpr (kGroup > 1) {
    if (lane == 0)
#pragma unroll
      for (int r = 0; r < kRows; ++r) partial[warp][r] = acc[r];
    __syncthreads();
    if (gw == 0)
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        float t = 0.f;
#pragma unroll
        for (int g = 0; g < kGroup; ++g) t += partial[warp + g][r];
        acc[r] = t;
      }
  }
  if (gw != 0 || lane >= rows_here) return;
  float mine = acc[0];
#pragma unroll
  for (int r = 1; r < kRows; ++r)
    if (lane == r) mine = acc[r];
  p.y[first_row + lane] = __float2bfloat16(mine);
}
// int8 with 8-byte loads: a lane reads 8 weights a step (inductor's 32-warp config reads 8 a thread).
__device__ __forceinline__ float dot8(uint2 wv, const XChunk<__nv_bfloat16>& x, float acc) {
  constexpr float kBias = 8388608.f + 128.f;
  const uint32_t words[2] = {wv.x ^ 0x80808080u, wv.y ^ 0x80808080u};
  float a0 = 0.f, a1 = 0.f;
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    a0 = fmaf(__uint_as_float(__byte_perm(words[k], 0x4B000000u, 0x7540)) - kBias, x.v[4 * k], a0);
    a1 = fmaf(__uint_as_float(__byte_perm(words[k], 0x4B000000u, 0x7541)) - kBias, x.v[4 * k + 1], a1);
    a0 = fmaf(__uint_as_float(__byte_perm(words[k], 0x4B000000u, 0x7542)) - kBias, x.v[4 * k + 2], a0);
    a1 = fmaf(__uint_as_float(__byte_perm(words[k], 0x4B000000u, 0x7543)) - kBias, x.v[4 * k + 3], a1);
  }
  return acc + (a0 + a1);
}
template <int kWarps, int kGroup, int kRows, int kSteps, int kMin>
__global__ void __launch_bounds__(kWarps * 32, kMin) g8_kernel(Params p) {
  constexpr int64_t kStride = int64_t{kGroup} * 32 * 8;
  __shared__ float partial[kWarps][kRows];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, gw = warp % kGroup;
  const int64_t first_row = (static_cast<int64_t>(blockIdx.x) * (kWarps / kGroup) + warp / kGroup) * kRows;
  const int rows_here = first_row >= p.rows ? 0 : static_cast<int>(p.rows - first_row < kRows ? p.rows - first_row : kRows);
  int64_t row_off[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) row_off[r] = (r < rows_here ? r : rows_here - 1) * p.row_stride;
  const int8_t* w = static_cast<const int8_t*>(p.w) + first_row * p.row_stride;
  float acc[kRows] = {};
  int64_t c = (static_cast<int64_t>(gw) * 32 + lane) * 8;
  const bool reads = rows_here > 0;
  for (; reads && c + (kSteps - 1) * kStride < p.cols; c += kSteps * kStride) {
    uint2 wv[kSteps][kRows];
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
#pragma unroll
      for (int r = 0; r < kRows; ++r) wv[s][r] = __ldcs(reinterpret_cast<const uint2*>(w + row_off[r] + c + s * kStride));
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      XChunk<__nv_bfloat16> xc;
      xc.load(p.x + c + s * kStride);
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] = dot8(wv[s][r], xc, acc[r]);
    }
  }
  for (; reads && c < p.cols; c += kStride) {
    XChunk<__nv_bfloat16> xc;
    xc.load(p.x + c);
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[r] = dot8(__ldcs(reinterpret_cast<const uint2*>(w + row_off[r] + c)), xc, acc[r]);
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = warp_sum(acc[r]);
  if constexpr (kGroup > 1) {
    if (lane == 0)
#pragma unroll
      for (int r = 0; r < kRows; ++r) partial[warp][r] = acc[r];
    __syncthreads();
    if (gw == 0)
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        float t = 0.f;
#pragma unroll
        for (int g = 0; g < kGroup; ++g) t += partial[warp + g][r];
        acc[r] = t;
      }
  }
  if (gw != 0 || lane >= rows_here) return;
  float mine = acc[0];
#pragma unroll
  for (int r = 1; r < kRows; ++r)
    if (lane == r) mine = acc[r];
  p.y[first_row + lane] = __float2bfloat16(mine);
}
template <int W, int G, int R, int S, int N>
void g8_launch(const Params& p, unsigned, cudaStream_t s) {
  g8_kernel<W, G, R, S, N><<<vector_blocks<W, G, R>(p.rows), W * 32, 0, s>>>(p);
}
template <typename T, int W, int G, int R, int S, int M, int N>
void gx_launch(const Params& p, unsigned, cudaStream_t s) {
  gx_kernel<T, W, G, R, S, M, N><<<vector_blocks<W, G, R>(p.rows), W * 32, 0, s>>>(p);
}
#define GX(W, G, R, S, M, N) \
  GemvConfig { "gx.w" #W "g" #G "r" #R "s" #S ".m" #M ".n" #N, gx_launch<bf16, W, G, R, S, M, N>, gx_launch<int8_t, W, G, R, S, M, N> }
#define G8(W, G, R, S, N) \
  GemvConfig { "g8.w" #W "g" #G "r" #R "s" #S ".n" #N, gx_launch<bf16, 8, 4, 2, 2, 0, 1>, g8_launch<W, G, R, S, N> }
const GemvConfig kGx[] = {GX(8, 4, 2, 2, 0, 1), G8(4, 4, 2, 4, 8), G8(8, 4, 2, 4, 4), GX(16, 16, 1, 2, 0, 1), GX(8, 8, 1, 2, 0, 1)};

void explore_gemv(Timer& timer, int64_t d, bool int8, int reps) {
  const int64_t w_elems = d * d, w_bytes = w_elems * (int8 ? 1 : 2);
  DeviceBuffer w(w_bytes), x(d * 2), y(d * 2), ref(d * 8), abs_sum(d * 8);
  if (int8) fill_int8<<<1024, 256>>>(w.as<int8_t>(), w_elems, 7);
  else fill_bf16<<<1024, 256>>>(w.as<bf16>(), w_elems, 7, -1.f, 1.f);
  fill_bf16<<<64, 256>>>(x.as<bf16>(), d, 11, -1.f, 1.f);
  const Params p{w.p, d, d, d, x.as<bf16>(), 0, y.as<bf16>(), nullptr, d * d, 1, nullptr, 0};
  if (int8) gemv_reference<int8_t><<<(d + 127) / 128, 128>>>(p, 1, ref.as<double>(), abs_sum.as<double>());
  else gemv_reference<bf16><<<(d + 127) / 128, 128>>>(p, 1, ref.as<double>(), abs_sum.as<double>());
  CK(cudaDeviceSynchronize());
  const std::vector<double> ref_h = to_host(ref.as<double>(), d), abs_h = to_host(abs_sum.as<double>(), d);
  auto err = [&](float got, int64_t i) {
    return std::fabs(got - ref_h[i]) / (8e-3 * std::fabs(ref_h[i]) + 1e-5 * abs_h[i] + 1e-6);
  };
  const char* dtype = int8 ? "int8" : "bf16";
  const std::string name = "Gemv/" + std::to_string(d);
  opbench::kernels::GemvArgs args;
  args.w = w.p;
  args.w_type = int8 ? opbench::kernels::WeightType::kInt8 : opbench::kernels::WeightType::kBf16;
  args.rows = d;
  args.cols = args.row_stride = d;
  args.x = x.p;
  args.y = y.p;
  auto lib = [&](const char* c) {
    check_and_time(timer, "gemv", dtype, name, c, [&](cudaStream_t s) { opbench::kernels::launch_gemv(args, s); },
                   y.as<bf16>(), d, err, w_bytes / 1e9, reps);
  };
  lib("launch.first");
  for (const GemvConfig& cfg : kGx) {
    const GemvLaunch launch = int8 ? cfg.int8_launch : cfg.bf16_launch;
    check_and_time(timer, "gemv", dtype, name, cfg.name, [&](cudaStream_t s) { launch(p, 1, s); }, y.as<bf16>(), d, err,
                   w_bytes / 1e9, reps);
  }
  lib("launch");
}
}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 40;
  Timer timer;
  std::printf("kind,dtype,case,config,us,GBps,check\n");
  for (int round = 0; round < 2; ++round) {
    for (int64_t d : {4096, 8192, 16384}) explore_gemv(timer, d, true, reps);
    for (int64_t d : {4096, 8192, 16384}) explore_gemv(timer, d, false, reps);
  }
  return 0;
}
