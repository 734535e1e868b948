// Internal to replay/: the input builder's parts that the call plan, the index rules and the stack
// helpers share (input_builder.cpp defines them).
#pragma once
#include <ATen/core/Tensor.h>
#include <ATen/core/stack.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <stdexcept>

#include "replay/operator_call.h"

namespace opbench::replay::detail {

// A recorded value that cannot be given to its schema argument: the input is not replayed.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The plan's slots as a stack on `device`; on the meta device it allocates nothing and fills nothing
// (plan_call's check). Throws Unsupported naming the argument whose value does not convert.
torch::jit::Stack build_on(const CallPlan& plan, const ReplayOptions& options, c10::Device device);

// A 1-d view of the tensor's whole storage, so that tensors whose strides overlap (stride 0, as an
// expanded index tensor) can be filled: in-place random fills refuse overlapping destinations.
at::Tensor whole_storage(const at::Tensor& tensor);

// Fills the tensor's storage with integers uniform in [0, bound). REQUIRES: bound >= 1.
void fill_uniform_ints(const at::Tensor& tensor, std::int64_t bound);

}  // namespace opbench::replay::detail
