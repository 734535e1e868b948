// NVML through dlopen (telemetry.h): no header or library at build time. The few entry points used are
// declared here with NVML's documented C signatures (opaque device handle, unsigned int outputs).
#include <dlfcn.h>

#include "opbench/telemetry.h"

namespace opbench {
namespace {

// nvmlDevice_t, an opaque handle: void*, since g++ 13.3 crashes on a struct declared here in a unity batch.
using NvmlDevice = void*;
using NvmlReturn = int;   // 0: NVML_SUCCESS
constexpr int kNvmlClockSm = 1;
constexpr int kNvmlTemperatureGpu = 0;

// NVML's clock-event (formerly throttle) reason bits that are slowdowns, with their meaning.
struct ReasonBit {
  uint64_t bit;
  const char* name;
};
constexpr ReasonBit kSlowdownBits[] = {
    {0x4, "sw_power_cap"}, {0x8, "hw_slowdown"},  {0x10, "sync_boost"},
    {0x20, "sw_thermal"},  {0x40, "hw_thermal"},  {0x80, "hw_power_brake"},
};
constexpr uint64_t kNotSlowdownBits = 0x1 /* idle */ | 0x2 /* applications clocks */ | 0x100 /* display clocks */;

template <typename F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

}  // namespace

struct Nvml::Api {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*by_bus_id)(const char*, NvmlDevice*) = nullptr;
  NvmlReturn (*clock)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*power)(NvmlDevice, unsigned*) = nullptr;
  NvmlReturn (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
  NvmlReturn (*reasons)(NvmlDevice, unsigned long long*) = nullptr;
  NvmlReturn (*energy)(NvmlDevice, unsigned long long*) = nullptr;   // millijoules
};

std::vector<std::string> slowdown_reason_names(uint64_t clock_reasons) {
  std::vector<std::string> names;
  uint64_t rest = clock_reasons & ~kNotSlowdownBits;
  for (const ReasonBit& r : kSlowdownBits) {
    if (rest & r.bit) names.emplace_back(r.name);
    rest &= ~r.bit;
  }
  for (int bit = 0; bit < 64; ++bit)
    if (rest & (uint64_t{1} << bit)) names.push_back("bit" + std::to_string(bit));
  return names;
}

Nvml::Nvml() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why_not_ = "libnvidia-ml.so.1 (NVML, part of the NVIDIA driver) was not found";
    return;
  }
  auto* api = new Api;
  api->init = symbol<decltype(api->init)>(lib, "nvmlInit_v2");
  api->by_bus_id = symbol<decltype(api->by_bus_id)>(lib, "nvmlDeviceGetHandleByPciBusId_v2");
  api->clock = symbol<decltype(api->clock)>(lib, "nvmlDeviceGetClockInfo");
  api->power = symbol<decltype(api->power)>(lib, "nvmlDeviceGetPowerUsage");
  api->temperature = symbol<decltype(api->temperature)>(lib, "nvmlDeviceGetTemperature");
  api->reasons = symbol<decltype(api->reasons)>(lib, "nvmlDeviceGetCurrentClocksEventReasons");
  api->energy = symbol<decltype(api->energy)>(lib, "nvmlDeviceGetTotalEnergyConsumption");
  if (!api->reasons) api->reasons = symbol<decltype(api->reasons)>(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
  if (!api->init || !api->by_bus_id || !api->clock) {
    why_not_ = "libnvidia-ml.so.1 lacks nvmlInit_v2 / nvmlDeviceGetHandleByPciBusId_v2 / nvmlDeviceGetClockInfo";
  } else if (int rc = api->init(); rc != 0) {
    why_not_ = "nvmlInit_v2 failed (NVML error " + std::to_string(rc) + ")";
  } else {
    api_ = api;   // kept for the process's life, like the library
    return;
  }
  delete api;
}

Nvml& Nvml::instance() {
  static Nvml nvml;
  return nvml;
}

GpuTelemetry Nvml::read(const std::string& pci_bus_id) {
  GpuTelemetry t;
  NvmlDevice device = nullptr;
  if (!api_ || pci_bus_id.empty() || api_->by_bus_id(pci_bus_id.c_str(), &device) != 0) return t;
  unsigned value = 0;
  if (api_->clock(device, kNvmlClockSm, &value) == 0) t.sm_clock_mhz = value;
  if (api_->power && api_->power(device, &value) == 0) t.power_w = value / 1e3;
  if (api_->temperature && api_->temperature(device, kNvmlTemperatureGpu, &value) == 0) t.temperature_c = value;
  unsigned long long reasons = 0;
  if (api_->reasons && api_->reasons(device, &reasons) == 0) t.clock_reasons = reasons;
  return t;
}

std::optional<double> Nvml::total_energy_joules(const std::string& pci_bus_id) {
  NvmlDevice device = nullptr;
  if (!api_ || !api_->energy || pci_bus_id.empty() || api_->by_bus_id(pci_bus_id.c_str(), &device) != 0)
    return std::nullopt;
  unsigned long long millijoules = 0;
  if (api_->energy(device, &millijoules) != 0) return std::nullopt;
  return static_cast<double>(millijoules) / 1e3;
}

}  // namespace opbench
