// Internal to lib/replay: tensor helpers shared by the input builder and the index rules.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace opbench::replay::detail {

// A 1-d view of the tensor's whole storage, so that tensors whose strides overlap (stride 0, as an
// expanded index tensor) can be filled: in-place random fills refuse overlapping destinations.
at::Tensor whole_storage(const at::Tensor& tensor);

// Fills the tensor's storage with integers uniform in [0, bound). REQUIRES: bound >= 1.
void fill_uniform_ints(const at::Tensor& tensor, std::int64_t bound);

}  // namespace opbench::replay::detail
