// Scratch: opbench's launch_gemv as a torch extension, to time it in the Python harness beside inductor.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include "common/gemv_kernel.h"

void gemv(torch::Tensor w, torch::Tensor x, torch::Tensor y) {
  opbench::kernels::GemvArgs a;
  a.w = w.data_ptr();
  a.w_type = w.scalar_type() == torch::kInt8 ? opbench::kernels::WeightType::kInt8 : opbench::kernels::WeightType::kBf16;
  a.rows = w.size(0);
  a.cols = a.row_stride = w.size(1);
  a.x = x.data_ptr();
  a.y = y.data_ptr();
  opbench::kernels::launch_gemv(a, at::cuda::getCurrentCUDAStream());
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("gemv", &gemv); }
