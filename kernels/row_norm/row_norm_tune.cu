// The row norms' tuner entry (kernels/tune/tune.h): both norms, bf16, on the families' shapes (4096 rows
// of 1024 to 16384) and on widths that leave a partial step and a partial last block (33 rows, checks:
// the times are small), every configuration below that fits the row, then the library's launch (its
// configuration in the name), each checked against the norm's float64 reference first.
#include <ATen/ATen.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels/common/launch_rules.h"
#include "kernels/row_norm/row_norm.h"
#include "kernels/row_norm/row_norm_configs.h"
#include "kernels/row_norm/row_norm_kernels.cuh"
#include "kernels/row_norm/row_norm_reference.h"
#include "kernels/tune/tune.h"
#include "opbench/check.h"
#include "opbench/reference.h"

namespace opbench::kernels {
namespace {

using bf16 = __nv_bfloat16;
using row_norm::Row;

// The table's configurations and others.
constexpr RowNormConfig kConfigs[] = {
    registers_config(4, true, 256),  registers_config(4, false, 256), registers_config(8, false, 256),
    registers_config(4, true, 128),  registers_config(2, false, 256), two_pass_config(128, 4, false, 12),
    two_pass_config(256, 4, false, 6), two_pass_config(256, 4, true, 6), two_pass_config(512, 2, true, 4),
    two_pass_config(512, 4, false, 3), two_pass_config(512, 4, true, 3), two_pass_config(512, 4, true, 2),
    two_pass_config(512, 2, false, 4), two_pass_config(512, 1, true, 4), two_pass_config(256, 8, true, 4),
    two_pass_config(256, 4, true, 8),  two_pass_config(1024, 1, true, 2), two_pass_config(1024, 2, true, 2),
    two_pass_config(1024, 2, false, 2)};
constexpr int kConfigCount = static_cast<int>(std::extent_v<decltype(kConfigs)>);

// The most threads a block of this kernel may have (its registers).
template <typename Kernel>
int max_threads(Kernel kernel) {
  cudaFuncAttributes a;
  OPBENCH_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  return a.maxThreadsPerBlock;
}

// A configuration compiled for one norm: its launch, and whether it takes rows of `vectors` vectors.
struct Compiled {
  void (*launch)(const Row<bf16>&, int64_t rows, cudaStream_t);
  bool (*fits)(int64_t vectors);
};

template <typename Norm, int I>
void launch_config(const Row<bf16>& r, int64_t rows, cudaStream_t s) {
  constexpr RowNormConfig c = kConfigs[I];
  if constexpr (c.path == RowNormPath::kRegisters)
    row_norm::launch_vector<bf16, c.vectors, Norm, c.streaming>(r, rows, c.threads, s);
  else
    row_norm::launch_two_pass<bf16, Norm, c.threads, c.vectors, c.keep_y, c.min_blocks>(r, rows, s);
}
// Two passes take any row; rows in registers take rows whose group fits a block (registers included),
// and a block of other than 256 threads only where it launches differently from 256.
template <typename Norm, int I>
bool fits(int64_t vectors) {
  constexpr RowNormConfig c = kConfigs[I];
  if constexpr (c.path == RowNormPath::kRegisters) {
    const int group = row_norm::group_threads<c.vectors>(vectors);
    if (c.threads != 256 && group >= std::max(c.threads, 256)) return false;
    const int threads = std::max(1, c.threads / group) * group;
    return threads <= max_threads(row_norm::vector_kernel<bf16, c.vectors, Norm, c.streaming>);
  } else {
    return true;
  }
}
template <typename Norm, int... I>
std::array<Compiled, sizeof...(I)> compiled(std::integer_sequence<int, I...>) {
  return {Compiled{&launch_config<Norm, I>, &fits<Norm, I>}...};
}

void tune_norm(tune::Tuner& tuner, int64_t rows, int64_t cols, bool layer) {
  auto bf16_options = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  const at::Tensor x = (at::rand({rows, cols}, bf16_options) * 5 - 2).to(at::kBFloat16);
  const at::Tensor w = (at::rand({cols}, bf16_options) + 0.5).to(at::kBFloat16);
  const at::Tensor b = layer ? (at::rand({cols}, bf16_options) - 0.5).to(at::kBFloat16) : at::Tensor();
  at::Tensor y = at::empty_like(x);
  constexpr double kEps = 1e-5;
  const at::Tensor expected = (layer ? layer_norm_reference(x, w, b, kEps) : rms_norm_reference(x, w, kEps)).cpu();
  const std::string name = (layer ? "LayerNorm/" : "RMSNorm/") + std::to_string(rows) + "x" + std::to_string(cols);
  const tune::Case c{"row_norm", "bf16", name, 2.0 * static_cast<double>(rows * cols) * 2};
  auto reset = [&] { y.fill_(NAN); };
  auto check = [&] { expect_close(y, expected, tolerance_for(at::kBFloat16), name); };
  const Row<bf16> r{static_cast<const bf16*>(x.data_ptr()), static_cast<const bf16*>(w.data_ptr()),
                    layer ? static_cast<const bf16*>(b.data_ptr()) : nullptr, static_cast<bf16*>(y.data_ptr()),
                    cols, cols, static_cast<float>(kEps)};
  const auto all = layer ? compiled<row_norm::LayerPolicy>(std::make_integer_sequence<int, kConfigCount>{})
                         : compiled<row_norm::RmsPolicy>(std::make_integer_sequence<int, kConfigCount>{});
  const int64_t vectors = cols / 8;
  for (int i = 0; i < kConfigCount; ++i)
    if (all[i].fits(vectors))
      tuner.run(c, row_norm_config_name(kConfigs[i]), reset, [&](cudaStream_t s) { all[i].launch(r, rows, s); }, check);
  const NormArgs args = norm_args(x, w, b, y, kEps);
  const bool vectorized = layer ? layer_norm_vectorizable(args) : rms_norm_vectorizable(args);
  const std::string picks = row_norm_config_name(row_norm_config(current_launch_rules(), vectorized, vectors));
  tuner.run(c, "launch(" + picks + ")", reset,
            [&](cudaStream_t s) { layer ? launch_layer_norm(args, s) : launch_rms_norm(args, s); }, check);
}

}  // namespace
}  // namespace opbench::kernels

OPBENCH_TUNE_ENTRY(row_norm) {
  using namespace opbench::kernels;
  const int64_t only = tuner.options().only_cols;
  for (bool layer : {true, false}) {
    for (int64_t cols : {1024, 4096, 8192, 16384})
      if (only == 0 || cols == only) tune_norm(tuner, 4096, cols, layer);
    for (int64_t cols : {1032, 4104, 16392})
      if (only == 0 || cols == only) tune_norm(tuner, 33, cols, layer);
  }
}
