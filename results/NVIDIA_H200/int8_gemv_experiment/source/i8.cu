// Experiment: int8 GEMV with fewer instructions per weight byte. Same Timer and checks as kernel_tune.
//  launch   : the library's launch_gemv (baseline)
//  pat.*    : the library's mapping, loads only (XOR-fold; unchecked, a diagnostic of the memory side)
//  den.*    : denormal FMA: byte b^0x80 as the float u*2^-149 (no magic, no FADD), x scaled by 2^40
//  mma.*    : bf16 tensor cores: bytes -> exact fp32 ints -> packed bf16 pairs; x pairs straight from memory
#define main kernel_tune_main
#include "../../verify/tune/kernel_tune.cu"
#undef main
#include "ceiling/stream_kernels.h"

namespace i8 {
using namespace opbench::kernels::gemv;
constexpr float kBias = 8388608.f + 128.f;

// ---------------------------------------------------------------- den / pat: vector_kernel's mapping
template <int kWarps, int kGroup, int kRows, int kSteps, bool kPattern>
__global__ void __launch_bounds__(kWarps * 32) den_kernel(Params p) {
  constexpr int64_t kStride = int64_t{kGroup} * 32 * 16;
  __shared__ float partial[kWarps][kRows + 1];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, gw = warp % kGroup;
  const int64_t first_row = (static_cast<int64_t>(blockIdx.x) * (kWarps / kGroup) + warp / kGroup) * kRows;
  const bool has_rows = first_row < p.rows;
  const int rows_here = !has_rows ? 0 : static_cast<int>(p.rows - first_row < kRows ? p.rows - first_row : kRows);
  int64_t row_off[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) row_off[r] = (r < rows_here ? r : rows_here - 1) * p.row_stride;
  const int8_t* w = static_cast<const int8_t*>(p.w) + first_row * p.row_stride;
  float acc[kRows] = {}, xsum[2] = {};
  int64_t c = (static_cast<int64_t>(gw) * 32 + lane) * 16;
  const __nv_bfloat162 scale = __floats2bfloat162_rn(1099511627776.f, 1099511627776.f);   // 2^40
  auto chunk = [&](const uint4* wv, int64_t at) {
    if constexpr (kPattern) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) acc[r] += __uint_as_float((wv[r].x ^ wv[r].y ^ wv[r].z ^ wv[r].w) & 0x3f7fffffu);
    } else {
      uint4 raw[2] = {reinterpret_cast<const uint4*>(p.x + at)[0], reinterpret_cast<const uint4*>(p.x + at)[1]};
      float xf[16];
#pragma unroll
      for (int q = 0; q < 8; ++q) {
        __nv_bfloat162 pair = __hmul2(reinterpret_cast<const __nv_bfloat162*>(raw)[q], scale);
        float2 f = __bfloat1622float2(pair);
        xf[2 * q] = f.x;
        xf[2 * q + 1] = f.y;
        xsum[0] += f.x;
        xsum[1] += f.y;
      }
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const uint32_t words[4] = {wv[r].x ^ 0x80808080u, wv[r].y ^ 0x80808080u, wv[r].z ^ 0x80808080u,
                                   wv[r].w ^ 0x80808080u};
        float a0 = 0.f, a1 = 0.f;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          a0 = fmaf(__uint_as_float(words[k] & 0xffu), xf[4 * k], a0);
          a1 = fmaf(__uint_as_float(__byte_perm(words[k], 0, 0x4441)), xf[4 * k + 1], a1);
          a0 = fmaf(__uint_as_float(__byte_perm(words[k], 0, 0x4442)), xf[4 * k + 2], a0);
          a1 = fmaf(__uint_as_float(words[k] >> 24), xf[4 * k + 3], a1);
        }
        acc[r] += a0 + a1;
      }
    }
  };
  for (; has_rows && c + (kSteps - 1) * kStride < p.cols; c += kSteps * kStride) {
    uint4 wv[kSteps][kRows];
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
#pragma unroll
      for (int r = 0; r < kRows; ++r) wv[s][r] = __ldcs(reinterpret_cast<const uint4*>(w + row_off[r] + c + s * kStride));
#pragma unroll
    for (int s = 0; s < kSteps; ++s) chunk(wv[s], c + s * kStride);
  }
  for (; has_rows && c < p.cols; c += kStride) {
    uint4 wv[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) wv[r] = __ldcs(reinterpret_cast<const uint4*>(w + row_off[r] + c));
    chunk(wv, c);
  }
  float sums[kRows + 1];
