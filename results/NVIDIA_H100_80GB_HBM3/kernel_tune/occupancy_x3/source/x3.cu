// Exploration: GEMV configurations at full occupancy (plain kernels without the expert code, or with
// launch bounds fixing the blocks an SM), as inductor's int8 kernel (16 warps a row, 32 registers).
#define main kernel_tune_main
#include "../../verify/tune/kernel_tune.cu"
#undef main
#include "old_vector.cuh"
#include <cstring>

namespace x3 {
using namespace opbench::kernels::gemv;
using opbench::kernels::GemvEpilogue;

template <typename T, int W, int G, int R, int S, bool kGather, int M>
void lc(const Params& p, unsigned selected, cudaStream_t s) {
  const dim3 grid(vector_blocks<W, G, R>(p.rows), selected);
  vector_kernel<T, W, G, R, S, kGather, false, false, GemvEpilogue::kStore, M><<<grid, W * kWarpSize, 0, s>>>(p);
}
// The kernel of HEAD (6ad2852): x loaded after W's wait, a serial sum over the group's warps.
template <typename T, int W, int G, int R, int S, bool kGather, int M>
void lc_old(const Params& p, unsigned selected, cudaStream_t s) {
  namespace og = opbench::kernels::old_gemv;
  static_assert(sizeof(og::Params) == sizeof(Params), "same layout");
  og::Params q;
  std::memcpy(static_cast<void*>(&q), &p, sizeof q);
  const dim3 grid(vector_blocks<W, G, R>(p.rows), selected);
  og::vector_kernel<T, W, G, R, S, kGather, false, false, GemvEpilogue::kStore, M><<<grid, W * kWarpSize, 0, s>>>(q);
}
struct Cfg {
  std::string name;
  GemvLaunch bf16, int8;
  bool gather;
};
#define NP(W, G, R, S, M) Cfg{"n.p.w" #W "g" #G "r" #R "s" #S ".m" #M, lc<bf16, W, G, R, S, false, M>, lc<int8_t, W, G, R, S, false, M>, false}
#define NG(W, G, R, S, M) Cfg{"n.g.w" #W "g" #G "r" #R "s" #S ".m" #M, lc<bf16, W, G, R, S, true, M>, lc<int8_t, W, G, R, S, true, M>, true}
#define OP(W, G, R, S, M) Cfg{"o.p.w" #W "g" #G "r" #R "s" #S ".m" #M, lc_old<bf16, W, G, R, S, false, M>, lc_old<int8_t, W, G, R, S, false, M>, false}
#define OG(W, G, R, S, M) Cfg{"o.g.w" #W "g" #G "r" #R "s" #S ".m" #M, lc_old<bf16, W, G, R, S, true, M>, lc_old<int8_t, W, G, R, S, true, M>, true}
#define ALL4(W, G, R, S, M) NP(W, G, R, S, M), NG(W, G, R, S, M), OP(W, G, R, S, M), OG(W, G, R, S, M)
const std::vector<Cfg> kCfgs = {ALL4(16, 16, 1, 2, 4), ALL4(16, 16, 1, 1, 4), ALL4(8, 8, 1, 2, 8), ALL4(8, 4, 2, 2, 1),
                                ALL4(8, 2, 2, 2, 1),   ALL4(4, 4, 1, 2, 16), ALL4(1, 1, 2, 4, 1), ALL4(32, 32, 1, 1, 2),
                                ALL4(8, 8, 1, 1, 8),   ALL4(4, 4, 2, 2, 1),  ALL4(16, 16, 1, 2, 1), NP(8, 4, 2, 2, 2),
                                NG(8, 4, 2, 2, 2),     NP(4, 4, 1, 4, 8),    NG(4, 4, 1, 4, 8),
                                NP(16, 16, 1, 2, 3),   NG(16, 16, 1, 2, 3),
                                NP(2, 2, 2, 2, 16),    NG(2, 2, 2, 2, 16), NP(4, 4, 2, 2, 8), NG(4, 4, 2, 2, 8),
                                NP(1, 1, 2, 4, 24),    NG(1, 1, 2, 4, 24), NP(8, 8, 1, 4, 4), NG(8, 8, 1, 4, 4)};

void run(Timer& timer, const GemvCase& gc, bool int8, int reps, int round) {
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
  for (const Cfg& c : kCfgs) {
    if (gc.experts && !c.gather) continue;
    const GemvLaunch launch = int8 ? c.int8 : c.bf16;
    check_and_time(timer, "gemv", dtype.c_str(), gc.name, c.name.c_str(), [&](cudaStream_t s) { launch(p, selected, s); },
                   y.as<bf16>(), outputs, err, gbytes, reps);
  }
}

template <typename K>
int regs(K k) {
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, k));
  return a.numRegs;
}
}  // namespace x3

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 40;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 2;
  Timer timer;
  std::fprintf(stderr, "rules: %s\n", opbench::kernels::launch_rules_name(opbench::kernels::current_launch_rules()));
  std::printf("kind,dtype,case,config,us,GBps,check\n");
  const std::vector<GemvCase> int8_cases = {
      {"Gemv/16384", 16384, 16384, 1, 0, true},        {"GatherGemv/16384", 16384, 16384, 2, 8, true},
      {"Gemv/8192", 8192, 8192, 1, 0, true},           {"GatherGemv/8192", 8192, 8192, 2, 8, true},
      {"Gemv/4096", 4096, 4096, 1, 0, true},           {"Gemv/1024", 1024, 1024, 1, 0, true},
      {"llama.w13/22016x4096", 22016, 4096, 1, 0, true}, {"llama.w2/4096x11008", 4096, 11008, 1, 0, true},
      {"mixtral.w2/2of8x4096x14336", 4096, 14336, 2, 8, false}, {"odd/4099x4112", 4099, 4112, 1, 0, true}};
  const std::vector<GemvCase> bf16_cases = {{"Gemv/8192", 8192, 8192, 1, 0, true},
                                            {"Gemv/4096", 4096, 4096, 1, 0, true},
                                            {"Gemv/16384", 16384, 16384, 1, 0, true},
                                            {"GatherGemv/16384", 16384, 16384, 2, 8, true},
                                            {"GatherGemv/8192", 8192, 8192, 2, 8, true},
                                            {"GatherGemv/4096", 4096, 4096, 2, 8, true},
                                            {"Gemv/1024", 1024, 1024, 1, 0, true},
                                            {"llama.w2/4096x11008", 4096, 11008, 1, 0, true},
                                            {"odd/4099x4112", 4099, 4112, 1, 0, true}};
  for (int round = 0; round < rounds; ++round) {
    for (const GemvCase& gc : int8_cases) x3::run(timer, gc, true, reps, round);
    for (const GemvCase& gc : bf16_cases) x3::run(timer, gc, false, reps, round);
  }
  return 0;
}
