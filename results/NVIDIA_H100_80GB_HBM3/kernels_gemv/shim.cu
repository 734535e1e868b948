#include <cstdio>
#include <cstdlib>
#include "gemv_kernel.h"
#include "opbench/check.h"
namespace opbench::detail {
void throw_call_failed(const char* api, int code, const char* what, const char* call, const char* file, int line) {
  throw Error(std::string(api) + " " + what + " " + call);
}}
extern "C" int own_gemv(const void* w, int int8, long d, const void* x, void* y, const long* idx, long nsel, void* stream) {
  using namespace opbench::kernels;
  GemvArgs a = square_gemv_args(w, int8 ? WeightType::kInt8 : WeightType::kBf16, d, x, y);
  if (idx) { a.expert_idx = reinterpret_cast<const int64_t*>(idx); a.num_selected = nsel; a.expert_stride = d * d; a.num_experts = 8; }
  try { launch_gemv(a, static_cast<cudaStream_t>(stream)); } catch (const std::exception& e) { fprintf(stderr, "%s\n", e.what()); return 1; }
  return 0;
}
