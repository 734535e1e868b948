// The CUDA samplers: events around the timed work on the current stream, the stream held by a
// blocking kernel while the work is enqueued, and an L2 flush before each sample in cold-cache mode.
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>

#include "cuda/block_stream.h"
#include "cuda_resources.h"
#include "opbench/device.h"
#include "opbench/timer.h"

namespace opbench {
namespace {

constexpr uint64_t kBlockTimeoutNs = 100'000'000;  // 100 ms: longer than any sane enqueue
constexpr double kGraphReplayTargetSeconds = 500e-6;
constexpr int kGraphMaxBatch = 200;

// >= 2x L2, allocated once per process and zeroed before each cold sample.
detail::DeviceBuffer& flush_buffer() {
  static detail::DeviceBuffer buffer([] {
    auto l2 = static_cast<size_t>(current_device().l2_bytes);
    size_t bytes = std::max<size_t>(2 * l2, size_t{64} << 20);
    return (bytes + (size_t{1} << 20) - 1) & ~((size_t{1} << 20) - 1);
  }());
  return buffer;
}

// Times work enqueued on one stream: [block] [flush] start-event work stop-event, release, wait.
class TimedRegion {
 public:
  TimedRegion(CacheMode cache, cudaStream_t stream)
      : cache_(cache), stream_(stream), flags_(2 * sizeof(int32_t)) {
    if (cache_ == CacheMode::kCold) flush_buffer();
  }

  double seconds(const std::function<void()>& enqueue) {
    auto* host_flags = static_cast<volatile int32_t*>(flags_.host());
    auto* device_flags = static_cast<int32_t*>(flags_.device());
    if (blocking_) {
      host_flags[0] = 0;
      host_flags[1] = 0;
      std::atomic_thread_fence(std::memory_order_seq_cst);
      detail::launch_block_stream(stream_, device_flags, device_flags + 1, kBlockTimeoutNs);
    }
    if (cache_ == CacheMode::kCold) {
      auto& flush = flush_buffer();
      OPBENCH_CUDA_CHECK(cudaMemsetAsync(flush.get(), 0, flush.bytes(), stream_));
    }
    OPBENCH_CUDA_CHECK(cudaEventRecord(start_.get(), stream_));
    enqueue();
    OPBENCH_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_));
    std::atomic_thread_fence(std::memory_order_seq_cst);
    host_flags[0] = 1;
    OPBENCH_CUDA_CHECK(cudaEventSynchronize(stop_.get()));
    if (blocking_ && host_flags[1] != 0) {
      // The work waited on the GPU while being enqueued (a sync inside the op), so the block timed
      // out and this sample holds the wait: drop it and time without blocking from now on.
      blocking_ = false;
      return seconds(enqueue);
    }
    float ms = 0;
    OPBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start_.get(), stop_.get()));
    return static_cast<double>(ms) * 1e-3;
  }

  cudaStream_t stream() const { return stream_; }

 private:
  CacheMode cache_;
  cudaStream_t stream_;
  detail::MappedHostBuffer flags_;
  detail::CudaEvent start_, stop_;
  bool blocking_ = true;
};

cudaStream_t current_stream() { return c10::cuda::getCurrentCUDAStream().stream(); }

class EventSampler final : public Sampler {
 public:
  explicit EventSampler(CacheMode cache) : region_(cache, current_stream()) {}
  void warm_up(const std::function<void()>& iteration) override {
    iteration();
    OPBENCH_CUDA_CHECK(cudaStreamSynchronize(region_.stream()));
  }
  double time_one(const std::function<void()>& iteration) override {
    return region_.seconds(iteration);
  }
  TimerKind kind() const override { return TimerKind::kEvents; }

 private:
  TimedRegion region_;
};

class GraphSampler final : public Sampler {
 public:
  explicit GraphSampler(CacheMode cache) : region_(cache, current_stream()) {}
  void warm_up(const std::function<void()>& iteration) override {
    last_warmup_seconds_ = region_.seconds(iteration);
  }
  double time_one(const std::function<void()>& iteration) override {
    if (!graph_) capture(iteration);
    return region_.seconds([this] { graph_->replay(); }) / batch_;
  }
  TimerKind kind() const override { return TimerKind::kGraph; }

 private:
  void capture(const std::function<void()>& iteration) {
    double estimate = std::max(last_warmup_seconds_, 1e-6);
    batch_ = std::clamp(static_cast<int>(std::lround(kGraphReplayTargetSeconds / estimate)), 1,
                        kGraphMaxBatch);
    graph_ = std::make_unique<at::cuda::CUDAGraph>();
    {
      // Capture cannot happen on the legacy default stream: use a side stream, replay on ours.
      c10::cuda::CUDAStreamGuard guard(c10::cuda::getStreamFromPool());
      graph_->capture_begin();
      for (int i = 0; i < batch_; ++i) iteration();
      graph_->capture_end();
    }
    graph_->replay();  // first replay uploads the graph; not timed
    OPBENCH_CUDA_CHECK(cudaStreamSynchronize(region_.stream()));
  }

  TimedRegion region_;
  std::unique_ptr<at::cuda::CUDAGraph> graph_;
  int batch_ = 1;
  double last_warmup_seconds_ = 0;
};

void require_gpu() {
  if (!current_device().is_gpu) throw Error("CUDA timing needs a CUDA device; none was found");
}

}  // namespace

std::unique_ptr<Sampler> make_event_sampler(CacheMode cache) {
  require_gpu();
  return std::make_unique<EventSampler>(cache);
}

std::unique_ptr<Sampler> make_graph_sampler(CacheMode cache) {
  require_gpu();
  return std::make_unique<GraphSampler>(cache);
}

}  // namespace opbench
