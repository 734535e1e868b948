// One decode step of a Model (model.h) on a GPU with opbench's own kernels, T = 1, bf16 activations:
// per layer residual_rms_norm, the QKV GEMV, rope_cache, decode_attention, the output GEMV,
// residual_rms_norm, the FFN (W13 GEMV, swiglu, W2 GEMV; experts: router GEMV, top2_route and the two
// GEMVs in gather mode, the routing weights applied by the next residual_rms_norm); then the output
// head's GEMV. int8 layers use the GEMV's fused dequantize (per-row scales). The embedding row is
// gathered with ATen (index_select). Every launch goes to the current stream, so a step can be captured.
// `programmatic` (sm_90+): each own kernel is a programmatic dependent launch, so it starts while the
// previous one finishes -- a GEMV's blocks fetch their first weights during the kernel before it, and
// the launch gaps between the ~9 kernels of a layer close. Off: each launch waits for the previous.
#pragma once
#include <ATen/core/Tensor.h>
#include <cuda_runtime_api.h>

#include <string>

#include "common/gemv_kernel.h"
#include "decode/model.h"

namespace opbench::decode {

class OwnStep {
 public:
  // REQUIRES: bf16 activations on a CUDA device. Allocates the step's buffers once.
  explicit OwnStep(Model& model, bool programmatic = true);
  // Logits [1, vocab] (a buffer reused by every call) of `token` [1] at position `pos` [1] (int64,
  // on the device); writes the position's keys and values into the cache.
  const at::Tensor& forward(const at::Tensor& token, const at::Tensor& pos);
  // Experts: after each call, log->idx / log->weights [layers, 1, top_k] hold the step's choices
  // (a copy per layer, for checks only). nullptr: no log.
  void log_routes(Routes* log) { route_log_ = log; }
  // The kernels a step runs, for the case label.
  static std::string kernel_names(const Model& model, bool programmatic);

 private:
  void feed_forward(int64_t l, cudaStream_t stream);
  kernels::GemvArgs gemv_args(const Linear& l, const at::Tensor& x, at::Tensor& y) const;
  kernels::GemvArgs gather_args(const Linear& l, const at::Tensor& x, int64_t x_stride, const at::Tensor& idx,
                                at::Tensor& y) const;
  Model& m_;
  bool programmatic_;
  Routes* route_log_ = nullptr;
  at::Tensor h_, xn_, qkv_, q_, attn_, delta_, h13_, act_, logits_, router_, route_idx_, route_w_;
};

}  // namespace opbench::decode
