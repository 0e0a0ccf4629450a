/*
 * ge/ge_graph_compile_summary.h - header-only C++ mirror of GE's compiled graph summary
 * (inc/external/ge/ge_graph_compile_summary.h; ge-runtime-api.md section 3), built from a
 * stream-alloc compile session (sa_session, include/stream_alloc.h).
 *
 * The public declarations are GE's: ge::CompiledGraphSummary (private constructor, no copy,
 * CompiledGraphSummaryPtr), ge::StreamAllocationSummary, ge::LogicalStreamAllocationInfo and
 * GE's nine extern "C" GEStreamAllocationSummary* functions, with GE's signatures. So GE code
 * that holds a CompiledGraphSummaryPtr compiles unchanged apart from the line that obtains it:
 *
 *   ge::CompiledGraphSummaryPtr summary = sa::GetCompiledGraphSummary(session);  // GE:
 *   // session->GetCompiledGraphSummary(graph_id)
 *   std::shared_ptr<ge::StreamAllocationSummary> stream_summary;
 *   summary->GetStreamAllocationSummary(stream_summary);
 *   std::map<ge::AscendString, std::vector<ge::AscendString>> graph_to_string_infos;
 *   GEStreamAllocationSummaryGetStringInfos(*summary, graph_to_string_infos);
 *
 * What CompiledGraphSummary answers (a failed call returns ge::FAILED, leaves its outputs
 * empty or zero, and leaves the reason in sa_last_error_message()):
 *   IsStatic                         the root graph is static-shape (the graph's mode)
 *   GetStreamNum                     the model's stream_num
 *   GetEventNum                      its event_num; FAILED for a dynamic-shape graph, as in GE
 *   GetStreamAllocationSummary       the stream allocation summary
 *   GetFeatureMemorySize             the arena bytes of the memory plan (docs/memory.md)
 *   GetRefreshableFeatureMemorySize  the same: feature memory minus fixed memory
 *   GetFixedFeatureMemorySize        0: the plan pins no tensor to a fixed address
 *   GetFeatureMemoryBaseRefreshable  true: every tensor is an offset from one base
 *   GetAllFeatureMemoryTypeSize      one entry: MEMORY_TYPE_DEFAULT, the arena bytes, not fixed
 *     (the five memory methods need a static graph that gives out_bytes; otherwise FAILED, and
 *     GetAllFeatureMemoryTypeSize returns an empty vector)
 *   GetConstMemorySize, GetOutputShapes, GetOutputDtypes, GetIOIndexesWithSameAddr,
 *   GetExternalWeightPaths           FAILED always: graph JSON carries no weights, shapes, data
 *                                    types, shared IO addresses or weight files
 *
 * Not ABI-compatible with libge_compiler.so (no pimpl, everything inline); the GE value types
 * (AscendString, GNode, Shape, DataType, FeatureMemory, ExternalWeightDesc) are the minimal
 * ones of stream_alloc_ge_types.h. A summary copies everything out of the session, so it
 * outlives the session and later stage calls on it.
 *
 * Ownership: values (AscendString, std::vector) are the caller's copies; references returned by
 * GetAllNodes, ToStreamGraph and GetAllLogicalStreamInfos are into the object they are called
 * on and live as long as it does. Needs stream_alloc.h and the other stream_alloc_ge_*.h (the
 * include directories the StreamAlloc CMake targets and stream_alloc.pc add).
 */
#ifndef STREAM_ALLOC_GE_GRAPH_COMPILE_SUMMARY_H
#define STREAM_ALLOC_GE_GRAPH_COMPILE_SUMMARY_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "stream_alloc.h"
#include "stream_alloc_ge_status.h"
#include "stream_alloc_ge_types.h"

namespace ge {
class StreamAllocationSummary;

/// GE's CompiledGraphSummary: what the compile of one graph produced.
class CompiledGraphSummary {
 public:
  class Builder;
  class SummaryData;

  ~CompiledGraphSummary() = default;
  CompiledGraphSummary &operator=(const CompiledGraphSummary &) & = delete;
  CompiledGraphSummary(const CompiledGraphSummary &) = delete;

