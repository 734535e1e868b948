// RMSNorm kernel: see rms_norm_kernel.h; the block-per-row machinery is common/row_norm.cuh.
#include "common/row_norm.cuh"
#include "rms_norm_kernel.h"

namespace opbench::kernels {
namespace {

NormArgs without_bias(NormArgs a) {
  a.b = nullptr;
  return a;
}

}  // namespace

bool rms_norm_vectorizable(const NormArgs& a) { return row_norm::vectorizable(without_bias(a)); }

void launch_rms_norm(const NormArgs& a, cudaStream_t stream) {
  row_norm::launch_args<row_norm::RmsPolicy>("launch_rms_norm", without_bias(a), stream);
}

}  // namespace opbench::kernels
