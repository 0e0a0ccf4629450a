/* GE's inc/framework/runtime/stream_allocator.h, served by stream-alloc: GE's declaration (same
 * namespace, class, members, object layout and size, 16 bytes), with the bodies in the library,
 * exported under GE's own symbols. Code compiled against this header and code compiled against
 * GE's own header call the same functions of libstream_alloc.so (docs/drop-in.md). Put this
 * include directory (<prefix>/include/stream_alloc/ge_compat, which the StreamAlloc CMake targets
 * and stream_alloc.pc add) before GE's and drop base/common/allocator/stream_allocator.cc from
 * the build, or keep GE's build and put the library in front of libge_common_base.so.
 *
 * Errors: AcquireStreams returns nullptr on failure, as GE's does; the reason is the calling
 * thread's last error (sa_last_error_message() / sa_last_error_code(), stream_alloc.h).
 * GetStatus() / GetStatusMessage() (extensions, not in GE; non-virtual and out of line, so the
 * object is GE's) say whether the allocator can serve at all: its constructor got its vector and
 * a device runtime resolves (registered with sa_runtime_register, or found in the process). */
#ifndef SA_GE_COMPAT_FRAMEWORK_RUNTIME_STREAM_ALLOCATOR_H
#define SA_GE_COMPAT_FRAMEWORK_RUNTIME_STREAM_ALLOCATOR_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
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
/* GE's VISIBILITY_EXPORT (common/ge_visibility.h): the members are defined in the library, so a
 * caller compiled with -fvisibility=hidden must still see them as default-visibility symbols. */
#ifndef SA_GE_VISIBILITY_EXPORT
#define SA_GE_VISIBILITY_EXPORT __attribute__((visibility("default")))
#endif

#if __has_include("exe_graph/runtime/continuous_vector.h") && !defined(SA_OWN_CONTINUOUS_VECTOR)
#include "exe_graph/runtime/continuous_vector.h"
#else
/* Layout-identical to metadef's gert::ContinuousVector (capacity 0, size 8, reserved 16..55,
 * elements 56), with the members GE's runtime code uses. */
namespace gert {
class ContinuousVector {
 public:
  /* metadef's factory, used by the inline constructors of EventAllocator and NotifyAllocator:
   * one new[] block of capacity * sizeof(T) + 64 bytes (room for capacity + 1 elements), nullptr
   * on overflow or out of memory. Init zeroes with memset, not CANN's memset_s. */
  template <typename T>
  static std::unique_ptr<uint8_t[]> Create(size_t capacity) {
    if (capacity > (static_cast<size_t>(-1) - sizeof(ContinuousVector)) / sizeof(T)) {
      return nullptr;
    }
    std::unique_ptr<uint8_t[]> holder(new (std::nothrow) uint8_t[capacity * sizeof(T) + sizeof(ContinuousVector)]);
    if (holder != nullptr) {
      reinterpret_cast<ContinuousVector *>(holder.get())->Init(capacity);
    }
    return holder;
  }
  void Init(const size_t capacity) {
    capacity_ = capacity;
    size_ = 0U;
    std::memset(reserved_, 0, sizeof(reserved_));
  }
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
class SA_GE_VISIBILITY_EXPORT StreamAllocator {
 public:
  static constexpr size_t kMaxStreamNum = 2024U;
  /* Allocates the vector (slot 0 = nullptr, size 1); no device call: the runtime is resolved on
   * the first AcquireStreams that grows the vector. A constructor cannot return a status, so a
   * failure (out of host memory) leaves an allocator whose GetStatus() is SA_RUNTIME_LIMIT and
   * whose AcquireStreams returns nullptr. */
  explicit StreamAllocator(int32_t priority = RT_STREAM_PRIORITY_DEFAULT, uint32_t flags = RT_STREAM_DEFAULT);
  StreamAllocator(const StreamAllocator &) = delete;
  StreamAllocator &operator=(const StreamAllocator &) = delete;

  /* Destroys the streams this allocator created (slots 1..size-1; slot 0 is the caller's) and
   * frees the vector: pointers AcquireStreams returned dangle afterwards. */
  ~StreamAllocator();

  /* Grows the vector to at least stream_num streams (never shrinks it) and returns it.
   * Ownership: the vector belongs to this allocator; it stays valid, at the same address, until
   * the allocator is destroyed; never free or delete it. Slot 0 is the caller's main stream
   * (the caller writes it and keeps owning it); slots 1.. are streams this allocator created
   * and destroys. nullptr on failure: stream_num >= kMaxStreamNum, no device runtime, or a
   * device error (streams already created are kept); the reason is in sa_last_error_message()
   * and sa_last_error_code() on the calling thread. Thread-safe (GE's is not). */
  TypedContinuousVector<rtStream_t> *AcquireStreams(const size_t stream_num) const;

  /* Extension (not in GE): whether this allocator can serve. SA_OK when the constructor
   * succeeded and a device runtime resolves; SA_NO_RUNTIME when none does (register one with
   * sa_runtime_register, or load the Ascend runtime, and ask again); SA_RUNTIME_LIMIT when the
   * constructor failed. Makes no device call. Thread-safe. */
  sa_status GetStatus() const;
  /* The reason for GetStatus(), "" when it is SA_OK. Never nullptr. Ownership: the string
   * belongs to the library (static, or the calling thread's last error, valid until the next
   * failing stream-alloc call on this thread): copy it to keep it, never free it. */
  const char *GetStatusMessage() const;

 private:
  TypedContinuousVector<rtStream_t> *Streams() const;

 private:
  std::unique_ptr<uint8_t[]> streams_holder_;
  int32_t default_priority_;
  uint32_t default_flags_;
};
static_assert(sizeof(StreamAllocator) == 16, "gert::StreamAllocator is 16 bytes in GE");
}  // namespace gert

#endif
