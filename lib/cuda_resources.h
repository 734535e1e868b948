// Internal RAII owners of CUDA resources used by the timers. Movable, not copyable.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "opbench/check.h"

namespace opbench::detail {

class CudaEvent {
 public:
  CudaEvent() { OPBENCH_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~CudaEvent() { if (event_) cudaEventDestroy(event_); }
  CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Device memory from cudaMalloc, outside PyTorch's caching allocator (so a flush buffer never shares
// cache lines or pool slots with a case's tensors).
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) { OPBENCH_CUDA_CHECK(cudaMalloc(&ptr_, bytes)); }
  ~DeviceBuffer() { if (ptr_) cudaFree(ptr_); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Host memory mapped into the device address space (cudaHostAllocMapped).
class MappedHostBuffer {
 public:
  explicit MappedHostBuffer(size_t bytes) {
    OPBENCH_CUDA_CHECK(cudaHostAlloc(&host_, bytes, cudaHostAllocMapped));
    OPBENCH_CUDA_CHECK(cudaHostGetDevicePointer(&device_, host_, 0));
  }
  ~MappedHostBuffer() { if (host_) cudaFreeHost(host_); }
  MappedHostBuffer(const MappedHostBuffer&) = delete;
  MappedHostBuffer& operator=(const MappedHostBuffer&) = delete;
  void* host() const { return host_; }
  void* device() const { return device_; }

 private:
  void* host_ = nullptr;
  void* device_ = nullptr;
};

}  // namespace opbench::detail
