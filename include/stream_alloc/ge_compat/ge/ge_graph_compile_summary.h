/*
 * ge/ge_graph_compile_summary.h - header-only C++ mirror of GE's stream allocation summary
 * (inc/external/ge/ge_graph_compile_summary.h; ge-runtime-api.md section 3), built from a
 * stream-alloc compile session (sa_session, include/stream_alloc.h).
 *
 * The classes keep GE's names, method names and return types, so code written against GE's
 * summary compiles against this one:
 *
 *   std::shared_ptr<ge::StreamAllocationSummary> summary;
 *   if (ge::GetStreamAllocationSummary(session, summary) == ge::SUCCESS) {
 *     for (const auto &graph : summary->GetAllLogicalStreamInfos())
 *       for (const auto &info : graph.second) std::cout << info.ToStringInfo().GetString();
 *   }
 *
 * It is not ABI-compatible with libge_compiler.so (no pimpl, inline everything); AscendString
 * and GNode here are minimal stand-ins. Building one copies everything out of the session, so
 * the summary outlives the session and later stage calls on it.
 *
 * Ownership: values (AscendString, std::vector) are the caller's copies; references returned by
 * GetAllNodes, ToStreamGraph and GetAllLogicalStreamInfos are into the object they are called
 * on and live as long as it does. Needs stream_alloc.h and stream_alloc_ge_status.h (the
 * include directories the StreamAlloc CMake targets and stream_alloc.pc add).
 */
#ifndef STREAM_ALLOC_GE_GRAPH_COMPILE_SUMMARY_H
#define STREAM_ALLOC_GE_GRAPH_COMPILE_SUMMARY_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stream_alloc.h"
#include "stream_alloc_ge_status.h"

namespace ge {

/// GE's AscendString, reduced to what the summary needs (a shared string, by value).
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
  /// Position in execution order (GE's GetAllNodes), the index sa_session_node_* take.
  size_t GetIndex() const { return index_; }

 private:
  AscendString name_;
  AscendString type_;
  size_t index_ = 0U;
};

class StreamAllocationSummary;

/// One logical stream of one graph (GE's LogicalStreamAllocationInfo).
class LogicalStreamAllocationInfo {
 public:
  LogicalStreamAllocationInfo() = default;
  ~LogicalStreamAllocationInfo() = default;
  LogicalStreamAllocationInfo(const LogicalStreamAllocationInfo &stream_info) = default;
  LogicalStreamAllocationInfo &operator=(const LogicalStreamAllocationInfo &stream_info) = default;

  /// GE's text, byte for byte: "logic_stream_id: 0, user_stream_label: , ... hccl_followed_stream_num: 0.\n".
  /// Returned by value (a shared copy of the string the info holds).
  AscendString ToStringInfo() const { return AscendString(string_info_.c_str()); }
  int64_t GetLogicalStreamId() const { return logical_stream_id_; }
  AscendString GetUsrStreamLabel() const { return AscendString(user_stream_label_.c_str()); }
  bool IsAssignedByStreamPass() const { return assigned_by_stream_pass_; }
  std::vector<int64_t> GetAttachedStreamIds() const { return attached_stream_ids_; }
  size_t GetPhysicalStreamNum() const { return physical_stream_num_; }
  size_t GetHcclFollowedStreamNum() const { return hccl_followed_stream_num_; }
  /// The stream's nodes in execution order; a reference into this info, valid while it lives.
  const std::vector<GNode> &GetAllNodes() const { return nodes_; }

 private:
  friend Status GetStreamAllocationSummary(sa_session *, std::shared_ptr<StreamAllocationSummary> &);
  int64_t logical_stream_id_ = 0;
  std::string user_stream_label_;
  bool assigned_by_stream_pass_ = false;
  std::vector<int64_t> attached_stream_ids_;
  size_t physical_stream_num_ = 0U;
  size_t hccl_followed_stream_num_ = 0U;
  std::vector<GNode> nodes_;
  std::string string_info_;
};

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
  /// CompiledGraphSummary::GetStreamNum / GetEventNum counterparts.
  Status GetStreamNum(size_t &num) const {
    num = stream_num_;
    return SUCCESS;
  }
  Status GetEventNum(size_t &num) const {
    num = event_num_;
    return SUCCESS;
  }

 private:
  friend Status GetStreamAllocationSummary(sa_session *, std::shared_ptr<StreamAllocationSummary> &);
  std::map<AscendString, AscendString> stream_graphs_;
  std::map<AscendString, std::vector<LogicalStreamAllocationInfo>> infos_;
  size_t stream_num_ = 0U;
  size_t event_num_ = 0U;
};

/// Builds the summary of the session's current stage (any stage after logical assignment).
/// FAILED leaves `out` untouched; the reason is in sa_session_last_error(session).
/// Ownership: `out` shares a new summary that copies everything it needs out of the session
/// (the session stays the caller's, and may be freed before the summary).
inline Status GetStreamAllocationSummary(sa_session *session, std::shared_ptr<StreamAllocationSummary> &out) {
  sa_summary *raw = nullptr;
  if (sa_session_get_summary(session, &raw) != SA_OK) {
    return FAILED;
  }
  std::unique_ptr<sa_summary, void (*)(sa_summary *)> guard(raw, sa_summary_free);
  auto summary = std::make_shared<StreamAllocationSummary>();
  uint32_t stream_num = 0U;
  uint32_t event_num = 0U;
  size_t graphs = 0U;
  if (sa_summary_counts(raw, &stream_num, &event_num, nullptr) != SA_OK ||
      sa_summary_graph_count(raw, &graphs) != SA_OK) {
    return FAILED;
  }
  summary->stream_num_ = stream_num;
  summary->event_num_ = event_num;
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
    summary->infos_[AscendString(name)] = std::move(infos);
    summary->stream_graphs_[AscendString(name)] = AscendString(dot);
  }
  out = std::move(summary);
  return SUCCESS;
}

}  // namespace ge

#endif  // STREAM_ALLOC_GE_GRAPH_COMPILE_SUMMARY_H
