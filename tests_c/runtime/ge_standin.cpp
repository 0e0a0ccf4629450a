// A stand-in for GE's allocator library (libge_common_base.so / libdavinci_executor.so in a
// deployment): the same symbols as GE's, from GE's declarations (ge_decls/), with trivial bodies
// that never call the device. ge_interpose_test links against it; run with LD_PRELOAD of
// libstream_alloc.so, the project's definitions must win (docs/drop-in.md).
#include "framework/runtime/event_allocator.h"
#include "framework/runtime/notify_allocator.h"
#include "framework/runtime/stream_allocator.h"
#include "graph/load/model_manager/reusable_stream_allocator.h"

namespace gert {
StreamAllocator::StreamAllocator(int32_t priority, uint32_t flags)
    : streams_holder_(ContinuousVector::Create<rtStream_t>(kMaxStreamNum)), default_priority_(priority),
      default_flags_(flags) {}
StreamAllocator::~StreamAllocator() = default;
TypedContinuousVector<rtStream_t> *StreamAllocator::AcquireStreams(const size_t) const { return nullptr; }
TypedContinuousVector<rtStream_t> *StreamAllocator::Streams() const {
  return reinterpret_cast<TypedContinuousVector<rtStream_t> *>(streams_holder_.get());
}
EventAllocator::~EventAllocator() = default;
TypedContinuousVector<aclrtEvent> *EventAllocator::AcquireEvents(const size_t) const { return nullptr; }
TypedContinuousVector<aclrtEvent> *EventAllocator::Events() const { return nullptr; }
NotifyAllocator::~NotifyAllocator() noexcept = default;
TypedContinuousVector<aclrtNotify> *NotifyAllocator::AcquireNotifies(const int32_t, const size_t) const {
  return nullptr;
}
TypedContinuousVector<aclrtNotify> *NotifyAllocator::Notifies() const { return nullptr; }
}  // namespace gert

namespace ge {
ReusableStreamAllocator *ReusableStreamAllocator::Create() { return nullptr; }
Status ReusableStreamAllocator::GetOrCreateRtStream(aclrtStream &, const uint32_t, const int32_t, const uint32_t,
                                                    const uint32_t) {
  return 1U;
}
Status ReusableStreamAllocator::DestroyStream(aclrtStream &, const bool) { return 1U; }
}  // namespace ge
