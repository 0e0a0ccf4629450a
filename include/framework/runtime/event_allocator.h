/* Source drop-in for GE's inc/framework/runtime/event_allocator.h, served by stream-alloc.
 * Same class, signatures, default flag and size (16 bytes). */
#ifndef SA_GE_COMPAT_FRAMEWORK_RUNTIME_EVENT_ALLOCATOR_H
#define SA_GE_COMPAT_FRAMEWORK_RUNTIME_EVENT_ALLOCATOR_H

#include "framework/runtime/stream_allocator.h"

namespace gert {
class EventAllocator {
 public:
  static constexpr size_t kMaxEventNum = 4096U;
  explicit EventAllocator(uint32_t flag = ACL_EVENT_SYNC) : events_holder_(nullptr), default_flag_(flag) {
    (void)sa_event_allocator_new(flag, &events_holder_);
  }
  EventAllocator(const EventAllocator &) = delete;
  EventAllocator &operator=(const EventAllocator &) = delete;
  ~EventAllocator() { sa_event_allocator_free(events_holder_); }

  TypedContinuousVector<aclrtEvent> *AcquireEvents(const size_t event_num) const {
    return static_cast<TypedContinuousVector<aclrtEvent> *>(sa_event_allocator_acquire(events_holder_, event_num));
  }

 private:
  sa_event_allocator *events_holder_;
  uint32_t default_flag_;
};
static_assert(sizeof(EventAllocator) == 16, "gert::EventAllocator is 16 bytes in GE");
}  // namespace gert

#endif
