// The library's C++ translation unit: only what needs C++ semantics for GE's classes, called
// from the Rust entry points that carry GE's symbols (src/capi/runtime_ge.rs); the logic stays in
// Rust. Everything here has hidden visibility and C linkage: nothing of it is exported, and the
// library's export list (sa_* and GE's allocator symbols) is unchanged by it.
//   - new[] / delete[] of the vectors' holders: GE's inline constructors allocate them with
//     new (std::nothrow) uint8_t[], so the destructors must free them with delete[];
//   - a real ge::ReusableStreamAllocator for Create(): its implicit destructor runs inline at
//     every delete site, against GE's libstdc++ members.
// Built by build.rs with the cc crate, against the shims (include/stream_alloc/ge_compat), which
// are GE's declarations; with the `glibcxx-old-abi` feature it is compiled with
// -D_GLIBCXX_USE_CXX11_ABI=0, as parts of CANN are.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>

#include "graph/load/model_manager/reusable_stream_allocator.h"

#define SA_HIDDEN __attribute__((visibility("hidden")))

// The object Create() returns. Its maps stay empty except for one entry of stream_ref_, under the
// key nullptr (never a stream: DestroyStream refuses it): a status pointer that points to nothing,
// whose deleter tells the library that the caller deleted the object. That deleter runs from the
// caller's inline destructor through shared_ptr's virtual dispose, which lives here.
struct stream_alloc_ge_access {
  using OnDelete = void (*)(void *object);

  struct Releaser {
    OnDelete on_delete;
    void *object;
    void operator()(ge::RtStreamStatus *status) const noexcept {
      delete status;  // always nullptr; deleting it keeps the deleter a deleter
      on_delete(object);
    }
  };

  static ge::ReusableStreamAllocator *New(OnDelete on_delete) noexcept {
    ge::ReusableStreamAllocator *object = new (std::nothrow) ge::ReusableStreamAllocator();
    if (object == nullptr) {
      return nullptr;
    }
    try {
      // If the control block cannot be allocated, shared_ptr calls the deleter at once; the
      // library ignores a release of an object it has not registered yet.
      object->stream_ref_.emplace(nullptr, ge::RtStreamStatusPtr(nullptr, Releaser{on_delete, object}));
    } catch (const std::exception &) {
      delete object;
      return nullptr;
    }
    return object;
  }
};

static_assert(sizeof(void *) == 8, "GE's layouts are LP64");

extern "C" {

// A holder block of `bytes` bytes, as metadef's ContinuousVector::Create allocates it; nullptr
// when out of memory.
SA_HIDDEN uint8_t *stream_alloc_cxx_holder_new(size_t bytes) { return new (std::nothrow) uint8_t[bytes]; }

// Frees a holder allocated by stream_alloc_cxx_holder_new or by GE's inline constructors.
SA_HIDDEN void stream_alloc_cxx_holder_delete(uint8_t *holder) { delete[] holder; }

// A new ge::ReusableStreamAllocator whose deletion calls on_delete(object); nullptr when out of
// memory.
SA_HIDDEN void *stream_alloc_cxx_reusable_new(void (*on_delete)(void *)) {
  return stream_alloc_ge_access::New(on_delete);
}

// Deletes an object from stream_alloc_cxx_reusable_new as GE's delete sites do (the library's
// tests drive the release path with it).
SA_HIDDEN void stream_alloc_cxx_reusable_delete(void *object) {
  delete static_cast<ge::ReusableStreamAllocator *>(object);
}

// sizeof(ge::ReusableStreamAllocator) as this unit sees it, for the library's layout checks.
SA_HIDDEN size_t stream_alloc_cxx_reusable_size(void) { return sizeof(ge::ReusableStreamAllocator); }

// The value of _GLIBCXX_USE_CXX11_ABI this unit was compiled with (1 when the macro is absent).
SA_HIDDEN int stream_alloc_cxx_glibcxx_cxx11_abi(void) {
#if defined(_GLIBCXX_USE_CXX11_ABI)
  return _GLIBCXX_USE_CXX11_ABI;
#else
  return 1;
#endif
}

}  // extern "C"
