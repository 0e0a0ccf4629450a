/* TEST-ONLY: GE's inc/framework/runtime/event_allocator.h declaration, from
 * ge-runtime-api.md §1.4 (the constructor is inline). */
#ifndef GE_DECLS_FRAMEWORK_RUNTIME_EVENT_ALLOCATOR_H
#define GE_DECLS_FRAMEWORK_RUNTIME_EVENT_ALLOCATOR_H
#include <cstddef>
#include <memory>
#include "framework/runtime/ge_decls_common.h"
#include "exe_graph/runtime/continuous_vector.h"
namespace gert {
class VISIBILITY_EXPORT EventAllocator {
 public:
  static constexpr size_t kMaxEventNum = 4096U;
  explicit EventAllocator(uint32_t flag = ACL_EVENT_SYNC)
      : events_holder_(ContinuousVector::Create<aclrtEvent>(kMaxEventNum)), default_flag_(flag) {}
  EventAllocator(const EventAllocator &) = delete;
  EventAllocator &operator=(const EventAllocator &) = delete;
  ~EventAllocator();

  TypedContinuousVector<aclrtEvent> *AcquireEvents(const size_t event_num) const;

 private:
  TypedContinuousVector<aclrtEvent> *Events() const;

 private:
  std::unique_ptr<uint8_t[]> events_holder_;
  uint32_t default_flag_;
};
}  // namespace gert
#endif
