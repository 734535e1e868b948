// Greedy generation (generate.h).
#include "decode/generate.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/argmax.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>

#include <chrono>

#include "opbench/check.h"

#ifdef OPBENCH_HAVE_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "cuda_resources.h"
#include "kernels/decode/decode_kernels.h"
#include "decode/own_step.h"
#endif

namespace opbench::decode {

struct Decoder::Graph {
#ifdef OPBENCH_HAVE_CUDA
  at::cuda::CUDAGraph graph;
#endif
};

Decoder::Decoder(Model& model, StepKernels kernels, bool graph, const std::vector<int64_t>& prompt,
                 StepForward compiled)
    : model_(model), kernels_(kernels) {
  const ModelConfig& c = model.cfg;
  if (static_cast<int64_t>(prompt.size()) != c.prompt_len) throw Error("the prompt must have prompt_len tokens");
  auto opts = at::TensorOptions().device(model.tok_emb.device()).dtype(c10::kLong);
  prompt_ = at::tensor(prompt, opts);
  sequence_ = at::zeros({c.max_len()}, opts);
  token_ = at::zeros({1}, opts);
  pos_ = at::zeros({1}, opts);
  if ((kernels == StepKernels::kCompiled) != static_cast<bool>(compiled))
    throw Error("a compiled step goes with StepKernels::kCompiled");
  if (kernels == StepKernels::kAten || kernels == StepKernels::kCompiled) {
    StepForward logits_of = compiled ? std::move(compiled) : [this](const at::Tensor& token, const at::Tensor& pos) {
      return forward_aten(model_, token, pos);
    };
    forward_ = [this, logits_of](const at::Tensor& token, const at::Tensor& pos) -> const at::Tensor& {
      logits_ = logits_of(token, pos);
      return logits_;
    };
  } else {
#ifdef OPBENCH_HAVE_CUDA
    auto own = std::make_shared<OwnStep>(model, kernels == StepKernels::kOwn);
    forward_ = [own](const at::Tensor& token, const at::Tensor& pos) -> const at::Tensor& {
      return own->forward(token, pos);
    };
#else
    throw Error("own decode kernels need a CUDA build");
#endif
  }
  reset();
  step();   // warm-up: lazy initialization (cuBLAS handles, workspaces) happens outside any capture
  if (graph) {
#ifdef OPBENCH_HAVE_CUDA
    if (!model.tok_emb.is_cuda()) throw Error("a CUDA graph needs the model on a CUDA device");
    synchronize();
    graph_ = std::make_unique<Graph>();
    {   // capture on a side stream (never the legacy default stream); replays go to the current stream
      c10::cuda::CUDAStreamGuard guard(c10::cuda::getStreamFromPool());
      graph_->graph.capture_begin();
      step();
      graph_->graph.capture_end();
    }
    synchronize();
#else
    throw Error("CUDA graphs need a CUDA build");
#endif
  }
}

Decoder::~Decoder() = default;

void Decoder::reset() {
  const int64_t p = model_.cfg.prompt_len;
  sequence_.zero_();
  sequence_.narrow(0, 0, p).copy_(prompt_);
  token_.copy_(prompt_.narrow(0, 0, 1));
  pos_.zero_();
}

void Decoder::step() {
  const at::Tensor& logits = forward_(token_, pos_);
#ifdef OPBENCH_HAVE_CUDA
  if (own_kernels()) {   // the pick and the bookkeeping in one own kernel
    kernels::NextTokenArgs next;
    next.logits = logits.data_ptr();
    next.vocab = logits.numel();
    next.sequence = sequence_.data_ptr<int64_t>();
    next.token = token_.data_ptr<int64_t>();
    next.pos = pos_.data_ptr<int64_t>();
    next.prompt_len = model_.cfg.prompt_len;
    kernels::launch_next_token(next, c10::cuda::getCurrentCUDAStream().stream(), kernels_ == StepKernels::kOwn);
    return;
  }
#endif
  at::Tensor next_pos = pos_ + 1;
  at::Tensor best = at::argmax(logits.view({-1}), 0, true);   // [1]
  at::Tensor next = at::where(next_pos < model_.cfg.prompt_len, sequence_.index_select(0, next_pos), best);
  sequence_.index_copy_(0, next_pos, next);
  token_.copy_(next);
  pos_.copy_(next_pos);
}

void Decoder::generate(bool eager) {
  reset();
  for (int64_t s = 0; s < model_.cfg.steps(); ++s) {
#ifdef OPBENCH_HAVE_CUDA
    if (graph_ && !eager) {
      graph_->graph.replay();
      continue;
    }
#endif
    step();
  }
}

void Decoder::synchronize() const {
#ifdef OPBENCH_HAVE_CUDA
  if (model_.tok_emb.is_cuda()) c10::cuda::getCurrentCUDAStream().synchronize();
#endif
}

std::vector<int64_t> Decoder::tokens() const {
  at::Tensor host = sequence_.cpu();   // waits for the device
  return {host.data_ptr<int64_t>(), host.data_ptr<int64_t>() + host.numel()};
}

std::vector<double> Decoder::new_token_milliseconds() {
  const int64_t steps = model_.cfg.steps(), first_new = model_.cfg.prompt_len - 1;
  std::vector<double> ms;
  reset();
#ifdef OPBENCH_HAVE_CUDA
  if (model_.tok_emb.is_cuda()) {
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
    std::vector<opbench::detail::CudaEvent> marks(static_cast<size_t>(steps + 1));
    for (int64_t s = 0; s < steps; ++s) {
      OPBENCH_CUDA_CHECK(cudaEventRecord(marks[static_cast<size_t>(s)].get(), stream));
      if (graph_) graph_->graph.replay(); else step();
    }
    OPBENCH_CUDA_CHECK(cudaEventRecord(marks.back().get(), stream));
    OPBENCH_CUDA_CHECK(cudaEventSynchronize(marks.back().get()));
    for (int64_t s = first_new; s < steps; ++s) {
      float elapsed = 0;
      OPBENCH_CUDA_CHECK(cudaEventElapsedTime(&elapsed, marks[static_cast<size_t>(s)].get(), marks[static_cast<size_t>(s + 1)].get()));
      ms.push_back(elapsed);
    }
    return ms;
  }
#endif
  using Clock = std::chrono::steady_clock;
  for (int64_t s = 0; s < steps; ++s) {
    auto start = Clock::now();
    step();
    if (s >= first_new) ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return ms;
}

double graphed_milliseconds(const std::function<void()>& body, bool gpu, int replays) {
  body();   // lazy initialization outside any capture
  if (!gpu) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < replays; ++i) body();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / replays;
  }
#ifdef OPBENCH_HAVE_CUDA
  c10::cuda::getCurrentCUDAStream().synchronize();
  at::cuda::CUDAGraph graph;
  {
    c10::cuda::CUDAStreamGuard guard(c10::cuda::getStreamFromPool());
    graph.capture_begin();
    body();
    graph.capture_end();
  }
  graph.replay();
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  opbench::detail::CudaEvent start, end;
  OPBENCH_CUDA_CHECK(cudaEventRecord(start.get(), stream));
  for (int i = 0; i < replays; ++i) graph.replay();
  OPBENCH_CUDA_CHECK(cudaEventRecord(end.get(), stream));
  OPBENCH_CUDA_CHECK(cudaEventSynchronize(end.get()));
  float elapsed = 0;
  OPBENCH_CUDA_CHECK(cudaEventElapsedTime(&elapsed, start.get(), end.get()));
  return elapsed / replays;
#else
  throw Error("CUDA graphs need a CUDA build");
#endif
}

bool Decoder::own_kernels() const { return kernels_ == StepKernels::kOwn || kernels_ == StepKernels::kOwnSerial; }

std::string Decoder::kernels_label() const {
  if (kernels_ == StepKernels::kCompiled) return "kernels=inductor (AOTInductor package), argmax by ATen";
#ifdef OPBENCH_HAVE_CUDA
  if (own_kernels()) return "kernels=" + OwnStep::kernel_names(model_, kernels_ == StepKernels::kOwn);
#endif
  if (model_.int4) return "kernels=aten(int4: _weight_int4pack_mm, as gpt-fast's WeightOnlyInt4Linear)";
  return std::string("kernels=aten") + (model_.int8 ? "(int8 dequantized by .to(), as gpt-fast eager)" : "");
}

}  // namespace opbench::decode
