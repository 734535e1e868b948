// One decode step of a Model (model.h) on a GPU with opbench's own kernels, T = 1, bf16 activations.
// The step's small kernels are fused into its GEMVs (kernels/gemv/gemv_args.h): per dense layer
//   QKV GEMV  (the rms norm of the residual h as its prologue; RoPE and the cache writes as its epilogue)
//   decode_attention
//   output GEMV (adds into h)
//   W13 GEMV  (rms norm prologue; SwiGLU epilogue: rows o and ffn + o per group)
//   W2 GEMV   (adds into h)
// five kernels where the unfused step had nine. Experts: the router and W13 GEMVs take the rms norm
// prologue, top2_route picks, W13 (SwiGLU epilogue) and W2 gather the experts' rows, and residual_add
// adds the weighted experts' outputs into h. Then the output head's GEMV with the final rms norm as
// prologue. int8 and int4 layers use the GEMV's fused dequantize (per-row scales; per-group scales and
// zeros). The embedding row is
// gathered with ATen (index_select). Every launch goes to the current stream, so a step can be captured.
// A tensor-parallel shard (shard.h: its Model::all_reduce set): the output and W2 GEMVs write the rank's
// partial instead of adding into h, model.all_reduce sums it over the ranks (NCCL, enqueued on the
// stream: captured with the rest), and residual_add adds it into h -- seven kernels and two all-reduces
// per layer; with Model::add_sums (one host, NCCL's device API) the partial goes to its row of
// Model::reduce_buffer and one lsa_sum_add kernel sends it to every rank and adds every rank's into h --
// six kernels and no NCCL collective per layer. Whole models run the five kernels above, unchanged.
// `programmatic` (sm_90+): each own kernel is a programmatic dependent launch, so it starts while the
// previous one finishes -- a GEMV's blocks fetch their first weights during the kernel before it, and
// the launch gaps close. Off: each launch waits for the previous.
#pragma once
#include <ATen/core/Tensor.h>
#include <cuda_runtime_api.h>

#include <string>

#include "kernels/gemv/gemv.h"
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
  void add_to_h(const Linear& l, const at::Tensor& x, bool second, cudaStream_t stream);
  kernels::GemvArgs gemv_args(const Linear& l, const at::Tensor& x, at::Tensor& y) const;
  // gemv_args with the rms norm prologue: x is the residual stream h, normalized with `norm_w`.
  kernels::GemvArgs normed_args(const Linear& l, const at::Tensor& norm_w, at::Tensor& y) const;
  // `a` gathering the experts idx selects from l's [experts, rows, cols] weights.
  kernels::GemvArgs gather_args(kernels::GemvArgs a, const Linear& l, int64_t x_stride, const at::Tensor& idx) const;
  Model& m_;
  bool programmatic_;
  Routes* route_log_ = nullptr;
  at::Tensor h_, q_, attn_, delta_, act_, logits_, router_, route_idx_, route_w_;
  at::Tensor attn_partials_, attn_counters_;   // decode_attention's workspace (kernels/decode/decode_kernels.h)
};

}  // namespace opbench::decode
