#include "kernels/stream/stream_reference.h"

#include <ATen/ops/all.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/sum.h>

#include "kernels/common/dot_tolerance.h"

namespace opbench::kernels {

at::Tensor read_stream_reference(const at::Tensor& data, int64_t chunks) {
  return data.view({chunks, -1}).to(at::kDouble).sum(1);
}

Tolerance read_stream_tolerance(const at::Tensor& data, int64_t chunks) {
  return dot_tolerance(data.numel() / chunks, 1.0, rms(data));
}

bool holds_word(const at::Tensor& data, uint32_t word) {
  return data.view(at::kInt).eq(static_cast<int32_t>(word)).all().item<bool>();
}

}  // namespace opbench::kernels
