// The decode families' shared helpers (case_util.h).
#include "decode/case_util.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/tensor.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "opbench/check.h"
#include "opbench/telemetry.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace opbench::decode {

EnergyWindow::EnergyWindow(std::string pci_bus_id)
    : pci_bus_id_(std::move(pci_bus_id)),
      start_joules_(Nvml::instance().total_energy_joules(pci_bus_id_)),
      start_(std::chrono::steady_clock::now()) {}

std::optional<EnergyUse> EnergyWindow::stop() const {
  const std::optional<double> now = Nvml::instance().total_energy_joules(pci_bus_id_);
  if (!start_joules_ || !now) return std::nullopt;
  return EnergyUse{*now - *start_joules_, seconds_since(start_)};
}

const std::vector<std::string>& config_names() {
  static const std::vector<std::string> names = {"7b", "8x7b", "tiny", "tiny-moe", "70b", "tiny-gqa", "8b"};
  return names;
}

ModelConfig config_of(const std::vector<int64_t>& dims) {
  ModelConfig cfg = model_config(config_names().at(static_cast<size_t>(dims.at(0))));
  cfg.n_layers = dims.at(1);
  return cfg;
}

std::string model_shape_name(const std::vector<int64_t>& dims) {
  return config_names().at(static_cast<size_t>(dims.at(0))) + "-" + std::to_string(dims.at(1)) + "L";
}

Work generation_work(const ModelConfig& cfg, c10::ScalarType dtype) {
  Work w;
  w.bytes_read = streamed_bytes_per_token(cfg, quant_of_dtype(dtype), c10::kBFloat16) * static_cast<double>(cfg.new_tokens);
  w.items = static_cast<double>(cfg.new_tokens);
  return w;
}

Work own_kernel_generation_work(const ModelConfig& cfg, c10::ScalarType dtype) {
  Work w = generation_work(cfg, dtype);
  const double linear = streamed_bytes_per_token(cfg, quant_of_dtype(dtype), c10::kBFloat16) -
                        norm_bytes_per_token(cfg, c10::kBFloat16);
  w.bytes_read_by_kind["gemv"] = linear * static_cast<double>(cfg.steps());
  return w;
}

std::vector<int64_t> prompt_of(const ModelConfig& cfg) {
  std::vector<int64_t> prompt;
  for (int64_t i = 0; i < cfg.prompt_len; ++i) prompt.push_back((7 + 31 * i) % cfg.vocab);
  return prompt;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(at);
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (at - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

void require_device_memory(double needed_bytes) {
#ifdef OPBENCH_HAVE_CUDA
  c10::cuda::CUDACachingAllocator::emptyCache();
  size_t free_bytes = 0, total_bytes = 0;
  OPBENCH_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (needed_bytes > static_cast<double>(free_bytes)) {
    char text[160];
    std::snprintf(text, sizeof text, "needs %.1f GB of device memory, %.1f GB free of %.1f GB", needed_bytes / 1e9,
                  free_bytes / 1e9, total_bytes / 1e9);
    throw Error(text);
  }
#else
  (void)needed_bytes;
#endif
}

double worst_logits_rel_rms(const std::vector<int64_t>& prompt, c10::Device device, const CheckedStep& step,
                            const CheckedStep& reference, Routes* routes) {
  auto longs = at::TensorOptions().device(device).dtype(c10::kLong);
  double worst = 0;
  for (int64_t p = 0; p < 3; ++p) {
    at::Tensor token = at::tensor(std::vector<int64_t>{prompt[static_cast<size_t>(p)]}, longs);
    at::Tensor pos = at::tensor(std::vector<int64_t>{p}, longs);
    at::Tensor got = step(token, pos, routes).to(c10::kDouble);
    at::Tensor want = reference(token, pos, routes).to(c10::kDouble);
    const double rel = ((got - want).square().mean().sqrt() / want.square().mean().sqrt()).item<double>();
    worst = std::max(worst, rel);
  }
  return worst;
}

void check_logits(Model& model, const std::vector<int64_t>& prompt, const CheckedStep& step, Routes* routes,
                  const std::string& what) {
  const double worst = worst_logits_rel_rms(prompt, model.tok_emb.device(), step, [&](const at::Tensor& token,
      const at::Tensor& pos, Routes* r) { return forward_aten(model, token, pos, r); }, routes);
  if (!(worst <= kLogitsRelRms))
    throw Error(what + " logits differ from the ATen forward's by " + std::to_string(100 * worst) + "% RMS (limit " +
                std::to_string(100 * kLogitsRelRms) + "%)");
  std::cerr << "  check: " << what << " logits within " << 100 * worst << "% RMS of ATen's\n";
}

// The rows' name on the CPU, which runs the tiny configurations: the size in gpt-fast's name replaced,
// "llama2_7b_bf16" -> "llama2_tiny_bf16".
std::string tiny_name(const std::string& name) {
  const size_t first = name.find('_'), second = name.find('_', first + 1);
  if (first == std::string::npos || second == std::string::npos) return name + "_tiny";
  return name.substr(0, first + 1) + "tiny" + name.substr(second);
}

std::vector<Experiment> model_rows(const std::string& name, c10::ScalarType dtype, bool per_world_size) {
  std::vector<Experiment> rows;
  for (Metric m : {Metric::kTokensPerSecond, Metric::kMemoryBandwidth, Metric::kStartupSeconds,
                   Metric::kTokenLatencyP50, Metric::kTokenLatencyP90, Metric::kPowerWatts, Metric::kEnergyPerToken})
    rows.push_back({.name = name, .metric = m, .dtypes = {dtype}, .is_model = true, .per_world_size = per_world_size,
                    .cpu_name = tiny_name(name)});
  rows.push_back({.name = name, .metric = Metric::kCompilationSeconds, .dtypes = {dtype}, .is_model = true,
                  .per_world_size = per_world_size, .backends = {"inductor"}, .cpu_name = tiny_name(name)});
  return rows;
}

}  // namespace opbench::decode
