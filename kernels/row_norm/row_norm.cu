// The row norms' launch: argument checks, the configuration the table picks, the launch (row_norm.h
// says what they compute; row_norm_kernels.cuh has the kernels).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>
#include <type_traits>
#include <utility>

#include "kernels/common/launch_rules.h"
#include "kernels/row_norm/row_norm.h"
#include "kernels/row_norm/row_norm_configs.h"
#include "kernels/row_norm/row_norm_kernels.cuh"
#include "opbench/check.h"

namespace opbench::kernels {
namespace row_norm {
namespace {

// kRowNormRules[kRule]'s configuration on `rows` rows.
template <typename T, typename Norm, int kRule>
void launch_rule(Row<T> r, int64_t rows, cudaStream_t stream) {
  constexpr RowNormConfig c = kRowNormRules[kRule].config;
  if constexpr (c.path == RowNormPath::kRegisters)
    launch_vector<T, c.vectors, Norm, c.streaming>(r, rows, c.threads, stream);
  else if constexpr (c.path == RowNormPath::kTwoPass)
    launch_two_pass<T, Norm, c.threads, c.vectors, c.keep_y, c.min_blocks>(r, rows, stream);
  else
    launch_scalar<T, Norm>(r, rows, stream);
}

// The configuration of table row `rule` (each row's kernel compiled once per T and Norm).
template <typename T, typename Norm, int... kRules>
void launch_rule_at(int rule, Row<T> r, int64_t rows, cudaStream_t stream, std::integer_sequence<int, kRules...>) {
  ((rule == kRules ? launch_rule<T, Norm, kRules>(r, rows, stream) : void()), ...);
}

// Checks the arguments (throws opbench::Error naming `who`), picks the configuration, launches on
// `stream`, and checks the launch.
template <typename T, typename Norm>
void launch(const char* who, Row<T> r, int64_t rows, cudaStream_t stream) {
  if (!r.x || !r.w || !r.y) throw Error(std::string(who) + ": null pointer");
  if (rows < 1 || r.cols < 1 || r.row_stride < r.cols)
    throw Error(std::string(who) + ": bad shape rows=" + std::to_string(rows) + " cols=" + std::to_string(r.cols) +
                " row_stride=" + std::to_string(r.row_stride));
  if (rows > 2147483647) throw Error(std::string(who) + ": more rows than a grid holds");
  const bool vectorized = vectorizable(r.x, r.w, r.b, r.y, r.cols, r.row_stride, sizeof(T));
  const int64_t vectors = r.cols / (kVectorBytes / static_cast<int64_t>(sizeof(T)));
  const int rule = row_norm_rule_index(current_launch_rules(), vectorized, vectors);
  if (rule < 0)
    launch_scalar<T, Norm>(r, rows, stream);
  else
    launch_rule_at<T, Norm>(rule, r, rows, stream, std::make_integer_sequence<int, kRowNormRuleCount>{});
  OPBENCH_CUDA_CHECK(cudaGetLastError());
}

bool args_vectorizable(const NormArgs& a) {
  return vectorizable(a.x, a.w, a.b, a.y, a.cols, a.row_stride, a.type == NormType::kFp32 ? 4 : 2);
}

template <typename Norm>
void launch_args(const char* who, const NormArgs& a, cudaStream_t stream) {
  auto row = [&](auto* type_tag) {
    using T = std::remove_pointer_t<decltype(type_tag)>;
    return Row<T>{static_cast<const T*>(a.x), static_cast<const T*>(a.w), static_cast<const T*>(a.b),
                  static_cast<T*>(a.y), a.cols, a.row_stride, a.eps};
  };
  switch (a.type) {
    case NormType::kBf16: launch<__nv_bfloat16, Norm>(who, row(static_cast<__nv_bfloat16*>(nullptr)), a.rows, stream); break;
    case NormType::kFp16: launch<__half, Norm>(who, row(static_cast<__half*>(nullptr)), a.rows, stream); break;
    case NormType::kFp32: launch<float, Norm>(who, row(static_cast<float*>(nullptr)), a.rows, stream); break;
  }
}

NormArgs without_bias(NormArgs a) {
  a.b = nullptr;
  return a;
}

}  // namespace
}  // namespace row_norm

bool rms_norm_vectorizable(const NormArgs& a) { return row_norm::args_vectorizable(row_norm::without_bias(a)); }
bool layer_norm_vectorizable(const NormArgs& a) { return row_norm::args_vectorizable(a); }

void launch_rms_norm(const NormArgs& a, cudaStream_t stream) {
  row_norm::launch_args<row_norm::RmsPolicy>("launch_rms_norm", row_norm::without_bias(a), stream);
}

void launch_layer_norm(const NormArgs& a, cudaStream_t stream) {
  row_norm::launch_args<row_norm::LayerPolicy>("launch_layer_norm", a, stream);
}

}  // namespace opbench::kernels
