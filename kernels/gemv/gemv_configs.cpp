#include "kernels/gemv/gemv_configs.h"

#include <cstdint>
#include <string>

#include "opbench/check.h"

namespace opbench::kernels {
namespace {

constexpr int64_t kVectorBytes = 16;
constexpr int64_t kMaxGridX = 0x7fffffff;   // an exact-fit kernel's grid has a block per row

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0; }

// What the table's conditions read of a launch.
struct LaunchShape {
  int64_t cols, row_bytes, output_rows;
  bool plain, paired_rows, programmatic, gathered;
  bool exact_row_form;     // a plain GEMV, ordinary launch, rows fitting a grid
  bool gather_pair_form;   // an unfused gather of two slices sharing x, ordinary launch, rows fitting a grid
};

LaunchShape shape_of(const GemvArgs& a, bool programmatic_launch) {
  const GemvFusion& f = a.fusion;
  LaunchShape s;
  s.cols = a.cols;
  s.row_bytes = a.cols * weight_bits(a.w_type) / 8;
  s.output_rows = a.rows * a.num_selected;
  s.gathered = a.expert_idx != nullptr;
  const bool unfused = f.norm_w == nullptr && f.epilogue == GemvEpilogue::kStore;
  s.plain = !s.gathered && unfused;
  s.paired_rows = f.epilogue == GemvEpilogue::kSwiglu || f.epilogue == GemvEpilogue::kRopeCache;
  s.programmatic = programmatic_launch;
  const bool ordinary = !programmatic_launch && a.rows <= kMaxGridX;
  s.exact_row_form = s.plain && ordinary;
  s.gather_pair_form = s.gathered && a.num_selected == 2 && a.x_stride == 0 && unfused && ordinary;
  return s;
}

bool holds(GemvCondition c, bool value) { return c == GemvCondition::kAny || (c == GemvCondition::kYes) == value; }

bool applies(const GemvRule& r, const LaunchShape& s, WeightType w) {
  const GemvWhen& when = r.when;
  if (s.row_bytes < when.min_row_bytes || s.row_bytes > when.max_row_bytes) return false;
  if (s.output_rows < when.min_output_rows || s.output_rows > when.max_output_rows) return false;
  if (!holds(when.plain, s.plain) || !holds(when.paired_rows, s.paired_rows)) return false;
  if (!holds(when.programmatic, s.programmatic) || !holds(when.gathered, s.gathered)) return false;
  switch (r.config.path) {
    case GemvPath::kExactRow: return s.exact_row_form && s.cols == r.config.span(w);
    case GemvPath::kGatherPair: return s.gather_pair_form && s.cols == r.config.span(w);
    case GemvPath::kMma: return mma_fits(w, s.cols);
    default: return true;
  }
}

}  // namespace

std::string gemv_config_name(const GemvConfig& c) {
  auto n = [](int v) { return std::to_string(v); };
  switch (c.path) {
    case GemvPath::kScalar: return "scalar";
    case GemvPath::kVector:
      return "w" + n(c.warps) + "g" + n(c.group) + "r" + n(c.rows) + "s" + n(c.steps) + "m" + n(c.min_blocks);
    case GemvPath::kExactRow: return "row.w" + n(c.warps) + "c" + n(c.chunks) + "m" + n(c.min_blocks);
    case GemvPath::kGatherPair: return "pair.w" + n(c.warps) + "c" + n(c.chunks) + "m" + n(c.min_blocks);
    case GemvPath::kMma: return "mma.w" + n(c.warps) + "t" + n(c.tiles) + "s" + n(c.steps);
  }
  return "?";
}

bool gemv_vectorizable(const GemvArgs& a) {
  const int64_t elems = kVectorBytes * 8 / weight_bits(a.w_type);
  return a.cols % elems == 0 && a.row_stride % elems == 0 &&
         (a.expert_idx == nullptr || a.expert_stride % elems == 0) && a.x_stride % 8 == 0 && aligned(a.w) &&
         aligned(a.x);
}

int gemv_rule_index(LaunchRules rules, const GemvArgs& args, bool programmatic_launch) {
  if (!gemv_vectorizable(args)) return -1;
  const LaunchShape shape = shape_of(args, programmatic_launch);
  for (int i = 0; i < kGemvRuleCount; ++i) {
    const GemvRule& r = kGemvRules[i];
    if (r.rules == rules && r.w_type == args.w_type && applies(r, shape, args.w_type)) return i;
  }
  throw Error(std::string("gemv: no configuration for this launch under the ") + launch_rules_name(rules) + " rules");
}

GemvConfig gemv_config(LaunchRules rules, const GemvArgs& args, bool programmatic_launch) {
  const int i = gemv_rule_index(rules, args, programmatic_launch);
  return i < 0 ? GemvConfig{} : kGemvRules[i].config;
}

}  // namespace opbench::kernels
