/* Source drop-in for GE's runtime/v1/graph/load/model_manager/reusable_stream_allocator.h, served
 * by stream-alloc. Same namespace, class, public signatures and default arguments; created only
 * through Create() and released with delete, as GE does. Reuse is off unless the environment
 * variable SA_REUSABLE_STREAM_OPTIONS says otherwise (e.g. "reuse=on"), so behaviour matches GE
 * by default. Failures return the sa_status of the failed call (non-zero; SA4000... for runtime
 * failures, SA_NO_RUNTIME when no device runtime resolves), with the message in
 * sa_last_error_message() and the code string in sa_last_error_code() on the calling thread. */
#ifndef SA_GE_COMPAT_REUSABLE_STREAM_ALLOCATOR_H
#define SA_GE_COMPAT_REUSABLE_STREAM_ALLOCATOR_H

#include <cstdint>
#include <cstdlib>
#include <new>

#include "stream_alloc.h"

typedef void *aclrtStream;

#include "stream_alloc_ge_status.h"

namespace ge {
class ReusableStreamAllocator {
 public:
  /* Ownership: the caller owns the new allocator and releases it with delete. nullptr when the
   * pool cannot be created (a malformed SA_REUSABLE_STREAM_OPTIONS: SA_INVALID_ARGUMENT, or out
   * of memory); the reason is in sa_last_error_message() on the calling thread. No device call. */
  static ReusableStreamAllocator *Create() {
    sa_reusable_pool *pool = nullptr;
    if (sa_reusable_pool_new(std::getenv("SA_REUSABLE_STREAM_OPTIONS"), &pool) != SA_OK) {
      return nullptr;
    }
    ReusableStreamAllocator *a = new (std::nothrow) ReusableStreamAllocator(pool);
    if (a == nullptr) {
      sa_reusable_pool_free(pool);
    }
    return a;
  }
  /* Writes a device stream for model rt_model_id to `stream` (shared with other models when
   * reuse is on). Ownership: the stream belongs to this allocator's pool, not to the caller;
   * give it back with DestroyStream, never with the runtime's destroy. ge::SUCCESS, or the
   * failure's sa_status (SA_NO_RUNTIME, SA_DEVICE_ERROR, ...) with `stream` unchanged. */
  Status GetOrCreateRtStream(aclrtStream &stream, const uint32_t rt_model_id, const int32_t priority,
                             const uint32_t stream_flag, const uint32_t task_num = 0U) {
    return static_cast<Status>(
        sa_reusable_pool_get_or_create(pool_, &stream, rt_model_id, priority, stream_flag, task_num));
  }
  /* Drops one grant of `stream`; the last grant destroys the device stream (forced if
   * is_force_destroy). `stream` is left unchanged, as in GE; do not use it afterwards.
   * Destroying an already destroyed stream succeeds; one this pool never created fails with
   * SA_UNKNOWN_HANDLE. */
  Status DestroyStream(aclrtStream &stream, const bool is_force_destroy = false) {
    return static_cast<Status>(sa_reusable_pool_destroy_stream(pool_, &stream, is_force_destroy));
  }
  /* Frees the pool; it destroys no stream (nor does GE's): streams still granted stay with the
   * device. */
  ~ReusableStreamAllocator() { sa_reusable_pool_free(pool_); }

 private:
  explicit ReusableStreamAllocator(sa_reusable_pool *pool) : pool_(pool) {}
  ReusableStreamAllocator(const ReusableStreamAllocator &) = delete;
  ReusableStreamAllocator(ReusableStreamAllocator &&) = delete;
  ReusableStreamAllocator operator=(const ReusableStreamAllocator &) = delete;
  ReusableStreamAllocator operator=(ReusableStreamAllocator &&) = delete;

  sa_reusable_pool *pool_;
};
}  // namespace ge

#endif
