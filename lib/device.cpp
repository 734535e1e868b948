#include "opbench/device.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "opbench/check.h"

namespace opbench {
namespace {

// A table row matches when the device name contains every `must` token and no `must_not` token.
struct DatasheetRow {
  std::array<const char*, 3> must;
  std::array<const char*, 2> must_not;
  DatasheetPeaks peaks;
};

// NVIDIA datasheets (dense figures; sparsity doubles them and is not used here).
const DatasheetRow kDatasheet[] = {
    {{"A100", "40GB", "PCI"}, {nullptr, nullptr}, {"A100 PCIe 40GB", 312, 19.5, 624, 1555}},
    {{"A100", "80GB", "PCI"}, {nullptr, nullptr}, {"A100 PCIe 80GB", 312, 19.5, 624, 1935}},
    {{"A100", "40GB", nullptr}, {"PCI", nullptr}, {"A100 SXM4 40GB", 312, 19.5, 624, 1555}},
    {{"A100", "80GB", nullptr}, {"PCI", nullptr}, {"A100 SXM4 80GB", 312, 19.5, 624, 2039}},
    {{"H100", "PCIe", nullptr}, {nullptr, nullptr}, {"H100 PCIe", 756, 51, 1513, 2000}},
    {{"H100", "NVL", nullptr}, {nullptr, nullptr}, {"H100 NVL", 835, 60, 1670, 3900}},
    {{"H100", "HBM3", nullptr}, {"PCIe", "NVL"}, {"H100 SXM", 989, 67, 1979, 3350}},
    {{"H200", nullptr, nullptr}, {"NVL", nullptr}, {"H200 SXM", 989, 67, 1979, 4800}},
    {{"L4", nullptr, nullptr}, {"L40", nullptr}, {"L4", 121, 30.3, 242, 300}},
};

bool contains_token(std::string_view name, const char* token) {
  return token == nullptr || name.find(token) != std::string_view::npos;
}

std::string read_first_field(const char* path, std::string_view key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    return value;
  }
  return {};
}

DeviceInfo host_device() {
  DeviceInfo info;
  info.name = host_cpu_model();
  info.arch_name = host_machine();
  info.memory_bytes = host_memory_bytes();
  info.cpu_count = static_cast<int>(std::thread::hardware_concurrency());
  info.id = "cpu";
  return info;
}

#ifdef OPBENCH_HAVE_CUDA
bool fill_gpu(DeviceInfo& info) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();  // no driver or no device: a CPU run, not an error
    return false;
  }
  int index = 0;
  OPBENCH_CUDA_CHECK(cudaGetDevice(&index));
  cudaDeviceProp prop{};
  OPBENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  info.is_gpu = true;
  info.index = index;
  info.id = cuda_device_id(index, std::getenv("CUDA_VISIBLE_DEVICES"));
  info.name = prop.name;
  info.arch_name = prop.name;
  info.sm_count = prop.multiProcessorCount;
  info.compute_capability = prop.major * 10 + prop.minor;
  info.l2_bytes = prop.l2CacheSize;
  info.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  info.peaks = lookup_datasheet(info.name);
  int clock_khz = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, index) == cudaSuccess) info.rated_sm_clock_mhz = clock_khz / 1e3;
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, index) == cudaSuccess) info.pci_bus_id = bus_id;
  (void)cudaGetLastError();
  return true;
}
#endif

}  // namespace

std::optional<DatasheetPeaks> lookup_datasheet(std::string_view device_name) {
  for (const auto& row : kDatasheet) {
    bool match = true;
    for (const char* token : row.must) match = match && contains_token(device_name, token);
    for (const char* token : row.must_not)
      match = match && (token == nullptr || !contains_token(device_name, token));
    if (match) return row.peaks;
  }
  return std::nullopt;
}

std::string cuda_device_id(int index, const char* cuda_visible_devices) {
  if (cuda_visible_devices) {
    std::string list = cuda_visible_devices, entry;
    int position = 0;
    for (size_t start = 0; start <= list.size(); ++position) {
      size_t comma = std::min(list.find(',', start), list.size());
      if (position == index) {
        entry = list.substr(start, comma - start);
        break;
      }
      start = comma + 1;
    }
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (!entry.empty()) return "cuda:" + entry;
  }
  return "cuda:" + std::to_string(index);
}

std::string host_cpu_model() {
  std::string model = read_first_field("/proc/cpuinfo", "model name");
  return model.empty() ? host_machine() : model;
}

std::string host_machine() {
  utsname u{};
  return uname(&u) == 0 ? std::string(u.machine) : std::string("unknown");
}

int64_t host_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<int64_t>(pages) * page_size : 0;
}

int64_t available_memory_bytes(const DeviceInfo& device) {
#ifdef OPBENCH_HAVE_CUDA
  if (device.is_gpu) {
    size_t free_bytes = 0, total_bytes = 0;
    OPBENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    return static_cast<int64_t>(free_bytes);
  }
#endif
  (void)device;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    meminfo.ignore(64, '\n');
  }
  return host_memory_bytes();
}

const DeviceInfo& current_device() {
  static const DeviceInfo info = [] {
    DeviceInfo d = host_device();
#ifdef OPBENCH_HAVE_CUDA
    fill_gpu(d);
#endif
    return d;
  }();
  return info;
}

}  // namespace opbench
