/* Source drop-in for GE's inc/framework/runtime/stream_allocator.h, served by stream-alloc.
 * Same namespace, class name, public signatures, default arguments and object size (16 bytes);
 * the bodies call the C ABI of stream_alloc.h. Put this include directory before GE's and
 * drop base/common/allocator/stream_allocator.cc from the build. */
#ifndef SA_GE_COMPAT_FRAMEWORK_RUNTIME_STREAM_ALLOCATOR_H
#define SA_GE_COMPAT_FRAMEWORK_RUNTIME_STREAM_ALLOCATOR_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "stream_alloc.h"

/* Runtime types and constants (rt_external_stream.h, acl_base_rt.h); redeclaring the same
 * typedefs is legal C++, the macros are guarded. */
typedef void *rtStream_t;
typedef void *rtEvent_t;
typedef void *rtNotify_t;
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtNotify;
#ifndef RT_STREAM_PRIORITY_DEFAULT
#define RT_STREAM_PRIORITY_DEFAULT (0U)
#endif
#ifndef RT_STREAM_DEFAULT
#define RT_STREAM_DEFAULT (0x00U)
#endif
#ifndef RT_STREAM_PERSISTENT
#define RT_STREAM_PERSISTENT (0x01U)
#endif
#ifndef ACL_EVENT_SYNC
#define ACL_EVENT_SYNC 0x00000001U
#endif

#if __has_include("exe_graph/runtime/continuous_vector.h") && !defined(SA_OWN_CONTINUOUS_VECTOR)
#include "exe_graph/runtime/continuous_vector.h"
#else
/* Layout-identical to metadef's gert::ContinuousVector (capacity 0, size 8, reserved 16..55,
 * elements 56), with the members GE's runtime code uses. */
namespace gert {
class ContinuousVector {
 public:
  size_t GetCapacity() const { return capacity_; }
  size_t GetSize() const { return size_; }
  uint32_t SetSize(const size_t size) {
    if (size > capacity_) {
      return 50331644U; /* ge::GRAPH_PARAM_OUT_OF_RANGE */
    }
    size_ = size;
    return 0U;
  }
  const void *GetData() const { return elements; }
  void *MutableData() { return elements; }

 private:
  size_t capacity_;
  size_t size_;
  uint8_t reserved_[40];
  uint8_t elements[8];
};
static_assert(std::is_standard_layout<ContinuousVector>::value, "ContinuousVector must be standard layout");
static_assert(sizeof(ContinuousVector) == 64, "ContinuousVector is 64 bytes");

template <typename T>
class TypedContinuousVector : private ContinuousVector {
 public:
  using ContinuousVector::GetCapacity;
  using ContinuousVector::GetSize;
  using ContinuousVector::SetSize;
  T *MutableData() { return reinterpret_cast<T *>(ContinuousVector::MutableData()); }
  const T *GetData() const { return reinterpret_cast<const T *>(ContinuousVector::GetData()); }
};
}  // namespace gert
#endif

namespace gert {
class StreamAllocator {
 public:
  static constexpr size_t kMaxStreamNum = 2024U;
  explicit StreamAllocator(int32_t priority = RT_STREAM_PRIORITY_DEFAULT, uint32_t flags = RT_STREAM_DEFAULT)
      : impl_(nullptr), default_priority_(priority), default_flags_(flags) {
    (void)sa_stream_allocator_new(priority, flags, &impl_);
  }
  StreamAllocator(const StreamAllocator &) = delete;
  StreamAllocator &operator=(const StreamAllocator &) = delete;

  ~StreamAllocator() { sa_stream_allocator_free(impl_); }

  TypedContinuousVector<rtStream_t> *AcquireStreams(const size_t stream_num) const {
    return static_cast<TypedContinuousVector<rtStream_t> *>(sa_stream_allocator_acquire(impl_, stream_num));
  }

 private:
  sa_stream_allocator *impl_;
  int32_t default_priority_;
  uint32_t default_flags_;
};
static_assert(sizeof(StreamAllocator) == 16, "gert::StreamAllocator is 16 bytes in GE");
}  // namespace gert

#endif