#pragma unroll
  for (int r = 0; r < kRows; ++r) sums[r] = warp_sum(acc[r]);
  sums[kRows] = warp_sum(xsum[0] + xsum[1]);
  if constexpr (kGroup > 1) {
    if (lane == 0)
#pragma unroll
      for (int r = 0; r <= kRows; ++r) partial[warp][r] = sums[r];
    __syncthreads();
    if (gw == 0)
#pragma unroll
      for (int r = 0; r <= kRows; ++r) {
        float total = 0.f;
#pragma unroll
        for (int g = 0; g < kGroup; ++g) total += partial[warp + g][r];
        sums[r] = total;
      }
  }
  if (gw != 0 || lane >= rows_here) return;
  float mine = sums[0];
#pragma unroll
  for (int r = 1; r < kRows; ++r)
    if (lane == r) mine = sums[r];
  // sum(u x 2^-109) * 2^109 - 128 * sum(x 2^40) * 2^-40
  p.y[first_row + lane] = __float2bfloat16(mine * 6.49037107e32f - sums[kRows] * 1.16415322e-10f);
}

// ---------------------------------------------------------------- mma: m16n8k16 bf16, fp32 accumulate
__device__ __forceinline__ uint32_t bf16_pair(float lo, float hi) {
  return __byte_perm(__float_as_uint(lo), __float_as_uint(hi), 0x7632);
}
// Bytes 0..3 of `word` as exact fp32 integers.
__device__ __forceinline__ void int8x4(uint32_t word, float f[4]) {
  const uint32_t u = word ^ 0x80808080u;
  f[0] = __uint_as_float(__byte_perm(u, 0x4B000000u, 0x7540)) - kBias;
  f[1] = __uint_as_float(__byte_perm(u, 0x4B000000u, 0x7541)) - kBias;
  f[2] = __uint_as_float(__byte_perm(u, 0x4B000000u, 0x7542)) - kBias;
  f[3] = __uint_as_float(__byte_perm(u, 0x4B000000u, 0x7543)) - kBias;
}
__device__ __forceinline__ void mma_bf16(float d[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                         uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
// Lane (g, t) holds 16 bytes of rows g and g + 8 at columns c..c+15 and the matching x (16 bf16). Word j's
// bytes 0,1 are logical k 2t, 2t+1 and bytes 2,3 are k 2t+8, 2t+9 of mma j: the same columns in A and B.
__device__ __forceinline__ void mma_chunk(uint4 lo_row, uint4 hi_row, const uint4 xv[2], float d[4][4]) {
  const uint32_t w0[4] = {lo_row.x, lo_row.y, lo_row.z, lo_row.w}, w1[4] = {hi_row.x, hi_row.y, hi_row.z, hi_row.w};
  const uint32_t xw[8] = {xv[0].x, xv[0].y, xv[0].z, xv[0].w, xv[1].x, xv[1].y, xv[1].z, xv[1].w};
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float f0[4], f1[4];
    int8x4(w0[j], f0);
    int8x4(w1[j], f1);
    mma_bf16(d[j], bf16_pair(f0[0], f0[1]), bf16_pair(f1[0], f1[1]), bf16_pair(f0[2], f0[3]), bf16_pair(f1[2], f1[3]),
             xw[2 * j], xw[2 * j + 1]);
  }
}

// A tile of 16 rows per kGroup warps (splitting the columns, kSteps x 64 bytes of each row per warp per
// iteration); kTiles tiles a block. REQUIRES cols % 16 == 0, 16-byte aligned rows and x.
template <int kGroup, int kTiles, int kSteps>
__global__ void __launch_bounds__(kGroup * kTiles * 32) mma_kernel(Params p) {
  __shared__ float partial[kGroup * kTiles][16];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, gw = warp % kGroup;
  const int g = lane >> 2, t = lane & 3;
  const int64_t tile_row = (static_cast<int64_t>(blockIdx.x) * kTiles + warp / kGroup) * 16;
  const bool has_rows = tile_row < p.rows;
  const int64_t last = p.rows - 1;
  const int64_t r0 = tile_row + g < last ? tile_row + g : last, r1 = tile_row + g + 8 < last ? tile_row + g + 8 : last;
  const int8_t* w0 = static_cast<const int8_t*>(p.w) + r0 * p.row_stride;
  const int8_t* w1 = static_cast<const int8_t*>(p.w) + r1 * p.row_stride;
  float d[4][4] = {};
  constexpr int64_t kSpan = 64 * kSteps;
  int64_t c = gw * kSpan + 16 * t;
  for (; has_rows && c - 16 * t + kSpan <= p.cols; c += kGroup * kSpan) {
    uint4 a[kSteps][2];
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      a[s][0] = __ldcs(reinterpret_cast<const uint4*>(w0 + c + 64 * s));
      a[s][1] = __ldcs(reinterpret_cast<const uint4*>(w1 + c + 64 * s));
    }
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const uint4 xv[2] = {reinterpret_cast<const uint4*>(p.x + c + 64 * s)[0],
                           reinterpret_cast<const uint4*>(p.x + c + 64 * s)[1]};
      mma_chunk(a[s][0], a[s][1], xv, d);
    }
  }
  // The warp's last, partial span: every lane joins each mma, with zeros past the row's end.
  if (has_rows && c - 16 * t < p.cols)
    for (int s = 0; s < kSteps && c - 16 * t + 64 * s < p.cols; ++s) {
      const bool in = c + 64 * s < p.cols;
      const uint4 zero = make_uint4(0, 0, 0, 0);
      const uint4 a0 = in ? __ldcs(reinterpret_cast<const uint4*>(w0 + c + 64 * s)) : zero;
      const uint4 a1 = in ? __ldcs(reinterpret_cast<const uint4*>(w1 + c + 64 * s)) : zero;
      const uint4 xv[2] = {in ? reinterpret_cast<const uint4*>(p.x + c + 64 * s)[0] : zero,
                           in ? reinterpret_cast<const uint4*>(p.x + c + 64 * s)[1] : zero};
      mma_chunk(a0, a1, xv, d);
    }
  if (t == 0) {
    partial[warp][g] = (d[0][0] + d[1][0]) + (d[2][0] + d[3][0]);
    partial[warp][g + 8] = (d[0][2] + d[1][2]) + (d[2][2] + d[3][2]);
  }
  if constexpr (kGroup > 1) __syncthreads();
  else __syncwarp();
  if (gw != 0 || lane >= 16 || tile_row + lane >= p.rows) return;
  float total = 0.f;
