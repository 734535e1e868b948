// Exploration: exact-fit GEMV kernels (the row length a compile-time constant, a row per block, every
// load of the row issued before any arithmetic, as inductor's kernels for static shapes) against the
// library's launch, on bench_ops' timing (kernel_tune's Timer), every configuration checked first.
#define main kernel_tune_main
#include "../../verify/tune/kernel_tune.cu"
#undef main
#include <cstring>

namespace x4 {
using namespace opbench::kernels::gemv;

// x policy: 0 plain load, 1 __ldg, 2 L2 evict_last.
__device__ __forceinline__ uint4 load_x(const uint4* p, int policy) {
  if (policy == 1) return __ldg(p);
  if (policy == 2) return opbench::detail::load_with_policy(p, opbench::detail::l2_policy(true));
  return *p;
}
// deq 0: the library's dot_chunk; 1: I2F per byte (inductor's way).
__device__ __forceinline__ float dot_i2f(uint4 wv, const XChunk<int8_t>& x, float acc) {
  const int8_t* b = reinterpret_cast<const int8_t*>(&wv);
  float a0 = 0.f, a1 = 0.f;
#pragma unroll
  for (int k = 0; k < 16; k += 2) {
    a0 = fmaf(static_cast<float>(b[k]), x.v[k], a0);
    a1 = fmaf(static_cast<float>(b[k + 1]), x.v[k + 1], a1);
  }
  return acc + (a0 + a1);
}

// kPin: every FMA depends on every load (through `zero`, a kernel argument that is 0), so ptxas cannot
// sink loads behind arithmetic: all of the thread's loads are in flight together.
template <typename T, int kWarps, int kChunks, int kMinBlocks, bool kGather, int kDeq, int kXPolicy, bool kPin>
__global__ void __launch_bounds__(kWarps * kWarpSize, kMinBlocks) exact_kernel(Params p, uint32_t zero) {
  constexpr int kThreads = kWarps * kWarpSize;
  constexpr int kElems = XChunk<T>::kElems;
  constexpr int kXVec = kElems / 8;
  __shared__ float partial[kWarps];
  const int64_t slice = kGather ? blockIdx.y : 0;
  const int64_t expert = kGather ? expert_of(p, slice) : 0;
  const int64_t row = blockIdx.x;
  if (expert < 0) {
    if (threadIdx.x == 0) p.y[slice * p.rows + row] = nan_bf16();
    return;
  }
  const uint4* w = reinterpret_cast<const uint4*>(static_cast<const T*>(p.w) + expert * p.expert_stride + row * p.row_stride) + threadIdx.x;
  const uint4* x = reinterpret_cast<const uint4*>(p.x + slice * p.x_stride) + threadIdx.x * kXVec;
  uint4 wv[kChunks];
#pragma unroll
  for (int i = 0; i < kChunks; ++i) wv[i] = __ldcs(w + i * kThreads);
  uint4 xv[kChunks][kXVec];
#pragma unroll
  for (int i = 0; i < kChunks; ++i)
#pragma unroll
    for (int q = 0; q < kXVec; ++q) xv[i][q] = load_x(x + i * kThreads * kXVec + q, kXPolicy);
  float acc = 0.f;
  if constexpr (kPin) {
    uint32_t all = 0;
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      all ^= wv[i].x;
#pragma unroll
      for (int q = 0; q < kXVec; ++q) all ^= xv[i][q].x;
    }
    const uint32_t gate = all & zero;   // 0, known only at run time
#pragma unroll
    for (int i = 0; i < kChunks; ++i) {
      if constexpr (sizeof(T) == 1) {
        wv[i].x ^= gate; wv[i].y ^= gate; wv[i].z ^= gate; wv[i].w ^= gate;   // folds into the 0x80 flip
      } else {
        wv[i].x ^= gate; wv[i].y ^= gate; wv[i].z ^= gate; wv[i].w ^= gate;
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kChunks; ++i) {
    XChunk<T> xc;
#pragma unroll
    for (int q = 0; q < kXVec; ++q) xc.set_vector(q, xv[i][q]);
    if constexpr (sizeof(T) == 1 && kDeq == 1)
      acc = dot_i2f(wv[i], xc, acc);
    else
      acc = dot_chunk(wv[i], xc, acc);
  }
  acc = warp_sum(acc);
  const int warp = threadIdx.x / kWarpSize;
  if (threadIdx.x % kWarpSize == 0) partial[warp] = acc;
  __syncthreads();
  if (threadIdx.x != 0) return;
  float total = 0.f;
#pragma unroll
  for (int g = 0; g < kWarps; ++g) total += partial[g];
  p.y[slice * p.rows + row] = finish_row(p, expert, row, total);
}

struct Cfg {
  std::string name;
  int bytes;      // 1 int8, 2 bf16
  int64_t cols;   // the row length it fits
  bool gather;
  void (*launch)(const Params&, unsigned, cudaStream_t);
};
template <typename T, int W, int C, int M, bool G, int D, int X, bool P>
void lx(const Params& p, unsigned selected, cudaStream_t s) {
  exact_kernel<T, W, C, M, G, D, X, P><<<dim3(static_cast<unsigned>(p.rows), selected), W * kWarpSize, 0, s>>>(p, 0u);
}
template <typename T, int W, int C, int M, bool G, int D, int X, bool P>
Cfg make() {
  const int64_t cols = int64_t{W} * kWarpSize * C * (16 / sizeof(T));
  return Cfg{std::string(G ? "e.g." : "e.p.") + "w" + std::to_string(W) + "c" + std::to_string(C) + "m" + std::to_string(M) +
                 "d" + std::to_string(D) + "x" + std::to_string(X) + (P ? "p" : ""),
             static_cast<int>(sizeof(T)), cols, G, lx<T, W, C, M, G, D, X, P>};
}
template <typename T, int W, int C, int M, int D, int X>
void both(std::vector<Cfg>& v) {
  v.push_back(make<T, W, C, M, false, D, X, false>());
  v.push_back(make<T, W, C, M, true, D, X, false>());
  v.push_back(make<T, W, C, M, false, D, X, true>());
  v.push_back(make<T, W, C, M, true, D, X, true>());
}
std::vector<Cfg> configs() {
  std::vector<Cfg> v;
  using i8 = int8_t;
  // int8 16384
  both<i8, 16, 2, 0, 0, 0>(v); both<i8, 16, 2, 4, 0, 0>(v); both<i8, 16, 2, 3, 0, 0>(v);
  both<i8, 16, 2, 4, 1, 0>(v); both<i8, 16, 2, 0, 1, 0>(v); both<i8, 16, 2, 4, 0, 2>(v); both<i8, 16, 2, 0, 0, 1>(v);
  both<i8, 8, 4, 0, 0, 0>(v);  both<i8, 8, 4, 4, 0, 0>(v);  both<i8, 8, 4, 6, 0, 0>(v);
  both<i8, 4, 8, 0, 0, 0>(v);  both<i8, 4, 8, 8, 0, 0>(v);  both<i8, 32, 1, 0, 0, 0>(v); both<i8, 32, 1, 2, 0, 0>(v);
  // int8 8192
  both<i8, 16, 1, 0, 0, 0>(v); both<i8, 16, 1, 4, 0, 0>(v); both<i8, 8, 2, 0, 0, 0>(v); both<i8, 8, 2, 8, 0, 0>(v);
  both<i8, 4, 4, 0, 0, 0>(v);  both<i8, 4, 4, 8, 0, 0>(v);  both<i8, 4, 4, 12, 0, 0>(v);
  // int8 4096
  both<i8, 8, 1, 0, 0, 0>(v); both<i8, 4, 2, 0, 0, 0>(v); both<i8, 4, 2, 16, 0, 0>(v); both<i8, 2, 4, 0, 0, 0>(v);
  // bf16 16384
  both<bf16, 16, 4, 0, 0, 0>(v); both<bf16, 16, 4, 2, 0, 0>(v); both<bf16, 16, 4, 3, 0, 0>(v);
  both<bf16, 32, 2, 0, 0, 0>(v); both<bf16, 32, 2, 2, 0, 0>(v); both<bf16, 8, 8, 0, 0, 0>(v);
  both<bf16, 16, 4, 2, 0, 2>(v);
  // bf16 8192
  both<bf16, 16, 2, 0, 0, 0>(v); both<bf16, 16, 2, 4, 0, 0>(v); both<bf16, 8, 4, 0, 0, 0>(v); both<bf16, 8, 4, 6, 0, 0>(v);
  both<bf16, 32, 1, 0, 0, 0>(v); both<bf16, 32, 1, 2, 0, 0>(v); both<bf16, 4, 8, 0, 0, 0>(v); both<bf16, 16, 2, 4, 0, 2>(v);
  // bf16 4096
  both<bf16, 16, 1, 0, 0, 0>(v); both<bf16, 8, 2, 0, 0, 0>(v); both<bf16, 8, 2, 8, 0, 0>(v); both<bf16, 4, 4, 0, 0, 0>(v);
  return v;
}

void run(Timer& timer, const GemvCase& gc, bool int8, int reps, int round, const std::vector<Cfg>& cfgs) {
  const int64_t experts = gc.experts ? gc.experts : 1;
  const int64_t w_elems = experts * gc.rows * gc.cols, w_bytes = w_elems * (int8 ? 1 : 2);
  const int64_t x_elems = gc.shared_x ? gc.cols : gc.selected * gc.cols, outputs = gc.selected * gc.rows;
  DeviceBuffer w(w_bytes), x(x_elems * 2), y(outputs * 2), ref(outputs * 8), abs_sum(outputs * 8), idx(16);
  if (int8) fill_int8<<<1024, 256>>>(w.as<int8_t>(), w_elems, 7 + round);
  else fill_bf16<<<1024, 256>>>(w.as<bf16>(), w_elems, 7 + round, -1.f, 1.f);
  fill_bf16<<<64, 256>>>(x.as<bf16>(), x_elems, 11 + round, -1.f, 1.f);
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
  const std::string dtype = std::string(int8 ? "int8" : "bf16") + "." + std::to_string(round);
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
  auto launch_lib = [&](cudaStream_t s) { opbench::kernels::launch_gemv(args, s); };
  check_and_time(timer, "gemv", dtype.c_str(), gc.name, "launch", launch_lib, y.as<bf16>(), outputs, err, gbytes, reps);
  for (const Cfg& c : cfgs) {
    if (c.bytes != (int8 ? 1 : 2) || c.cols != gc.cols || c.gather != (gc.experts != 0)) continue;
    check_and_time(timer, "gemv", dtype.c_str(), gc.name, c.name.c_str(), [&](cudaStream_t s) { c.launch(p, selected, s); },
                   y.as<bf16>(), outputs, err, gbytes, reps);
  }
  check_and_time(timer, "gemv", dtype.c_str(), gc.name, "launch.last", launch_lib, y.as<bf16>(), outputs, err, gbytes, reps);
}
}  // namespace x4

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 40;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 2;
  Timer timer;
  std::fprintf(stderr, "rules: %s\n", opbench::kernels::launch_rules_name(opbench::kernels::current_launch_rules()));
  std::printf("kind,dtype,case,config,us,GBps,check\n");
  const std::vector<x4::Cfg> cfgs = x4::configs();
  const std::vector<GemvCase> cases = {{"Gemv/16384", 16384, 16384, 1, 0, true}, {"GatherGemv/16384", 16384, 16384, 2, 8, true},
                                       {"Gemv/8192", 8192, 8192, 1, 0, true},    {"GatherGemv/8192", 8192, 8192, 2, 8, true},
                                       {"Gemv/4096", 4096, 4096, 1, 0, true},    {"GatherGemv/4096", 4096, 4096, 2, 8, true}};
  for (int round = 0; round < rounds; ++round) {
    for (const GemvCase& gc : cases) x4::run(timer, gc, true, reps, round, cfgs);
    for (const GemvCase& gc : cases) x4::run(timer, gc, false, reps, round, cfgs);
  }
  return 0;
}
