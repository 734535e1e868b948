#include "opbench/family.h"

#include <algorithm>
#include <array>

#include "opbench/check.h"
#include "opbench/world.h"

namespace opbench {
namespace {

std::vector<FamilyDescription>& descriptions() {
  static std::vector<FamilyDescription> list;
  return list;
}

bool has(const std::vector<c10::ScalarType>& list, c10::ScalarType dtype) {
  return std::find(list.begin(), list.end(), dtype) != list.end();
}

bool measures_ceilings(const Family& family) {
  return std::any_of(family.backends.begin(), family.backends.end(),
                     [](const Backend& b) { return b.measures.has_value(); });
}

}  // namespace

bool Backend::covers(c10::ScalarType dtype) const { return dtypes.empty() || has(dtypes, dtype); }

void validate_family(const Family& f) {
  std::string who = "family " + (f.name.empty() ? std::string("(unnamed)") : f.name) + ": ";
  if (f.name.empty() || f.name.find('/') != std::string::npos) throw Error(who + "needs a name without '/'");
  bool only_ceilings = !f.backends.empty() && std::all_of(f.backends.begin(), f.backends.end(),
                                                          [](const Backend& b) { return b.measures.has_value(); });
  if (f.experiments.empty() && !only_ceilings)
    throw Error(who + "declares no experiment (its cases would produce no row)");
  if (f.dtypes.empty()) throw Error(who + "declares no dtype");
  if (f.backends.empty()) throw Error(who + "declares no backend");
  if (f.gpu_shapes.empty() && f.cpu_shapes.empty()) throw Error(who + "declares no shape");
  if (!f.work) throw Error(who + "has no work formula");
  if (!f.run) throw Error(who + "has no run function");
  for (const auto& e : f.experiments) {
    if (e.name.empty()) throw Error(who + "an experiment has no name");
    for (const auto& name : e.backends)
      if (std::none_of(f.backends.begin(), f.backends.end(), [&](const Backend& b) { return b.name == name; }))
        throw Error(who + "experiment " + e.name + " names backend " + name + " the family lacks");
    for (auto dtype : e.dtypes)
      if (!has(f.dtypes, dtype))
        throw Error(who + "experiment " + e.name + " names dtype " + dtype_name(dtype) + " the family lacks");
  }
  for (const auto& b : f.backends) {
    if (b.name.empty()) throw Error(who + "a backend has no name");
    for (auto dtype : b.dtypes)
      if (!has(f.dtypes, dtype))
        throw Error(who + "backend " + b.name + " names dtype " + dtype_name(dtype) + " the family lacks");
    if (b.name == "inductor" && f.python_module.empty())
      throw Error(who + "has an inductor backend but names no python_module to compile");
  }
}

std::vector<CaseInfo> cases_of(const Family& family, const DeviceInfo& device, std::optional<int64_t> model_layers) {
  // Ordered dtype-major, then by the shape's place in the family's list (backend-only shapes after),
  // then by backend: all backends of a shape run together, as the sweep always ran.
  std::vector<std::pair<std::array<size_t, 3>, CaseInfo>> keyed;
  if (current_world().size < family.min_world_size) return {};
  const auto& family_shapes = device.is_gpu ? family.gpu_shapes : family.cpu_shapes;
  for (size_t t = 0; t < family.dtypes.size(); ++t) {
    c10::ScalarType dtype = family.dtypes[t];
    for (size_t b = 0; b < family.backends.size(); ++b) {
      const Backend& backend = family.backends[b];
      if (!backend.covers(dtype) || (backend.needs_cuda && !device.is_gpu)) continue;
      std::vector<Experiment> experiments;
      for (const auto& e : family.experiments)
        if (e.covers(dtype) && e.covers(backend.name)) experiments.push_back(e);
      const auto& shapes = device.is_gpu && !backend.gpu_shapes.empty() ? backend.gpu_shapes : family_shapes;
      const auto& work_of = backend.work ? backend.work : family.work;
      for (const auto& listed : shapes) {
        Dims dims = listed;
        if (model_layers && family.layers_axis >= 0) dims.at(static_cast<size_t>(family.layers_axis)) = *model_layers;
        CaseInfo info;
        info.family = family.name;
        info.dtype = dtype_name(dtype);
        info.shape = family.name_shape ? family.name_shape(dims) : shape_name(dims);
        info.backend = backend.name;
        info.scalar_type = dtype;
        info.dims = dims;
        info.work = work_of(dtype, dims);
        info.work.compute_peak = family.peak;
        info.experiments = experiments;
        info.measures = backend.measures;
        info.python_module = family.python_module;
        size_t rank = static_cast<size_t>(std::find(family_shapes.begin(), family_shapes.end(), listed) -
                                          family_shapes.begin());
        keyed.push_back({{t, rank, b}, std::move(info)});
      }
    }
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<CaseInfo> cases;
  for (auto& [key, info] : keyed) cases.push_back(std::move(info));
  return cases;
}

bool add_family(FamilyDescription describe) {
  descriptions().push_back(describe);
  return true;
}

const std::vector<Family>& registered_families() {
  static const std::vector<Family> families = [] {
    std::vector<Family> list;
    for (auto describe : descriptions()) {
      list.push_back(describe());
      validate_family(list.back());
      for (size_t i = 0; i + 1 < list.size(); ++i)
        if (list[i].name == list.back().name) throw Error("family " + list.back().name + " is declared twice");
    }
    std::stable_partition(list.begin(), list.end(), measures_ceilings);
    return list;
  }();
  return families;
}

const Family& family_named(const std::string& name) {
  for (const auto& family : registered_families())
    if (family.name == name) return family;
  throw Error("no family named " + name);
}

void register_families(RunContext& run) {
  for (const auto& family : registered_families())
    for (auto& info : cases_of(family, run.device, run.options.model_layers))
      register_case(run, std::move(info), family.run);
}

}  // namespace opbench
