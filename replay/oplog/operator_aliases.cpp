// The operator alias table: overloads renamed in ATen since the logs were recorded, resolved as the
// log is parsed (OpEntry::original keeps the name as written).
#include "replay/oplog/oplog.h"

namespace opbench::oplog {

const std::vector<OpAlias>& operator_aliases() {
  // The reference loader renames exactly this one overload when it reads a log (aten.sum's
  // SymInt overload became dim_IntList); add a row here when another recorded name stops resolving.
  static const std::vector<OpAlias> kAliases = {
      {"sum.SymInt", "sum.dim_IntList", "renamed in ATen; the reference loader maps it too"},
  };
  return kAliases;
}

std::string_view resolve_alias(std::string_view name_dot_overload) {
  for (const auto& a : operator_aliases())
    if (a.from == name_dot_overload) return a.to;
  return name_dot_overload;
}

}  // namespace opbench::oplog
