// What machine this is: the GPU (name, SMs, L2, memory) or the CPU, and the datasheet peaks that turn
// achieved GB/s and TFLOP/s into percent of peak. Unknown GPUs get no peaks: never a guess.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace opbench {

// Datasheet peaks of one GPU model. Units: TFLOP/s (dense, no sparsity), GB/s (1e9 bytes/s).
struct DatasheetPeaks {
  std::string model;          // the table entry that matched, e.g. "H100 SXM"
  double bf16_dense_tflops;   // tensor-core bf16/fp16 dense
  double fp32_tflops;         // non-tensor fp32 (FMA counted as 2 FLOPs)
  double int8_dense_tops;     // tensor-core int8 dense
  double hbm_gbps;            // DRAM bandwidth
};

// REQUIRES: nothing. Matches an NVIDIA device name as cudaGetDeviceProperties reports it
// ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB", "NVIDIA L4", ...). nullopt for any other name.
std::optional<DatasheetPeaks> lookup_datasheet(std::string_view device_name);

struct DeviceInfo {
  bool is_gpu = false;
  std::string name;           // GPU name, or the CPU model name
  std::string arch_name;      // as gpt-fast's get_arch_name(): the GPU name, or the CPU machine ("x86_64")
  int sm_count = 0;           // 0 on CPU
  int compute_capability = 0; // major*10 + minor; 0 on CPU
  int64_t l2_bytes = 0;       // 0 on CPU
  double rated_sm_clock_mhz = 0;   // the SM clock the device is rated for (cudaDevAttrClockRate); 0 on CPU
  std::string pci_bus_id;     // "0000:1b:00.0" (matches NVML's device to CUDA's); empty on CPU
  int64_t memory_bytes = 0;   // GPU memory, or host memory on CPU
  int cpu_count = 0;          // logical CPUs of the host
  std::optional<DatasheetPeaks> peaks;
  int index = 0;              // the CUDA device this process runs on (its current device); 0 on CPU
  std::string id;             // which device, as the host numbers it: "cuda:3" (CUDA_VISIBLE_DEVICES
                              // mapped back when it lists indices or UUIDs), or "cpu"
};

// The id of visible CUDA device `index` under `cuda_visible_devices` (the variable's value, or nullptr
// when it is not set): "cuda:<its entry in the list>", else "cuda:<index>".
std::string cuda_device_id(int index, const char* cuda_visible_devices);

// The device benchmarks run on: the current CUDA device (0 unless bind_local_device chose this rank's,
// opbench/world.h) when a CUDA build finds one, else the CPU. Cached: call it after bind_local_device.
const DeviceInfo& current_device();
// Host facts, used for CPU runs and for the dashboard's runner record.
std::string host_cpu_model();
std::string host_machine();   // uname -m
int64_t host_memory_bytes();
// Memory a case may still allocate on `device`: free GPU memory (cudaMemGetInfo), or the host's
// MemAvailable on CPU.
int64_t available_memory_bytes(const DeviceInfo& device);

}  // namespace opbench
