// What the decode families share (decode.cpp: one GPU; tp_decode.cpp: tensor-parallel): the
// configurations by index, the shape names, the prompt, percentiles, the device-memory refusal, the
// logits check before timing and the rows of a model experiment.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "decode/model.h"
#include "opbench/experiment.h"
#include "opbench/work.h"

namespace opbench::decode {

// The GPU's energy over a window (the timed generations): NVML's total-energy counter read when made and
// at stop(). nullopt from stop() where the counter cannot be read (the CPU, no NVML, an older GPU): the
// power and energy rows then show "-".
struct EnergyUse {
  double joules = 0, seconds = 0;
};
class EnergyWindow {
 public:
  explicit EnergyWindow(std::string pci_bus_id);
  std::optional<EnergyUse> stop() const;

 private:
  std::string pci_bus_id_;
  std::optional<double> start_joules_;
  std::chrono::steady_clock::time_point start_;
};

// dims = {configuration, layers[, tp]}: the configuration by its index in config_names().
const std::vector<std::string>& config_names();
ModelConfig config_of(const std::vector<int64_t>& dims);
std::string model_shape_name(const std::vector<int64_t>& dims);   // "7b-32L"

// One generation of `cfg` (a whole model or one rank's shard): new_tokens tokens, each streaming the
// model's bytes once.
Work generation_work(const ModelConfig& cfg, c10::ScalarType dtype);
// The same with the bytes the own step's GEMV kernels read (every linear layer's weights and scales, all
// steps() of the generation, prompt steps included) as kind "gemv": the own kernels run every linear layer,
// so the traced breakdown's GEMV GB/s is theirs (ATen and inductor kernels split it otherwise).
Work own_kernel_generation_work(const ModelConfig& cfg, c10::ScalarType dtype);

// A fixed prompt inside every vocabulary here.
std::vector<int64_t> prompt_of(const ModelConfig& cfg);

double seconds_since(std::chrono::steady_clock::time_point start);
double percentile(std::vector<double> values, double q);

// Refuses (before allocating) a model that cannot fit in the free device memory (a CUDA build on a
// GPU; nothing otherwise).
void require_device_memory(double needed_bytes);

constexpr double kLogitsRelRms = 0.05;   // bf16 rounding differences; a wrong kernel errs by ~1

// Logits [1, vocab] of one step at (token, pos); with `routes`, the experts it chose (or must follow).
using CheckedStep = std::function<at::Tensor(const at::Tensor& token, const at::Tensor& pos, Routes* routes)>;

// The largest RMS(step - reference) / RMS(reference) over the logits of the prompt's first three tokens,
// the step first at each position (the reference's cache writes then replace its own). `routes`: the
// experts the step logs, which the reference then follows; nullptr: each routes itself.
double worst_logits_rel_rms(const std::vector<int64_t>& prompt, c10::Device device, const CheckedStep& step,
                            const CheckedStep& reference, Routes* routes);

// worst_logits_rel_rms against `model`'s ATen forward; throws opbench::Error above kLogitsRelRms and
// prints the figure under `what` otherwise.
void check_logits(Model& model, const std::vector<int64_t>& prompt, const CheckedStep& step, Routes* routes,
                  const std::string& what);

// The rows of one model experiment: tok/s, GB/s, startup, token latency p50 and p90, and the inductor
// backend's compilation time; `per_world_size`: named <name>_n<processes>.
// "llama2_7b_bf16" -> "llama2_tiny_bf16": a model experiment's row name on the CPU (Experiment::cpu_name).
std::string tiny_name(const std::string& name);
std::vector<Experiment> model_rows(const std::string& name, c10::ScalarType dtype, bool per_world_size = false);

}  // namespace opbench::decode
