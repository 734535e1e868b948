// The relative RMS error the tests bound: sqrt(mean((got - want)^2)) / sqrt(mean(want^2)), in float64 on
// the CPU (either tensor may be on a GPU).
#pragma once
#include <ATen/ATen.h>

namespace opbench::test_util {

inline double rel_rms(const at::Tensor& got, const at::Tensor& want) {
  at::Tensor g = got.to(at::kDouble).cpu(), w = want.to(at::kDouble).cpu();
  return ((g - w).square().mean().sqrt() / w.square().mean().sqrt()).item<double>();
}

}  // namespace opbench::test_util
