/* Source drop-in for GE's inc/framework/runtime/notify_allocator.h, served by stream-alloc.
 * Same class, signatures and size (8 bytes). */
#ifndef SA_GE_COMPAT_FRAMEWORK_RUNTIME_NOTIFY_ALLOCATOR_H
#define SA_GE_COMPAT_FRAMEWORK_RUNTIME_NOTIFY_ALLOCATOR_H

#include "framework/runtime/stream_allocator.h"

namespace gert {
class NotifyAllocator {
 public:
  static constexpr size_t kMaxNotifyNum = 1024U;
  explicit NotifyAllocator() : notifies_holder_(nullptr) { (void)sa_notify_allocator_new(&notifies_holder_); }
  NotifyAllocator(const NotifyAllocator &) = delete;
  NotifyAllocator &operator=(const NotifyAllocator &) = delete;
  ~NotifyAllocator() noexcept { sa_notify_allocator_free(notifies_holder_); }

  TypedContinuousVector<aclrtNotify> *AcquireNotifies(const int32_t device_id, const size_t notify_num) const {
    return static_cast<TypedContinuousVector<aclrtNotify> *>(
        sa_notify_allocator_acquire(notifies_holder_, device_id, notify_num));
  }

 private:
  sa_notify_allocator *notifies_holder_;
};
static_assert(sizeof(NotifyAllocator) == 8, "gert::NotifyAllocator is 8 bytes in GE");
}  // namespace gert

#endif