#pragma unroll
  for (int k = 0; k < kGroup; ++k) total += partial[warp + k][lane];
  p.y[tile_row + lane] = __float2bfloat16(total);
}

void run_streams(Timer& timer, int reps, int round) {
  for (int64_t mb : {64, 256, 1024, 2048}) {
    const int64_t bytes = mb << 20;
    DeviceBuffer data(bytes), sums(bytes / opbench::kernels::kStreamChunkBytes * 4);
    CK(cudaMemset(data.p, 0x11, bytes));
    const double us = timer.median_us([&](cudaStream_t s) { opbench::kernels::launch_read_stream(data.p, bytes, sums.as<float>(), s); }, reps);
    std::printf("stream,%d,read/%lldMiB,read_cuda,%.2f,%.0f,ok\n", round, static_cast<long long>(mb), us, bytes / 1e3 / us);
    std::fflush(stdout);
  }
}

struct Case {
  int64_t rows, cols;
};

using KernelFn = void (*)(Params);
struct Cfg {
  std::string name;
  KernelFn kernel;
  int threads;
  int64_t rows_per_block;
  bool checked;
};

#define DEN(W, G, R, S) Cfg{"den.w" #W "g" #G "r" #R "s" #S, den_kernel<W, G, R, S, false>, W * 32, (W / G) * R, true}
#define PAT(W, G, R, S) Cfg{"pat.w" #W "g" #G "r" #R "s" #S, den_kernel<W, G, R, S, true>, W * 32, (W / G) * R, false}
#define MMA(G, T, S) Cfg{"mma.g" #G "t" #T "s" #S, mma_kernel<G, T, S>, G * T * 32, 16 * T, true}