  bool IsStatic() const;
  Status GetConstMemorySize(size_t &size) const;
  Status GetFeatureMemorySize(size_t &size) const;
  Status GetFixedFeatureMemorySize(size_t &size) const;
  std::vector<FeatureMemoryPtr> GetAllFeatureMemoryTypeSize() const;
  Status GetRefreshableFeatureMemorySize(size_t &size) const;
  Status GetFeatureMemoryBaseRefreshable(bool &v) const;
  Status GetStreamNum(size_t &num) const;
  Status GetEventNum(size_t &num) const;
  Status GetOutputShapes(std::vector<ge::Shape> &shapes) const;
  Status GetOutputDtypes(std::vector<ge::DataType> &dtypes) const;
  Status GetIOIndexesWithSameAddr(std::vector<std::pair<uint32_t, uint32_t>> &io_indexes) const;
  Status GetExternalWeightPaths(std::vector<ExternalWeightDescPtr> &paths) const;
  Status GetStreamAllocationSummary(std::shared_ptr<StreamAllocationSummary> &stream_allocation) const;

 private:
  CompiledGraphSummary() = default;
  /// One number answered by the library (sa_summary_ge_method); 0 and FAILED on failure,
  /// with the reason in sa_last_error_message().
  Status Answer(const char *method, uint64_t &value) const;
  std::shared_ptr<SummaryData> data_{nullptr};
};
using CompiledGraphSummaryPtr = std::shared_ptr<CompiledGraphSummary>;

class LogicalStreamAllocationInfo;

/// Per graph (root and each subgraph, keyed by name) its logical streams in ascending id, and
/// its stream graph in DOT (GE's StreamAllocationSummary).
class StreamAllocationSummary {
 public:
  StreamAllocationSummary() = default;
  ~StreamAllocationSummary() = default;
  /// Graph name -> DOT text; a reference into this summary, valid while it lives.
  const std::map<AscendString, AscendString> &ToStreamGraph() const { return stream_graphs_; }
  /// Graph name -> its logical streams; a reference into this summary, valid while it lives.
  const std::map<AscendString, std::vector<LogicalStreamAllocationInfo>> &GetAllLogicalStreamInfos() const {
    return infos_;
  }
  /// The model's stream_num and event_num (not GE's: GE reads them from CompiledGraphSummary).
  Status GetStreamNum(size_t &num) const {
    num = stream_num_;
    return SUCCESS;
  }
  Status GetEventNum(size_t &num) const {
    num = event_num_;
    return SUCCESS;
  }

 private:
  friend class CompiledGraphSummary::Builder;
  std::map<AscendString, AscendString> stream_graphs_;
  std::map<AscendString, std::vector<LogicalStreamAllocationInfo>> infos_;
  size_t stream_num_ = 0U;
  size_t event_num_ = 0U;
};

/// One logical stream of one graph (GE's LogicalStreamAllocationInfo).
class LogicalStreamAllocationInfo {
 public:
  LogicalStreamAllocationInfo() = default;
  ~LogicalStreamAllocationInfo() = default;
  LogicalStreamAllocationInfo(const LogicalStreamAllocationInfo &stream_info) = default;
  LogicalStreamAllocationInfo &operator=(const LogicalStreamAllocationInfo &stream_info) = default;

  /// GE's text, byte for byte: "logic_stream_id: 0, user_stream_label: , ... hccl_followed_stream_num: 0.\n".
  AscendString ToStringInfo() const { return AscendString(string_info_.c_str()); }
  int64_t GetLogicalStreamId() const { return logical_stream_id_; }
  AscendString GetUsrStreamLabel() const { return AscendString(user_stream_label_.c_str()); }
  bool IsAssignedByStreamPass() const { return assigned_by_stream_pass_; }
  std::vector<int64_t> GetAttachedStreamIds() const { return attached_stream_ids_; }
  size_t GetPhysicalStreamNum() const { return physical_stream_num_; }
  size_t GetHcclFollowedStreamNum() const { return hccl_followed_stream_num_; }
  /// The stream's nodes in GE's GetAllNodes order; a reference into this info, valid while it lives.
  const std::vector<GNode> &GetAllNodes() const { return nodes_; }

