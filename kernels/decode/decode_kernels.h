// The decode step's small kernels (decode_kernels.cu): what of a batch-1 transformer layer is neither a
// GEMV nor fused into one (the norms, RoPE, the cache writes and SwiGLU are: kernels/gemv/gemv_args.h).
// Activations bf16, arithmetic fp32, one token (T = 1). Positions are read on the device (the step is
// capturable in a CUDA graph). The layouts are the model's (benchmarks/decode/model.h): qkv = [q heads |
// k heads | v heads], caches [kv_heads, max_len, head_dim], RoPE on pairs (2i, 2i+1) as gpt-fast's
// apply_rotary_emb. One launch configuration each, at every shape (the constants in decode_kernels.cu).
// Float64 references: decode_reference.h. Plain C++ interface (no ATen). Every launch is checked
// (opbench::Error). `programmatic`: a programmatic dependent launch (kernels/common/launch.cuh): the
// kernel may start while the previous kernel of the stream finishes; each kernel waits for its inputs
// before it reads them, and lets the next kernel launch at once.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace opbench::kernels {

// h += sum_e delta_weights[e] * delta[e] (n_delta rows of dim; delta_weights fp32 on the device, or
// nullptr for weight 1), summed in fp32 and rounded to bf16 once: the experts' weighted outputs added
// to the residual stream.
struct ResidualAddArgs {
  void* h = nullptr;
  const void* delta = nullptr;
  int64_t n_delta = 0;
  const float* delta_weights = nullptr;
  int64_t dim = 0;
};
void launch_residual_add(const ResidualAddArgs& args, cudaStream_t stream, bool programmatic = false);

// out[h] = softmax(q[h] . K[g]^T / sqrt(head_dim) over positions 0..*pos) . V[g], g = h / (n_heads /
// n_kv_heads) (grouped-query attention). Split over the positions (flash-decoding): a block per head and
// chunk of kAttentionChunk positions (chunks past *pos exit at once) writes its chunk's max score, sum of
// exponentials and unnormalized weighted sum of V to `partials`; the head's last block to finish (a
// counter per head, left at 0 for the next launch) combines them. One launch: a head's cache is read by
// many SMs at once instead of one. head_dim a multiple of 8 up to 256.
constexpr int64_t kAttentionChunk = 32;
struct AttentionArgs {
  const void* q = nullptr;
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  const int64_t* pos = nullptr;
  void* out = nullptr;
  int64_t n_heads = 0, n_kv_heads = 0, head_dim = 0, max_len = 0;
  float* partials = nullptr;      // attention_partials_floats(...) floats on the device, any contents
  unsigned* counters = nullptr;   // n_heads zeros on the device before the first launch
};
// The floats `partials` needs.
inline int64_t attention_partials_floats(int64_t n_heads, int64_t head_dim, int64_t max_len) {
  return n_heads * ((max_len + kAttentionChunk - 1) / kAttentionChunk) * (head_dim + 2);
}
void launch_decode_attention(const AttentionArgs& args, cudaStream_t stream, bool programmatic = false);

// The greedy decode loop's step on the device, in one launch: next_pos = *pos + 1; next = the prompt's
// token sequence[next_pos] while next_pos < prompt_len, else argmax(logits) (bf16, vocab of them; the
// lowest index among equal maxima, as torch.argmax; NaN never picked); sequence[next_pos] = next;
// *token = next; *pos = next_pos. All int64 on the device. One block of 1024 threads.
struct NextTokenArgs {
  const void* logits = nullptr;
  int64_t vocab = 0;
  int64_t* sequence = nullptr;
  int64_t* token = nullptr;
  int64_t* pos = nullptr;
  int64_t prompt_len = 0;
};
void launch_next_token(const NextTokenArgs& args, cudaStream_t stream, bool programmatic = false);

// Mixture-of-experts routing of one token: p = softmax(logits) over n_experts (bf16 in), the two largest
// (the lower index first on a tie), idx[0..1] (int64) and weights[0..1] = p / (p0 + p1) (fp32).
void launch_top2_route(const void* logits, int64_t n_experts, int64_t* idx, float* weights, cudaStream_t stream,
                       bool programmatic = false);

}  // namespace opbench::kernels
