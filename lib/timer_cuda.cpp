// The CUDA samplers: events around the timed work on the current stream (or CUPTI activity records of
// it), the stream held by a blocking kernel while the work is enqueued, an L2 flush before each sample
// in cold-cache mode, and the SM clock of each sample from timestamps taken on SM 0 before and after.
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "opbench/activity_span.h"

#include "cuda/timer_kernels.h"
#ifdef OPBENCH_HAVE_CUPTI
#include "cuda/cupti_activity.h"
#endif
#include "cuda_resources.h"
#include "opbench/device.h"
#include "opbench/timer.h"

namespace opbench {
namespace {

constexpr uint64_t kBlockTimeoutNs = 100'000'000;  // 100 ms: longer than any sane enqueue
constexpr double kGraphReplayTargetSeconds = 500e-6;
constexpr int kGraphMaxBatch = 200;
// A clock estimate needs a window that globaltimer resolves well: shorter windows are not judged.
constexpr double kMinClockWindowNs = 20'000;

// >= 2x L2, allocated once per process (zeroed) and read before each cold sample (launch_read_flush).
detail::DeviceBuffer& flush_buffer() {
  static detail::DeviceBuffer buffer = [] {
    auto l2 = static_cast<size_t>(current_device().l2_bytes);
    size_t bytes = std::max<size_t>(2 * l2, size_t{64} << 20);
    detail::DeviceBuffer zeroed((bytes + (size_t{1} << 20) - 1) & ~((size_t{1} << 20) - 1));
    OPBENCH_CUDA_CHECK(cudaMemset(zeroed.get(), 0, zeroed.bytes()));
    return zeroed;
  }();
  return buffer;
}

// Times work enqueued on one stream: [block] [SM-0 stamp] [flush] start-event work stop-event
// [SM-0 stamp], release, wait. The stamps bracket the flush too (in cold mode), which lengthens the
// window the clock is estimated over; they are outside the events.
class TimedRegion {
 public:
  TimedRegion(CacheMode cache, cudaStream_t stream)
      : cache_(cache), stream_(stream), flags_(2 * sizeof(int32_t)), stamps_(4 * sizeof(uint64_t)),
        sink_(sizeof(int)), sm_count_(current_device().sm_count) {
    // Launch the timer's own kernels once now: with lazy module loading a kernel's first launch loads its
    // module, which waits for the device -- behind a stream hold, that wait would time the hold out.
    flush();
    detail::launch_sm0_timestamps(stream_, static_cast<uint64_t*>(stamps_.device()), sm_count_);
    detail::launch_spin(stream_, 0);   // the injected delay's kernel, for --opbench_inject_slowdown
    OPBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_));
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
    auto* stamps = static_cast<uint64_t*>(stamps_.device());
    std::fill_n(static_cast<volatile uint64_t*>(stamps_.host()), 4, 0);
    detail::launch_sm0_timestamps(stream_, stamps, sm_count_);
    flush();
    OPBENCH_CUDA_CHECK(cudaEventRecord(start_.get(), stream_));
    enqueue();
    OPBENCH_CUDA_CHECK(cudaEventRecord(stop_.get(), stream_));
    detail::launch_sm0_timestamps(stream_, stamps + 2, sm_count_);
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
    last_clock_mhz_ = clock_from_stamps();
    return static_cast<double>(ms) * 1e-3;
  }

  cudaStream_t stream() const { return stream_; }
  std::optional<double> last_sm_clock_mhz() const { return last_clock_mhz_; }

 private:
  CacheMode cache_;
  cudaStream_t stream_;
  detail::MappedHostBuffer flags_;
  detail::CudaEvent start_, stop_;
  detail::MappedHostBuffer stamps_;   // {ns, cycles} before, {ns, cycles} after
  detail::DeviceBuffer sink_;         // the flush kernel's output (never written in practice)
  int sm_count_;
  bool blocking_ = true;
  std::optional<double> last_clock_mhz_;

