// A small value of the current CUDA device worked out once per device, for launches that ask on every
// call (whether programmatic launch is supported, which launch rules apply). CUDA builds only.
#pragma once
#include <atomic>
#include <cstdint>

#include "opbench/check.h"

namespace opbench::kernels {

constexpr int kMaxCachedDevices = 64;

// compute(device) for the current device, a value in [0, 126], kept in `cache` (the caller's static array,
// zero-initialised) for devices below kMaxCachedDevices; computed on every call for the others.
template <typename Compute>
int once_per_device(std::atomic<int8_t> (&cache)[kMaxCachedDevices], Compute compute) {
  int device = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&device));
  if (device < kMaxCachedDevices && cache[device] != 0) return cache[device] - 1;
  const int value = compute(device);
  if (device < kMaxCachedDevices) cache[device] = static_cast<int8_t>(value + 1);
  return value;
}

}  // namespace opbench::kernels
