// Greedy generation with a Model (model.h), batch 1, the way gpt-fast's generate.py runs it, with one
// difference said up front: the prompt goes through the same one-token decode step as the new tokens
// (prompt_len - 1 extra steps, ~2.5% of a 200-token generation) instead of a separate prefill, so one
// step, captured once, serves the whole generation.
//
// The step reads and writes only static device tensors -- the current token and position, and the
// sequence -- and picks the next token on the device (argmax; a prompt token while the prompt lasts),
// so it has no host sync and a CUDA graph of it replays the whole generation.
#pragma once
#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "decode/model.h"

namespace opbench::decode {

// forward_aten, or OwnStep (own_step.h; CUDA only) with programmatic launches (kOwn) or without them
// (kOwnSerial: each launch waits for the previous kernel, to show what the overlap buys), or a compiled
// step the caller gives (kCompiled: the inductor backend's package, model.py's DecodeStep).
enum class StepKernels { kAten, kOwn, kOwnSerial, kCompiled };

// One step's logits [1, vocab] after `token` [1] at `pos` [1], writing the KV cache.
using StepForward = std::function<at::Tensor(const at::Tensor& token, const at::Tensor& pos)>;

class Decoder {
 public:
  // `graph`: capture the step in a CUDA graph (after one eager warm-up step) and replay it.
  // REQUIRES: kOwn or graph only on a CUDA device; prompt.size() == cfg.prompt_len; `compiled` set
  // exactly when kernels is kCompiled.
  Decoder(Model& model, StepKernels kernels, bool graph, const std::vector<int64_t>& prompt,
          StepForward compiled = nullptr);
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // Resets the sequence to the prompt and runs cfg.steps() steps (graph replays unless `eager`);
  // enqueues only: synchronize() or tokens() waits.
  void generate(bool eager = false);
  void synchronize() const;
  std::vector<int64_t> tokens() const;   // prompt + new tokens, max_len of them; synchronizes
  // One generation timed per step (CUDA events between steps on a GPU, the host clock on the CPU):
  // milliseconds of each step that yields a new token.
  std::vector<double> new_token_milliseconds();
  std::string kernels_label() const;
  bool own_kernels() const;   // the step runs opbench's own kernels (kOwn, kOwnSerial)

 private:
  void step();
  void reset();
  struct Graph;
  Model& model_;
  StepKernels kernels_;
  std::function<const at::Tensor&(const at::Tensor&, const at::Tensor&)> forward_;
  at::Tensor prompt_, sequence_, token_, pos_, logits_;
  std::unique_ptr<Graph> graph_;
};

// Milliseconds per run of `body`: on a GPU (`gpu`) captured once in a CUDA graph (after one eager run)
// and replayed `replays` times after a warm-up replay, timed with CUDA events; on the CPU run `replays`
// times on the host clock. Every process of a launch that calls it runs `body` 2 + replays times (GPU)
// or 1 + replays times (CPU): collectives inside stay in step.
double graphed_milliseconds(const std::function<void()>& body, bool gpu, int replays);

}  // namespace opbench::decode
