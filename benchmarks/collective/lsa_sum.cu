// One-shot sums over NCCL's LSA peers with flagged words (lsa_sum.h).
#include "collective/lsa_sum.h"

#include <cuda_bf16.h>

#include <string>

#include "cuda_resources.h"
#include "kernels/common/launch.cuh"
#include "opbench/check.h"

#ifdef OPBENCH_HAVE_NCCL
#include <nccl.h>
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#define OPBENCH_HAVE_NCCL_DEVICE_API
#include <nccl_device.h>

#include "collective/nccl_check.h"
#endif
#endif

namespace opbench::collective {
namespace {

constexpr int kThreads = 128;
constexpr int64_t kSlots = 2;
constexpr int64_t kWordBytes = 8;   // a flagged word: fp32 value, 32-bit flag
constexpr int kMaxRanks = 8;        // the most GPUs of one NVLink host the kernel sums over

}  // namespace

int64_t lsa_sum_window_bytes(int64_t ranks, int64_t dim) { return kSlots * ranks * dim * kWordBytes; }

std::string device_api_mismatch(int headers_version, int loaded_version) {
  if (headers_version == loaded_version) return "";
  return "lsa_sum: built against NCCL " + std::to_string(headers_version) + "'s device API but NCCL " +
         std::to_string(loaded_version) + " is loaded; its device structs differ between releases: build " +
         "against the headers of the NCCL that LibTorch loads (OPBENCH_NCCL_INCLUDE)";
}

#ifdef OPBENCH_HAVE_NCCL_DEVICE_API
namespace {

using bf16 = __nv_bfloat16;

__device__ __forceinline__ uint64_t flagged(float value, uint32_t flag) {
  return (static_cast<uint64_t>(flag) << 32) | __float_as_uint(value);
}
__device__ __forceinline__ float value_of(uint64_t word) { return __uint_as_float(static_cast<uint32_t>(word)); }
__device__ __forceinline__ bool carries(const ulonglong2& words, uint32_t flag) {
  return static_cast<uint32_t>(words.x >> 32) == flag && static_cast<uint32_t>(words.y >> 32) == flag;
}
// Two flagged words; each 8-byte half is stored and loaded whole (a vector access is one access per element).
__device__ __forceinline__ void store_words(void* at, uint64_t a, uint64_t b) {
  asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(at), "l"(a), "l"(b) : "memory");
}
__device__ __forceinline__ ulonglong2 load_words(const void* at) {
  ulonglong2 w;
  asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(w.x), "=l"(w.y) : "l"(at) : "memory");
  return w;
}
__device__ __forceinline__ uint64_t now_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Elements 2p and 2p + 1 of h += the ranks' partials (lsa_sum.h). The window holds [slot][rank][pairs]
// pairs of flagged words.
__global__ void __launch_bounds__(kThreads)
    lsa_sum_add(ncclDevComm comm, ncclWindow_t window, int slot, const bf16* partial, bf16* h, int64_t pairs,
                uint32_t* counters, uint64_t timeout_ns) {
  kernels::wait_for_inputs();
  kernels::allow_next_launch();   // the next kernel's weights stream in while this one waits for words
  const uint32_t flag = counters[slot] + 1;
  if (blockIdx.x == 0 && threadIdx.x == 0) counters[slot ^ 1] += 1;   // no block reads the other slot's
  const int64_t p = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (p >= pairs) return;
  const int ranks = comm.lsaSize, me = comm.lsaRank;
  const size_t row_bytes = static_cast<size_t>(pairs) * 2 * kWordBytes;
  const size_t slot_at = static_cast<size_t>(slot) * ranks * row_bytes + 2 * kWordBytes * static_cast<size_t>(p);
  const float2 mine = __bfloat1622float2(reinterpret_cast<const __nv_bfloat162*>(partial)[p]);
  const uint64_t word0 = flagged(mine.x, flag), word1 = flagged(mine.y, flag);
#pragma unroll
  for (int peer = 0; peer < kMaxRanks; ++peer)
    if (peer < ranks && peer != me) store_words(ncclGetLsaPointer(window, slot_at + me * row_bytes, peer), word0, word1);
  // Every rank's words requested before any is waited for: the loads' latencies overlap.
  const char* own = static_cast<const char*>(ncclGetLocalPointer(window, slot_at));
  ulonglong2 words[kMaxRanks];
#pragma unroll
  for (int r = 0; r < kMaxRanks; ++r)
    if (r < ranks && r != me) words[r] = load_words(own + r * row_bytes);
  float sum0 = 0.f, sum1 = 0.f;
#pragma unroll
  for (int r = 0; r < kMaxRanks; ++r) {   // in rank order: every rank rounds alike
    if (r >= ranks) break;
    if (r == me) {
      sum0 += mine.x;
      sum1 += mine.y;
      continue;
    }
    if (!carries(words[r], flag)) {
      const uint64_t since = now_ns();
      do {
        words[r] = load_words(own + r * row_bytes);
        if (now_ns() - since > timeout_ns) __trap();   // a peer that never sends: fail, never hang
      } while (!carries(words[r], flag));
    }
    sum0 += value_of(words[r].x);
    sum1 += value_of(words[r].y);
  }
  __nv_bfloat162* out = reinterpret_cast<__nv_bfloat162*>(h) + p;
  const float2 old = __bfloat1622float2(*out);
  *out = __floats2bfloat162_rn(old.x + sum0, old.y + sum1);
}

}  // namespace

