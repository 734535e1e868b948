// A one-shot sum over the ranks of one host through NCCL's device API (NCCL >= 2.28: a device
// communicator, a symmetric window, LSA -- load/store accessible -- peer pointers). NCCL maps every
// rank's window into every rank's address space over NVLink; the kernel here does the rest. The
// tensor-parallel decode step sums with it by default (decode/tp_decode.cpp; OPBENCH_TP_ALLREDUCE=nccl
// for ncclAllReduce) in place of an all-reduce and a residual add: one kernel, one NVLink crossing.
//
// add_sum(slot, partial, h): h[dim] += sum over the ranks r = 0..n-1, in that order, of rank r's
// `partial` (bf16; summed in fp32 and rounded once, so every rank computes the same h). Each element
// travels as a flagged word -- its fp32 value in the low 4 bytes and the sum's flag in the high 4, one
// 8-byte store, which NVLink delivers whole -- as NCCL's LL protocol sends data: the kernel stores its
// rank's words into every rank's window (row (slot, its rank)), then reads its own window until every
// rank's word carries this sum's flag, and adds. No barrier, no load across NVLink: the latency is one
// crossing of stores (a barrier, then loads of the peers' rows, would take three).
// Flags: this rank's counter per slot (device memory, zero at the start on every rank); a sum on slot s
// uses its counter + 1 and advances the other slot's. Reuse is race-free when the calls alternate the
// slots, 0, 1, 0, 1, ... (the decode step's wo and w2 partials): a rank writes slot s again only after
// its sum on the other slot received every rank's words, which each rank sent after it had finished
// reading slot s. A programmatic launch waits for the kernel before it (griddepcontrol.wait) first.
// A rank that never sends leaves its peers waiting: after `timeout_s` (OPBENCH_COLLECTIVE_TIMEOUT_S) of
// waiting the kernel traps, which fails the process's CUDA context instead of hanging it. Plain C++
// interface; CUDA builds with NCCL >= 2.28 only (otherwise the constructor throws opbench::Error).
// The device API's structs (ncclDevComm, ncclDevCommRequirements, the window) are one NCCL release's
// layout, not a stable ABI: 2.28.9 inserted barrierCount before 2.28.3's lsaBarrierCount, so a kernel built
// against 2.28.9's headers reads 2.28.3's device communicator wrongly. The constructor therefore refuses a
// loaded NCCL other than the headers' release (device_api_mismatch).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace opbench::collective {

// The window's bytes for `ranks` ranks and rows of `dim`: 2 slots x ranks x dim flagged 8-byte words.
int64_t lsa_sum_window_bytes(int64_t ranks, int64_t dim);

// Empty when NCCL `loaded_version` (ncclGetVersion) is the release of the headers this file was built
// against (`headers_version`, NCCL_VERSION_CODE); else the one line that says so and what to do.
std::string device_api_mismatch(int headers_version, int loaded_version);

// Why LsaSum cannot be made in this process (no device API in the build, or device_api_mismatch with the
// loaded NCCL); nullopt when it can be tried. Alike on every rank of one host. Reads no communicator.
std::optional<std::string> lsa_sum_unavailable();

class LsaSum {
 public:
  // Collective: every rank at once. `nccl_comm` an ncclComm_t; `window_memory` this rank's memory of the
  // symmetric window `window` (ncclWindow_t) of at least lsa_sum_window_bytes(ranks, dim) bytes
  // (Communicator::symmetric_tensor and nccl_handles); dim even. Makes the device communicator
  // (ncclDevCommCreate) and zeroes this rank's window and counters, synchronously. REQUIRES: no rank
  // calls add_sum before every rank's constructor returned (agree over the communicator in between).
  // Throws opbench::Error when the loaded NCCL is not the headers' release, when NCCL refuses or when
  // not every rank is load/store accessible. It lives as long as the process: NCCL releases its
  // resources with the communicator.
  LsaSum(void* nccl_comm, void* window, void* window_memory, int64_t dim, double timeout_s);
  ~LsaSum();
  LsaSum(const LsaSum&) = delete;
  LsaSum& operator=(const LsaSum&) = delete;
  // REQUIRES: slot 0 or 1, alternating from the first call on (the header's); partial and h: dim bf16
  // on this rank's GPU; every rank makes the same calls in the same order.
  void add_sum(int64_t slot, const void* partial, void* h, cudaStream_t stream, bool programmatic) const;

 private:
  struct DeviceComm;
  std::unique_ptr<DeviceComm> device_;
  int64_t dim_;
  double timeout_s_;
};

}  // namespace opbench::collective
