// Scratch exploration (not part of the build): GEMV variants beside the library's kernel, and a flush
// that also evicts evict_last lines. Reuses verify/tune/kernel_tune.cu's helpers.
#define main kernel_tune_main
#include "../verify/tune/kernel_tune.cu"
#undef main

namespace {
using namespace opbench::kernels::gemv;

enum Load { kCs = 0, kNcNoAlloc = 1, kEvictFirst = 2, kNc256 = 3, kPlain = 4 };

template <int kLoad>
__device__ __forceinline__ uint4 load_w(const void* p, uint64_t policy) {
  uint4 v;
  if constexpr (kLoad == kCs) {
    v = __ldcs(reinterpret_cast<const uint4*>(p));
  } else if constexpr (kLoad == kNcNoAlloc) {
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  } else if constexpr (kLoad == kEvictFirst) {
    asm volatile("ld.global.L1::evict_first.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(policy));
  } else if constexpr (kLoad == kNc256) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  } else {
    v = *reinterpret_cast<const uint4*>(p);
  }
  return v;
}

// kWarps warps a block, row groups of kGroup warps, kRows rows a group, kSteps steps in flight;
// kPersist: a grid of resident blocks looping over the row groups.
template <typename T, int kWarps, int kGroup, int kRows, int kSteps, int kLoad, bool kPersist, int kExtra = 0>
__global__ void __launch_bounds__(kWarps * 32) ex_kernel(Params p) {
  constexpr int kElems = XChunk<T>::kElems;
  constexpr int64_t kStride = int64_t{kGroup} * 32 * kElems;
  constexpr int kGroupsPerBlock = kWarps / kGroup;
  __shared__ float partial[kWarps][kRows];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, gw = warp % kGroup;
  const int64_t slice = blockIdx.y;
  const int64_t expert = expert_of(p, slice);
  const T* wbase = static_cast<const T*>(p.w) + (expert < 0 ? 0 : expert) * p.expert_stride;
  const __nv_bfloat16* x = p.x + slice * p.x_stride;
  uint64_t policy = 0;
  if constexpr (kLoad == kEvictFirst) asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  const int64_t groups = (p.rows + kRows - 1) / kRows;
  const int64_t block_step = kPersist ? gridDim.x : (1ll << 40);
  for (int64_t b = blockIdx.x; b * kGroupsPerBlock < groups; b += block_step) {
    const int64_t g = b * kGroupsPerBlock + warp / kGroup;
    const int64_t first_row = g * kRows;
    const int rows_here = first_row >= p.rows ? 0 : static_cast<int>(p.rows - first_row < kRows ? p.rows - first_row : kRows);
    int64_t row_off[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) row_off[r] = (first_row + (r < rows_here ? r : rows_here - 1)) * p.row_stride;
    float acc[kRows] = {};
    int64_t c = (static_cast<int64_t>(gw) * 32 + lane) * kElems;
    const bool reads = rows_here > 0;
    if constexpr ((kExtra & 1) != 0)
      if (reads)
#pragma unroll
        for (int s = 0; s < kSteps; ++s)
#pragma unroll
          for (int r = 0; r < kRows; ++r)
            if (c + s * kStride < p.cols) opbench::kernels::prefetch_l2(wbase + row_off[r] + c + s * kStride);
    if constexpr ((kExtra & 2) != 0) {
      opbench::kernels::wait_for_inputs();
      opbench::kernels::allow_next_launch();
    }
    for (; reads && c + (kSteps - 1) * kStride < p.cols; c += kSteps * kStride) {
      uint4 wv[kSteps][kRows];
#pragma unroll
      for (int s = 0; s < kSteps; ++s)
#pragma unroll
        for (int r = 0; r < kRows; ++r) wv[s][r] = load_w<kLoad>(wbase + row_off[r] + c + s * kStride, policy);
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        XChunk<T> xc;
        xc.load(x + c + s * kStride);
#pragma unroll
        for (int r = 0; r < kRows; ++r) acc[r] = dot_chunk(wv[s][r], xc, acc[r]);
      }
    }
    for (; reads && c < p.cols; c += kStride) {
      XChunk<T> xc;
      xc.load(x + c);
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] = dot_chunk(load_w<kLoad>(wbase + row_off[r] + c, policy), xc, acc[r]);
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
          for (int q = 0; q < kGroup; ++q) t += partial[warp + q][r];
          acc[r] = t;
        }
      if constexpr (kPersist) __syncthreads();
    }
    if (gw == 0 && lane < rows_here) {
      float mine = acc[0];
#pragma unroll
      for (int r = 1; r < kRows; ++r)
        if (lane == r) mine = acc[r];
      p.y[slice * p.rows + first_row + lane] =
          expert < 0 ? nan_bf16() : finish_row(p, expert, first_row + lane, mine);
    }
  }
}

