// A one-shot sum over the ranks of one host through NCCL's device API (NCCL >= 2.28: a device
// communicator, a symmetric window, LSA -- load/store accessible -- peer pointers and barriers). NCCL
// maps every rank's window into every rank's address space over NVLink and provides the barrier; the
// kernel here only loads the peers' rows and adds them. The tensor-parallel decode step sums with it by
// default (decode/tp_decode.cpp; OPBENCH_TP_ALLREDUCE=nccl for ncclAllReduce) in place of an all-reduce
// and a residual add: one kernel, where NCCL's ring takes ~2 x (ranks - 1) hops of latency.
//
// add_sum(slot, h): h[dim] += sum over the ranks r = 0..n-1, in that order, of rank r's window row `slot`
// (bf16; summed in fp32 and rounded once, so every rank computes the same h). One launch of
// lsa_sum_blocks(dim) blocks; each block first meets its peers' same block at an LSA barrier (release
// and acquire, system scope), so every rank's row was written before anyone reads it. Rows alternate:
// a rank writes row s again only after the next add_sum on the other row passed its barrier, i.e. after
// every rank finished reading row s -- so two rows and one barrier a sum are race-free when the user
// alternates them (the decode step's wo and w2 partials). A programmatic launch waits for the kernel
// before it (griddepcontrol.wait) before the barrier.
// A rank that never arrives leaves its peers spinning at the barrier: the communicator's wait gives up
// at its timeout (collective/communicator.h). Plain C++ interface; CUDA builds with NCCL >= 2.28 only
// (otherwise the constructor throws opbench::Error saying so).
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

int64_t lsa_sum_blocks(int64_t dim);

// Empty when NCCL `loaded_version` (ncclGetVersion) is the release of the headers this file was built
// against (`headers_version`, NCCL_VERSION_CODE); else the one line that says so and what to do.
std::string device_api_mismatch(int headers_version, int loaded_version);

// Why LsaSum cannot be made in this process (no device API in the build, or device_api_mismatch with the
// loaded NCCL); nullopt when it can be tried. Alike on every rank of one host. Reads no communicator.
std::optional<std::string> lsa_sum_unavailable();

class LsaSum {
 public:
  // Collective: every rank at once. `nccl_comm` an ncclComm_t, `window` the ncclWindow_t of `rows` x `dim`
  // bf16 (Communicator::symmetric_tensor and nccl_handles), dim a multiple of 8. Makes the device
  // communicator (ncclDevCommCreate, lsa_sum_blocks(dim) LSA barriers); throws opbench::Error when the
  // loaded NCCL is not the headers' release, when NCCL refuses or when not every rank is load/store
  // accessible. It lives as long as the process: NCCL releases its resources with the communicator.
  LsaSum(void* nccl_comm, void* window, int64_t rows, int64_t dim);
  ~LsaSum();
  LsaSum(const LsaSum&) = delete;
  LsaSum& operator=(const LsaSum&) = delete;
  // REQUIRES: 0 <= slot < rows; h: dim bf16 on this rank's GPU.
  void add_sum(int64_t slot, void* h, cudaStream_t stream, bool programmatic) const;

 private:
  struct DeviceComm;
  std::unique_ptr<DeviceComm> device_;
  void* window_;
  int64_t rows_, dim_;
};

}  // namespace opbench::collective
