// Stacks of the boxed call's values (torch::jit::Stack), as the case bodies use them: deep copies
// (the graph backend's check runs eager and the graph on copies of the same inputs), logical bytes
// (a case's Work) and the comparison of two backends' outputs.
#pragma once
#include <ATen/core/stack.h>

#include <string>

namespace opbench::replay {

// Deep copy: every tensor (also in lists) gets its own storage with the same sizes and strides.
torch::jit::Stack clone_stack(const torch::jit::Stack& stack);

// Sum of numel * itemsize over the tensors of a stack (also inside lists): the logical bytes.
double tensor_bytes(const torch::jit::Stack& stack);

// Outputs of two backends on the same inputs: "" when every tensor matches (floating: within
// opbench::tolerance_for its dtype, NaN equal to NaN; others: exactly), else what differs first.
std::string compare_outputs(const torch::jit::Stack& expected, const torch::jit::Stack& actual);

}  // namespace opbench::replay