template <typename T, int kWarps, int kGroup, int kRows, int kSteps, int kLoad, bool kPersist, int kExtra>
void ex_launch(const Params& p, unsigned selected, cudaStream_t s) {
  auto kernel = ex_kernel<T, kWarps, kGroup, kRows, kSteps, kLoad, kPersist, kExtra>;
  const int64_t groups = (p.rows + kRows - 1) / kRows;
  int64_t blocks = (groups + kWarps / kGroup - 1) / (kWarps / kGroup);
  if (kPersist) {
    static int resident = 0;
    if (resident == 0) {
      int per_sm = 0, sms = 0;
      CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kWarps * 32, 0));
      CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
      resident = per_sm * sms;
    }
    const int64_t want = (resident + selected - 1) / selected;
    blocks = std::min<int64_t>(blocks, want);
  }
  kernel<<<dim3(static_cast<unsigned>(blocks), selected), kWarps * 32, 0, s>>>(p);
}

struct ExConfig {
  const char* name;
  GemvLaunch bf16, int8;
};
#define EXE(W, G, R, S, L, E) \
  ExConfig { "w" #W "g" #G "r" #R "s" #S "l" #L "e" #E, ex_launch<bf16, W, G, R, S, L, false, E>, ex_launch<int8_t, W, G, R, S, L, false, E> }
#define EX(W, G, R, S) EXE(W, G, R, S, 0, 0)
const ExConfig kExConfigs[] = {
    // long bf16 rows: big blocks, few steps (inductor picks 16-32 warps, one row, one 16-byte load a step)
    EX(16, 16, 1, 1), EX(16, 16, 1, 2), EX(16, 16, 1, 4), EX(16, 16, 2, 1), EX(16, 16, 2, 2), EX(32, 32, 1, 1),
    EX(32, 32, 1, 2), EX(32, 32, 2, 1), EX(8, 8, 1, 1), EX(8, 8, 1, 2), EX(8, 8, 2, 1), EX(16, 8, 1, 2), EX(16, 8, 2, 1),
    // int8: small blocks of 2-4 warps
    EX(4, 4, 2, 2), EX(4, 4, 2, 1), EX(4, 4, 2, 4), EX(4, 4, 4, 1), EX(4, 4, 4, 2), EX(4, 4, 1, 4), EX(4, 2, 2, 2),
    EX(2, 2, 2, 2), EX(2, 2, 4, 2), EX(2, 1, 2, 2), EX(8, 8, 2, 2), EX(8, 4, 2, 2), EX(8, 2, 2, 2),
    // short rows: one or two warps a block
    EX(1, 1, 4, 2), EX(1, 1, 2, 4), EX(1, 1, 4, 4), EX(2, 2, 1, 4), EX(4, 4, 1, 2), EX(1, 1, 8, 1),
    // what the library kernel adds: the L2 prefetch of the first steps (e1), the PDL instructions (e2), both (e3)
    EXE(8, 8, 2, 2, 0, 1), EXE(8, 8, 2, 2, 0, 2), EXE(8, 8, 2, 2, 0, 3), EXE(16, 16, 1, 2, 0, 3), EXE(4, 4, 2, 2, 0, 3),
    EXE(4, 4, 2, 2, 0, 2), EXE(16, 16, 1, 2, 2, 0), EXE(4, 4, 2, 2, 2, 0)};

void explore_gemv(Timer& timer, const GemvCase& gc, bool int8, int reps) {
  const int64_t experts = gc.experts ? gc.experts : 1;
  const int64_t w_elems = experts * gc.rows * gc.cols, w_bytes = w_elems * (int8 ? 1 : 2);
  const int64_t x_elems = gc.shared_x ? gc.cols : gc.selected * gc.cols, outputs = gc.selected * gc.rows;
  DeviceBuffer w(w_bytes), x(x_elems * 2), y(outputs * 2), ref(outputs * 8), abs_sum(outputs * 8), idx(16);
  if (int8) fill_int8<<<1024, 256>>>(w.as<int8_t>(), w_elems, 7);
  else fill_bf16<<<1024, 256>>>(w.as<bf16>(), w_elems, 7, -1.f, 1.f);
  fill_bf16<<<64, 256>>>(x.as<bf16>(), x_elems, 11, -1.f, 1.f);
  const std::vector<int64_t> chosen = {3, gc.experts - 1};
  CK(cudaMemcpy(idx.p, chosen.data(), 16, cudaMemcpyHostToDevice));
  const int64_t* expert_idx = gc.experts ? idx.as<int64_t>() : nullptr;
  const Params p{w.p,       gc.rows,      gc.cols, gc.cols, x.as<bf16>(), gc.shared_x ? 0 : gc.cols, y.as<bf16>(),
                 expert_idx, gc.rows * gc.cols, experts, nullptr, 0};
  const unsigned ref_blocks = static_cast<unsigned>((outputs + 127) / 128);
  if (int8) gemv_reference<int8_t><<<ref_blocks, 128>>>(p, gc.selected, ref.as<double>(), abs_sum.as<double>());
  else gemv_reference<bf16><<<ref_blocks, 128>>>(p, gc.selected, ref.as<double>(), abs_sum.as<double>());
  CK(cudaDeviceSynchronize());
  const std::vector<double> ref_h = to_host(ref.as<double>(), outputs), abs_h = to_host(abs_sum.as<double>(), outputs);
  auto err = [&](float got, int64_t i) {
    return std::fabs(got - ref_h[i]) / (8e-3 * std::fabs(ref_h[i]) + 1e-5 * abs_h[i] + 1e-6);
  };
  const double gbytes = (gc.experts ? gc.selected * gc.rows * gc.cols * (int8 ? 1 : 2) : w_bytes) / 1e9;
  const char* dtype = int8 ? "int8" : "bf16";
  const unsigned selected = static_cast<unsigned>(gc.selected);
  opbench::kernels::GemvArgs args;
  args.w = w.p;
  args.w_type = int8 ? opbench::kernels::WeightType::kInt8 : opbench::kernels::WeightType::kBf16;
  args.rows = gc.rows;
  args.cols = args.row_stride = gc.cols;
  args.x = x.p;
  args.x_stride = p.x_stride;
  args.y = y.p;
  args.expert_idx = expert_idx;
  args.num_selected = gc.selected;
  args.expert_stride = p.expert_stride;
  args.num_experts = experts;
  auto lib = [&](const char* name) {
    check_and_time(timer, "gemv", dtype, gc.name, name, [&](cudaStream_t s) { opbench::kernels::launch_gemv(args, s); },
                   y.as<bf16>(), outputs, err, gbytes, reps);
  };
  lib("launch.first");
  for (const ExConfig& cfg : kExConfigs) {
    const GemvLaunch launch = int8 ? cfg.int8 : cfg.bf16;
    check_and_time(timer, "gemv", dtype, gc.name, cfg.name, [&](cudaStream_t s) { launch(p, selected, s); },
                   y.as<bf16>(), outputs, err, gbytes, reps);
  }
  lib("launch");
}

// The previous flush: a plain read of 2x L2.
__global__ void plain_read_kernel(const uint4* data, size_t count, int* sink) {
  unsigned acc = 0;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const uint4 q = data[i];
    acc ^= q.x ^ q.y ^ q.z ^ q.w;
  }
  if (acc == 0x9E3779B9u) *sink = 1;
}

