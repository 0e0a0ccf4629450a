/* C++ classes over stream_alloc.h's user-level streams and events (sa_stream_ctx) and its
 * stream-ordered device memory pool (sa_mem_pool): MindSpore's ms.hal.Stream / Event /
 * wait_stream and its device memory pool with automatic cross-stream lifetime extension.
 * GE has no such classes, so these live in namespace sa, next to the GE drop-ins of this
 * directory; header-only, every body one C call.
 *
 * Ownership:
 * - sa::StreamContext owns its sa_stream_ctx and, through it, every stream it created by key and
 *   every internal event; streams it adopted stay the caller's. Not copyable; movable.
 * - sa::Event owns one event of a context; it must not outlive the StreamContext object it was
 *   made from (the context may be destroyed only after its events).
 * - sa::MemPool owns its sa_mem_pool and all device memory it hands out: pointers from Alloc stay
 *   valid until Free/FreeAfter or until the MemPool is destroyed (which synchronises and returns
 *   every block to the device). It keeps the context's streams alive, so it may outlive the
 *   StreamContext object.
 * Failures: calls return sa_status (or nullptr) and leave the message in sa_last_error_message()
 * on the calling thread. Thread safety: all three classes may be used from several threads at
 * once; destroying one while another thread uses it is undefined behaviour. */
#ifndef SA_FRAMEWORK_RUNTIME_MEM_POOL_H
#define SA_FRAMEWORK_RUNTIME_MEM_POOL_H

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "stream_alloc.h"

typedef void *aclrtStream;
typedef void *aclrtEvent;

namespace sa {

class StreamContext {
 public:
  /* Resolves the device runtime now; ok() is false without one. */
  StreamContext() : ctx_(nullptr), status_(sa_stream_ctx_new(&ctx_)) {}
  StreamContext(const StreamContext &) = delete;
  StreamContext &operator=(const StreamContext &) = delete;
  StreamContext(StreamContext &&o) noexcept : ctx_(std::exchange(o.ctx_, nullptr)), status_(o.status_) {}
  ~StreamContext() { sa_stream_ctx_free(ctx_); }

  bool ok() const { return ctx_ != nullptr; }
  sa_status status() const { return status_; }
  /* Borrowed: valid while this object lives. */
  sa_stream_ctx *get() const { return ctx_; }

  /* The stream for key, created on first use and reused after (owned by the context);
   * nullptr on failure. */
  aclrtStream Stream(uint32_t key, int32_t priority = 0, uint32_t rt_flags = 0) const {
    aclrtStream s = nullptr;
    return sa_stream_ctx_stream(ctx_, key, priority, rt_flags, &s) == SA_OK ? s : nullptr;
  }
  /* A stream created elsewhere, used here, never destroyed here. */
  sa_status Adopt(aclrtStream stream) const { return sa_stream_ctx_adopt_stream(ctx_, stream); }
  /* waiter.wait_stream(other). */
  sa_status WaitStream(aclrtStream waiter, aclrtStream other) const {
    return sa_stream_ctx_wait_stream(ctx_, waiter, other);
  }
  sa_status Synchronize(aclrtStream stream) const { return sa_stream_ctx_synchronize_stream(ctx_, stream); }

 private:
  sa_stream_ctx *ctx_;
  sa_status status_;
};

class Event {
 public:
  /* acl_flags 0: ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE. ok() is false when creation failed. */
  explicit Event(const StreamContext &ctx, uint32_t acl_flags = 0) : ctx_(ctx.get()), event_(nullptr) {
    (void)sa_stream_ctx_event_new(ctx_, acl_flags, &event_);
  }
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;
  ~Event() {
    if (event_ != nullptr) (void)sa_stream_ctx_event_destroy(ctx_, event_);
  }

  bool ok() const { return event_ != nullptr; }
  /* Borrowed: valid while this object lives. */
  aclrtEvent get() const { return event_; }
  sa_status Record(aclrtStream stream) const { return sa_stream_ctx_event_record(ctx_, event_, stream); }
  sa_status Wait(aclrtStream stream) const { return sa_stream_ctx_event_wait(ctx_, stream, event_); }
  /* 1 complete, 0 not yet, -1 on failure. */
  int Query() const {
    int32_t done = 0;
    return sa_stream_ctx_event_query(ctx_, event_, &done) == SA_OK ? done : -1;
  }
  sa_status Synchronize() const { return sa_stream_ctx_event_synchronize(ctx_, event_); }
  /* Milliseconds from this event to end; negative on failure. */
  float ElapsedMs(const Event &end) const {
    float ms = 0.0f;
    return sa_stream_ctx_event_elapsed_time(ctx_, event_, end.event_, &ms) == SA_OK ? ms : -1.0f;
  }

 private:
  sa_stream_ctx *ctx_;
  aclrtEvent event_;
};

class MemPool {
 public:
  explicit MemPool(const StreamContext &ctx) : pool_(nullptr) { (void)sa_mem_pool_new(ctx.get(), &pool_); }
  MemPool(const MemPool &) = delete;
  MemPool &operator=(const MemPool &) = delete;
  ~MemPool() { sa_mem_pool_free(pool_); }

  bool ok() const { return pool_ != nullptr; }
  /* Borrowed: valid while this object lives. */
  sa_mem_pool *get() const { return pool_; }

  /* Device memory for use on stream, owned by the pool; nullptr on failure (SA_OUT_OF_MEMORY
   * after synchronising pending events and one retry). */
  void *Alloc(size_t size, aclrtStream stream) const {
    void *p = nullptr;
    return sa_mem_pool_alloc(pool_, size, stream, &p) == SA_OK ? p : nullptr;
  }
  /* Gives ptr back once the work queued on stream (normally its own) is done. */
  sa_status Free(void *ptr, aclrtStream stream) const { return sa_mem_pool_free_ptr(pool_, ptr, stream); }
  /* record_stream: ptr is also used on stream. */
  sa_status RecordUse(void *ptr, aclrtStream stream) const { return sa_mem_pool_record_use(pool_, ptr, stream); }
  /* Gives ptr back after its own stream and every reader stream (the compile plan's list). */
  sa_status FreeAfter(void *ptr, const aclrtStream *readers, size_t n) const {
    return sa_mem_pool_free_after(pool_, ptr, readers, n);
  }
  sa_status FreeAfter(void *ptr, std::initializer_list<aclrtStream> readers) const {
    return sa_mem_pool_free_after(pool_, ptr, readers.begin(), readers.size());
  }
  sa_status EmptyCache() const { return sa_mem_pool_empty_cache(pool_); }
  sa_mem_stats Stats() const {
    sa_mem_stats s{};
    (void)sa_mem_pool_stats(pool_, &s);
    return s;
  }

 private:
  sa_mem_pool *pool_;
};

}  // namespace sa

#endif
