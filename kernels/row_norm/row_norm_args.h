// The arguments of opbench's row norms (row_norm.h): x, weight, bias and y of one dtype, statistics in
// fp32. Plain C++ (no ATen, no CUDA headers) so that .cpp files and tests can fill it.
#pragma once
#include <cstdint>

namespace opbench::kernels {

enum class NormType { kBf16, kFp16, kFp32 };

struct NormArgs {
  const void* x = nullptr;   // rows x cols, rows `row_stride` elements apart
  const void* w = nullptr;   // cols
  const void* b = nullptr;   // cols, or nullptr (no bias; the rms norm ignores it)
  void* y = nullptr;         // rows x cols, contiguous (row stride cols)
  int64_t rows = 0, cols = 0, row_stride = 0;
  float eps = 1e-5f;
  NormType type = NormType::kBf16;
};

}  // namespace opbench::kernels
