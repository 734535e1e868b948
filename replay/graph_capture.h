// Internal to replay/: the `graph` backend's one-off capture, used to check that a call can be
// captured in a CUDA graph and that its replay matches eager before the graph timer times it.
#pragma once
#include <ATen/core/stack.h>

#include "replay/operator_call.h"

namespace opbench::replay::detail {

// True when this build has CUDA (the graph backend exists); it still needs a CUDA device to run.
bool graph_backend_built();

// Captures call(plan, inputs) in a CUDA graph on a side stream, replays it once, synchronizes and
// returns copies of the outputs (outside the graph's memory pool) and how many graph nodes (kernels,
// copies, memsets) the call captured: 0 for a view or metadata-only op, which has nothing to replay.
// A call that cannot be captured (it synchronizes with the host, or throws during capture) throws
// NotCapturable with the reason; the capture is ended first so the stream stays usable.
struct NotCapturable : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct GraphRun {
  torch::jit::Stack outputs;
  std::size_t nodes = 0;
};
GraphRun call_in_graph(const CallPlan& plan, const torch::jit::Stack& inputs);

}  // namespace opbench::replay::detail
