// What the driver says about the GPU's clocks, power and temperature: NVML, loaded at run time
// (libnvidia-ml.so.1 comes with the driver; CPU machines and CI have none, and then every reading is
// absent and unavailable_reason() says why). Read once per case, after its samples: a reading, not a
// per-sample figure (the per-sample SM clock comes from GPU timestamps: timer.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace opbench {

struct GpuTelemetry {
  std::optional<double> sm_clock_mhz;     // NVML_CLOCK_SM, current
  std::optional<double> power_w;          // nvmlDeviceGetPowerUsage (the driver's averaging)
  std::optional<double> temperature_c;    // GPU die
  std::optional<uint64_t> clock_reasons;  // why clocks are held below their maximum: NVML's bit mask
};

// The names of the bits of GpuTelemetry::clock_reasons that mean a slowdown, e.g. {"sw_power_cap"}
// (the "idle" and "applications clocks" bits are not slowdowns). Unknown bits: "bit<N>".
std::vector<std::string> slowdown_reason_names(uint64_t clock_reasons);

class Nvml {
 public:
  static Nvml& instance();   // loads and initializes NVML once; never throws
  const std::string& unavailable_reason() const { return why_not_; }   // empty when loaded
  // REQUIRES: nothing. Readings of the device with this PCI bus id; empty when NVML or the device is absent.
  GpuTelemetry read(const std::string& pci_bus_id);
  // The device's energy counter (nvmlDeviceGetTotalEnergyConsumption: joules since the driver loaded,
  // millijoule resolution); nullopt when NVML, the device or the counter (Volta and newer) is absent.
  std::optional<double> total_energy_joules(const std::string& pci_bus_id);

 private:
  Nvml();
  struct Api;
  Api* api_ = nullptr;
  std::string why_not_;
};

}  // namespace opbench
