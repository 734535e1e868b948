// This process's communicator over the world of the launch (opbench/world.h), for the Collective family
// and for whatever else runs collectives (tensor-parallel decode):
//   - GPU: NCCL's own C API — rank 0 makes the unique id (ncclGetUniqueId), every rank reads it from the
//     rendezvous store and joins with ncclCommInitRank — on the current CUDA stream of the caller. It is
//     the libnccl.so.2 LibTorch loads (the pip package nvidia-nccl beside torch: collective.cmake).
//   - CPU: c10d's ProcessGroupGloo (the gloo inside libtorch_cpu.so).
// The rendezvous is torch.distributed's env:// one: a c10d TCPStore at MASTER_ADDR:MASTER_PORT served
// by rank 0 (or by torchrun's agent: TORCHELASTIC_USE_AGENT_STORE), an in-process store for a world of
// one without MASTER_ADDR. The NCCL and c10d headers stay in communicator.cpp (they compile slowly).
//
// NVLink multicast (NVLS) stays off: NCCL_NVLS_ENABLE=0 is set before the NCCL communicator is made,
// unless the user set NCCL_NVLS_ENABLE.
//
// Timeout: OPBENCH_COLLECTIVE_TIMEOUT_S seconds (default 1800, c10d's 30 minutes) for the rendezvous, for
// gloo's collectives and for every wait on NCCL's. The default is long because the other ranks wait at
// their first collective while rank 0 runs the other families' cases. A wait polls the stream and
// NCCL's asynchronous error: on an error or at the timeout it aborts the communicator
// (ncclCommAbort) and throws, so a dead peer never hangs a rank. After any failed collective the
// communicator is unusable: every later call throws at once with the first failure's message.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collective/collective_ops.h"

namespace opbench::collective {

class Communicator {
 public:
  // Why this build cannot run collectives on that device ("no gloo headers ..."); nullopt when it can.
  static std::optional<std::string> unavailable(bool gpu);
  // The communicator of this process, made on the first call (every rank must make that call at the
  // same point: its first Collective case) and kept for the process's life (destroyed at exit:
  // ncclCommDestroy, or ncclCommAbort once broken). Throws opbench::Error when the rendezvous or the
  // backend fails; a failed first call is not retried.
  static Communicator& of_world(bool gpu);

  int rank() const;
  int size() const;
  const std::string& backend() const;   // "nccl" or "gloo"

  // `op` on this rank's tensors (contiguous; bf16, fp32 or int64; on this rank's GPU for NCCL).
  // all_reduce and broadcast write `output`, which may be `input` itself (in place); broadcast's root is
  // rank 0; all_gather's output holds size() x input, reduce_scatter's input size() x output;
  // all_to_all sends share p of `input` to rank p and puts rank p's in share p of `output` (equal shares).
  // NCCL: enqueue only enqueues on the current CUDA stream (capturable in a CUDA graph); gloo: it runs and
  // waits. run = enqueue + wait.
  void enqueue(Op op, const at::Tensor& input, const at::Tensor& output);
  void run(Op op, const at::Tensor& input, const at::Tensor& output);
  // Returns once all work on the current CUDA stream is complete (NCCL; nothing to do with gloo). Throws
  // (after aborting the communicator) on NCCL's asynchronous error or at the timeout.
  void wait();
  // The element-wise maximum of `values` over all ranks (an int64 all_reduce), on the host of every rank.
  std::vector<int64_t> max_over_ranks(const std::vector<int64_t>& values);
  // A tensor of `sizes` and `dtype` for a collective's input that NCCL reads fastest: on a GPU, memory
  // from ncclMemAlloc registered with every rank as a symmetric window (ncclCommWindowRegister,
  // NCCL_WIN_COLL_SYMMETRIC), where NCCL >= 2.27 runs its symmetric kernels (lower latency for small
  // messages over NVLink; every rank must pass the same offset into it). Not as a symmetric all-reduce's
  // output: that gives wrong sums under CUDA graphs (NVIDIA/nccl#1924). A collective call: every rank makes it at the same point
  // with the same sizes. The memory lives as long as the communicator (destroying it releases the
  // windows, then the memory is freed). `user` names who owns the memory: calls of one user and one byte
  // count share it, other users never (the one-shot sums keep flags in theirs, collective/lsa_sum.h).
  // Contents undefined. gloo: an ordinary CPU tensor. Throws opbench::Error when NCCL refuses (the
  // communicator stays usable).
  at::Tensor symmetric_tensor(at::IntArrayRef sizes, c10::ScalarType dtype, const std::string& user = "");
  // The ncclComm_t and the ncclWindow_t of a tensor symmetric_tensor returned, for NCCL's device API
  // (collective/lsa_sum.h). Throws opbench::Error on gloo or for other memory.
  std::pair<void*, void*> nccl_handles(const at::Tensor& window_memory) const;

  struct Impl;
  explicit Communicator(std::unique_ptr<Impl> impl);
  ~Communicator();

 private:
  std::unique_ptr<Impl> impl_;
};

// OPBENCH_COLLECTIVE_TIMEOUT_S (a positive number of seconds), else 1800. Throws opbench::Error for a
// value that is not a positive number.
double collective_timeout_seconds();

}  // namespace opbench::collective
