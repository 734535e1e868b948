#include "kernels/tune/tune.h"

#include <c10/cuda/CUDAStream.h>

#include <cstdio>
#include <exception>
#include <map>
#include <string>
#include <utility>

#include "opbench/check.h"
#include "opbench/device.h"

namespace opbench::kernels::tune {
namespace {

std::map<std::string, void (*)(Tuner&)>& registry() {
  static std::map<std::string, void (*)(Tuner&)> entries;
  return entries;
}

void print_line(const Case& c, const std::string& config, const std::string& figures, const char* check) {
  std::printf("%s,%s,%s,%s,%s,%s\n", c.kind.c_str(), c.dtype.c_str(), c.name.c_str(), config.c_str(), figures.c_str(),
              check);
  std::fflush(stdout);
}

}  // namespace

Tuner::Tuner(Options options) : options_(std::move(options)), sampler_(make_event_sampler(CacheMode::kCold)) {
  throttle_.expected_sm_clock_mhz = current_device().rated_sm_clock_mhz;
}

Tuner::~Tuner() = default;

void Tuner::print_header() { std::printf("kind,dtype,case,config,us,GBps,samples,noise_pct,check\n"); }

void Tuner::run(const Case& c, const std::string& config, const std::function<void()>& reset,
                const std::function<void(cudaStream_t)>& launch, const std::function<void()>& check) {
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  try {
    reset();
    launch(stream);
    OPBENCH_CUDA_CHECK(cudaGetLastError());
    OPBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
    check();
    const Measurement m = measure(*sampler_, [&] { launch(stream); }, options_.rule, throttle_);
    char figures[128];
    std::snprintf(figures, sizeof(figures), "%.2f,%.0f,%zu,%.2f", m.median * 1e6, c.bytes / m.median / 1e9,
                  m.samples.size(), m.median_noise * 100);
    print_line(c, config, figures, "ok");
  } catch (const std::exception& e) {   // opbench::Error, or ATen's (out of memory)
    ++failures_;
    std::fprintf(stderr, "kernel_tune: %s %s %s %s: %s\n", c.kind.c_str(), c.dtype.c_str(), c.name.c_str(),
                 config.c_str(), e.what());
    print_line(c, config, ",,,", "FAILED");
  }
}

bool register_entry(const char* name, void (*run)(Tuner&)) {
  registry()[name] = run;
  return true;
}

std::vector<Entry> entries() {
  std::vector<Entry> all;
  for (const auto& [name, run] : registry()) all.push_back({name.c_str(), run});
  return all;
}

}  // namespace opbench::kernels::tune
