#include "family_list.h"

#include <sstream>

#include "opbench/family.h"

namespace opbench {
namespace {

// The shapes as the family names them in its cases ("7b-32L", "1GiB"), not as raw dims.
std::string join_shapes(const Family& f, const std::vector<Dims>& shapes) {
  std::ostringstream out;
  for (size_t i = 0; i < shapes.size(); ++i)
    out << (i ? " " : "") << (f.name_shape ? f.name_shape(shapes[i]) : shape_name(shapes[i]));
  return shapes.empty() ? "-" : out.str();
}

}  // namespace

void print_family_list(std::ostream& out, const DeviceInfo& device) {
  for (const auto& f : registered_families()) {
    out << f.name << ": " << f.summary << "\n";
    for (const auto& e : f.experiments) {
      out << "  experiment " << e.name << (e.per_world_size ? "_n<processes>" : "") << " ("
          << metric_name(e.metric) << ")";
      for (size_t i = 0; i < e.dtypes.size(); ++i) out << (i ? ", " : " dtypes: ") << dtype_name(e.dtypes[i]);
      for (size_t i = 0; i < e.backends.size(); ++i) out << (i ? ", " : " backends: ") << e.backends[i];
      out << (e.is_model ? ", model" : "") << "\n";
    }
    out << "  dtypes:";
    for (auto dtype : f.dtypes) out << " " << dtype_name(dtype);
    out << "\n  backends:";
    for (const auto& b : f.backends) {
      out << " " << b.name;
      if (b.needs_cuda) out << "(GPU)";
      if (b.measures) out << "[" << ceiling_kind_name(*b.measures) << " ceiling]";
    }
    out << "\n  GPU shapes: " << join_shapes(f, f.gpu_shapes) << "\n  CPU shapes: " << join_shapes(f, f.cpu_shapes)
        << "\n  cases here: " << cases_of(f, device).size() << "\n";
    if (!f.python_module.empty()) out << "  inductor module: benchmarks/" << f.python_module << "\n";
  }
  out << "\nBackend inductor: what torch.compile makes of the family's Python module, as an AOTInductor\n"
         "package built ahead of the run with gpt-fast's inductor settings (7-80 s a package on a GPU, about\n"
         "30 s on two CPU cores) and loaded here. Build the selected cases' packages with\n"
         "--opbench_inductor_build (or inductor/build_packages.py); a case whose package is missing or stale\n"
         "is skipped as unavailable. docs/inductor.md.\n";
}

}  // namespace opbench
