// The `inductor` backend: what torch.compile makes of a family's module, as an AOTInductor package.
//
// A family spells its module once in Python beside its C++ source (benchmarks/<family>/<family>.py:
// case(dtype, dims, device) -> (module, inputs)). inductor/build_packages.py exports it at a case's
// shapes and compiles it with the settings file's inductor options into the package cache:
//   <cache>/<settings hash>/<Family>_<dtype>_<shape>.pt2     (+ .build.json: its compile time)
// Each package carries its key in its metadata: torch version, device name, case, settings hash, and
// the hashes of the module's source and of the builder's (how it exports and compiles). A package
// whose key differs from the one this run expects is stale: it is never loaded, and the case is
// skipped as unavailable (--opbench_inductor_build rebuilds it), as is a case whose package is
// missing. Parameters are not packaged: the family loads its own tensors by name.
#pragma once
#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "opbench/check.h"
#include "opbench/device.h"
#include "opbench/package_cache.h"

namespace opbench {
struct CaseInfo;
class CaseContext;
}  // namespace opbench

namespace opbench::inductor {

// What names a package: key field -> value, stored in the package's metadata under these names.
using PackageKey = std::map<std::string, std::string>;

// FNV-1a, 64 bits, as 16 hex digits (inductor/build_packages.py computes the same).
std::string fnv1a64(const std::string& bytes);

// The key this run expects for `info` (an inductor case whose family names its Python module).
// Throws opbench::Error when the module or the settings file cannot be read.
PackageKey expected_key(const CaseInfo& info, const PackageCache& cache, const DeviceInfo& device);
std::string package_path(const CaseInfo& info, const PackageCache& cache);

// "current", "missing", or "stale: <the first field that differs, both values>".
std::string package_state(const std::string& path, const PackageKey& expected);

// The plan of `cases` (inductor cases) as JSON for inductor/build_packages.py: torch version, device,
// settings, and per case its module, dtype, dims, package path, expected key and state.
std::string plan_json(const std::vector<const CaseInfo*>& cases, const PackageCache& cache, const DeviceInfo& device);

// The command that builds the packages of the inductor cases `filter` (a --benchmark_filter) selects.
std::string build_command(const std::string& filter, const PackageCache& cache);

// A case skipped because its backend cannot run here: the message starts with kUnavailablePrefix.
struct Unavailable : Error {
  explicit Unavailable(const std::string& why);
};

// A loaded package. Runs on the current CUDA stream (or the CPU), without its own synchronization, so
// the harness's timers and CUDA-graph capture see only the kernels it launches.
class Package {
 public:
  // The current package of the context's case, its build time set as the counter compile_s; throws
  // Unavailable when it is missing or stale, or the settings file or module cannot be read.
  static std::shared_ptr<Package> open(CaseContext& ctx);
  ~Package();
  // The parameters the package left out, by name; the package reads these tensors in place (they must
  // outlive it). Throws opbench::Error naming a parameter the package expects and `tensors` lacks.
  void set_constants(std::unordered_map<std::string, at::Tensor>& tensors);
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs);
  // The build's wall time from the package's .build.json, when it was recorded.
  std::optional<double> compile_seconds() const { return compile_seconds_; }

 private:
  struct Loader;
  Package(const std::string& path, const DeviceInfo& device);
  std::unique_ptr<Loader> loader_;
  std::optional<double> compile_seconds_;
  bool on_gpu_ = false;
};

}  // namespace opbench::inductor
