// Index arguments: integer tensors an operator reads as indices, refilled with valid ones after the
// random fill (build_stack does it). Random indices out of range make a CPU kernel throw and a CUDA
// kernel trip a device-side assert that ends the whole process's CUDA context, so every operator that
// reads indices needs a rule here. Docs: docs/oplog.md, "How an input is replayed".
#pragma once
#include <ATen/core/stack.h>

#include <string_view>
#include <vector>

#include "replay/operator_call.h"

namespace opbench::replay {

// An integer tensor argument that the operator reads as indices, and the exclusive upper bound of a
// valid index derived from the other arguments (e.g. embedding's `indices` < weight.size(0)).
// For a list argument (aten.index's `indices`) the bound is per list element k.
struct IndexRule {
  std::string_view op;        // aten name, every overload ("gather", "embedding")
  std::string_view argument;  // schema argument name ("indices", "target", "index")
  std::string_view bound;     // the documented bound, e.g. "weight.size(0)"
};
const std::vector<IndexRule>& index_rules();

// Refills the index arguments of `plan.name` in `stack` (schema order) with valid indices.
// Throws opbench::Error when a bound cannot be derived (e.g. an empty dimension).
void apply_index_rules(const CallPlan& plan, torch::jit::Stack& stack);

}  // namespace opbench::replay
