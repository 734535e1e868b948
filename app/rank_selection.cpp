#include "rank_selection.h"

#include <filesystem>

namespace opbench {

std::set<std::string> cases_for_rank(const CaseRegistry& cases, const std::set<std::string>& selected,
                                     const World& world, const std::set<std::string>& every_rank) {
  if (world.is_root()) return selected;
  std::set<std::string> mine;
  for (const auto& name : selected) {
    const CaseInfo* info = cases.find(name);
    if (info && every_rank.count(info->family)) mine.insert(name);
  }
  return mine;
}

std::string per_rank_path(const std::string& path, int rank) {
  std::filesystem::path p(path);
  return (p.parent_path() / (p.stem().string() + ".rank" + std::to_string(rank) + p.extension().string())).string();
}

}  // namespace opbench
