/* Source drop-in for GE's inc/framework/runtime/stream_allocator.h, served by stream-alloc.
 * Same namespace, class name, public signatures, default arguments and object size (16 bytes);
 * the bodies call the C ABI of stream_alloc.h. Put this include directory
 * (<prefix>/include/stream_alloc/ge_compat, which the StreamAlloc CMake targets and
 * stream_alloc.pc add) before GE's and drop base/common/allocator/stream_allocator.cc from the
 * build.
 *
 * Errors: GE's AcquireStreams returns nullptr on failure and so does this one; the reason is the
 * calling thread's last error (sa_last_error_message() / sa_last_error_code(), stream_alloc.h).
 * GetStatus() / GetStatusMessage() (extensions, not in GE; non-virtual, so the object size is
 * GE's) say whether the allocator can serve at all: its constructor succeeded and a device
 * runtime resolves (registered with sa_runtime_register, or found in the process). */
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
namespace sa_compat {
/* Shared by the gert allocators' GetStatus / GetStatusMessage: SA_OK when the C handle exists
 * and a device runtime resolves (sa_runtime_resolve; no device call), SA_RUNTIME_LIMIT when the
 * constructor could not create the handle (out of host memory), else the resolver's status. */
inline sa_status HandleStatus(const void *handle) {
  if (handle == nullptr) {
    return SA_RUNTIME_LIMIT;
  }
  sa_runtime_source source = 0;
  return sa_runtime_resolve(&source);
}
/* The message that goes with HandleStatus(handle): "" for SA_OK; a static string when the
 * constructor failed; otherwise the library's message, which is owned by the library and valid
 * on the calling thread until its next failing stream-alloc call (copy it to keep it). */
inline const char *HandleMessage(const void *handle) {
  if (handle == nullptr) {
    return "the allocator's constructor could not allocate its handle vector (out of host memory); "
           "it serves nothing";
  }
  return HandleStatus(handle) == SA_OK ? "" : sa_last_error_message();
}
}  // namespace sa_compat

class StreamAllocator {
 public:
  static constexpr size_t kMaxStreamNum = 2024U;
  /* No device call: the runtime is resolved on the first AcquireStreams that grows the vector.
   * A constructor cannot return a status, so a failure (out of host memory) leaves an allocator
   * whose GetStatus() is SA_RUNTIME_LIMIT and whose AcquireStreams returns nullptr. */
  explicit StreamAllocator(int32_t priority = RT_STREAM_PRIORITY_DEFAULT, uint32_t flags = RT_STREAM_DEFAULT)
      : impl_(nullptr), default_priority_(priority), default_flags_(flags) {
    (void)sa_stream_allocator_new(priority, flags, &impl_);
  }
  StreamAllocator(const StreamAllocator &) = delete;
  StreamAllocator &operator=(const StreamAllocator &) = delete;

  /* Destroys the streams this allocator created (slots 1..size-1; slot 0 is the caller's) and
   * frees the vector: pointers AcquireStreams returned dangle afterwards. */
  ~StreamAllocator() { sa_stream_allocator_free(impl_); }

  /* Grows the vector to at least stream_num streams (never shrinks it) and returns it.
   * Ownership: the vector belongs to this allocator; it stays valid, at the same address, until
   * the allocator is destroyed; never free or delete it. Slot 0 is the caller's main stream
   * (the caller writes it and keeps owning it); slots 1.. are streams this allocator created
   * and destroys. nullptr on failure: stream_num >= kMaxStreamNum, no device runtime, or a
   * device error (streams already created are kept); the reason is in sa_last_error_message()
   * and sa_last_error_code() on the calling thread. Thread-safe. */
  TypedContinuousVector<rtStream_t> *AcquireStreams(const size_t stream_num) const {
    return static_cast<TypedContinuousVector<rtStream_t> *>(sa_stream_allocator_acquire(impl_, stream_num));
  }

  /* Extension (not in GE): whether this allocator can serve. SA_OK when the constructor
   * succeeded and a device runtime resolves; SA_NO_RUNTIME when none does (register one with
   * sa_runtime_register, or load the Ascend runtime, and ask again); SA_RUNTIME_LIMIT when the
   * constructor failed. Makes no device call. Thread-safe. */
  sa_status GetStatus() const { return sa_compat::HandleStatus(impl_); }
  /* The reason for GetStatus(), "" when it is SA_OK. Never nullptr. Ownership: the string
   * belongs to the library (static, or the calling thread's last error, valid until the next
   * failing stream-alloc call on this thread): copy it to keep it, never free it. */
  const char *GetStatusMessage() const { return sa_compat::HandleMessage(impl_); }

 private:
  sa_stream_allocator *impl_;
  int32_t default_priority_;
  uint32_t default_flags_;
};
static_assert(sizeof(StreamAllocator) == 16, "gert::StreamAllocator is 16 bytes in GE");
}  // namespace gert

#endif
