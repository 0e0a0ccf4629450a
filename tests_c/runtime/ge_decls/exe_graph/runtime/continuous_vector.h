/* TEST-ONLY: GE's (metadef's) declaration of gert::ContinuousVector, written from
 * ge-runtime-api.md §1.2, for the tests that build code exactly as GE's own code is built,
 * against GE's headers rather than the project's shims. Init zeroes through CANN's memset_s
 * (libc_sec), as metadef does: the test program supplies it, the library never imports it. */
#ifndef GE_DECLS_EXE_GRAPH_RUNTIME_CONTINUOUS_VECTOR_H
#define GE_DECLS_EXE_GRAPH_RUNTIME_CONTINUOUS_VECTOR_H
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>

extern "C" int memset_s(void *dest, size_t dest_max, int c, size_t count);

namespace gert {
class ContinuousVector {
 public:
  template <typename T>
  static std::unique_ptr<uint8_t[]> Create(size_t capacity) {
    if (capacity > (SIZE_MAX - sizeof(ContinuousVector)) / sizeof(T)) {
      return nullptr;
    }
    auto holder = std::unique_ptr<uint8_t[]>(new (std::nothrow) uint8_t[capacity * sizeof(T) + sizeof(ContinuousVector)]);
    if (holder == nullptr) {
      return nullptr;
    }
    reinterpret_cast<ContinuousVector *>(holder.get())->Init(capacity);
    return holder;
  }
  void Init(const size_t capacity) {
    capacity_ = capacity;
    size_ = 0U;
    (void)memset_s(reserved_, sizeof(reserved_), 0, sizeof(reserved_));
  }
  size_t GetSize() const { return size_; }
  uint32_t SetSize(const size_t size) {
    if (size > capacity_) {
      return 50331644U;  // ge::GRAPH_PARAM_OUT_OF_RANGE
    }
    size_ = size;
    return 0U;
  }
  size_t GetCapacity() const { return capacity_; }
  const void *GetData() const { return elements; }
  void *MutableData() { return elements; }

 private:
  size_t capacity_;
  size_t size_;
  uint8_t reserved_[40];
  uint8_t elements[8];
};
static_assert(std::is_standard_layout<ContinuousVector>::value, "standard layout");

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