void run_case(Timer& timer, const Case& cs, const std::vector<Cfg>& cfgs, int reps, int round) {
  const int64_t n = cs.rows * cs.cols;
  DeviceBuffer w(n), x(cs.cols * 2), y(cs.rows * 2), ref(cs.rows * 8), abs_sum(cs.rows * 8);
  fill_int8<<<1024, 256>>>(w.as<int8_t>(), n, 7 + round);
  fill_bf16<<<64, 256>>>(x.as<bf16>(), cs.cols, 11 + round, -1.f, 1.f);
  const Params p{w.p, cs.rows, cs.cols, cs.cols, x.as<bf16>(), cs.cols, y.as<bf16>(), nullptr, n, 1, nullptr, 0};
  gemv_reference<int8_t><<<static_cast<unsigned>((cs.rows + 127) / 128), 128>>>(p, 1, ref.as<double>(), abs_sum.as<double>());
  CK(cudaDeviceSynchronize());
  const std::vector<double> ref_h = to_host(ref.as<double>(), cs.rows), abs_h = to_host(abs_sum.as<double>(), cs.rows);
  auto err = [&](float got, int64_t i) { return std::fabs(got - ref_h[i]) / (8e-3 * std::fabs(ref_h[i]) + 1e-5 * abs_h[i] + 1e-6); };
  const std::string name = "int8/" + std::to_string(cs.rows) + "x" + std::to_string(cs.cols);
  const std::string rd = std::to_string(round);
  opbench::kernels::GemvArgs args;
  args.w = w.p;
  args.w_type = opbench::kernels::WeightType::kInt8;
  args.rows = cs.rows;
  args.cols = args.row_stride = cs.cols;
  args.x = x.p;
  args.x_stride = cs.cols;
  args.y = y.p;
  const double gbytes = n / 1e9;
  check_and_time(timer, "gemv", rd.c_str(), name, "launch", [&](cudaStream_t s) { opbench::kernels::launch_gemv(args, s); },
                 y.as<bf16>(), cs.rows, err, gbytes, reps);
  for (const Cfg& c : cfgs) {
    const dim3 grid(static_cast<unsigned>((cs.rows + c.rows_per_block - 1) / c.rows_per_block));
    auto launch = [&](cudaStream_t s) { c.kernel<<<grid, c.threads, 0, s>>>(p); };
    if (c.checked) {
      check_and_time(timer, "gemv", rd.c_str(), name, c.name.c_str(), launch, y.as<bf16>(), cs.rows, err, gbytes, reps);
    } else {
      const double us = timer.median_us(launch, reps);
      std::printf("gemv,%s,%s,%s,%.2f,%.0f,ok\n", rd.c_str(), name.c_str(), c.name.c_str(), us, gbytes / (us * 1e-6));
      std::fflush(stdout);
    }
  }
}
}  // namespace i8

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 40;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  using namespace i8;
  Timer timer;
  std::fprintf(stderr, "rules: %s\n", opbench::kernels::launch_rules_name(opbench::kernels::current_launch_rules()));
  std::printf("kind,round,case,config,us,GBps,check\n");
  const std::vector<i8::Cfg> big = {
      PAT(1, 1, 2, 4), PAT(1, 1, 1, 8), PAT(1, 1, 4, 2), PAT(2, 1, 2, 4), PAT(4, 4, 1, 4), PAT(8, 8, 1, 2),
      PAT(16, 16, 1, 2), PAT(4, 1, 4, 2),
      DEN(1, 1, 2, 4), DEN(1, 1, 4, 2), DEN(2, 1, 4, 2), DEN(4, 1, 4, 2), DEN(2, 2, 4, 2), DEN(4, 2, 4, 2),
      DEN(4, 4, 2, 4), DEN(1, 1, 2, 8), DEN(2, 1, 2, 4), DEN(8, 2, 4, 2),
      MMA(8, 1, 2), MMA(4, 2, 2), MMA(8, 1, 4), MMA(4, 1, 4), MMA(16, 1, 2)};
  const std::vector<i8::Cfg> odd = {DEN(1, 1, 4, 2), DEN(2, 2, 4, 2), MMA(8, 1, 2)};
  for (int round = 0; round < rounds; ++round) {
    i8::run_streams(timer, reps, round);
    i8::run_case(timer, {16384, 16384}, big, reps, round);
    i8::run_case(timer, {8192, 8192}, big, reps, round);
    i8::run_case(timer, {4096, 4096}, big, reps, round);
    i8::run_case(timer, {1024, 1024}, big, reps, round);
    i8::run_case(timer, {4099, 4112}, odd, reps, round);   // partial tile, a partial span
    i8::run_case(timer, {14336, 4096}, big, reps, round);  // Llama w13-like
  }
  return 0;
}
