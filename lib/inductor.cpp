#include "opbench/inductor.h"

#include <nlohmann/json.hpp>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <benchmark/benchmark.h>
#include <torch/headeronly/version.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "opbench/cases.h"
#include "opbench/fnv1a.h"

#ifdef OPBENCH_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace opbench::inductor {
namespace {

namespace fs = std::filesystem;

// The metadata names of the key's fields, in the order a mismatch is reported.
constexpr const char* kKeyFields[] = {"opbench_case", "opbench_torch", "opbench_device", "opbench_settings",
                                      "opbench_module", "opbench_builder"};

std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("inductor: cannot read " + what + " " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string module_path(const CaseInfo& info, const PackageCache& cache) {
  if (info.python_module.empty()) throw Error("inductor: family " + info.family + " names no Python module");
  return cache.source_dir + "/benchmarks/" + info.python_module;
}

std::string builder_path(const PackageCache& cache) { return cache.source_dir + "/inductor/build_packages.py"; }

std::string settings_hash(const PackageCache& cache) {
  return fnv1a64(read_file(cache.settings_path, "inductor settings"));
}

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::optional<double> recorded_compile_seconds(const std::string& package) {
  const std::string sidecar = package.substr(0, package.size() - 4) + ".build.json";
  std::ifstream in(sidecar);
  if (!in) return std::nullopt;
  nlohmann::json record = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!record.is_object() || !record.contains("compile_s") || !record["compile_s"].is_number()) return std::nullopt;
  return record["compile_s"].get<double>();
}

}  // namespace

std::string fnv1a64(const std::string& bytes) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a_hash(bytes)));
  return hex;
}

PackageKey expected_key(const CaseInfo& info, const PackageCache& cache, const DeviceInfo& device) {
  return {{"opbench_case", info.name()},
          {"opbench_torch", TORCH_VERSION},
          {"opbench_device", device.name},
          {"opbench_settings", settings_hash(cache)},
          {"opbench_module", fnv1a64(read_file(module_path(info, cache), "module"))},
          {"opbench_builder", fnv1a64(read_file(builder_path(cache), "package builder"))}};
}

std::string package_path(const CaseInfo& info, const PackageCache& cache) {
  return cache.dir + "/" + settings_hash(cache) + "/" + info.family + "_" + info.dtype + "_" + info.shape + ".pt2";
}

std::string package_state(const std::string& path, const PackageKey& expected) {
  if (!fs::exists(path)) return "missing";
  std::unordered_map<std::string, std::string> found;
  try {
    found = torch::inductor::AOTIModelPackageLoader::load_metadata_from_package(path, "model");
  } catch (const std::exception& e) {
    return std::string("stale: unreadable (") + e.what() + ")";
  }
  for (const char* field : kKeyFields) {
    auto it = found.find(field);
    const std::string have = it == found.end() ? "(none)" : it->second;
    const std::string& want = expected.at(field);
    if (have != want) return std::string("stale: ") + field + " is " + have + ", this run needs " + want;
  }
  return "current";
}

std::string plan_json(const std::vector<const CaseInfo*>& cases, const PackageCache& cache, const DeviceInfo& device) {
  nlohmann::json packages = nlohmann::json::array();
  for (const CaseInfo* info : cases) {
    const PackageKey key = expected_key(*info, cache, device);
    const std::string path = package_path(*info, cache);
    packages.push_back({{"case", info->name()}, {"module", module_path(*info, cache)}, {"dtype", info->dtype},
                        {"dims", info->dims}, {"package", path}, {"key", key}, {"state", package_state(path, key)}});
  }
  nlohmann::json plan = {{"torch", TORCH_VERSION}, {"device", device.name},
                         {"device_type", device.is_gpu ? "cuda" : "cpu"},
                         {"settings", {{"path", cache.settings_path}, {"hash", settings_hash(cache)}}},
                         {"packages", packages}};
  return plan.dump(1);
}

std::string build_command(const std::string& filter, const PackageCache& cache) {
  return shell_quoted(cache.python) + " " + shell_quoted(builder_path(cache)) +
         " --bench-ops " + shell_quoted(cache.bench_ops) + " --filter " + shell_quoted(filter) + " -- " +
         shell_quoted("--opbench_inductor_cache=" + cache.dir) + " " +
         shell_quoted("--opbench_inductor_settings=" + cache.settings_path);
}

Unavailable::Unavailable(const std::string& why) : Error(kUnavailablePrefix + why) {}

struct Package::Loader {
  explicit Loader(const std::string& path, c10::DeviceIndex index)
      : loader(path, "model", /*run_single_threaded=*/true, /*num_runners=*/1, index) {}
  torch::inductor::AOTIModelPackageLoader loader;
};

Package::Package(const std::string& path, const DeviceInfo& device)
    : loader_(std::make_unique<Loader>(path, device.is_gpu ? static_cast<c10::DeviceIndex>(device.index) : -1)),
      compile_seconds_(recorded_compile_seconds(path)),
      on_gpu_(device.is_gpu) {}

Package::~Package() = default;

std::shared_ptr<Package> Package::open(CaseContext& ctx) {
  const CaseInfo& info = ctx.info();
  const PackageCache& cache = ctx.options().inductor;
  const DeviceInfo& device = current_device();
  std::string path, state;
  try {
    path = package_path(info, cache);
    state = package_state(path, expected_key(info, cache, device));
  } catch (const Error& e) {   // no settings file or module to key the package by
    throw Unavailable(e.what());
  }
  if (state == "missing") throw Unavailable("no inductor package (--opbench_inductor_build)");
  if (state != "current") throw Unavailable("inductor package " + state + " (--opbench_inductor_build)");
  std::shared_ptr<Package> package(new Package(path, device));
  if (package->compile_seconds_) ctx.state().counters["compile_s"] = *package->compile_seconds_;
  return package;
}

void Package::set_constants(std::unordered_map<std::string, at::Tensor>& tensors) {
  for (const auto& name : loader_->loader.get_constant_fqns())
    if (!tensors.count(name)) throw Error("inductor: the package expects parameter " + name + ", not given");
  loader_->loader.load_constants(tensors, /*use_inactive=*/false, /*check_full_update=*/true,
                                 /*user_managed=*/true);
}

std::vector<at::Tensor> Package::run(const std::vector<at::Tensor>& inputs) {
#ifdef OPBENCH_HAVE_CUDA
  if (on_gpu_) return loader_->loader.run(inputs, c10::cuda::getCurrentCUDAStream().stream());
#endif
  return loader_->loader.run(inputs);
}

}  // namespace opbench::inductor