struct LsaSum::DeviceComm {
  ncclDevComm comm;
  ncclWindow_t window;
  detail::DeviceBuffer counters{kSlots * sizeof(uint32_t)};
};

std::optional<std::string> lsa_sum_unavailable() {
  int loaded_version = 0;
  if (ncclGetVersion(&loaded_version) != ncclSuccess) return "lsa_sum: ncclGetVersion failed";
  if (std::string problem = device_api_mismatch(NCCL_VERSION_CODE, loaded_version); !problem.empty())
    return problem;
  return std::nullopt;
}

LsaSum::LsaSum(void* nccl_comm, void* window, void* window_memory, int64_t dim, double timeout_s)
    : dim_(dim), timeout_s_(timeout_s) {
  if (!nccl_comm || !window || !window_memory || dim <= 0 || dim % 2 != 0 || !(timeout_s > 0))
    throw Error("lsa_sum: needs a communicator, a window, an even dim > 0 and a timeout > 0");
  if (std::optional<std::string> problem = lsa_sum_unavailable()) throw Error(*problem);
  auto comm = static_cast<ncclComm_t>(nccl_comm);
  int ranks = 0;
  OPBENCH_NCCL_CHECK(ncclCommCount(comm, &ranks));
  if (ranks > kMaxRanks)   // alike on every rank: none makes the device communicator
    throw Error("lsa_sum: sums over at most " + std::to_string(kMaxRanks) + " ranks; this communicator has " +
                std::to_string(ranks));
  device_ = std::make_unique<DeviceComm>();
  device_->window = static_cast<ncclWindow_t>(window);
  ncclDevCommRequirements requirements{};   // no barriers: the flags order everything
  OPBENCH_NCCL_CHECK(ncclDevCommCreate(comm, &requirements, &device_->comm));
  if (device_->comm.lsaSize != ranks)
    throw Error("lsa_sum: " + std::to_string(device_->comm.lsaSize) + " of the " + std::to_string(ranks) +
                " ranks are load/store accessible from this one (NVLink or P2P between every pair is needed)");
  OPBENCH_CUDA_CHECK(cudaMemset(window_memory, 0, static_cast<size_t>(lsa_sum_window_bytes(ranks, dim))));
  OPBENCH_CUDA_CHECK(cudaMemset(device_->counters.get(), 0, device_->counters.bytes()));
  OPBENCH_CUDA_CHECK(cudaDeviceSynchronize());
}

void LsaSum::add_sum(int64_t slot, const void* partial, void* h, cudaStream_t stream, bool programmatic) const {
  if ((slot != 0 && slot != 1) || !partial || !h) throw Error("lsa_sum: slot not 0 or 1, or a null row");
  const int64_t pairs = dim_ / 2;
  kernels::launch_kernel(lsa_sum_add, dim3(static_cast<unsigned>((pairs + kThreads - 1) / kThreads)), dim3(kThreads),
                         0, stream, programmatic, device_->comm, device_->window, static_cast<int>(slot),
                         static_cast<const bf16*>(partial), static_cast<bf16*>(h), pairs,
                         static_cast<uint32_t*>(device_->counters.get()), static_cast<uint64_t>(timeout_s_ * 1e9));
}

#else

struct LsaSum::DeviceComm {};

std::optional<std::string> lsa_sum_unavailable() {
  return "lsa_sum: this build has no NCCL device API (NCCL >= 2.28 with nccl_device.h, found when configured)";
}

LsaSum::LsaSum(void*, void*, void*, int64_t dim, double timeout_s) : dim_(dim), timeout_s_(timeout_s) {
  throw Error(*lsa_sum_unavailable());
}

void LsaSum::add_sum(int64_t, const void*, void*, cudaStream_t, bool) const { throw Error(*lsa_sum_unavailable()); }

#endif

LsaSum::~LsaSum() = default;

}  // namespace opbench::collective
