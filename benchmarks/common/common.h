// What several families share: random weights, the norm and GEMV sweeps, and (from
// kernels/common/dot_tolerance.h) the dot-product tolerance rule. Each family's own work formula and
// tolerances live in its folder (benchmarks/<family>/); docs/families.md explains each choice.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/common/dot_tolerance.h"
#include "kernels/gemv/gemv_args.h"
#include "opbench/family.h"
#include "opbench/work.h"

namespace opbench::families {

// The row-normalization families (kernels/row_norm/): gpt-fast's BS = 4096 and D sweep on a GPU, small
// shapes on the CPU; x read once and y written once, 2 * BS * D * itemsize (the seed's count; the
// D-sized weight and bias, < 0.05% at BS = 4096, are not counted, which keeps the figures comparable).
inline std::vector<c10::ScalarType> norm_dtypes() { return {c10::kBFloat16, c10::kHalf, c10::kFloat}; }
inline std::vector<std::vector<int64_t>> norm_gpu_shapes() { return {{4096, 1024}, {4096, 4096}, {4096, 8192}, {4096, 16384}}; }
inline std::vector<std::vector<int64_t>> norm_cpu_shapes() { return {{64, 256}, {64, 1024}}; }
inline Work norm_work(c10::ScalarType dtype, const std::vector<int64_t>& dims) {
  const double bytes = static_cast<double>(dims[0] * dims[1]) * c10::elementSize(dtype);
  return {bytes, bytes};
}

// A row-normalization family: the norm sweep and byte count, backends aten, cuda (an own kernel) and
// inductor (`python_module` compiled), one memory-bandwidth experiment.
inline Family norm_family(const char* name, const char* summary, const char* experiment,
                          void (*run)(CaseContext&), const char* python_module) {
  return {.name = name, .summary = summary, .experiments = {{experiment, Metric::kMemoryBandwidth}},
          .dtypes = norm_dtypes(), .gpu_shapes = norm_gpu_shapes(), .cpu_shapes = norm_cpu_shapes(),
          .backends = {{"aten"}, {"cuda", true}, {"inductor"}}, .work = norm_work, .run = run,
          .python_module = python_module};
}

// The GEMV-like families' D sweep: gpt-fast's on a GPU, small ones on the CPU (seconds in CI).
inline std::vector<std::vector<int64_t>> gemv_gpu_shapes() { return {{1024}, {4096}, {8192}, {16384}}; }
inline std::vector<std::vector<int64_t>> gemv_cpu_shapes() { return {{64}, {256}}; }

// Why a GEMV-like int4 case of width D cannot run (gpt-fast's groups need whole groups of
// kernels::kInt4GroupSize): a case skips as unavailable with it, not as a failure. nullopt: it can.
inline std::optional<std::string> int4_width_unavailable(int64_t d) {
  if (d % kernels::kInt4GroupSize == 0) return std::nullopt;
  return "int4 needs D a multiple of the group size " + std::to_string(kernels::kInt4GroupSize) + " (D = " +
         std::to_string(d) + ")";
}

// Random weights on `device`, never zeros: int8 uniform in [-127, 127], else randn.
inline at::Tensor random_weights(const std::vector<int64_t>& shape, c10::ScalarType dtype, c10::Device device) {
  auto options = at::TensorOptions().device(device);
  if (dtype == c10::kChar) return at::randint(-127, 128, shape, options.dtype(c10::kChar));
  return at::randn(shape, options.dtype(dtype));
}

}  // namespace opbench::families
