// --opbench_gpu_lock FILE: processes started together (compare.py --jobs) load and initialize in
// parallel but measure one at a time.
#pragma once
#include <string>

#include "opbench/device.h"

namespace opbench {

// Blocks until this process holds an exclusive lock on `path` (created if missing); the lock is released
// when the process exits. On a GPU the CUDA context is made first, outside the lock, so that its
// creation overlaps other processes' runs (it runs no work on the device). Throws opbench::Error naming
// the file when it cannot be opened or locked.
void hold_gpu_lock(const std::string& path, const DeviceInfo& device);

}  // namespace opbench
