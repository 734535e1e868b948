#include "opbench/world.h"

#include <cstdlib>

#include "opbench/check.h"

namespace opbench {
namespace {

// A whole number in [min, max], or Error naming the variable.
int whole_number(const std::string& name, const std::string& text, long min, long max) {
  size_t used = 0;
  long value = 0;
  try {
    value = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || value < min || value > max)
    throw Error(name + "=" + text + ": expected a whole number in [" + std::to_string(min) + ", " +
                std::to_string(max) + "]");
  return static_cast<int>(value);
}

}  // namespace

World world_from_env(const EnvReader& get) {
  World w;
  auto rank = get("RANK"), size = get("WORLD_SIZE"), local = get("LOCAL_RANK");
  if (size && !rank)
    throw Error("WORLD_SIZE=" + *size + " is set but RANK is not: a distributed launch sets both (torchrun does)");
  if (rank && !size)
    throw Error("RANK=" + *rank + " is set but WORLD_SIZE is not: a distributed launch sets both (torchrun does)");
  if (local) w.local_rank = whole_number("LOCAL_RANK", *local, 0, 1 << 20);
  if (!rank) return w;
  w.launched = true;
  w.size = whole_number("WORLD_SIZE", *size, 1, 1 << 20);
  w.rank = whole_number("RANK", *rank, 0, 1 << 20);
  if (w.rank >= w.size)
    throw Error("RANK=" + *rank + " is not below WORLD_SIZE=" + *size + " (ranks are 0 .. WORLD_SIZE-1)");
  auto addr = get("MASTER_ADDR"), port = get("MASTER_PORT");
  if (w.size > 1 && (!addr || addr->empty() || !port))
    throw Error("WORLD_SIZE=" + *size + " needs MASTER_ADDR and MASTER_PORT (rank 0's host and a free port, "
                "where the ranks meet); torchrun sets them");
  if (addr && !addr->empty() && port) {
    w.master_addr = *addr;
    w.master_port = whole_number("MASTER_PORT", *port, 1, 65535);
  }
  w.agent_store = get("TORCHELASTIC_USE_AGENT_STORE").value_or("") == "True";
  return w;
}

const World& current_world() {
  static const World world = world_from_env([](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  });
  return world;
}

void bind_local_device(const World& world) {
#ifdef OPBENCH_HAVE_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();   // no driver or no device: a CPU run
    return;
  }
  if (count == 1) return;       // the launcher gave this process one GPU (or there is one)
  if (world.local_rank < 0) {
    if (!world.launched) return;   // a single process: device 0, as always
    throw Error("LOCAL_RANK is not set and this process sees " + std::to_string(count) +
                " GPUs: set LOCAL_RANK (torchrun does; under Slurm LOCAL_RANK=$SLURM_LOCALID) or give each "
                "process one GPU with CUDA_VISIBLE_DEVICES");
  }
  if (world.local_rank >= count)
    throw Error("LOCAL_RANK=" + std::to_string(world.local_rank) + " but this process sees " +
                std::to_string(count) + " GPUs (devices 0 .. " + std::to_string(count - 1) + ")");
  OPBENCH_CUDA_CHECK(cudaSetDevice(world.local_rank));
#else
  (void)world;
#endif
}

}  // namespace opbench