  void flush() {
    if (cache_ != CacheMode::kCold) return;
    auto& buffer = flush_buffer();
    detail::launch_read_flush(stream_, buffer.get(), buffer.bytes(), static_cast<int*>(sink_.get()), sm_count_);
  }

  // Cycles per ns of SM 0 over the window, in MHz; nullopt when a stamp is missing or the window short.
  std::optional<double> clock_from_stamps() const {
    auto* s = static_cast<const volatile uint64_t*>(stamps_.host());
    if (s[0] == 0 || s[2] == 0 || s[2] <= s[0] || s[3] <= s[1]) return std::nullopt;
    const double window_ns = static_cast<double>(s[2] - s[0]);
    if (window_ns < kMinClockWindowNs) return std::nullopt;
    return 1e3 * static_cast<double>(s[3] - s[1]) / window_ns;
  }
};

cudaStream_t current_stream() { return c10::cuda::getCurrentCUDAStream().stream(); }

// What every sampler on a TimedRegion shares: the region, the SM clock of its last sample, and a
// warm-up that runs the iteration unheld and waits for it.
class RegionSampler : public Sampler {
 public:
  explicit RegionSampler(CacheMode cache) : region_(cache, current_stream()) {}
  void warm_up(const std::function<void()>& iteration) override {
    iteration();
    OPBENCH_CUDA_CHECK(cudaStreamSynchronize(region_.stream()));
  }
  std::optional<double> last_sm_clock_mhz() const override { return region_.last_sm_clock_mhz(); }

 protected:
  TimedRegion region_;
};

class EventSampler final : public RegionSampler {
 public:
  using RegionSampler::RegionSampler;
  double time_one(const std::function<void()>& iteration) override {
    return region_.seconds(iteration);
  }
  TimerKind kind() const override { return TimerKind::kEvents; }
};

class GraphSampler final : public RegionSampler {
 public:
  using RegionSampler::RegionSampler;
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

  std::unique_ptr<at::cuda::CUDAGraph> graph_;
  int batch_ = 1;
  double last_warmup_seconds_ = 0;
};

#ifdef OPBENCH_HAVE_CUPTI
// Events and stamps as EventSampler; the sample is the busy time of the activities CUPTI attributes to
// the iteration's enqueue (a fresh correlation id per enqueue, so a repeated enqueue after a timed-out
// hold is not counted twice).
class CuptiSampler final : public RegionSampler {
 public:
  explicit CuptiSampler(CacheMode cache) : RegionSampler(cache), activity_(detail::CuptiActivity::instance()) {}
  double time_one(const std::function<void()>& iteration) override {
    uint64_t id = 0;
    region_.seconds([&] {
      id = ++last_id_;
      activity_.begin(id);
      iteration();
      activity_.end();
    });
    std::vector<ActivitySpan> spans = activity_.take(id);
    if (spans.empty()) throw Error("CUPTI recorded no kernel, memcpy or memset for the iteration");
    return static_cast<double>(busy_ns(spans)) * 1e-9;
  }
  TimerKind kind() const override { return TimerKind::kCupti; }

 private:
  detail::CuptiActivity& activity_;
  uint64_t last_id_ = 0;
};
#endif

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

std::string cupti_unavailable_reason() {
#ifdef OPBENCH_HAVE_CUPTI
  if (!current_device().is_gpu) return "no CUDA device";
  return "";
#else
  return "this build found no CUPTI (libcupti from the CUDA toolkit)";
#endif
}

std::unique_ptr<Sampler> make_cupti_sampler(CacheMode cache) {
  std::string why = cupti_unavailable_reason();
  if (!why.empty()) throw Error("the cupti timer is unavailable: " + why);
#ifdef OPBENCH_HAVE_CUPTI
  return std::make_unique<CuptiSampler>(cache);
#else
  (void)cache;
  return nullptr;
#endif
}

void detail::inject_gpu_delay(double seconds) {
  require_gpu();
  detail::launch_spin(current_stream(), static_cast<uint64_t>(seconds * 1e9));
}

}  // namespace opbench
