// LayerNorm kernel: see layer_norm_kernel.h; the block-per-row machinery is common/row_norm.cuh.
#include "common/row_norm.cuh"
#include "layer_norm_kernel.h"

namespace opbench::kernels {

bool layer_norm_vectorizable(const NormArgs& a) { return row_norm::vectorizable(a); }

void launch_layer_norm(const NormArgs& a, cudaStream_t stream) {
  row_norm::launch_args<row_norm::LayerPolicy>("launch_layer_norm", a, stream);
}

}  // namespace opbench::kernels
