// CUPTI activity collection for the cupti timer (cuda/cupti_activity.h). Buffers are handed to CUPTI
// on request and parsed when it returns them (cuptiActivityFlushAll forces that, on the calling
// thread or CUPTI's worker): external correlation, kernel, memcpy and memset records go into one
// ActivityLog under a mutex; API records are only the carriers of the correlation and are skipped.
#include <cupti.h>

#include <cstdlib>
#include <mutex>

#include "cuda/cupti_activity.h"
#include "opbench/check.h"

#define OPBENCH_CUPTI_CHECK(call)                                                               \
  do {                                                                                          \
    CUptiResult opbench_cupti_status_ = (call);                                                 \
    if (opbench_cupti_status_ != CUPTI_SUCCESS) {                                               \
      const char* opbench_cupti_text_ = "unknown CUPTI error";                                  \
      cuptiGetResultString(opbench_cupti_status_, &opbench_cupti_text_);                        \
      ::opbench::detail::throw_call_failed("CUPTI", static_cast<int>(opbench_cupti_status_),    \
                                           opbench_cupti_text_, #call, __FILE__, __LINE__);     \
    }                                                                                           \
  } while (0)

namespace opbench::detail {
namespace {

constexpr size_t kBufferBytes = 8 << 20;
constexpr size_t kBufferAlign = 8;   // CUPTI's required record alignment
constexpr CUpti_ExternalCorrelationKind kTimerKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

std::mutex log_mutex;
ActivityLog activity_log;
size_t dropped_records = 0;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;   // as many as fit
}

template <typename Record>
void add_span(const CUpti_Activity* record) {
  auto* r = reinterpret_cast<const Record*>(record);
  if (r->end >= r->start) activity_log.add_activity(r->correlationId, {r->start, r->end});
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t /*size*/,
                               size_t valid_bytes) {
  {
    std::lock_guard<std::mutex> lock(log_mutex);
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
      switch (record->kind) {
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
          auto* r = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
          if (r->externalKind == kTimerKind) activity_log.add_correlation(r->correlationId, r->externalId);
          break;
        }
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: add_span<CUpti_ActivityKernel10>(record); break;
        case CUPTI_ACTIVITY_KIND_MEMCPY: add_span<CUpti_ActivityMemcpy6>(record); break;
        case CUPTI_ACTIVITY_KIND_MEMSET: add_span<CUpti_ActivityMemset4>(record); break;
        default: break;
      }
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) dropped_records += dropped;
  }
  std::free(buffer);
}

}  // namespace

CuptiActivity::CuptiActivity() {
  OPBENCH_CUPTI_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME,
                                  CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                  CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET})
    OPBENCH_CUPTI_CHECK(cuptiActivityEnable(kind));
}

CuptiActivity& CuptiActivity::instance() {
  static CuptiActivity activity;
  return activity;
}

void CuptiActivity::begin(uint64_t id) { OPBENCH_CUPTI_CHECK(cuptiActivityPushExternalCorrelationId(kTimerKind, id)); }

void CuptiActivity::end() {
  uint64_t last = 0;
  OPBENCH_CUPTI_CHECK(cuptiActivityPopExternalCorrelationId(kTimerKind, &last));
}

std::vector<ActivitySpan> CuptiActivity::take(uint64_t id) {
  OPBENCH_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::lock_guard<std::mutex> lock(log_mutex);
  if (dropped_records > 0) {
    const size_t dropped = dropped_records;
    dropped_records = 0;
    activity_log.take(id);
    throw Error("CUPTI dropped " + std::to_string(dropped) + " activity record(s): this sample cannot be timed");
  }
  return activity_log.take(id);
}

}  // namespace opbench::detail