 private:
  friend class CompiledGraphSummary::Builder;
  int64_t logical_stream_id_ = 0;
  std::string user_stream_label_;
  bool assigned_by_stream_pass_ = false;
  std::vector<int64_t> attached_stream_ids_;
  size_t physical_stream_num_ = 0U;
  size_t hccl_followed_stream_num_ = 0U;
  std::vector<GNode> nodes_;
  std::string string_info_;
};

/// The library's snapshot (sa_summary) and the stream summary built from it once.
class CompiledGraphSummary::SummaryData {
 public:
  std::shared_ptr<sa_summary> raw;
  std::shared_ptr<StreamAllocationSummary> streams;
};

/// Builds the classes from a session (the project's counterpart of GE's Builder::Build).
class CompiledGraphSummary::Builder {
 public:
  /// Copies a snapshot's graphs into `out`; FAILED (reason in sa_last_error_message()) if a
  /// getter fails.
  static Status FillStreams(const sa_summary *raw, StreamAllocationSummary &out) {
    uint32_t stream_num = 0U;
    uint32_t event_num = 0U;
    size_t graphs = 0U;
    if (sa_summary_counts(raw, &stream_num, &event_num, nullptr) != SA_OK ||
        sa_summary_graph_count(raw, &graphs) != SA_OK) {
      return FAILED;
    }
    out.stream_num_ = stream_num;
    out.event_num_ = event_num;
    for (size_t g = 0U; g < graphs; ++g) {
      const char *name = nullptr;
      const char *dot = nullptr;
      size_t entries = 0U;
      if (sa_summary_graph(raw, g, &name, nullptr, &entries, &dot) != SA_OK) {
        return FAILED;
      }
      std::vector<LogicalStreamAllocationInfo> infos(entries);
      for (size_t i = 0U; i < entries; ++i) {
        LogicalStreamAllocationInfo &info = infos[i];
        const char *label = nullptr;
        int32_t assigned = 0;
        const int64_t *attached = nullptr;
        size_t attached_count = 0U;
        const size_t *nodes = nullptr;
        size_t node_count = 0U;
        const char *text = nullptr;
        if (sa_summary_stream(raw, g, i, &info.logical_stream_id_, &label, &assigned, &attached, &attached_count,
                              &info.physical_stream_num_, &info.hccl_followed_stream_num_) != SA_OK ||
            sa_summary_stream_nodes(raw, g, i, &nodes, &node_count) != SA_OK ||
            sa_summary_string_info(raw, g, i, &text) != SA_OK) {
          return FAILED;
        }
        info.user_stream_label_ = label;
        info.assigned_by_stream_pass_ = assigned != 0;
        info.attached_stream_ids_.assign(attached, attached + attached_count);
        info.string_info_ = text;
        for (size_t k = 0U; k < node_count; ++k) {
          const char *node_name = nullptr;
          const char *node_type = nullptr;
          if (sa_summary_node(raw, nodes[k], &node_name, &node_type) != SA_OK) {
            return FAILED;
          }
          info.nodes_.emplace_back(node_name, node_type, nodes[k]);
        }
      }
      out.infos_[AscendString(name)] = std::move(infos);
      out.stream_graphs_[AscendString(name)] = AscendString(dot);
    }
    return SUCCESS;
  }

  /// The summary of a finished allocation; nullptr (reason in sa_last_error_message()) for a
  /// NULL session or one whose sa_session_generate_send_recv has not run.
  static CompiledGraphSummaryPtr Build(sa_session *session) {
    sa_summary *raw = nullptr;
    if (sa_session_get_compiled_summary(session, &raw) != SA_OK) {
      return nullptr;
    }
    auto data = std::make_shared<SummaryData>();
    data->raw = std::shared_ptr<sa_summary>(raw, sa_summary_free);
    data->streams = std::make_shared<StreamAllocationSummary>();
    if (FillStreams(raw, *data->streams) != SUCCESS) {
      return nullptr;
    }
    CompiledGraphSummaryPtr summary(new CompiledGraphSummary());
    summary->data_ = std::move(data);
    return summary;
  }
};

}  // namespace ge

