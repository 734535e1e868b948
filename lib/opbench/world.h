// The processes of one distributed launch, as torchrun describes them in each process's environment —
// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT — and as any other launcher (Slurm, Kubernetes,
// mpirun with a wrapper) can set them, on one host or many. Without RANK and WORLD_SIZE a process is a
// world of one. Only the families that run on every rank (Family::every_rank: the collectives) use the
// world; the process group itself is theirs (benchmarks/collective/). Nothing here talks to a peer.
#pragma once
#include <functional>
#include <optional>
#include <string>

namespace opbench {

struct World {
  int rank = 0;
  int size = 1;
  int local_rank = -1;            // LOCAL_RANK; -1 when not set (then one GPU per process is required)
  std::string master_addr;        // MASTER_ADDR; empty without a rendezvous (a world of one)
  int master_port = 0;            // MASTER_PORT
  bool launched = false;          // RANK and WORLD_SIZE were set
  bool agent_store = false;       // TORCHELASTIC_USE_AGENT_STORE=True: torchrun's agent already serves the
                                  // rendezvous store at MASTER_ADDR:MASTER_PORT, every rank is its client
  bool is_root() const { return rank == 0; }
  bool has_rendezvous() const { return !master_addr.empty(); }
};

// Reads the variables through `get` (nullopt: not set). Throws opbench::Error with one line naming the
// variable for an unusable environment: WORLD_SIZE without RANK or RANK without WORLD_SIZE; a value that
// is not a whole number in range (RANK >= WORLD_SIZE, WORLD_SIZE < 1, MASTER_PORT outside 1..65535); a
// world of more than one process without MASTER_ADDR or MASTER_PORT.
using EnvReader = std::function<std::optional<std::string>(const std::string&)>;
World world_from_env(const EnvReader& get);

// This process's world from its environment, parsed on the first call (which throws as above).
const World& current_world();

// Makes the GPU of this rank the current CUDA device, before anything else touches CUDA: the device
// LOCAL_RANK names among those the process sees; the only one when it sees one (a launcher that gives
// each process one GPU through CUDA_VISIBLE_DEVICES). Throws opbench::Error when LOCAL_RANK is not below
// the device count, or is not set while the process sees several GPUs. Nothing happens on a machine
// without a CUDA device or in a build without CUDA.
void bind_local_device(const World& world);

}  // namespace opbench
