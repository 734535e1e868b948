#include "kernels/row_norm/row_norm_configs.h"

#include <string>

#include "opbench/check.h"

namespace opbench::kernels {

std::string row_norm_config_name(const RowNormConfig& c) {
  auto n = [](int v) { return std::to_string(v); };
  switch (c.path) {
    case RowNormPath::kScalar: return "scalar";
    case RowNormPath::kRegisters: return "r" + n(c.vectors) + (c.streaming ? "s" : "c") + ".b" + n(c.threads);
    case RowNormPath::kTwoPass:
      return "t.b" + n(c.threads) + "v" + n(c.vectors) + (c.keep_y ? "k" : "") + ".m" + n(c.min_blocks);
  }
  return "?";
}

int row_norm_rule_index(LaunchRules rules, bool vectorized, int64_t vectors) {
  if (!vectorized) return -1;
  for (int i = 0; i < kRowNormRuleCount; ++i)
    if (kRowNormRules[i].rules == rules && vectors <= kRowNormRules[i].max_vectors) return i;
  throw Error(std::string("row norm: no configuration for rows of ") + std::to_string(vectors) + " vectors under the " +
              launch_rules_name(rules) + " rules");
}

RowNormConfig row_norm_config(LaunchRules rules, bool vectorized, int64_t vectors) {
  const int i = row_norm_rule_index(rules, vectorized, vectors);
  return i < 0 ? RowNormConfig{} : kRowNormRules[i].config;
}

}  // namespace opbench::kernels
