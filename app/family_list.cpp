#include "family_list.h"

#include <sstream>

#include "opbench/family.h"

namespace opbench {
namespace {

std::string join_shapes(const std::vector<Dims>& shapes) {
  std::ostringstream out;
  for (size_t i = 0; i < shapes.size(); ++i) out << (i ? " " : "") << shape_name(shapes[i]);
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
    out << "\n  GPU shapes: " << join_shapes(f.gpu_shapes) << "\n  CPU shapes: " << join_shapes(f.cpu_shapes)
        << "\n  cases here: " << cases_of(f, device).size() << "\n";
  }
}

}  // namespace opbench
