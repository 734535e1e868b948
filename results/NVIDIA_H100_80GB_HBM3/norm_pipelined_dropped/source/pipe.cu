// Exploration: the persistent pipelined row norm (pipelined_norm.cuh) against the library's launch, on
// kernel_tune's timing (bench_ops' hold, read flush, events; median), every configuration checked first
// against float64. pipe [REPS [ROUNDS]]: ROUNDS alternating rounds over the widths.
#define main kernel_tune_main
#include "../../verify/tune/kernel_tune.cu"
#undef main
#include "pipelined_norm.cuh"

namespace pipe_x {
bool only_l1 = false, only_held = false, only_chan = false;

struct PipeConfig {
  const char* name;
  NormLaunch layer, rms;
  int threads, vec;
};
template <typename P, int B, int V, int S, int M, bool H>
void pipe_launch(const rn::Row<bf16>& r, int64_t rows, cudaStream_t s) {
  rn::launch_pipelined<bf16, P, B, V, S, M, H>(r, rows, s);
}
#define PIPE(B, V, S, M, H, name) \
  PipeConfig { name, pipe_launch<rn::LayerPolicy, B, V, S, M, H>, pipe_launch<rn::RmsPolicy, B, V, S, M, H>, B, V }
// p.b<threads>v<vectors a thread>s<stages>m<min blocks>[h: row held in registers]
const PipeConfig kPipeConfigs[] = {
    PIPE(512, 4, 2, 0, false, "p.b512v4s2m0"),  PIPE(512, 4, 2, 0, true, "p.b512v4s2m0h"),
    PIPE(512, 4, 3, 0, false, "p.b512v4s3m0"),  PIPE(512, 4, 2, 3, false, "p.b512v4s2m3"),
    PIPE(1024, 2, 2, 0, false, "p.b1024v2s2m0"), PIPE(256, 8, 2, 0, false, "p.b256v8s2m0"),
    PIPE(256, 8, 3, 0, false, "p.b256v8s3m0"),  PIPE(256, 4, 2, 0, false, "p.b256v4s2m0"),
    PIPE(256, 4, 3, 0, false, "p.b256v4s3m0"),  PIPE(256, 4, 2, 0, true, "p.b256v4s2m0h"),
    PIPE(512, 2, 2, 0, false, "p.b512v2s2m0"),  PIPE(128, 8, 2, 0, false, "p.b128v8s2m0"),
    PIPE(128, 4, 2, 0, false, "p.b128v4s2m0"),  PIPE(128, 4, 3, 0, false, "p.b128v4s3m0"),
    PIPE(128, 4, 4, 0, false, "p.b128v4s4m0"),  PIPE(256, 2, 2, 0, false, "p.b256v2s2m0"),
    PIPE(64, 8, 2, 0, false, "p.b64v8s2m0"),    PIPE(1024, 2, 2, 2, false, "p.b1024v2s2m2"),
    PIPE(256, 4, 2, 7, false, "p.b256v4s2m7"),  PIPE(512, 2, 2, 4, false, "p.b512v2s2m4"),
    PIPE(128, 4, 2, 12, false, "p.b128v4s2m12"), PIPE(256, 8, 2, 3, true, "p.b256v8s2m3h"),
    PIPE(512, 4, 2, 3, true, "p.b512v4s2m3h")};

template <typename P, int B, int V, bool K, int M, int L>
void l1_launch(const rn::Row<bf16>& r, int64_t rows, cudaStream_t s) {
  rn::two_pass_l1_kernel<bf16, P, B, V, K, M, L><<<static_cast<unsigned>(rows), B, 0, s>>>(r);
}
#define L1(B, V, K, M, L, name) \
  PipeConfig { name, l1_launch<rn::LayerPolicy, B, V, K, M, L>, l1_launch<rn::RmsPolicy, B, V, K, M, L>, B, V }
// l1.<mode>.b<threads>v<vectors>: two_pass_kernel with L1 hints (mode 1: x not allocated in L1; 2: w and b
// evict_last in L1; 3: both); at 16384 the launch's t.b512v4k.m3, at 8192 its t.b256v4k.m6.
template <typename P, int B, int V, int M, bool O>
void held_launch(const rn::Row<bf16>& r, int64_t rows, cudaStream_t s) {
  rn::held_kernel<bf16, P, B, V, M, O><<<static_cast<unsigned>(rows), B, 0, s>>>(r);
}
#define HELD(B, V, M, O, name) \
  PipeConfig { name, held_launch<rn::LayerPolicy, B, V, M, O>, held_launch<rn::RmsPolicy, B, V, M, O>, B, V }
// h[o].b<threads>v<vectors>m<min blocks>: the row held in registers (o: the second pass in order).
const PipeConfig kHeldConfigs[] = {HELD(512, 4, 3, false, "h.b512v4m3"), HELD(512, 4, 3, true, "ho.b512v4m3"),
                                   HELD(512, 4, 4, true, "ho.b512v4m4"), HELD(512, 4, 4, false, "h.b512v4m4"),
                                   HELD(512, 4, 2, false, "h.b512v4m2"), HELD(256, 4, 6, false, "h.b256v4m6"),
                                   HELD(256, 4, 6, true, "ho.b256v4m6"), HELD(256, 4, 8, true, "ho.b256v4m8"),
                                   HELD(1024, 2, 2, true, "ho.b1024v2m2"), HELD(512, 2, 4, true, "ho.b512v2m4")};
template <typename P, int B, int V, int M, int P2>
void chan_launch(const rn::Row<bf16>& r, int64_t rows, cudaStream_t s) {
  rn::chan_kernel<bf16, P, B, V, M, P2><<<static_cast<unsigned>(rows), B, 0, s>>>(r);
}
#define CHAN(B, V, M, P2, name) \
  PipeConfig { name, chan_launch<rn::LayerPolicy, B, V, M, P2>, chan_launch<rn::RmsPolicy, B, V, M, P2>, B, V }
// c.b<threads>v<vectors>m<min blocks>p<second-pass vectors an iteration>: one Chan reduction.
const PipeConfig kChanConfigs[] = {CHAN(512, 4, 3, 4, "c.b512v4m3p4"), CHAN(512, 4, 3, 1, "c.b512v4m3p1"),
                                   CHAN(512, 4, 4, 1, "c.b512v4m4p1"), CHAN(512, 4, 4, 4, "c.b512v4m4p4"),
                                   CHAN(512, 4, 4, 2, "c.b512v4m4p2"), CHAN(256, 4, 6, 4, "c.b256v4m6p4"),
                                   CHAN(256, 4, 8, 1, "c.b256v4m8p1"), CHAN(256, 4, 6, 1, "c.b256v4m6p1")};
const PipeConfig kL1Configs[] = {L1(512, 4, true, 3, 0, "l1.0.b512v4"), L1(512, 4, true, 3, 1, "l1.1.b512v4"),
                                 L1(512, 4, true, 3, 2, "l1.2.b512v4"), L1(512, 4, true, 3, 3, "l1.3.b512v4"),
                                 L1(256, 4, true, 6, 0, "l1.0.b256v4"), L1(256, 4, true, 6, 1, "l1.1.b256v4"),
                                 L1(256, 4, true, 6, 2, "l1.2.b256v4"), L1(256, 4, true, 6, 3, "l1.3.b256v4")};

void run(Timer& timer, int64_t rows, int64_t cols, bool layer, int reps) {
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
  auto time_launch = [&](const char* config) {
    check_and_time(timer, "norm", "bf16", name, config,
                   [&](cudaStream_t s) {
                     layer ? opbench::kernels::launch_layer_norm(args, s) : opbench::kernels::launch_rms_norm(args, s);
                   },
                   y.as<bf16>(), rows * cols, err, gbytes, reps);
  };
  time_launch("launch.first");
  const int64_t vectors = cols / 8;
  for (const PipeConfig& cfg : only_chan   ? std::vector<PipeConfig>(std::begin(kChanConfigs), std::end(kChanConfigs))
                              : only_held ? std::vector<PipeConfig>(std::begin(kHeldConfigs), std::end(kHeldConfigs))
                                          : std::vector<PipeConfig>(std::begin(kL1Configs), std::end(kL1Configs))) {
    if (int64_t{cfg.threads} * cfg.vec != cols / 8) continue;
    const NormLaunch launch = layer ? cfg.layer : cfg.rms;
    check_and_time(timer, "norm", "bf16", name, cfg.name, [&](cudaStream_t s) { launch(r, rows, s); }, y.as<bf16>(),
                   rows * cols, err, gbytes, reps);
  }
  for (const PipeConfig& cfg : only_l1 ? std::vector<PipeConfig>{} : std::vector<PipeConfig>(std::begin(kPipeConfigs), std::end(kPipeConfigs))) {
    const int64_t span = int64_t{cfg.threads} * cfg.vec;
    if (span < vectors || span >= 2 * vectors) continue;
    const NormLaunch launch = layer ? cfg.layer : cfg.rms;
    check_and_time(timer, "norm", "bf16", name, cfg.name, [&](cudaStream_t s) { launch(r, rows, s); }, y.as<bf16>(),
                   rows * cols, err, gbytes, reps);
  }
  time_launch("launch");
}


// The paired exact-fit gathers against the library's launch: gather of 2 of 8 experts, one x.
using GLaunch = void (*)(const Params&, cudaStream_t);
struct PairConfig {
  const char* name;
  int64_t bf16_cols, int8_cols;
  GLaunch bf16_launch, int8_launch;
};
template <typename T, int W, int C, int M>
void pair_launch(const Params& p, cudaStream_t s) {
  opbench::kernels::gemv::paired_kernel<T, W, C, M><<<static_cast<unsigned>(p.rows), W * 32, 0, s>>>(p);
}
#define PAIR(W, C, M)                                                                                     \
  PairConfig {                                                                                            \
    "pair.w" #W "c" #C "m" #M, opbench::kernels::gemv::row_kernel_cols<bf16, W, C>,                       \
        opbench::kernels::gemv::row_kernel_cols<int8_t, W, C>, pair_launch<bf16, W, C, M>, pair_launch<int8_t, W, C, M> \
  }
const PairConfig kPairConfigs[] = {PAIR(4, 8, 0),  PAIR(8, 4, 0),  PAIR(16, 2, 0), PAIR(8, 4, 4), PAIR(4, 4, 0),
                                   PAIR(8, 2, 0),  PAIR(16, 4, 0), PAIR(8, 8, 0),  PAIR(32, 2, 0), PAIR(4, 8, 4),
                                   PAIR(16, 2, 4), PAIR(4, 4, 8),  PAIR(16, 1, 0), PAIR(8, 2, 8),
                                   PAIR(8, 4, 6),  PAIR(16, 2, 3), PAIR(32, 1, 0), PAIR(16, 4, 2), PAIR(32, 2, 2),
                                   PAIR(4, 8, 12), PAIR(4, 8, 16), PAIR(8, 4, 8),  PAIR(4, 8, 8),  PAIR(2, 16, 0),
                                   PAIR(8, 8, 4),  PAIR(16, 4, 3), PAIR(8, 8, 6),  PAIR(4, 16, 0), PAIR(2, 16, 16)};

void run_gather(Timer& timer, int64_t cols, bool int8, int reps) {
  const int64_t rows = cols, experts = 8, selected = 2;
  const int64_t w_elems = experts * rows * cols, w_bytes = w_elems * (int8 ? 1 : 2), outputs = selected * rows;
  DeviceBuffer w(w_bytes), x(cols * 2), y(outputs * 2), ref(outputs * 8), abs_sum(outputs * 8), idx(16);
  if (int8) fill_int8<<<1024, 256>>>(w.as<int8_t>(), w_elems, 7);
  else fill_bf16<<<1024, 256>>>(w.as<bf16>(), w_elems, 7, -1.f, 1.f);
  fill_bf16<<<64, 256>>>(x.as<bf16>(), cols, 11, -1.f, 1.f);
  const std::vector<int64_t> chosen = {3, 5};
  CK(cudaMemcpy(idx.p, chosen.data(), 16, cudaMemcpyHostToDevice));
  const Params p{w.p, rows, cols, cols, x.as<bf16>(), 0, y.as<bf16>(), idx.as<int64_t>(), rows * cols, experts, nullptr, 0};
  const unsigned ref_blocks = static_cast<unsigned>((outputs + 127) / 128);
  if (int8) gemv_reference<int8_t><<<ref_blocks, 128>>>(p, selected, ref.as<double>(), abs_sum.as<double>());
  else gemv_reference<bf16><<<ref_blocks, 128>>>(p, selected, ref.as<double>(), abs_sum.as<double>());
  CK(cudaDeviceSynchronize());
  const std::vector<double> ref_h = to_host(ref.as<double>(), outputs), abs_h = to_host(abs_sum.as<double>(), outputs);
  auto err = [&](float got, int64_t i) {
    return std::fabs(got - ref_h[i]) / (8e-3 * std::fabs(ref_h[i]) + 1e-5 * abs_h[i] + 1e-6);
  };
  const double gbytes = selected * rows * cols * (int8 ? 1 : 2) / 1e9;
  const char* dtype = int8 ? "int8" : "bf16";
  const std::string name = "GatherGemv/" + std::to_string(cols);
  opbench::kernels::GemvArgs args;
  args.w = w.p;
  args.w_type = int8 ? opbench::kernels::WeightType::kInt8 : opbench::kernels::WeightType::kBf16;
  args.rows = rows;
  args.cols = args.row_stride = cols;
  args.x = x.as<bf16>();
  args.x_stride = 0;
  args.y = y.as<bf16>();
  args.expert_idx = idx.as<int64_t>();
  args.num_selected = selected;
  args.expert_stride = rows * cols;
  args.num_experts = experts;
  auto time_launch = [&](const char* config) {
    check_and_time(timer, "gemv", dtype, name, config, [&](cudaStream_t s) { opbench::kernels::launch_gemv(args, s); },
                   y.as<bf16>(), outputs, err, gbytes, reps);
  };
  time_launch("launch.first");
  for (const PairConfig& pc : kPairConfigs) {
    if (cols != (int8 ? pc.int8_cols : pc.bf16_cols)) continue;
    const GLaunch launch = int8 ? pc.int8_launch : pc.bf16_launch;
    check_and_time(timer, "gemv", dtype, name, pc.name, [&](cudaStream_t s) { launch(p, s); }, y.as<bf16>(), outputs,
                   err, gbytes, reps);
  }
  time_launch("launch");
}


// Ablation: LayerNorm through the library's launch with and without its bias (the kernel skips the bias
// loads when b is null; that output is not checked: no reference computes a LayerNorm without bias
// here), beside RMSNorm's launch on the same x and w.
void ablate(Timer& timer, int64_t rows, int64_t cols, int reps) {
  DeviceBuffer x(rows * cols * 2), y(rows * cols * 2), w(cols * 2), b(cols * 2);
  fill_bf16<<<1024, 256>>>(x.as<bf16>(), rows * cols, 3, -2.f, 3.f);
  fill_bf16<<<16, 256>>>(w.as<bf16>(), cols, 4, 0.5f, 1.5f);
  fill_bf16<<<16, 256>>>(b.as<bf16>(), cols, 5, -0.5f, 0.5f);
  CK(cudaDeviceSynchronize());
  const std::string name = "ablate/" + std::to_string(rows) + "x" + std::to_string(cols);
  const double gbytes = 2.0 * rows * cols * 2 / 1e9;
  auto none = [](float, int64_t) { return 0.0; };
  auto time = [&](const char* config, const void* bias, bool layer) {
    const opbench::kernels::NormArgs args{x.p, w.p, bias, y.p, rows, cols, cols, 1e-5f, opbench::kernels::NormType::kBf16};
    check_and_time(timer, "norm", "bf16", name, config,
                   [&](cudaStream_t s) {
                     layer ? opbench::kernels::launch_layer_norm(args, s) : opbench::kernels::launch_rms_norm(args, s);
                   },
                   y.as<bf16>(), 1, none, gbytes, reps);
  };
  time("layer.bias", b.p, true);
  time("layer.nobias", nullptr, true);
  time("rms", nullptr, false);
}

}  // namespace pipe_x

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 40;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  Timer timer;
  std::printf("kind,dtype,case,config,us,GBps,check\n");
  std::string only = argc > 3 ? argv[3] : "";   // "norm", "l1" (the L1 variants alone) or "gather"
  if (only == "l1" || only == "held" || only == "chan") {
    pipe_x::only_held = only == "held";
    pipe_x::only_chan = only == "chan";
    pipe_x::only_l1 = true;
    only = "norm";
  }
  for (int round = 0; round < rounds; ++round) {
    if (only == "gather" || only == "ablate")
      for (int64_t cols : {16384, 8192}) pipe_x::ablate(timer, 4096, cols, reps);
    if (only != "gather" && only != "ablate")
      for (int64_t cols : {16384, 8192, 4096})
        if (!pipe_x::only_l1 || cols != 4096)
          for (bool layer : {true, false}) pipe_x::run(timer, 4096, cols, layer, reps);
    if (only != "norm" && only != "ablate")
      for (int64_t cols : {16384, 8192})
        for (bool int8 : {true, false}) pipe_x::run_gather(timer, cols, int8, reps);
  }
  // odd shapes: checks only matter (a partial last vector slot, rows not a multiple of the grid)
  if (only != "gather" && only != "ablate" && !pipe_x::only_l1)
    for (bool layer : {true, false})
      for (int64_t cols : {16376, 8184}) pipe_x::run(timer, 1000, cols, layer, 5);
  return 0;
}
