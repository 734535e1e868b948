// RMSNorm kernel: see rms_norm_kernel.h; the block-per-row machinery is common/row_norm.cuh.
#include "common/row_norm.cuh"
#include "rms_norm_kernel.h"

namespace opbench::kernels {
namespace {

using namespace row_norm;

// As Llama's reference: statistics in fp32, the normalized value rounded to the dtype (type_as(x)),
// then multiplied by the weight in the dtype (computed in fp32, rounded once).
struct Rms {
  static constexpr bool kBias = false;
  static constexpr bool kCentered = false;
  __device__ static float scale(float sum_sq, float cols, float eps) { return rsqrtf(sum_sq / cols + eps); }
  template <typename T>
  __device__ static T out(float x, float, float scale, T w, T) {
    return from_f<T>(to_f(from_f<T>(x * scale)) * to_f(w));
  }
};

NormArgs without_bias(NormArgs a) {
  a.b = nullptr;
  return a;
}

}  // namespace

bool rms_norm_vectorizable(const NormArgs& a) { return row_norm::vectorizable(without_bias(a)); }

void launch_rms_norm(const NormArgs& a, cudaStream_t stream) {
  row_norm::launch_args<Rms>("launch_rms_norm", without_bias(a), stream);
}

}  // namespace opbench::kernels
