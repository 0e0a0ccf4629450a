/* GE's runtime/v1/graph/load/model_manager/reusable_stream_allocator.h, served by stream-alloc:
 * GE's declaration (the same members, so the implicit destructor that every `delete` site
 * compiles inline frees exactly what Create() built), with Create, GetOrCreateRtStream and
 * DestroyStream in the library under GE's symbols (docs/drop-in.md).
 *
 * Create() hands out a real object whose maps hold one entry only, under the key nullptr, whose
 * deleter releases the library's pool for this object when the caller deletes it; the streams
 * themselves are in the library's pool. Reuse is off unless the environment variable
 * SA_REUSABLE_STREAM_OPTIONS says otherwise (e.g. "reuse=on"), so behaviour matches GE by
 * default. Failures return the sa_status of the failed call (non-zero; SA4000... for runtime
 * failures, SA_NO_RUNTIME when no device runtime resolves), with the message in
 * sa_last_error_message() and the code string in sa_last_error_code() on the calling thread. */
#ifndef SA_GE_COMPAT_REUSABLE_STREAM_ALLOCATOR_H
#define SA_GE_COMPAT_REUSABLE_STREAM_ALLOCATOR_H

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include "stream_alloc.h"

typedef void *aclrtStream;

#include "stream_alloc_ge_status.h"

#ifndef SA_GE_VISIBILITY_EXPORT
#define SA_GE_VISIBILITY_EXPORT __attribute__((visibility("default")))
#endif

/* The library's C++ unit, which builds the object Create() returns. */
struct stream_alloc_ge_access;

namespace ge {
struct RtStreamStatus;
using RtStreamStatusPtr = std::shared_ptr<RtStreamStatus>;

struct RtStreamStatus {
  aclrtStream stream = nullptr;
  int32_t rt_stream_id;
  std::set<uint32_t> rt_model_id;  // cannot reuse streams of its own model
  uint32_t task_num = 0U;
  bool is_valid = true;

  static RtStreamStatusPtr Create(aclrtStream &stream, const int32_t rt_stream_id, const uint32_t rt_model_id,
                                  const uint32_t task_num = 0U) {
    RtStreamStatusPtr status = std::make_shared<RtStreamStatus>();
    status->stream = stream;
    status->rt_stream_id = rt_stream_id;
    status->rt_model_id.insert(rt_model_id);
    status->task_num = task_num;
    return status;
  }
};

/* Least loaded first, ties broken by the handle. */
struct StreamCompareKey {
  bool operator()(const RtStreamStatusPtr &status1, const RtStreamStatusPtr &status2) const {
    if (status1->task_num != status2->task_num) {
      return status1->task_num < status2->task_num;
    }
    return status1->stream < status2->stream;
  }
};

class SA_GE_VISIBILITY_EXPORT ReusableStreamAllocator {
 public:
  /* Ownership: the caller owns the new allocator and releases it with delete (which also
   * releases the library's pool; streams still granted stay with the device, as in GE).
   * nullptr when the pool cannot be created (a malformed SA_REUSABLE_STREAM_OPTIONS:
   * SA_INVALID_ARGUMENT, or out of memory); the reason is in sa_last_error_message() on the
   * calling thread. No device call. */
  static ReusableStreamAllocator *Create();
  /* Writes a device stream for model rt_model_id to `stream` (shared with other models when
   * reuse is on). Ownership: the stream belongs to this allocator's pool, not to the caller;
   * give it back with DestroyStream, never with the runtime's destroy. ge::SUCCESS, or the
   * failure's sa_status (SA_NO_RUNTIME, SA_DEVICE_ERROR, ...) with `stream` unchanged.
   * Thread-safe. */
  Status GetOrCreateRtStream(aclrtStream &stream, const uint32_t rt_model_id, const int32_t priority,
                             const uint32_t stream_flag, const uint32_t task_num = 0U);
  /* Drops one grant of `stream`; the last grant destroys the device stream (forced if
   * is_force_destroy). `stream` is left unchanged, as in GE; do not use it afterwards.
   * Destroying an already destroyed stream succeeds; one this pool never created fails with
   * SA_UNKNOWN_HANDLE, a null one with SA_NULL_POINTER. Thread-safe. */
  Status DestroyStream(aclrtStream &stream, const bool is_force_destroy = false);

 private:
  friend struct ::stream_alloc_ge_access;
  ReusableStreamAllocator() = default;
  ReusableStreamAllocator(const ReusableStreamAllocator &) = delete;
  ReusableStreamAllocator(ReusableStreamAllocator &&) = delete;
  ReusableStreamAllocator operator=(const ReusableStreamAllocator &) = delete;
  ReusableStreamAllocator operator=(ReusableStreamAllocator &&) = delete;

  // <<priority, stream_flag>, std::set<RtStreamStatus>>
  std::map<std::pair<int32_t, uint32_t>, std::set<RtStreamStatusPtr, StreamCompareKey>> rt_stream_list_{};
  // to get stream_status easier
  std::map<aclrtStream, RtStreamStatusPtr> stream_ref_;
  std::mutex mutex_;
};
}  // namespace ge

#endif
