#include "replay/graph_capture.h"

#ifdef OPBENCH_HAVE_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>

#include "opbench/check.h"
#include "replay/stacks.h"
#endif

namespace opbench::replay::detail {

#ifdef OPBENCH_HAVE_CUDA
namespace {

// While alive, PyTorch's synchronizing CUDA calls (memcpy_and_sync, stream_synchronize: .item(),
// nonzero, ...) throw instead of running. Under capture they would invalidate the capture; this
// way the op throws before the illegal call, and the capture can be ended normally.
class SyncIsAnError {
 public:
  SyncIsAnError() : saved_(c10::cuda::warning_state().get_sync_debug_mode()) {
    c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
  }
  ~SyncIsAnError() { c10::cuda::warning_state().set_sync_debug_mode(saved_); }
  SyncIsAnError(const SyncIsAnError&) = delete;
  SyncIsAnError& operator=(const SyncIsAnError&) = delete;

 private:
  c10::cuda::SyncDebugMode saved_;
};

// Nodes in the graph being captured on `stream` so far.
std::size_t captured_nodes(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  cudaGraph_t graph = nullptr;
  OPBENCH_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &status, &id, &graph));
  std::size_t nodes = 0;
  if (status == cudaStreamCaptureStatusActive && graph) OPBENCH_CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  return nodes;
}

// After a capture that CUDA invalidated, CUDAGraph::capture_end throws before its own clean-up:
// the allocator would keep routing this stream's allocations to the graph's pool, and the default
// CUDA generator would stay "capturing" (every later random fill then fails with "Offset increment
// outside graph capture"). Undo both through public APIs. Errors here are ignored on purpose: the
// capture's own error is the one reported.
void recover_from_invalid_capture(cudaStream_t stream, c10::DeviceIndex device, at::cuda::MempoolId_t pool) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial) cudaGraphDestroy(partial);
  }
  (void)cudaGetLastError();
  try {
    c10::cuda::CUDACachingAllocator::endAllocateToPool(device, pool);
    c10::cuda::CUDACachingAllocator::releasePool(device, pool);
    at::Generator generator = at::cuda::detail::getDefaultCUDAGenerator(device);
    generator.graphsafe_set_state(at::cuda::detail::createCUDAGenerator(device));
  } catch (...) {
  }
}

std::string message_of(const std::exception& e) {
  if (auto* c10_error = dynamic_cast<const c10::Error*>(&e)) return c10_error->what_without_backtrace();
  return e.what();
}

}  // namespace

bool graph_backend_built() { return true; }

GraphRun call_in_graph(const CallPlan& plan, const torch::jit::Stack& inputs) {
  OPBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  at::cuda::CUDAGraph graph;
  torch::jit::Stack outputs;
  std::size_t nodes = 0;
  {
    // Capture cannot happen on the legacy default stream: a side stream, as the graph timer does.
    c10::cuda::CUDAStreamGuard guard(c10::cuda::getStreamFromPool());
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
    c10::DeviceIndex device = c10::cuda::current_device();
    at::cuda::MempoolId_t pool = at::cuda::graph_pool_handle();   // known, for the recovery
    graph.capture_begin(pool);
    try {
      SyncIsAnError no_sync;
      std::size_t before = captured_nodes(stream);
      outputs = call(plan, inputs);
      nodes = captured_nodes(stream) - before;
    } catch (const std::exception& e) {
      outputs.clear();
      try {
        graph.capture_end();   // the capture is intact when the op threw before a CUDA call
      } catch (const std::exception&) {
        recover_from_invalid_capture(stream, device, pool);
      }
      throw NotCapturable(message_of(e));
    }
    try {
      graph.capture_end();
    } catch (const std::exception& e) {
      outputs.clear();
      recover_from_invalid_capture(stream, device, pool);
      throw NotCapturable(message_of(e));
    }
    graph.replay();
    OPBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  return {clone_stack(outputs), nodes};
}
#else
bool graph_backend_built() { return false; }

GraphRun call_in_graph(const CallPlan&, const torch::jit::Stack&) {
  throw NotCapturable("this build has no CUDA");
}
#endif

}  // namespace opbench::replay::detail
