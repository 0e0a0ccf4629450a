/* GE's inc/framework/runtime/event_allocator.h, served by stream-alloc: GE's declaration (16
 * bytes; the constructor is inline, as in GE, and allocates the vector with ContinuousVector::
 * Create), with the other members in the library under GE's symbols. Errors and the GetStatus /
 * GetStatusMessage extensions as in framework/runtime/stream_allocator.h. */
#ifndef SA_GE_COMPAT_FRAMEWORK_RUNTIME_EVENT_ALLOCATOR_H
#define SA_GE_COMPAT_FRAMEWORK_RUNTIME_EVENT_ALLOCATOR_H

#include "framework/runtime/stream_allocator.h"

namespace gert {
class SA_GE_VISIBILITY_EXPORT EventAllocator {
 public:
  static constexpr size_t kMaxEventNum = 4096U;
  /* No device call; a failure (out of host memory) shows in GetStatus() as SA_RUNTIME_LIMIT. */
  explicit EventAllocator(uint32_t flag = ACL_EVENT_SYNC)
      : events_holder_(ContinuousVector::Create<aclrtEvent>(kMaxEventNum)), default_flag_(flag) {}
  EventAllocator(const EventAllocator &) = delete;
  EventAllocator &operator=(const EventAllocator &) = delete;
  /* Destroys every event this allocator created and frees the vector AcquireEvents returned. */
  ~EventAllocator();

  /* Grows the vector to at least event_num events and returns it. Ownership: the vector and
   * every event in it belong to this allocator, valid at the same address until it is
   * destroyed; never free the vector or destroy its events. nullptr on failure (event_num >
   * kMaxEventNum, refused before any event is created, where GE creates and leaks one; no
   * device runtime; a device error); the reason is in sa_last_error_message() /
   * sa_last_error_code() on the calling thread. Thread-safe. */
  TypedContinuousVector<aclrtEvent> *AcquireEvents(const size_t event_num) const;

  /* Extension (not in GE), as StreamAllocator::GetStatus: SA_OK, SA_NO_RUNTIME, SA_RUNTIME_LIMIT. */
  sa_status GetStatus() const;
  /* The reason for GetStatus(), "" when SA_OK; owned by the library, as StreamAllocator's. */
  const char *GetStatusMessage() const;

 private:
  TypedContinuousVector<aclrtEvent> *Events() const;

 private:
  std::unique_ptr<uint8_t[]> events_holder_;
  uint32_t default_flag_;
};
static_assert(sizeof(EventAllocator) == 16, "gert::EventAllocator is 16 bytes in GE");
}  // namespace gert

#endif
