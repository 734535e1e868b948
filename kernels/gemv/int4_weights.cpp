#include "kernels/gemv/int4_weights.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/_convert_weight_to_int4pack.h>
#include <ATen/ops/_convert_weight_to_int4pack_for_cpu.h>
#include <ATen/ops/_weight_int4pack_mm.h>
#include <ATen/ops/_weight_int4pack_mm_for_cpu.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/stack.h>

#include <string>

#include "kernels/gemv/gemv_args.h"
#include "opbench/check.h"

namespace opbench::kernels {
namespace {

void require_groups(const std::vector<int64_t>& shape, const char* who) {
  if (shape.size() < 2 || shape.back() % kInt4GroupSize != 0)
    throw Error(std::string(who) + ": int4 weights need [..., rows, cols] with cols a multiple of 128");
}

// The shape of the qparams of weights of `shape`: [..., rows, cols / 128, 2].
std::vector<int64_t> qparams_shape(std::vector<int64_t> shape) {
  shape.back() /= kInt4GroupSize;
  shape.push_back(2);
  return shape;
}

}  // namespace

at::Tensor pack_int4(const at::Tensor& q) {
  if (q.dim() < 1 || q.size(-1) % 2 != 0) throw Error("pack_int4: the last dimension must be even");
  const at::Tensor qi = q.to(c10::kInt);
  return (qi.slice(-1, 0, std::nullopt, 2) * 16 + qi.slice(-1, 1, std::nullopt, 2)).to(c10::kByte);
}

at::Tensor unpack_int4(const at::Tensor& packed) {
  const at::Tensor p = packed.to(c10::kInt);
  return at::stack({p.bitwise_right_shift(4), p.bitwise_and(15)}, -1).flatten(-2);
}

Int4Weights quantize_int4(const at::Tensor& w) {
  require_groups(w.sizes().vec(), "quantize_int4");
  const at::Tensor groups = w.to(c10::kFloat).reshape({-1, kInt4GroupSize});
  const at::Tensor max_val = groups.amax({1}, true), min_val = groups.amin({1}, true);
  const at::Tensor scales = ((max_val - min_val).clamp_min(1e-6) / 15).to(c10::kBFloat16);
  const at::Tensor zeros = (min_val + scales.to(c10::kFloat) * 8).to(c10::kBFloat16);
  const at::Tensor s = scales.to(c10::kFloat), lowest = zeros.to(c10::kFloat) - s * 8;
  const at::Tensor q = (groups - lowest).div(s).round().clamp(0, 15).reshape(w.sizes());
  Int4Weights out;
  out.packed = pack_int4(q);
  out.qparams = at::stack({scales, zeros}, -1).reshape(qparams_shape(w.sizes().vec()));
  return out;
}

Int4Weights random_int4(const std::vector<int64_t>& shape, double scale, c10::Device device) {
  require_groups(shape, "random_int4");
  auto on = at::TensorOptions().device(device);
  std::vector<int64_t> groups = shape;
  groups.back() /= kInt4GroupSize;
  const at::Tensor s = (at::rand(groups, on.dtype(c10::kFloat)) + 0.5) * scale;
  const at::Tensor z = at::randn(groups, on.dtype(c10::kFloat)) * (0.5 * scale);
  Int4Weights out;
  std::vector<int64_t> packed = shape;   // a uniform byte: two independent uniform nibbles, made in place
  packed.back() /= 2;
  out.packed = at::randint(0, 256, packed, on.dtype(c10::kByte));
  out.qparams = at::stack({s, z}, -1).to(c10::kBFloat16);
  return out;
}

at::Tensor dequantize_int4(const Int4Weights& w, c10::ScalarType dtype) {
  const at::Tensor q = unpack_int4(w.packed).to(c10::kDouble);
  const at::Tensor qp = w.qparams.to(c10::kDouble);
  const at::Tensor s = qp.select(-1, 0).repeat_interleave(kInt4GroupSize, -1);
  const at::Tensor z = qp.select(-1, 1).repeat_interleave(kInt4GroupSize, -1);
  return ((q - 8) * s + z).to(dtype);
}

AtenInt4 aten_int4_layout(const Int4Weights& w, int64_t inner_k_tiles) {
  if (w.packed.dim() != 2) throw Error("aten_int4_layout: one [rows, cols] matrix at a time");
  AtenInt4 out;
  out.out_features = w.rows();
  out.scales_and_zeros = w.qparams.transpose(0, 1).contiguous();
  out.packed = w.packed.is_cuda() ? at::_convert_weight_to_int4pack(w.packed.contiguous(), inner_k_tiles)
                                  : at::_convert_weight_to_int4pack_for_cpu(unpack_int4(w.packed), inner_k_tiles);
  return out;
}

at::Tensor aten_int4_mm(const at::Tensor& x, const AtenInt4& w) {
  if (x.is_cuda()) return at::_weight_int4pack_mm(x, w.packed, kInt4GroupSize, w.scales_and_zeros);
  return at::_weight_int4pack_mm_for_cpu(x, w.packed, kInt4GroupSize, w.scales_and_zeros);
}

}  // namespace opbench::kernels
