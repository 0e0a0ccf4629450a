/* GE's inc/framework/runtime/notify_allocator.h, served by stream-alloc: GE's declaration (8
 * bytes; the constructor is inline, as in GE), with the other members in the library under GE's
 * symbols. Errors and the GetStatus / GetStatusMessage extensions as in
 * framework/runtime/stream_allocator.h. */
#ifndef SA_GE_COMPAT_FRAMEWORK_RUNTIME_NOTIFY_ALLOCATOR_H
#define SA_GE_COMPAT_FRAMEWORK_RUNTIME_NOTIFY_ALLOCATOR_H

#include "framework/runtime/stream_allocator.h"

namespace gert {
class SA_GE_VISIBILITY_EXPORT NotifyAllocator {
 public:
  static constexpr size_t kMaxNotifyNum = 1024U;
  /* No device call; a failure (out of host memory) shows in GetStatus() as SA_RUNTIME_LIMIT. */
  explicit NotifyAllocator() : notifies_holder_(ContinuousVector::Create<aclrtNotify>(kMaxNotifyNum)) {}
  NotifyAllocator(const NotifyAllocator &) = delete;
  NotifyAllocator &operator=(const NotifyAllocator &) = delete;
  /* Destroys every notify this allocator created and frees the vector AcquireNotifies returned. */
  ~NotifyAllocator() noexcept;

  /* Grows the vector to at least notify_num notifies and returns it. Ownership: the vector and
   * every notify in it belong to this allocator, valid at the same address until it is
   * destroyed; never free the vector or destroy its notifies. nullptr on failure (notify_num >=
   * kMaxNotifyNum, no device runtime, a device error); the reason is in sa_last_error_message()
   * / sa_last_error_code() on the calling thread. device_id is passed to the runtime seam's
   * notify_create (GE ignores it). Thread-safe. */
  TypedContinuousVector<aclrtNotify> *AcquireNotifies(const int32_t device_id, const size_t notify_num) const;

  /* Extension (not in GE), as StreamAllocator::GetStatus: SA_OK, SA_NO_RUNTIME, SA_RUNTIME_LIMIT. */
  sa_status GetStatus() const;
  /* The reason for GetStatus(), "" when SA_OK; owned by the library, as StreamAllocator's. */
  const char *GetStatusMessage() const;

 private:
  TypedContinuousVector<aclrtNotify> *Notifies() const;

 private:
  std::unique_ptr<uint8_t[]> notifies_holder_;
};
static_assert(sizeof(NotifyAllocator) == 8, "gert::NotifyAllocator is 8 bytes in GE");
}  // namespace gert

#endif
