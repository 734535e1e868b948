// Experiment: own read / write / copy streams over 1 GiB, configurations timed with kernel_tune's Timer.
#define main kernel_tune_main
#include "../../verify/tune/kernel_tune.cu"
#undef main

namespace st {
__device__ __forceinline__ float sum8(const uint4& q) {
  const uint32_t w[4] = {q.x, q.y, q.z, q.w};
  float a = 0.f, b = 0.f;
#pragma unroll
  for (int k = 0; k < 4; ++k) { a += __uint_as_float(w[k] << 16); b += __uint_as_float(w[k] & 0xffff0000u); }
  return a + b;
}
template <int kThreads, int kVec, int kPolicy>
__global__ void __launch_bounds__(kThreads) read_stream(const uint4* p, int64_t chunk_vecs, float* sums) {
  const uint4* c = p + blockIdx.x * chunk_vecs;
  float acc = 0.f;
  for (int64_t v = threadIdx.x; v < chunk_vecs; v += kThreads * kVec) {
    uint4 q[kVec];
#pragma unroll
    for (int i = 0; i < kVec; ++i) q[i] = kPolicy == 0 ? __ldcs(c + v + i * kThreads) : kPolicy == 1 ? c[v + i * kThreads] : __ldg(c + v + i * kThreads);
#pragma unroll
    for (int i = 0; i < kVec; ++i) acc += sum8(q[i]);
  }
  for (int o = 16; o > 0; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  __shared__ float part[kThreads / 32];
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.f;
    for (int i = 0; i < kThreads / 32; ++i) t += part[i];
    sums[blockIdx.x] = t;
  }
}
template <int kThreads, int kVec, bool kCs>
__global__ void __launch_bounds__(kThreads) write_stream(uint4* p, int64_t chunk_vecs, uint32_t word) {
  uint4* c = p + blockIdx.x * chunk_vecs;
  const uint4 q{word, word, word, word};
  for (int64_t v = threadIdx.x; v < chunk_vecs; v += kThreads * kVec)
#pragma unroll
    for (int i = 0; i < kVec; ++i) { if (kCs) __stcs(c + v + i * kThreads, q); else c[v + i * kThreads] = q; }
}
template <int kThreads, int kVec, bool kCs>
__global__ void __launch_bounds__(kThreads) copy_stream(const uint4* s, uint4* d, int64_t chunk_vecs) {
  const uint4* cs = s + blockIdx.x * chunk_vecs;
  uint4* cd = d + blockIdx.x * chunk_vecs;
  for (int64_t v = threadIdx.x; v < chunk_vecs; v += kThreads * kVec) {
    uint4 q[kVec];
#pragma unroll
    for (int i = 0; i < kVec; ++i) q[i] = kCs ? __ldcs(cs + v + i * kThreads) : cs[v + i * kThreads];
#pragma unroll
    for (int i = 0; i < kVec; ++i) { if (kCs) __stcs(cd + v + i * kThreads, q[i]); else cd[v + i * kThreads] = q[i]; }
  }
}
__global__ void ref_sum(const bf16* p, int64_t per, double* out) {   // a block per chunk, double
  double a = 0;
  for (int64_t i = threadIdx.x; i < per; i += blockDim.x) a += __bfloat162float(p[blockIdx.x * per + i]);
  for (int o = 16; o > 0; o /= 2) a += __shfl_xor_sync(0xffffffffu, a, o);
  __shared__ double part[8];
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = a;
  __syncthreads();
  if (threadIdx.x == 0) { double t = 0; for (int i = 0; i < 8; ++i) t += part[i]; out[blockIdx.x] = t; }
}
__global__ void mismatches(const uint4* a, const uint4* b, int64_t n, uint32_t word, unsigned long long* bad) {
  unsigned long long m = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const uint4 x = a[i];
    const uint4 y = b ? b[i] : uint4{word, word, word, word};
    m += (x.x != y.x) + (x.y != y.y) + (x.z != y.z) + (x.w != y.w);
  }
  if (m) atomicAdd(bad, m);
}

constexpr int64_t kBytes = int64_t{1} << 30, kVecs = kBytes / 16;
struct Bufs { DeviceBuffer a{kBytes}, b{kBytes}, sums{(kBytes / 4096) * 4}, ref{(kBytes / 4096) * 8}, bad{8}; };

