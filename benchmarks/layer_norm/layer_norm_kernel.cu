// LayerNorm kernel: see layer_norm_kernel.h; the block-per-row machinery is common/row_norm.cuh.
#include "common/row_norm.cuh"
#include "layer_norm_kernel.h"

namespace opbench::kernels {
namespace {

using namespace row_norm;

// As at::layer_norm: the biased variance, the output computed in fp32 and rounded once.
struct Layer {
  static constexpr bool kBias = true;
  static constexpr bool kCentered = true;
  __device__ static float scale(float centered_sum_sq, float cols, float eps) {
    return rsqrtf(centered_sum_sq / cols + eps);
  }
  template <typename T>
  __device__ static T out(float x, float mean, float rstd, T w, T b) {
    return from_f<T>(fmaf((x - mean) * rstd, to_f(w), to_f(b)));
  }
};

}  // namespace

bool layer_norm_vectorizable(const NormArgs& a) { return row_norm::vectorizable(a); }

void launch_layer_norm(const NormArgs& a, cudaStream_t stream) {
  row_norm::launch_args<Layer>("launch_layer_norm", a, stream);
}

}  // namespace opbench::kernels
