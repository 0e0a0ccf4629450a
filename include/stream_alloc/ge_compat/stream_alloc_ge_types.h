/* The few GE value types the C++ shims' signatures need, defined once for every shim:
 * ge::AscendString and ge::GNode (graph/ascend_string.h, graph/gnode.h), ge::Shape
 * (graph/tensor.h), ge::DataType (graph/types.h, GE's enumerator values), ge::MemoryType
 * (ge/ge_api_types.h), ge::FeatureMemory (ge/ge_feature_memory.h) and ge::ExternalWeightDesc
 * (ge/ge_external_weight_desc.h).
 *
 * Each keeps GE's name, namespace and public method signatures, reduced to what a reader of a
 * compiled graph summary calls; none is ABI-compatible with GE's own class (no pimpl), so use
 * these or GE's headers in one program, not both. The file name is the project's own, so it
 * never shadows a GE header. */
#ifndef STREAM_ALLOC_GE_COMPAT_GE_TYPES_H
#define STREAM_ALLOC_GE_COMPAT_GE_TYPES_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "stream_alloc_ge_status.h"

namespace ge {

/// GE's AscendString: a shared string, copied by value.
class AscendString {
 public:
  AscendString() = default;
  AscendString(const char *name) : name_(std::make_shared<std::string>(name == nullptr ? "" : name)) {}  // NOLINT
  const char *GetString() const { return name_ == nullptr ? "" : name_->c_str(); }
  size_t GetLength() const { return name_ == nullptr ? 0U : name_->size(); }
  bool operator<(const AscendString &d) const { return std::string(GetString()) < std::string(d.GetString()); }
  bool operator==(const AscendString &d) const { return std::string(GetString()) == std::string(d.GetString()); }
  bool operator!=(const AscendString &d) const { return !(*this == d); }

 private:
  std::shared_ptr<std::string> name_;
};

/// GE's GNode, reduced to a node's name and type (GetName / GetType with GE's signatures).
class GNode {
 public:
  GNode() = default;
  GNode(const char *name, const char *type, size_t index) : name_(name), type_(type), index_(index) {}
  uint32_t GetName(AscendString &name) const {
    name = name_;
    return 0U;
  }
  uint32_t GetType(AscendString &type) const {
    type = type_;
    return 0U;
  }
  /// Position in GE's GetAllNodes order, the node index sa_session_node_* take.
  size_t GetIndex() const { return index_; }

 private:
  AscendString name_;
  AscendString type_;
  size_t index_ = 0U;
};

/// GE's Shape: the dimensions of a tensor (-1 for an unknown dimension).
class Shape {
 public:
  Shape() = default;
  explicit Shape(const std::vector<int64_t> &dims) : dims_(dims) {}
  size_t GetDimNum() const { return dims_.size(); }
  int64_t GetDim(size_t idx) const { return idx < dims_.size() ? dims_[idx] : 0; }
  std::vector<int64_t> GetDims() const { return dims_; }

 private:
  std::vector<int64_t> dims_;
};

/// GE's DataType, with GE's enumerator values.
enum DataType {
  DT_FLOAT = 0,
  DT_FLOAT16 = 1,
  DT_INT8 = 2,
  DT_INT32 = 3,
  DT_UINT8 = 4,
  DT_INT16 = 6,
  DT_UINT16 = 7,
  DT_UINT32 = 8,
  DT_INT64 = 9,
  DT_UINT64 = 10,
  DT_DOUBLE = 11,
  DT_BOOL = 12,
  DT_STRING = 13,
  DT_BF16 = 27,
  DT_UNDEFINED = 28,
};

/// GE's MemoryType: which device memory a feature memory block lives in.
enum MemoryType {
  MEMORY_TYPE_DEFAULT,
  MEMORY_TYPE_P2P,
};

/// GE's FeatureMemory: one block of feature memory of a compiled graph, its type, size and
/// whether its address is fixed. Made by its Builder only, as in GE.
class FeatureMemory {
 public:
  class Builder;
  class FeatureMemoryData;

  ~FeatureMemory() = default;
  FeatureMemory &operator=(const FeatureMemory &) & = delete;
  FeatureMemory(const FeatureMemory &) = delete;

  MemoryType GetType() const;
  size_t GetSize() const;
  bool IsFixed() const;

 private:
  FeatureMemory() = default;
  std::shared_ptr<FeatureMemoryData> data_{nullptr};
};
using FeatureMemoryPtr = std::shared_ptr<FeatureMemory>;

class FeatureMemory::FeatureMemoryData {
 public:
  MemoryType type = MEMORY_TYPE_DEFAULT;
  size_t size = 0U;
  bool is_fixed = false;
};

class FeatureMemory::Builder {
 public:
  static FeatureMemoryPtr Build(const MemoryType type, const size_t size, const bool is_fixed) {
    FeatureMemoryPtr memory(new FeatureMemory());
    memory->data_ = std::make_shared<FeatureMemoryData>();
    memory->data_->type = type;
    memory->data_->size = size;
    memory->data_->is_fixed = is_fixed;
    return memory;
  }
};

inline MemoryType FeatureMemory::GetType() const { return data_ == nullptr ? MEMORY_TYPE_DEFAULT : data_->type; }
inline size_t FeatureMemory::GetSize() const { return data_ == nullptr ? 0U : data_->size; }
inline bool FeatureMemory::IsFixed() const { return data_ != nullptr && data_->is_fixed; }

/// GE's ExternalWeightDesc: one weight kept in a file outside the model. stream-alloc never
/// makes one (graph JSON names no weight files); the type exists for the signature of
/// CompiledGraphSummary::GetExternalWeightPaths.
class ExternalWeightDesc {
 public:
  class Builder;
  class ExternalWeightDescData;

  ~ExternalWeightDesc() = default;
  ExternalWeightDesc &operator=(const ExternalWeightDesc &) & = delete;
  ExternalWeightDesc(const ExternalWeightDesc &) = delete;

  AscendString GetLocation() const;
  size_t GetSize() const;
  size_t GetOffset() const;
  AscendString GetId() const;

 private:
  ExternalWeightDesc() = default;
  std::shared_ptr<ExternalWeightDescData> data_{nullptr};
};
using ExternalWeightDescPtr = std::shared_ptr<ExternalWeightDesc>;

class ExternalWeightDesc::ExternalWeightDescData {
 public:
  AscendString location;
  size_t size = 0U;
  size_t offset = 0U;
  AscendString id;
};

inline AscendString ExternalWeightDesc::GetLocation() const {
  return data_ == nullptr ? AscendString("") : data_->location;
}
inline size_t ExternalWeightDesc::GetSize() const { return data_ == nullptr ? 0U : data_->size; }
inline size_t ExternalWeightDesc::GetOffset() const { return data_ == nullptr ? 0U : data_->offset; }
inline AscendString ExternalWeightDesc::GetId() const { return data_ == nullptr ? AscendString("") : data_->id; }

}  // namespace ge

#endif  // STREAM_ALLOC_GE_COMPAT_GE_TYPES_H
