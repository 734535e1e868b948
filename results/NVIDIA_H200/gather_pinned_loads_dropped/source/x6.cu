// Exploration: the gathers' vector_kernel with every load of an iteration pinned in flight (kPinLoads)
// and x loaded with W (kXFirst), against the library's launch, on bench_ops' timing (kernel_tune's
// Timer), every configuration checked first.
#define main kernel_tune_main
#include "../../verify/tune/kernel_tune.cu"
#undef main
#include <cstring>

namespace x6 {
using namespace opbench::kernels::gemv;

struct Cfg {
  std::string name;
  int bytes;      // 1 int8, 2 bf16
  int64_t cols;   // 0: any
  bool gather;
  void (*launch)(const Params&, unsigned, cudaStream_t);
};
// vector_kernel with x first (X) and the loads pinned (P), gathering (G) or plain.
template <typename T, int W, int Gr, int R, int S, bool G, int M, bool X, bool P>
void lv(const Params& p, unsigned selected, cudaStream_t s) {
  const dim3 grid(vector_blocks<W, Gr, R>(p.rows), selected);
  vector_kernel<T, W, Gr, R, S, G, false, false, opbench::kernels::GemvEpilogue::kStore, M, X, P><<<grid, W * kWarpSize, 0, s>>>(p);
}
template <typename T, int W, int Gr, int R, int S, bool G, int M, bool X, bool P>
Cfg mk() {
  return Cfg{std::string(G ? "g." : "p.") + "w" + std::to_string(W) + "g" + std::to_string(Gr) + "r" + std::to_string(R) + "s" +
                 std::to_string(S) + "m" + std::to_string(M) + (X ? "x" : "") + (P ? "p" : ""),
             static_cast<int>(sizeof(T)), 0, G, lv<T, W, Gr, R, S, G, M, X, P>};
}
template <typename T, int W, int Gr, int R, int S, int M>
void four(std::vector<Cfg>& v) {   // gather: plain, x first, pinned, both
  v.push_back(mk<T, W, Gr, R, S, true, M, false, false>());
  v.push_back(mk<T, W, Gr, R, S, true, M, true, false>());
  v.push_back(mk<T, W, Gr, R, S, true, M, false, true>());
  v.push_back(mk<T, W, Gr, R, S, true, M, true, true>());
}
std::vector<Cfg> configs() {
  std::vector<Cfg> v;
  using i8 = int8_t;
  four<i8, 1, 1, 2, 4, 0>(v); four<i8, 1, 1, 2, 2, 0>(v); four<i8, 2, 2, 2, 2, 0>(v); four<i8, 1, 1, 4, 2, 0>(v);
  four<i8, 1, 1, 2, 4, 24>(v); four<i8, 4, 4, 1, 4, 8>(v); four<i8, 8, 4, 2, 2, 0>(v);
  four<bf16, 8, 8, 1, 2, 0>(v); four<bf16, 4, 4, 1, 2, 0>(v); four<bf16, 4, 4, 1, 4, 8>(v); four<bf16, 8, 8, 1, 4, 0>(v);
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
    if (c.bytes != (int8 ? 1 : 2) || (c.cols && c.cols != gc.cols) || c.gather != (gc.experts != 0)) continue;
    check_and_time(timer, "gemv", dtype.c_str(), gc.name, c.name.c_str(), [&](cudaStream_t s) { c.launch(p, selected, s); },
                   y.as<bf16>(), outputs, err, gbytes, reps);
  }
  check_and_time(timer, "gemv", dtype.c_str(), gc.name, "launch.last", launch_lib, y.as<bf16>(), outputs, err, gbytes, reps);
}
}  // namespace x6

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 40;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 2;
  Timer timer;
  std::fprintf(stderr, "rules: %s\n", opbench::kernels::launch_rules_name(opbench::kernels::current_launch_rules()));
  std::printf("kind,dtype,case,config,us,GBps,check\n");
  const std::vector<x6::Cfg> cfgs = x6::configs();
  const std::vector<GemvCase> cases = {{"GatherGemv/16384", 16384, 16384, 2, 8, true},
                                       {"GatherGemv/8192", 8192, 8192, 2, 8, true},
                                       {"GatherGemv/4096", 4096, 4096, 2, 8, true},
                                       {"mixtral.w13/2of8x28672x4096", 28672, 4096, 2, 8, true},
                                       {"mixtral.w2/2of8x4096x14336", 4096, 14336, 2, 8, false}};
  for (int round = 0; round < rounds; ++round) {
    for (const GemvCase& gc : cases) x6::run(timer, gc, true, reps, round, cfgs);
    for (const GemvCase& gc : cases) x6::run(timer, gc, false, reps, round, cfgs);
  }
  return 0;
}
