// Where the `inductor` backend's AOTInductor packages live and what they are built with: run-wide
// options (bench_ops' --opbench_inductor_cache and --opbench_inductor_settings; opbench/inductor.h).
#pragma once
#include <string>

namespace opbench::inductor {

struct PackageCache {
  std::string dir;             // the cache root; a settings file's packages are in <dir>/<its hash>/
  std::string settings_path;   // inductor options (JSON): gpt-fast's by default, inductor/settings.json
  std::string source_dir;      // the checkout: benchmarks/<family>/<module>.py, inductor/build_packages.py
  std::string python;          // the python that builds packages (its torch is LibTorch's version)
  std::string bench_ops;       // this program, which the builder asks for the plan
};

}  // namespace opbench::inductor
