// Experiment: the library's GEMV and two-pass norm kernels with their blocks an SM capped by unused
// dynamic shared memory (k = natural .. 1), same Timer and checks as kernel_tune. Rounds alternate.
#define main kernel_tune_main
#include "../../verify/tune/kernel_tune.cu"
#undef main

namespace occ {
using namespace opbench::kernels::gemv;

// The dynamic shared memory that caps `kernel` (block `threads`) at k blocks an SM, or -1.
template <typename K>
int pad_for(K kernel, int threads, int k, int* natural) {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, kernel));
  const int max_dyn = static_cast<int>(prop.sharedMemPerBlockOptin) - static_cast<int>(a.sharedSizeBytes);
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_dyn));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(natural, kernel, threads, 0));
  if (k >= *natural) return 0;
  for (int pad = max_dyn; pad >= 0; pad -= 256) {
    int n = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, pad));
    if (n > k) return pad + 256 <= max_dyn ? pad + 256 : -1;
  }
  return -1;
}

struct Shape { int64_t rows, cols; bool int8; };

template <typename T, int W, int G, int R, int S, bool kMay>
void gemv_caps(Timer& timer, const Shape& sh, const char* cfg, int reps, int round) {
  auto kernel = vector_kernel<T, W, G, R, S, kMay>;
  const int64_t n = sh.rows * sh.cols, bytes = n * static_cast<int64_t>(sizeof(T));

  DeviceBuffer w(bytes), x(sh.cols * 2), y(sh.rows * 2), ref(sh.rows * 8), abs_sum(sh.rows * 8);
  if (sh.int8) fill_int8<<<1024, 256>>>(w.as<int8_t>(), n, 7);
  else fill_bf16<<<1024, 256>>>(w.as<bf16>(), n, 7, -1.f, 1.f);
  fill_bf16<<<64, 256>>>(x.as<bf16>(), sh.cols, 11, -1.f, 1.f);
  const Params p{w.p, sh.rows, sh.cols, sh.cols, x.as<bf16>(), sh.cols, y.as<bf16>(), nullptr, n, 1, nullptr, 0};
  const unsigned rb = static_cast<unsigned>((sh.rows + 127) / 128);
  if (sh.int8) gemv_reference<int8_t><<<rb, 128>>>(p, 1, ref.as<double>(), abs_sum.as<double>());
  else gemv_reference<bf16><<<rb, 128>>>(p, 1, ref.as<double>(), abs_sum.as<double>());
  CK(cudaDeviceSynchronize());
  const std::vector<double> ref_h = to_host(ref.as<double>(), sh.rows), abs_h = to_host(abs_sum.as<double>(), sh.rows);
  auto err = [&](float got, int64_t i) { return std::fabs(got - ref_h[i]) / (8e-3 * std::fabs(ref_h[i]) + 1e-5 * abs_h[i] + 1e-6); };
  const std::string name = std::string(sh.int8 ? "int8/" : "bf16/") + std::to_string(sh.rows) + "x" + std::to_string(sh.cols);
  const dim3 grid(vector_blocks<W, G, R>(sh.rows));
  opbench::kernels::GemvArgs args;
  args.w = w.p; args.w_type = sh.int8 ? opbench::kernels::WeightType::kInt8 : opbench::kernels::WeightType::kBf16;
  args.rows = sh.rows; args.cols = args.row_stride = sh.cols; args.x = x.p; args.x_stride = sh.cols; args.y = y.p;
  check_and_time(timer, "gemv", std::to_string(round).c_str(), name, "launch", [&](cudaStream_t s) { opbench::kernels::launch_gemv(args, s); },
                 y.as<bf16>(), sh.rows, err, bytes / 1e9, reps);
  int natural = 0;
  pad_for(kernel, W * 32, 99, &natural);
  for (int k = natural; k >= 1; --k) {
    int nat = 0;
    const int pad = pad_for(kernel, W * 32, k, &nat);
    if (pad < 0) continue;
    const std::string c = std::string(cfg) + ".k" + std::to_string(k);
    check_and_time(timer, "gemv", std::to_string(round).c_str(), name, c.c_str(),
                   [&](cudaStream_t s) { kernel<<<grid, W * 32, pad, s>>>(p); }, y.as<bf16>(), sh.rows, err, bytes / 1e9, reps);
  }
}

namespace rn = opbench::kernels::row_norm;
template <typename P, int B, int V, bool K, int M>
void norm_caps(Timer& timer, int64_t rows, int64_t cols, const char* cfg, int reps, int round) {
  constexpr bool layer = P::kCentered;
  auto kernel = rn::two_pass_kernel<bf16, P, B, V, K, M>;
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
  const std::string name = std::string(layer ? "LayerNorm/" : "RMSNorm/") + std::to_string(rows) + "x" + std::to_string(cols);
  const double gbytes = 2.0 * rows * cols * 2 / 1e9;
  const opbench::kernels::NormArgs args{x.p, w.p, bias, y.p, rows, cols, cols, 1e-5f, opbench::kernels::NormType::kBf16};
  check_and_time(timer, "norm", std::to_string(round).c_str(), name, "launch",
                 [&](cudaStream_t s) { layer ? opbench::kernels::launch_layer_norm(args, s) : opbench::kernels::launch_rms_norm(args, s); },
                 y.as<bf16>(), rows * cols, err, gbytes, reps);
  int natural = 0;
  pad_for(kernel, B, 99, &natural);
  for (int k = natural; k >= 1; --k) {
    int nat = 0;
    const int pad = pad_for(kernel, B, k, &nat);
    if (pad < 0) continue;
    const std::string c = std::string(cfg) + ".k" + std::to_string(k);
    check_and_time(timer, "norm", std::to_string(round).c_str(), name, c.c_str(),
                   [&](cudaStream_t s) { kernel<<<static_cast<unsigned>(rows), B, pad, s>>>(r); }, y.as<bf16>(), rows * cols, err,
                   gbytes, reps);
  }
}
}  // namespace occ

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 60;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::string only = argc > 3 ? argv[3] : "";
  Timer timer;
  std::fprintf(stderr, "rules: %s\n", opbench::kernels::launch_rules_name(opbench::kernels::current_launch_rules()));
  std::printf("kind,round,case,config,us,GBps,check\n");
  using occ::Shape;
  for (int round = 0; round < rounds; ++round) {
    if (only != "norm") {
      occ::gemv_caps<int8_t, 8, 4, 2, 2, true>(timer, {16384, 16384, true}, "w8g4r2s2", reps, round);
      occ::gemv_caps<int8_t, 16, 16, 1, 2, true>(timer, {16384, 16384, true}, "w16g16r1s2", reps, round);
      occ::gemv_caps<int8_t, 8, 2, 2, 2, true>(timer, {8192, 8192, true}, "w8g2r2s2", reps, round);
      occ::gemv_caps<bf16, 8, 8, 1, 2, false>(timer, {8192, 8192, false}, "w8g8r1s2", reps, round);
      occ::gemv_caps<bf16, 16, 16, 1, 2, false>(timer, {16384, 16384, false}, "w16g16r1s2", reps, round);
    }
    if (only != "gemv") {
      occ::norm_caps<rn::LayerPolicy, 512, 4, true, 3>(timer, 4096, 16384, "t512v4k", reps, round);
      occ::norm_caps<rn::RmsPolicy, 512, 4, true, 3>(timer, 4096, 16384, "t512v4k", reps, round);
      occ::norm_caps<rn::LayerPolicy, 512, 4, true, 3>(timer, 4096, 8192, "t512v4k", reps, round);
    }
  }
  return 0;
}
