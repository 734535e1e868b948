// One-shot sums over NCCL's LSA peers (lsa_sum.h).
#include "collective/lsa_sum.h"

#include <cuda_bf16.h>

#include <string>

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
constexpr int64_t kVectorElements = 8;   // bf16 in a 16-byte load
constexpr int kMaxRanks = 8;             // the most GPUs of one NVLink host the kernel sums over

}  // namespace

int64_t lsa_sum_blocks(int64_t dim) { return (dim / kVectorElements + kThreads - 1) / kThreads; }

std::string device_api_mismatch(int headers_version, int loaded_version) {
  if (headers_version == loaded_version) return "";
  return "lsa_sum: built against NCCL " + std::to_string(headers_version) + "'s device API but NCCL " +
         std::to_string(loaded_version) + " is loaded; its device structs differ between releases: build " +
         "against the headers of the NCCL that LibTorch loads (OPBENCH_NCCL_INCLUDE)";
}

#ifdef OPBENCH_HAVE_NCCL_DEVICE_API
namespace {

using bf16 = __nv_bfloat16;

// h's 16-byte vector v += the ranks' window vectors at row_offset + 16 v, in rank order, in fp32.
__global__ void __launch_bounds__(kThreads)
    lsa_sum_add(ncclDevComm comm, ncclWindow_t window, size_t row_offset, bf16* h, int64_t vectors) {
  kernels::wait_for_inputs();
  {
    ncclLsaBarrierSession<ncclCoopCta> barrier(ncclCoopCta(), comm, ncclTeamTagLsa(), blockIdx.x);
    barrier.sync(ncclCoopCta(), cuda::memory_order_acq_rel);
  }
  kernels::allow_next_launch();
  const int64_t v = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (v >= vectors) return;
  // Every peer's load issued before any is used: the NVLink round trips overlap instead of queuing
  // one behind the other (a loop over comm.lsaSize, unknown at compile time, waits for each in turn).
  uint4 mine = reinterpret_cast<const uint4*>(h)[v];
  uint4 raw[kMaxRanks];
#pragma unroll
  for (int peer = 0; peer < kMaxRanks; ++peer)
    if (peer < comm.lsaSize)   // ld.global.cv: the peer's row as it is now, never a stale L1 copy
      raw[peer] = __ldcv(static_cast<const uint4*>(ncclGetLsaPointer(window, row_offset + 16 * v, peer)));
  float sum[kVectorElements] = {};
#pragma unroll
  for (int peer = 0; peer < kMaxRanks; ++peer) {
    if (peer >= comm.lsaSize) break;
    const bf16* part = reinterpret_cast<const bf16*>(&raw[peer]);
#pragma unroll
    for (int i = 0; i < kVectorElements; ++i) sum[i] += __bfloat162float(part[i]);
  }
  bf16* out = reinterpret_cast<bf16*>(&mine);
#pragma unroll
  for (int i = 0; i < kVectorElements; ++i) out[i] = __float2bfloat16(__bfloat162float(out[i]) + sum[i]);
  reinterpret_cast<uint4*>(h)[v] = mine;
}

}  // namespace

struct LsaSum::DeviceComm {
  ncclDevComm comm;
};

std::optional<std::string> lsa_sum_unavailable() {
  int loaded_version = 0;
  if (ncclGetVersion(&loaded_version) != ncclSuccess) return "lsa_sum: ncclGetVersion failed";
  if (std::string problem = device_api_mismatch(NCCL_VERSION_CODE, loaded_version); !problem.empty())
    return problem;
  return std::nullopt;
}

LsaSum::LsaSum(void* nccl_comm, void* window, int64_t rows, int64_t dim)
    : device_(std::make_unique<DeviceComm>()), window_(window), rows_(rows), dim_(dim) {
  if (!nccl_comm || !window || rows <= 0 || dim <= 0 || dim % kVectorElements != 0)
    throw Error("lsa_sum: needs a communicator, a window, rows > 0 and dim a positive multiple of 8");
  if (std::optional<std::string> problem = lsa_sum_unavailable()) throw Error(*problem);
  auto comm = static_cast<ncclComm_t>(nccl_comm);
  int ranks = 0;
  OPBENCH_NCCL_CHECK(ncclCommCount(comm, &ranks));
  if (ranks > kMaxRanks)   // alike on every rank: none makes the device communicator
    throw Error("lsa_sum: sums over at most " + std::to_string(kMaxRanks) + " ranks; this communicator has " +
                std::to_string(ranks));
  ncclDevCommRequirements requirements{};
  requirements.lsaBarrierCount = static_cast<int>(lsa_sum_blocks(dim));
  OPBENCH_NCCL_CHECK(ncclDevCommCreate(comm, &requirements, &device_->comm));
  if (device_->comm.lsaSize != ranks)
    throw Error("lsa_sum: " + std::to_string(device_->comm.lsaSize) + " of the " + std::to_string(ranks) +
                " ranks are load/store accessible from this one (NVLink or P2P between every pair is needed)");
}

void LsaSum::add_sum(int64_t slot, void* h, cudaStream_t stream, bool programmatic) const {
  if (slot < 0 || slot >= rows_ || !h) throw Error("lsa_sum: slot out of range or a null h");
  kernels::launch_kernel(lsa_sum_add, dim3(static_cast<unsigned>(lsa_sum_blocks(dim_))), dim3(kThreads), 0, stream,
                         programmatic, device_->comm, static_cast<ncclWindow_t>(window_),
                         static_cast<size_t>(slot * dim_) * sizeof(bf16), static_cast<bf16*>(h),
                         dim_ / kVectorElements);
}

#else

struct LsaSum::DeviceComm {};

std::optional<std::string> lsa_sum_unavailable() {
  return "lsa_sum: this build has no NCCL device API (NCCL >= 2.28 with nccl_device.h, found when configured)";
}

LsaSum::LsaSum(void*, void* window, int64_t rows, int64_t dim) : window_(window), rows_(rows), dim_(dim) {
  throw Error(*lsa_sum_unavailable());
}

void LsaSum::add_sum(int64_t, void*, cudaStream_t, bool) const { throw Error(*lsa_sum_unavailable()); }

#endif

LsaSum::~LsaSum() = default;

}  // namespace opbench::collective
