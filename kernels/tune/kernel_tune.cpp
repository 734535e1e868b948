// kernel_tune: every configuration of the own kernels that their homes' tuner entries name, on the
// shapes that matter, each checked against the kernel's float64 reference, then timed with the
// harness's timer (tune.h), one CSV line each on stdout. kernels/tune/run.sh builds and runs it and
// prints kernels/tune/summarize.py's summary.
//   kernel_tune [--only=ENTRY] [--cols=N] [--weights=TYPE] [--min_samples=N] [--max_time=SECONDS]
//               [--max_noise=FRACTION]
// --only: one entry (gemv, row_norm, decode, stream); --cols: the shapes of that width alone, --weights
// (bf16, int8, int4): the weights of that type alone (the entries that have such shapes or weights); the rest: the stopping rule per configuration (the harness's
// defaults otherwise). Exit code 1 when a check failed, 2 on a bad flag.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "kernels/common/launch_rules.h"
#include "kernels/tune/tune.h"
#include "opbench/check.h"
#include "opbench/device.h"

namespace {

using opbench::kernels::tune::Options;

// The value of `--name=value` in `arg`, or nullptr when `arg` is another flag.
const char* value_of(const std::string& arg, const char* name) {
  const std::string prefix = std::string("--") + name + "=";
  return arg.rfind(prefix, 0) == 0 ? arg.c_str() + prefix.size() : nullptr;
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (const char* v = value_of(arg, "only")) o.only = v;
    else if (const char* v = value_of(arg, "cols")) o.only_cols = std::atoll(v);
    else if (const char* v = value_of(arg, "weights")) o.only_weights = v;
    else if (const char* v = value_of(arg, "min_samples")) o.rule.min_samples = std::atoi(v);
    else if (const char* v = value_of(arg, "max_time")) o.rule.max_seconds = std::atof(v);
    else if (const char* v = value_of(arg, "max_noise")) o.rule.max_noise = std::atof(v);
    else return false;
  }
  return o.only_weights.empty() || o.only_weights == "bf16" || o.only_weights == "int8" || o.only_weights == "int4";
}

}  // namespace

int main(int argc, char** argv) {
  namespace k = opbench::kernels;
  Options options;
  if (!parse(argc, argv, options)) {
    std::fprintf(stderr, "usage: kernel_tune [--only=ENTRY] [--cols=N] [--weights=bf16|int8|int4] [--min_samples=N] "
                         "[--max_time=SECONDS] [--max_noise=FRACTION]\n");
    return 2;
  }
  try {
    if (!opbench::current_device().is_gpu) throw opbench::Error("no CUDA device");
    std::fprintf(stderr, "kernel_tune: the library's launches follow the %s rules (this GPU: %.1f GB/s of DRAM an SM)\n",
                 k::launch_rules_name(k::current_launch_rules()), k::current_dram_gbps_per_sm());
    k::tune::Tuner tuner(options);
    k::tune::Tuner::print_header();
    bool ran = false;
    for (const k::tune::Entry& e : k::tune::entries()) {
      if (!options.only.empty() && options.only != e.name) continue;
      e.run(tuner);
      ran = true;
    }
    if (!ran) throw opbench::Error("no tuner entry named " + options.only);
    return tuner.failures() > 0 ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernel_tune: %s\n", e.what());
    return 2;
  }
}