// LayerNorm bf16 4096 x cols, timed with each flush (synced per sample: flush, events around the launch)
// before and after a kernel reads x as inductor does (evict_last); and with the library's held timer.
void flush_test(Timer& timer, int64_t cols, int reps) {
  const int64_t rows = 4096;
  DeviceBuffer x(rows * cols * 2), y(rows * cols * 2), w(cols * 2), b(cols * 2), sink(4);
  fill_bf16<<<1024, 256>>>(x.as<bf16>(), rows * cols, 3, -2.f, 3.f);
  fill_bf16<<<16, 256>>>(w.as<bf16>(), cols, 4, 0.5f, 1.5f);
  fill_bf16<<<16, 256>>>(b.as<bf16>(), cols, 5, -0.5f, 0.5f);
  const opbench::kernels::NormArgs args{x.p, w.p, b.p, y.p, rows, cols, cols, 1e-5f, opbench::kernels::NormType::kBf16};
  auto launch = [&](cudaStream_t s) { opbench::kernels::launch_layer_norm(args, s); };
  auto poison = [&] {
    read_as_inductor<<<rows, 256>>>(reinterpret_cast<const uint4*>(x.p), cols / 8, sink.as<int>());
    CK(cudaDeviceSynchronize());
  };
  auto report = [&](const std::string& what, double us) {
    std::printf("flush,bf16,LayerNorm/4096x%lld,%s,%.2f,%.0f,ok\n", static_cast<long long>(cols), what.c_str(), us,
                2.0 * rows * cols * 2 / 1e3 / us);
    std::fflush(stdout);
  };
  auto synced = [&](bool library_flush) {
    cudaEvent_t a, z;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&z));
    std::vector<float> ms;
    for (int i = 0; i < reps; ++i) {
      if (library_flush)
        opbench::detail::launch_read_flush(timer.stream, timer.flush->p, timer.flush_bytes, timer.sink.as<int>(),
                                           timer.sm_count);
      else
        plain_read_kernel<<<4 * timer.sm_count, 512, 0, timer.stream>>>(timer.flush->as<uint4>(),
                                                                         timer.flush_bytes / 16, timer.sink.as<int>());
      CK(cudaEventRecord(a, timer.stream));
      launch(timer.stream);
      CK(cudaEventRecord(z, timer.stream));
      CK(cudaStreamSynchronize(timer.stream));
      float t;
      CK(cudaEventElapsedTime(&t, a, z));
      ms.push_back(t);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(z));
    std::nth_element(ms.begin(), ms.begin() + reps / 2, ms.end());
    return ms[reps / 2] * 1000.0;
  };
  for (bool library_flush : {false, true}) {
    const std::string name = library_flush ? "library_flush" : "plain_read_flush";
    CK(cudaCtxResetPersistingL2Cache());
    report(name + ".synced.clean", synced(library_flush));
    poison();
    report(name + ".synced.after_evict_last", synced(library_flush));
  }
  CK(cudaCtxResetPersistingL2Cache());
  report("library_flush.held.clean", timer.median_us(launch, reps));
  poison();
  report("library_flush.held.after_evict_last", timer.median_us(launch, reps));
}


