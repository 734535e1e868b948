#include "gpu_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>
#include <cstring>

#include "opbench/check.h"
#include "opbench/interrupt.h"

#ifdef OPBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace opbench {

// With four processes started at a time on an H100 (gate_selftest.py's rounds of three cases), each
// takes about 2.2 s, most of it inside the lock; what that time under the lock goes to is not measured.
// Whether starting neighbours disturb the timed process is what gate_selftest.py's A/A rounds measure.
void hold_gpu_lock(const std::string& path, const DeviceInfo& device) {
#ifdef OPBENCH_HAVE_CUDA
  if (device.is_gpu) OPBENCH_CUDA_CHECK(cudaFree(nullptr));
#else
  (void)device;
#endif
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) throw Error("--opbench_gpu_lock " + path + ": cannot open: " + std::strerror(errno));
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {   // polled, so that SIGINT or SIGTERM ends the wait
    if (errno != EWOULDBLOCK && errno != EINTR)
      throw Error("--opbench_gpu_lock " + path + ": cannot lock: " + std::strerror(errno));
    if (interrupt_signal() != 0) throw Error("--opbench_gpu_lock " + path + ": interrupted while waiting for the lock");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace opbench
