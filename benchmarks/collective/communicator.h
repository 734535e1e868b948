// This process's torch.distributed process group, for the Collective family: LibTorch's c10d backends
// (ProcessGroupNCCL for CUDA tensors, ProcessGroupGloo for CPU ones) over the world of the launch
// (opbench/world.h), joined through the standard env rendezvous — a TCPStore at MASTER_ADDR:MASTER_PORT
// served by rank 0 (or by torchrun's agent: TORCHELASTIC_USE_AGENT_STORE), an in-process store for a
// world of one without MASTER_ADDR. The c10d headers stay in communicator.cpp (they compile slowly).
//
// NVLink multicast (NVLS) stays off: NCCL_NVLS_ENABLE=0 is set before the NCCL communicator is made,
// unless the user set NCCL_NVLS_ENABLE. Timeouts: 30 minutes (c10d's default) for the rendezvous and
// every collective, so a rank waits for rank 0 to finish the cases before the collectives.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collective/collective_ops.h"

namespace opbench::collective {

class Communicator {
 public:
  // Why this build cannot run collectives on that device ("no gloo headers ..."); nullopt when it can.
  static std::optional<std::string> unavailable(bool gpu);
  // The process group of this process, made on the first call (every rank must make that call at the
  // same point: its first Collective case) and kept for the process's life. Throws opbench::Error (or
  // c10d's error) when the rendezvous or the backend fails.
  static Communicator& of_world(bool gpu);

  int rank() const;
  int size() const;
  const std::string& backend() const;   // "nccl" or "gloo"

  // Runs `op` on this rank's tensors and returns once it is complete here (gloo: the work waited for;
  // NCCL: run on the current stream, which is then synchronized). all_reduce and broadcast work in
  // place on `input` (`output` is ignored). Broadcast's root is rank 0.
  void run(Op op, at::Tensor& input, at::Tensor& output);
  // The element-wise maximum of `values` over all ranks (an all_reduce), on the host of every rank.
  std::vector<int64_t> max_over_ranks(const std::vector<int64_t>& values);

  struct Impl;
  explicit Communicator(std::unique_ptr<Impl> impl);
  ~Communicator();

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace opbench::collective