// Two passes over L2 as inductor's norms: pass 1 reads x with evict_last (statistics: shifted sums),
// pass 2 reads it again (L2 hits, evict_first) with w and b and writes y. A row per block.
namespace rn2 = opbench::kernels::row_norm;
__device__ __forceinline__ uint4 ld_hint(const uint4* p, uint64_t policy) {
  uint4 v;
  asm volatile("ld.global.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(policy));
  return v;
}
template <typename T, typename Norm, int kThreads, int kVec, bool kHints>
__global__ void __launch_bounds__(kThreads) l2pass_kernel(rn2::Row<T> r) {
  constexpr int kPer = 16 / sizeof(T);
  const int64_t vectors = r.cols / kPer;
  const uint4* xr = reinterpret_cast<const uint4*>(r.x + blockIdx.x * r.row_stride);
  uint64_t keep, drop;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(keep));
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(drop));
  const float shift = Norm::kCentered ? rn2::to_f(r.x[blockIdx.x * r.row_stride]) : 0.f;
  float s1 = 0.f, s2 = 0.f;
  for (int64_t v0 = threadIdx.x; v0 < vectors; v0 += int64_t{kThreads} * kVec) {
    uint4 q[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      if (v0 + k * kThreads < vectors) q[k] = kHints ? ld_hint(xr + v0 + k * kThreads, keep) : xr[v0 + k * kThreads];
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      if (v0 + k * kThreads >= vectors) continue;
      const T* e = reinterpret_cast<const T*>(&q[k]);
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        const float d = rn2::to_f(e[i]) - shift;
        s1 += d;
        s2 = fmaf(d, d, s2);
      }
    }
  }
  const float n = static_cast<float>(r.cols);
  float mean = 0.f, scale;
  if constexpr (Norm::kCentered) {
    s1 = rn2::group_sum(s1, kThreads);
    s2 = rn2::group_sum(s2, kThreads);
    const float md = s1 / n;
    mean = shift + md;
    scale = rsqrtf(fmaxf(s2 / n - md * md, 0.f) + r.eps);
  } else {
    scale = Norm::scale(rn2::group_sum(s2, kThreads), n, r.eps);
  }
  const bool bias = Norm::kBias && r.b;
  const uint4* w = reinterpret_cast<const uint4*>(r.w);
  const uint4* b = reinterpret_cast<const uint4*>(r.b);
  uint4* yr = reinterpret_cast<uint4*>(r.y + blockIdx.x * r.cols);
  for (int64_t v0 = threadIdx.x; v0 < vectors; v0 += int64_t{kThreads} * kVec) {
    uint4 q[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      if (v0 + k * kThreads < vectors) q[k] = kHints ? ld_hint(xr + v0 + k * kThreads, drop) : xr[v0 + k * kThreads];
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      const int64_t v = v0 + k * kThreads;
      if (v < vectors)
        yr[v] = rn2::out_vector<T, Norm>(q[k], __ldg(w + v), bias ? __ldg(b + v) : uint4{}, bias, mean, scale);
    }
  }
}
template <typename Norm, int kThreads, int kVec, bool kHints>
void l2pass_launch(const rn2::Row<bf16>& r, int64_t rows, cudaStream_t s) {
  l2pass_kernel<bf16, Norm, kThreads, kVec, kHints><<<static_cast<unsigned>(rows), kThreads, 0, s>>>(r);
}
struct L2Config {
  const char* name;
  NormLaunch layer, rms;
};
#define L2C(B, V, H) L2Config{"l2.b" #B "v" #V "h" #H, l2pass_launch<rn2::LayerPolicy, B, V, H>, l2pass_launch<rn2::RmsPolicy, B, V, H>}
const L2Config kL2Configs[] = {L2C(256, 1, true),  L2C(256, 2, true),  L2C(256, 4, true), L2C(512, 1, true),
                               L2C(512, 2, true),  L2C(512, 4, true),  L2C(1024, 1, true), L2C(1024, 2, true),
                               L2C(128, 4, true),  L2C(512, 2, false), L2C(256, 4, false), L2C(1024, 1, false)};

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
  const rn2::Row<bf16> r{x.as<bf16>(), w.as<bf16>(), bias, y.as<bf16>(), cols, cols, 1e-5f};
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
  for (const L2Config& c : kL2Configs) {
    const NormLaunch launch = layer ? c.layer : c.rms;
    check_and_time(timer, "norm", "bf16", name, c.name, [&](cudaStream_t s) { launch(r, rows, s); }, y.as<bf16>(),
                   rows * cols, err, gbytes, reps);
  }
  lib("launch");
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 40;
  const std::string only = argc > 2 ? argv[2] : "";
  Timer timer;
  std::printf("kind,dtype,case,config,us,GBps,check\n");
  if (only == "gemv") {
    const std::vector<GemvCase> cases = {
        {"Gemv/1024", 1024, 1024, 1, 0, true},       {"Gemv/4096", 4096, 4096, 1, 0, true},
        {"Gemv/8192", 8192, 8192, 1, 0, true},       {"Gemv/16384", 16384, 16384, 1, 0, true},
        {"GatherGemv/4096", 4096, 4096, 2, 8, true}, {"GatherGemv/8192", 8192, 8192, 2, 8, true}};
    for (bool int8 : {false, true})
      for (const GemvCase& gc : cases) explore_gemv(timer, gc, int8, reps);
  }
  if (only == "norm")
    for (bool layer : {true, false})
      for (int64_t cols : {1024, 4096, 8192, 16384, 4104}) explore_norm(timer, cols == 4104 ? 33 : 4096, cols, layer, reps);
  if (only == "flush")
    for (int64_t cols : {8192, 16384}) flush_test(timer, cols, reps);
  return 0;
}