void report(const char* kind, const std::string& cfg, double us, bool ok, double bytes) {
  std::printf("%s,%s,%.2f,%.0f,%s\n", kind, cfg.c_str(), us, ok ? bytes / (us * 1e3) : 0.0, ok ? "ok" : "FAILED");
  std::fflush(stdout);
}
unsigned long long count_bad(Bufs& b, const void* x, const void* y, uint32_t word) {
  CK(cudaMemset(b.bad.p, 0, 8));
  mismatches<<<1024, 256>>>(static_cast<const uint4*>(x), static_cast<const uint4*>(y), kVecs, word, b.bad.as<unsigned long long>());
  unsigned long long h = 0;
  CK(cudaMemcpy(&h, b.bad.p, 8, cudaMemcpyDeviceToHost));
  return h;
}
template <int T, int V, int P, int kChunk>
void read_cfg(Timer& timer, Bufs& b, int reps) {
  const int64_t chunk_vecs = kChunk / 16, blocks = kVecs / chunk_vecs;
  auto launch = [&](cudaStream_t s) { read_stream<T, V, P><<<blocks, T, 0, s>>>(b.a.as<uint4>(), chunk_vecs, b.sums.as<float>()); };
  launch(nullptr);
  ref_sum<<<blocks, 256>>>(b.a.as<bf16>(), kChunk / 2, b.ref.as<double>());
  CK(cudaDeviceSynchronize());
  std::vector<float> got(blocks);
  CK(cudaMemcpy(got.data(), b.sums.p, blocks * 4, cudaMemcpyDeviceToHost));
  const std::vector<double> want = to_host(b.ref.as<double>(), blocks);
  bool ok = true;
  for (int64_t i = 0; i < blocks; ++i) ok = ok && std::fabs(got[i] - want[i]) <= 1e-3 * (std::fabs(want[i]) + 64);
  report("read", "t" + std::to_string(T) + "v" + std::to_string(V) + "p" + std::to_string(P) + "c" + std::to_string(kChunk / 1024) + "k",
         ok ? timer.median_us(launch, reps) : 0, ok, kBytes);
}
template <int T, int V, bool C, int kChunk>
void write_cfg(Timer& timer, Bufs& b, int reps) {
  const int64_t chunk_vecs = kChunk / 16, blocks = kVecs / chunk_vecs;
  const uint32_t word = 0x3f803f80u;
  auto launch = [&](cudaStream_t s) { write_stream<T, V, C><<<blocks, T, 0, s>>>(b.b.as<uint4>(), chunk_vecs, word); };
  CK(cudaMemset(b.b.p, 0, kBytes));
  launch(nullptr);
  CK(cudaDeviceSynchronize());
  const bool ok = count_bad(b, b.b.p, nullptr, word) == 0;
  report("write", "t" + std::to_string(T) + "v" + std::to_string(V) + (C ? "cs" : "") + "c" + std::to_string(kChunk / 1024) + "k",
         ok ? timer.median_us(launch, reps) : 0, ok, kBytes);
}
template <int T, int V, bool C, int kChunk>
void copy_cfg(Timer& timer, Bufs& b, int reps) {
  const int64_t chunk_vecs = kChunk / 16, blocks = kVecs / chunk_vecs;
  auto launch = [&](cudaStream_t s) { copy_stream<T, V, C><<<blocks, T, 0, s>>>(b.a.as<uint4>(), b.b.as<uint4>(), chunk_vecs); };
  CK(cudaMemset(b.b.p, 0, kBytes));
  launch(nullptr);
  CK(cudaDeviceSynchronize());
  const bool ok = count_bad(b, b.a.p, b.b.p, 0) == 0;
  report("copy", "t" + std::to_string(T) + "v" + std::to_string(V) + (C ? "cs" : "") + "c" + std::to_string(kChunk / 1024) + "k",
         ok ? timer.median_us(launch, reps) : 0, ok, 2 * kBytes);
}
}  // namespace st

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 30;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 2;
  Timer timer;
  st::Bufs b;
  fill_bf16<<<1024, 256>>>(b.a.as<bf16>(), st::kBytes / 2, 3, -1.f, 1.f);
  CK(cudaDeviceSynchronize());
  std::printf("kind,config,us,GBps,check\n");
  for (int r = 0; r < rounds; ++r) {
    st::read_cfg<256, 2, 0, 32768>(timer, b, reps);
    st::read_cfg<512, 2, 0, 32768>(timer, b, reps);
    st::read_cfg<256, 4, 0, 32768>(timer, b, reps);
    st::read_cfg<256, 2, 0, 16384>(timer, b, reps);
    st::read_cfg<256, 2, 0, 65536>(timer, b, reps);
    st::read_cfg<128, 4, 0, 16384>(timer, b, reps);
    st::read_cfg<256, 2, 1, 32768>(timer, b, reps);
    st::read_cfg<256, 2, 2, 32768>(timer, b, reps);
    st::read_cfg<512, 4, 0, 65536>(timer, b, reps);
    st::read_cfg<1024, 2, 0, 65536>(timer, b, reps);
    st::write_cfg<256, 2, true, 32768>(timer, b, reps);
    st::write_cfg<256, 2, false, 32768>(timer, b, reps);
    st::write_cfg<512, 2, true, 32768>(timer, b, reps);
    st::write_cfg<256, 4, true, 65536>(timer, b, reps);
    st::write_cfg<256, 1, true, 16384>(timer, b, reps);
    st::write_cfg<128, 4, true, 16384>(timer, b, reps);
    st::copy_cfg<256, 2, true, 32768>(timer, b, reps);
    st::copy_cfg<256, 2, false, 32768>(timer, b, reps);
    st::copy_cfg<512, 2, true, 32768>(timer, b, reps);
    st::copy_cfg<256, 4, true, 32768>(timer, b, reps);
    st::copy_cfg<256, 4, true, 65536>(timer, b, reps);
    st::copy_cfg<128, 4, true, 16384>(timer, b, reps);
    st::copy_cfg<512, 4, true, 65536>(timer, b, reps);
  }
  return 0;
}
