// Exploration: the two-pass row norm at 32 registers (4 blocks of 512 threads an SM, as inductor's
// LayerNorm at 16384 on the H200): 32-bit indices, and pass 2 a vector at a time (kOne).
#define main kernel_tune_main
#include "../../verify/tune/kernel_tune.cu"
#undef main

namespace x7 {
using namespace opbench::kernels::row_norm;

template <typename T, typename Norm, int kThreads, int kVec, bool kKeepY, int kMinBlocks, bool kOne>
__global__ void __launch_bounds__(kThreads, kMinBlocks) tp32(Row<T> r) {
  constexpr int kPer = kVectorBytes / sizeof(T);
  const int vectors = static_cast<int>(r.cols / kPer), step = kThreads * kVec;
  const uint4* xr = reinterpret_cast<const uint4*>(r.x + blockIdx.x * r.row_stride);
  const uint64_t keep = opbench::detail::l2_policy(true), drop = opbench::detail::l2_policy(false);
  // A thread's kVec vectors of one step, all loads in flight before any is used.
  auto load_step = [&](int first, uint64_t policy, uint4 (&q)[kVec]) {
#pragma unroll
    for (int i = 0; i < kVec; ++i)
      if (first + i * kThreads < vectors) q[i] = opbench::detail::load_with_policy(xr + first + i * kThreads, policy);
  };
  float sum = 0.f, sum_sq = 0.f, shift = 0.f;
  for (int first = threadIdx.x; first < vectors; first += step) {
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
    const int mine = static_cast<int>(threadIdx.x) < vectors ? (vectors - threadIdx.x + kThreads - 1) / kThreads : 0;
    const float n = static_cast<float>(mine * kPer), shifted_mean = n > 0.f ? sum / n : 0.f;
    const float row_first = to_f(r.x[blockIdx.x * r.row_stride]);
    const float thread_mean = (shift - row_first) + shifted_mean;   // the thread's mean - c
    const float row_mean = group_sum(n * thread_mean, kThreads) / cols;   // the row's mean - c
    mean = row_first + row_mean;
    // the thread's centered sum of squares, sum (x - s)^2 - n (mean - s)^2, plus its mean's deviation
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
  if constexpr (kOne) {
    for (int v = threadIdx.x; v < vectors; v += kThreads) {   // pass 2: a vector at a time (from L2)
      const uint4 xq = opbench::detail::load_with_policy(xr + v, drop);
      const uint4 out = out_vector<T, Norm>(xq, __ldg(w + v), bias ? __ldg(b + v) : uint4{}, bias, mean, scale);
      if constexpr (kKeepY)
        opbench::detail::store_with_policy(yr + v, out, keep);
      else
        yr[v] = out;
    }
    return;
  }
  for (int first = threadIdx.x; first < vectors; first += step) {
    uint4 q[kVec];
    load_step(first, drop, q);
#pragma unroll
    for (int i = 0; i < kVec; ++i) {
      const int v = first + i * kThreads;
      if (v >= vectors) continue;
      const uint4 out = out_vector<T, Norm>(q[i], __ldg(w + v), bias ? __ldg(b + v) : uint4{}, bias, mean, scale);
      if constexpr (kKeepY)
        opbench::detail::store_with_policy(yr + v, out, keep);
      else
        yr[v] = out;
    }
  }
}

struct V {
  const char* name;
  NormLaunch layer, rms;
};
template <typename P, int B, int Vv, bool K, int M, bool O>
void lv(const Row<bf16>& r, int64_t rows, cudaStream_t s) {
  tp32<bf16, P, B, Vv, K, M, O><<<static_cast<unsigned>(rows), B, 0, s>>>(r);
}
#define VAR(B, Vv, K, M, O, name) V{name, lv<LayerPolicy, B, Vv, K, M, O>, lv<RmsPolicy, B, Vv, K, M, O>}
const V kVars[] = {VAR(512, 4, true, 3, false, "i32.b512v4k.m3"), VAR(512, 4, true, 3, true, "one.b512v4k.m3"),
                   VAR(512, 4, true, 4, true, "one.b512v4k.m4"),  VAR(512, 4, false, 4, true, "one.b512v4.m4"),
                   VAR(512, 4, false, 3, true, "one.b512v4.m3"),  VAR(1024, 2, true, 2, true, "one.b1024v2k.m2"),
                   VAR(256, 4, true, 6, true, "one.b256v4k.m6"),  VAR(256, 4, true, 8, true, "one.b256v4k.m8"),
                   VAR(512, 2, true, 4, true, "one.b512v2k.m4")};

void run(Timer& timer, int64_t rows, int64_t cols, bool layer, int reps, int round) {
  DeviceBuffer x(rows * cols * 2), y(rows * cols * 2), w(cols * 2), b(cols * 2), ref(rows * cols * 8);
  fill_bf16<<<1024, 256>>>(x.as<bf16>(), rows * cols, 3 + round, -2.f, 3.f);
  fill_bf16<<<16, 256>>>(w.as<bf16>(), cols, 4, 0.5f, 1.5f);
  fill_bf16<<<16, 256>>>(b.as<bf16>(), cols, 5, -0.5f, 0.5f);
  const bf16* bias = layer ? b.as<bf16>() : nullptr;
  norm_reference<<<rows, 256>>>(x.as<bf16>(), w.as<bf16>(), bias, cols, 1e-5, ref.as<double>());
  CK(cudaDeviceSynchronize());
  const std::vector<double> ref_h = to_host(ref.as<double>(), rows * cols);
  auto err = [&](float got, int64_t i) { return std::fabs(got - ref_h[i]) / (1.6e-2 * std::fabs(ref_h[i]) + 1e-2); };
  const Row<bf16> r{x.as<bf16>(), w.as<bf16>(), bias, y.as<bf16>(), cols, cols, 1e-5f};
  const std::string name = (layer ? "LayerNorm/" : "RMSNorm/") + std::to_string(rows) + "x" + std::to_string(cols);
  const std::string dtype = "bf16." + std::to_string(round);
  const double gbytes = 2.0 * rows * cols * 2 / 1e9;
  const opbench::kernels::NormArgs args{x.p, w.p, bias, y.p, rows, cols, cols, 1e-5f, opbench::kernels::NormType::kBf16};
  auto lib = [&](cudaStream_t s) {
    layer ? opbench::kernels::launch_layer_norm(args, s) : opbench::kernels::launch_rms_norm(args, s);
  };
  check_and_time(timer, "norm", dtype.c_str(), name, "launch", lib, y.as<bf16>(), rows * cols, err, gbytes, reps);
  for (const V& v : kVars) {
    const NormLaunch launch = layer ? v.layer : v.rms;
    check_and_time(timer, "norm", dtype.c_str(), name, v.name, [&](cudaStream_t s) { launch(r, rows, s); }, y.as<bf16>(),
                   rows * cols, err, gbytes, reps);
  }
  check_and_time(timer, "norm", dtype.c_str(), name, "launch.last", lib, y.as<bf16>(), rows * cols, err, gbytes, reps);
}
}  // namespace x7

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 40;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  Timer timer;
  std::printf("kind,dtype,case,config,us,GBps,check\n");
  for (int round = 0; round < rounds; ++round)
    for (int64_t cols : {16384, 8192})
      for (bool layer : {true, false}) x7::run(timer, 4096, cols, layer, reps, round);
  return 0;
}