namespace sa {
namespace detail {
/// Flattens one getter of every graph's logical streams into `out` (graph name -> one value
/// per logical stream, in ascending id), as GE's GEStreamAllocationSummary* functions do.
template <typename T, typename Getter>
inline ge::Status FlattenStreamInfos(const ge::CompiledGraphSummary &compiled_graph_summary,
                                     std::map<ge::AscendString, std::vector<T>> &out, Getter get) {
  std::shared_ptr<ge::StreamAllocationSummary> summary;
  if (compiled_graph_summary.GetStreamAllocationSummary(summary) != ge::SUCCESS || summary == nullptr) {
    return ge::FAILED;
  }
  for (const auto &graph : summary->GetAllLogicalStreamInfos()) {
    std::vector<T> &values = out[graph.first];
    values.clear();
    for (const ge::LogicalStreamAllocationInfo &info : graph.second) {
      values.push_back(get(info));
    }
  }
  return ge::SUCCESS;
}

}  // namespace detail
}  // namespace sa

namespace ge {
inline Status CompiledGraphSummary::Answer(const char *method, uint64_t &value) const {
  value = 0U;
  if (data_ == nullptr) {
    return FAILED;
  }
  return sa_summary_ge_method(data_->raw.get(), method, &value) == SA_OK ? SUCCESS : FAILED;
}

inline bool CompiledGraphSummary::IsStatic() const {
  uint64_t v = 0U;
  return Answer("IsStatic", v) == SUCCESS && v != 0U;
}

inline Status CompiledGraphSummary::GetConstMemorySize(size_t &size) const {
  uint64_t v = 0U;
  const Status status = Answer("GetConstMemorySize", v);
  size = static_cast<size_t>(v);
  return status;
}

inline Status CompiledGraphSummary::GetFeatureMemorySize(size_t &size) const {
  uint64_t v = 0U;
  const Status status = Answer("GetFeatureMemorySize", v);
  size = static_cast<size_t>(v);
  return status;
}

inline Status CompiledGraphSummary::GetFixedFeatureMemorySize(size_t &size) const {
  uint64_t v = 0U;
  const Status status = Answer("GetFixedFeatureMemorySize", v);
  size = static_cast<size_t>(v);
  return status;
}

inline std::vector<FeatureMemoryPtr> CompiledGraphSummary::GetAllFeatureMemoryTypeSize() const {
  uint64_t v = 0U;
  std::vector<FeatureMemoryPtr> all;
  if (Answer("GetAllFeatureMemoryTypeSize", v) == SUCCESS) {
    all.push_back(FeatureMemory::Builder::Build(MEMORY_TYPE_DEFAULT, static_cast<size_t>(v), false));
  }
  return all;
}

inline Status CompiledGraphSummary::GetRefreshableFeatureMemorySize(size_t &size) const {
  uint64_t v = 0U;
  const Status status = Answer("GetRefreshableFeatureMemorySize", v);
  size = static_cast<size_t>(v);
  return status;
}

inline Status CompiledGraphSummary::GetFeatureMemoryBaseRefreshable(bool &v) const {
  uint64_t a = 0U;
  const Status s = Answer("GetFeatureMemoryBaseRefreshable", a);
  v = s == SUCCESS && a != 0U;
  return s;
}

inline Status CompiledGraphSummary::GetStreamNum(size_t &num) const {
  uint64_t v = 0U;
  const Status status = Answer("GetStreamNum", v);
  num = static_cast<size_t>(v);
  return status;
}

inline Status CompiledGraphSummary::GetEventNum(size_t &num) const {
  uint64_t v = 0U;
  const Status status = Answer("GetEventNum", v);
  num = static_cast<size_t>(v);
  return status;
}

inline Status CompiledGraphSummary::GetOutputShapes(std::vector<ge::Shape> &shapes) const {
  uint64_t v = 0U;
  shapes.clear();
  return Answer("GetOutputShapes", v);
}

inline Status CompiledGraphSummary::GetOutputDtypes(std::vector<ge::DataType> &dtypes) const {
  uint64_t v = 0U;
  dtypes.clear();
  return Answer("GetOutputDtypes", v);
}

inline Status CompiledGraphSummary::GetIOIndexesWithSameAddr(
    std::vector<std::pair<uint32_t, uint32_t>> &io_indexes) const {
  uint64_t v = 0U;
  io_indexes.clear();
  return Answer("GetIOIndexesWithSameAddr", v);
}

inline Status CompiledGraphSummary::GetExternalWeightPaths(std::vector<ExternalWeightDescPtr> &paths) const {
  uint64_t v = 0U;
  paths.clear();
  return Answer("GetExternalWeightPaths", v);
}

inline Status CompiledGraphSummary::GetStreamAllocationSummary(
    std::shared_ptr<StreamAllocationSummary> &stream_allocation) const {
  if (data_ == nullptr || data_->streams == nullptr) {
    return FAILED;
  }
  stream_allocation = data_->streams;
  return SUCCESS;
}

/// Builds the summary of the session's current stage (any stage after logical assignment),
/// without the memory answers of CompiledGraphSummary. FAILED leaves `out` untouched; the
/// reason is in sa_last_error_message(). `out` shares a new summary that copies everything it
/// needs out of the session (which stays the caller's, and may be freed first).
inline Status GetStreamAllocationSummary(sa_session *session, std::shared_ptr<StreamAllocationSummary> &out) {
  sa_summary *raw = nullptr;
  if (sa_session_get_summary(session, &raw) != SA_OK) {
    return FAILED;
  }
  std::unique_ptr<sa_summary, void (*)(sa_summary *)> guard(raw, sa_summary_free);
  auto summary = std::make_shared<StreamAllocationSummary>();
  if (CompiledGraphSummary::Builder::FillStreams(raw, *summary) != SUCCESS) {
    return FAILED;
  }
  out = std::move(summary);
  return SUCCESS;
}

extern "C" {
/// Graph name -> ToStringInfo() of each logical stream.
inline ge::Status GEStreamAllocationSummaryGetStringInfos(
    const ge::CompiledGraphSummary &compiled_graph_summary,
    std::map<AscendString, std::vector<AscendString>> &graph_to_string_infos) {
  return sa::detail::FlattenStreamInfos(compiled_graph_summary, graph_to_string_infos,
                              [](const LogicalStreamAllocationInfo &i) { return i.ToStringInfo(); });
}

/// Graph name -> GetLogicalStreamId() of each logical stream.
inline ge::Status GEStreamAllocationSummaryGetLogicalStreamIds(
    const ge::CompiledGraphSummary &compiled_graph_summary,
    std::map<AscendString, std::vector<int64_t>> &graph_to_logical_stream_ids) {
  return sa::detail::FlattenStreamInfos(compiled_graph_summary, graph_to_logical_stream_ids,
                              [](const LogicalStreamAllocationInfo &i) { return i.GetLogicalStreamId(); });
}

/// Graph name -> GetUsrStreamLabel() of each logical stream.
inline ge::Status GEStreamAllocationSummaryGetUsrStreamLabels(
    const ge::CompiledGraphSummary &compiled_graph_summary,
    std::map<AscendString, std::vector<AscendString>> &graph_to_user_stream_labels) {
  return sa::detail::FlattenStreamInfos(compiled_graph_summary, graph_to_user_stream_labels,
                              [](const LogicalStreamAllocationInfo &i) { return i.GetUsrStreamLabel(); });
}

/// Graph name -> IsAssignedByStreamPass() of each logical stream.
inline ge::Status GEStreamAllocationSummaryIsAssignedByStreamPass(
    const ge::CompiledGraphSummary &compiled_graph_summary,
    std::map<AscendString, std::vector<bool>> &graph_to_is_assigned_by_stream_pass) {
  return sa::detail::FlattenStreamInfos(compiled_graph_summary, graph_to_is_assigned_by_stream_pass,
                              [](const LogicalStreamAllocationInfo &i) { return i.IsAssignedByStreamPass(); });
}

/// Graph name -> GetAttachedStreamIds() of each logical stream.
inline ge::Status GEStreamAllocationSummaryGetAttachedStreamIds(
    const ge::CompiledGraphSummary &compiled_graph_summary,
    std::map<AscendString, std::vector<std::vector<int64_t>>> &graph_to_attached_stream_ids) {
  return sa::detail::FlattenStreamInfos(compiled_graph_summary, graph_to_attached_stream_ids,
                              [](const LogicalStreamAllocationInfo &i) { return i.GetAttachedStreamIds(); });
}

/// Graph name -> GetPhysicalStreamNum() of each logical stream (int64_t here, as in GE).
inline ge::Status GEStreamAllocationSummaryGetPhysicalStreamNums(
    const ge::CompiledGraphSummary &compiled_graph_summary,
    std::map<AscendString, std::vector<int64_t>> &graph_to_physical_stream_nums) {
  return sa::detail::FlattenStreamInfos(compiled_graph_summary, graph_to_physical_stream_nums,
                              [](const LogicalStreamAllocationInfo &i) {
                                return static_cast<int64_t>(i.GetPhysicalStreamNum());
                              });
}

/// Graph name -> GetHcclFollowedStreamNum() of each logical stream (int64_t here, as in GE).
inline ge::Status GEStreamAllocationSummaryGetHcclFollowedStreamNums(
    const ge::CompiledGraphSummary &compiled_graph_summary,
    std::map<AscendString, std::vector<int64_t>> &graph_to_hccl_followed_stream_nums) {
  return sa::detail::FlattenStreamInfos(compiled_graph_summary, graph_to_hccl_followed_stream_nums,
                              [](const LogicalStreamAllocationInfo &i) {
                                return static_cast<int64_t>(i.GetHcclFollowedStreamNum());
                              });
}

/// Graph name -> GetAllNodes() of each logical stream.
inline ge::Status GEStreamAllocationSummaryGetAllNodes(
    const ge::CompiledGraphSummary &compiled_graph_summary,
    std::map<AscendString, std::vector<std::vector<GNode>>> &graph_to_all_nodes) {
  return sa::detail::FlattenStreamInfos(compiled_graph_summary, graph_to_all_nodes,
                              [](const LogicalStreamAllocationInfo &i) { return i.GetAllNodes(); });
}

/// Graph name -> its stream graph in DOT (ToStreamGraph()).
inline ge::Status GEStreamAllocationSummaryGetStreamGraphs(const ge::CompiledGraphSummary &compiled_graph_summary,
                                                           std::map<AscendString, AscendString> &graph_to_stream_graphs) {
  std::shared_ptr<StreamAllocationSummary> summary;
  if (compiled_graph_summary.GetStreamAllocationSummary(summary) != SUCCESS || summary == nullptr) {
    return FAILED;
  }
  for (const auto &graph : summary->ToStreamGraph()) {
    graph_to_stream_graphs[graph.first] = graph.second;
  }
  return SUCCESS;
}
}  // extern "C"
}  // namespace ge

namespace sa {
/// The counterpart of GE's Session::GetCompiledGraphSummary(graph_id): the summary of the
/// session's finished allocation. nullptr for a NULL session or one whose
/// sa_session_generate_send_recv has not run, with the reason in sa_last_error_message().
/// The summary copies what it needs: the session may be freed first.
inline ge::CompiledGraphSummaryPtr GetCompiledGraphSummary(sa_session *session) {
  return ge::CompiledGraphSummary::Builder::Build(session);
}
}  // namespace sa

#endif  // STREAM_ALLOC_GE_GRAPH_COMPILE_SUMMARY_H
