/* TEST-ONLY: GE's inc/framework/runtime/notify_allocator.h declaration, from
 * ge-runtime-api.md §1.4 (the constructor is inline). */
#ifndef GE_DECLS_FRAMEWORK_RUNTIME_NOTIFY_ALLOCATOR_H
#define GE_DECLS_FRAMEWORK_RUNTIME_NOTIFY_ALLOCATOR_H
#include <cstddef>
#include <memory>
#include "framework/runtime/ge_decls_common.h"
#include "exe_graph/runtime/continuous_vector.h"
namespace gert {
class VISIBILITY_EXPORT NotifyAllocator {
 public:
  static constexpr size_t kMaxNotifyNum = 1024U;
  explicit NotifyAllocator() : notifies_holder_(ContinuousVector::Create<aclrtNotify>(kMaxNotifyNum)) {}
  NotifyAllocator(const NotifyAllocator &) = delete;
  NotifyAllocator &operator=(const NotifyAllocator &) = delete;
  ~NotifyAllocator() noexcept;

  TypedContinuousVector<aclrtNotify> *AcquireNotifies(const int32_t device_id, const size_t notify_num) const;

 private:
  TypedContinuousVector<aclrtNotify> *Notifies() const;

 private:
  std::unique_ptr<uint8_t[]> notifies_holder_;
};
}  // namespace gert
#endif
