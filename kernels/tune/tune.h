// The own kernels' tuner (kernel_tune, kernel_tune.cpp): each kernel home registers an entry
// (kernels/<kernel>/<kernel>_tune.cu or .cpp) that builds, for each shape that matters, the inputs and
// the kernel's float64 reference, then hands every configuration it wants timed to Tuner::run, and last
// the library's own launch (what bench_ops runs). Tuner::run checks the configuration's output against
// the reference first, then times it with the harness's timer (lib/opbench/timer.h: the event sampler
// with a cold L2, under a stopping rule), and writes one CSV line (kernels/tune/summarize.py sums them
// up). CUDA builds only.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "opbench/timer.h"

namespace opbench::kernels::tune {

struct Options {
  StoppingRule rule;            // the harness's, per configuration
  std::string only;             // an entry's name: that entry alone; "": every entry
  int64_t only_cols = 0;        // > 0: only the shapes of that width (entries that read it)
  std::string only_weights;     // bf16, int8 or int4: only weights of that type (entries that read it)
};

// One case of an entry: its CSV columns and the bytes a launch moves (for GB/s).
struct Case {
  std::string kind;    // the entry's name
  std::string dtype;
  std::string name;
  double bytes = 0;
};

class Tuner {
 public:
  explicit Tuner(Options options);
  ~Tuner();
  const Options& options() const { return options_; }
  // The CSV header (kind,dtype,case,config,us,GBps,samples,noise_pct,check).
  static void print_header();
  // One CSV line for `config` of case `c`: `reset` (poisons the outputs), `launch` once on the current
  // stream, `check` (throws opbench::Error when the outputs differ from the float64 reference); if it
  // passes, `launch` timed under the options' stopping rule: the median in us, GB/s of c.bytes. A failed
  // check (or launch) writes FAILED, the reason to stderr, and no time.
  void run(const Case& c, const std::string& config, const std::function<void()>& reset,
           const std::function<void(cudaStream_t)>& launch, const std::function<void()>& check);
  // Configurations whose check failed so far.
  int failures() const { return failures_; }

 private:
  Options options_;
  std::unique_ptr<Sampler> sampler_;
  ThrottleRule throttle_;
  int failures_ = 0;
};

// An entry: the name `--only` selects it by, and what it runs.
struct Entry {
  const char* name;
  void (*run)(Tuner&);
};
// Registers an entry (OPBENCH_TUNE_ENTRY); returns true.
bool register_entry(const char* name, void (*run)(Tuner&));
// The registered entries, in the order of their names.
std::vector<Entry> entries();

}  // namespace opbench::kernels::tune

// Defines and registers the tuner entry `name`: OPBENCH_TUNE_ENTRY(gemv) { ... tuner.run(...) ... }.
#define OPBENCH_TUNE_ENTRY(name)                                                                     \
  static void opbench_tune_##name(::opbench::kernels::tune::Tuner& tuner);                            \
  [[maybe_unused]] static const bool opbench_tune_registered_##name =                                 \
      ::opbench::kernels::tune::register_entry(#name, opbench_tune_##name);                           \
  static void opbench_tune_##name(::opbench::kernels::tune::Tuner& tuner)
