/* TEST-ONLY: GE's inc/framework/runtime/stream_allocator.h declaration, from
 * ge-runtime-api.md §1.1. */
#ifndef GE_DECLS_FRAMEWORK_RUNTIME_STREAM_ALLOCATOR_H
#define GE_DECLS_FRAMEWORK_RUNTIME_STREAM_ALLOCATOR_H
#include <cstddef>
#include <memory>
#include "framework/runtime/ge_decls_common.h"
#include "exe_graph/runtime/continuous_vector.h"
namespace gert {
class VISIBILITY_EXPORT StreamAllocator {
 public:
  static constexpr size_t kMaxStreamNum = 2024U;
  explicit StreamAllocator(int32_t priority = RT_STREAM_PRIORITY_DEFAULT, uint32_t flags = RT_STREAM_DEFAULT);
  StreamAllocator(const StreamAllocator &) = delete;
  StreamAllocator &operator=(const StreamAllocator &) = delete;

  ~StreamAllocator();

  TypedContinuousVector<rtStream_t> *AcquireStreams(const size_t stream_num) const;

 private:
  TypedContinuousVector<rtStream_t> *Streams() const;

 private:
  std::unique_ptr<uint8_t[]> streams_holder_;
  int32_t default_priority_;
  uint32_t default_flags_;
};
}  // namespace gert
#endif
