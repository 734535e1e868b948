// int4 weight-only weights as gpt-fast's WeightOnlyInt4QuantHandler makes them (group-wise along the
// input dimension, kInt4GroupSize = 128, bf16 scale and zero per group, unsigned 4-bit values q with
// w = (q - 8) * scale + zero) in the own GEMV's layout (gemv_args.h), and the conversion to the layout of
// PyTorch's own int4 path (aten::_weight_int4pack_mm, as gpt-fast calls it) with its product. Plain ATen:
// CPU tests and CPU cases use it too.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

namespace opbench::kernels {

// The own GEMV's int4 layout: packed uint8 [..., rows, cols / 2] (the even column in the high nibble),
// qparams bf16 [..., rows, cols / 128, 2] ((scale, zero) per group).
struct Int4Weights {
  at::Tensor packed, qparams;
  int64_t rows() const { return packed.size(-2); }
  int64_t cols() const { return packed.size(-1) * 2; }
};

// q (any integer dtype, values in [0, 15], [..., cols] with cols even) -> packed uint8 [..., cols / 2].
at::Tensor pack_int4(const at::Tensor& q);
// packed uint8 [..., n] -> q int32 [..., 2 n].
at::Tensor unpack_int4(const at::Tensor& packed);

// gpt-fast's group quantization of w [..., rows, cols] (cols a multiple of 128; any float dtype): per
// group, scale = max(max - min, 1e-6) / 15 and zero = min + 8 scale (both rounded to bf16), then
// q = clamp(round((w - (zero - 8 scale)) / scale), 0, 15). Throws opbench::Error on a bad shape.
Int4Weights quantize_int4(const at::Tensor& w);

// Random int4 weights of shape [..., rows, cols] (cols a multiple of 128) on `device`: q uniform in
// [0, 15]; per group scale = (0.5..1.5) * `scale` and zero = 0.5 * scale * randn (rounded to bf16), so
// the dequantized weights have rms ~ 4.6 * scale (never all zeros).
Int4Weights random_int4(const std::vector<int64_t>& shape, double scale, c10::Device device);

// The dequantized weights (q - 8) * scale + zero, [..., rows, cols], computed in float64 and returned in
// `dtype` (float64: exact, the GEMV's reference weights).
at::Tensor dequantize_int4(const Int4Weights& w, c10::ScalarType dtype);

// A [rows, cols] int4 matrix in the layout of PyTorch's int4 matmul: on CUDA
// aten::_convert_weight_to_int4pack(packed, inner_k_tiles) (which takes the own packed bytes as they
// are), on the CPU aten::_convert_weight_to_int4pack_for_cpu(q int32, inner_k_tiles); scales_and_zeros
// bf16 [cols / 128, rows, 2] as gpt-fast's pack_scales_and_zeros lays them out.
struct AtenInt4 {
  at::Tensor packed, scales_and_zeros;
  int64_t out_features = 0;
};
constexpr int64_t kGptFastInnerKTiles = 8;   // gpt-fast's default for WeightOnlyInt4QuantHandler
AtenInt4 aten_int4_layout(const Int4Weights& w, int64_t inner_k_tiles = kGptFastInnerKTiles);

// x [T, cols] (bf16) @ W^T with W in PyTorch's int4 layout: aten::_weight_int4pack_mm on CUDA (gpt-fast's
// linear_forward_int4), aten::_weight_int4pack_mm_for_cpu on the CPU. Returns [T, rows].
at::Tensor aten_int4_mm(const at::Tensor& x, const AtenInt4& w);

// Bytes of int4 weights of `rows` x `cols`: 0.5 per weight plus 4 (a bf16 scale and zero) per group.
inline double int4_weight_bytes(int64_t rows, int64_t cols) {
  return static_cast<double>(rows) * static_cast<double>(cols) * (0.5 + 4.0 / 128);
}

}  // namespace opbench::kernels
