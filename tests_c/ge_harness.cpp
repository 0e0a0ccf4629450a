// ge_harness.cpp - drives stream-alloc the way GE's ModelBuilder drives its StreamAllocator.
//
// Read this first if you integrate the library into GE. GE does not allocate streams in one
// call; it interleaves the allocator with its own work (ge-compiler.md section 1):
//
//   1. AssignLogicalStreams              -> sa_session_assign_logical_streams
//   2. memory assignment                 (host; reads the logical stream ids)
//   3. InsertSyncNodesByLogicStream      -> sa_session_insert_syncs
//   4. task generation                   (host) -> sa_session_set_task_count
//   5. SplitStreamAndRefreshTaskDef      -> sa_session_split_streams
//   6. GenerateSyncEventNodes            -> sa_session_generate_send_recv, then the host builds
//                                           the Send/Recv nodes into its own graph
//   7. GetStreamAllocationSummary        -> ge::GetStreamAllocationSummary (C++ mirror)
//
// The library never changes the host's graph: node indexes are the same at every stage
// (GE's graph-structure-stability principle), and everything the host must write back
// (stream ids, event ids, inserted nodes, model attributes) is read out after each stage.
//
// The program exits 0 when every check holds; it prints the summary on stdout.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "ge/ge_graph_compile_summary.h"
#include "stream_alloc.h"

namespace {

// Any failing call ends the harness with the library's message.
void Ok(sa_status status, const char *what, sa_session *session = nullptr) {
  if (status != SA_OK) {
    std::fprintf(stderr, "%s failed: %s %s\n", what, sa_status_str(status),
                 session != nullptr ? sa_session_last_error(session) : sa_last_error_message());
    std::exit(1);
  }
}

void Expect(bool cond, const char *what) {
  if (!cond) {
    std::fprintf(stderr, "check failed: %s\n", what);
    std::exit(1);
  }
}

// The host's own node list: what GE's ComputeGraph holds. The harness keeps it in execution
// order and inserts the Send/Recv nodes the allocator hands back.
struct HostNode {
  std::string name;
  std::string type;
  int64_t stream;   // physical stream (GE: OpDesc::SetStreamId)
  int64_t sync_id;  // event_id of a Send/Recv, -1 otherwise
};

// Step 0: a training-step shaped graph. Two AI-core chains (forward and a parallel branch
// labelled by the user), an HCCL all-reduce, an AI-CPU op, and the engine subgraphs as GE's
// engine partition hands them over.
sa_graph *BuildGraph() {
  sa_graph *g = nullptr;
  Ok(sa_graph_new("ge_step", &g), "sa_graph_new");
  struct Op {
    const char *name, *type, *engine;
  };
  const Op ops[] = {
      {"data", "Data", "DNN_VM_GE_LOCAL"},        {"conv1", "Conv2D", "AIcoreEngine"},
      {"conv2", "Conv2D", "AIcoreEngine"},        {"conv3", "Conv2D", "AIcoreEngine"},
      {"conv4", "Conv2D", "AIcoreEngine"},        {"side1", "MatMul", "AIcoreEngine"},
      {"side2", "MatMul", "AIcoreEngine"},        {"allreduce", "HcomAllReduce", "DNN_HCCL"},
      {"shape", "Shape", "DNN_VM_AICPU"},         {"out", "NetOutput", "DNN_VM_GE_LOCAL"},
  };
  for (const Op &op : ops) {
    // One task each for now: the real counts come from task generation (step 4).
    const uint32_t tasks = std::strcmp(op.engine, "DNN_VM_GE_LOCAL") == 0 ? 0U : 1U;
    Ok(sa_graph_add_node(g, nullptr, op.name, op.type, op.engine, tasks, 1.0, 0U), op.name);
  }
  const char *edges[][2] = {{"data", "conv1"},  {"conv1", "conv2"},     {"conv2", "conv3"}, {"conv3", "conv4"},
                            {"conv1", "side1"}, {"side1", "side2"},     {"conv2", "allreduce"},
                            {"data", "shape"},  {"shape", "side2"},     {"conv4", "out"},
                            {"side2", "out"},   {"allreduce", "out"}};
  for (auto &e : edges) {
    Ok(sa_graph_add_edge(g, nullptr, e[0], e[1], SA_EDGE_DATA, 0U, 0U), "sa_graph_add_edge");
  }
  // The user puts the side branch on its own stream (GE: _user_stream_label).
  Ok(sa_graph_set_node_attr_str(g, nullptr, "side1", "user_stream_label", "side"), "user label");
  Ok(sa_graph_set_node_attr_str(g, nullptr, "side2", "user_stream_label", "side"), "user label");
  Ok(sa_graph_set_node_ge_attr(g, nullptr, "allreduce", "used_stream_num", "1"), "used_stream_num");

  // GE's engine partition: one entry per engine subgraph (name, engine, labels, nodes).
  const char *local[] = {"data", "out"};
  const char *main_chain[] = {"conv1", "conv2", "conv3", "conv4"};
  const char *side[] = {"side1", "side2"};
  const char *hccl[] = {"allreduce"};
  const char *aicpu[] = {"shape"};
  Ok(sa_graph_add_partition_entry(g, "sg_local", "DNN_VM_GE_LOCAL", nullptr, nullptr, nullptr, local, 2), "part");
  Ok(sa_graph_add_partition_entry(g, "sg_main", "AIcoreEngine", nullptr, nullptr, nullptr, main_chain, 4), "part");
  Ok(sa_graph_add_partition_entry(g, "sg_side", "AIcoreEngine", nullptr, nullptr, "side", side, 2), "part");
  Ok(sa_graph_add_partition_entry(g, "sg_hccl", "DNN_HCCL", nullptr, nullptr, nullptr, hccl, 1), "part");
  Ok(sa_graph_add_partition_entry(g, "sg_aicpu", "DNN_VM_AICPU", nullptr, nullptr, nullptr, aicpu, 1), "part");

  // The device's task limit per stream (GE: rtGetMaxStreamAndTask). 47 leaves 20 tasks per
  // stream after GE's 27 reserved ones, small enough for step 5 to split.
  Ok(sa_graph_set_option(g, "max_task_count", "47"), "max_task_count");
  return g;
}

}  // namespace

int main() {
  sa_graph *graph = BuildGraph();
  sa_session *session = nullptr;
  Ok(sa_session_new(graph, &session), "sa_session_new");  // builds and validates the graph
  sa_graph_free(graph);                                     // the session keeps the model

  size_t node_count = 0U;
  Ok(sa_session_node_count(session, &node_count), "node_count", session);

  // Out of order is refused, naming what must come first.
  Expect(sa_session_split_streams(session) == SA_STAGE, "split before logical is SA_STAGE");
  Expect(std::strstr(sa_session_last_error(session), "assign_logical_streams") != nullptr, "names the stage");

  // Step 1: logical streams. Memory assignment (step 2) would read them here.
  Ok(sa_session_assign_logical_streams(session), "assign_logical_streams", session);
  std::vector<int64_t> logical(node_count);
  for (size_t i = 0U; i < node_count; ++i) {
    int64_t physical = 0;
    Ok(sa_session_node_streams(session, i, &logical[i], &physical), "node_streams", session);
  }

  // Step 3: syncs between the logical streams.
  Ok(sa_session_insert_syncs(session), "insert_syncs", session);

  // Step 4: task generation. The host counts each node's TaskDefs; here the main chain turns
  // out to need 8 tasks per node: 32 tasks on a stream with room for 20.
  for (const char *conv : {"conv1", "conv2", "conv3", "conv4"}) {
    Ok(sa_session_set_task_count(session, nullptr, conv, 8U), "set_task_count", session);
  }

  // Step 5: the physical split against the task limit.
  Ok(sa_session_split_streams(session), "split_streams", session);
  size_t conv1 = 0U, conv4 = 0U;
  Ok(sa_session_node_index(session, nullptr, "conv1", &conv1), "node_index", session);
  Ok(sa_session_node_index(session, nullptr, "conv4", &conv4), "node_index", session);
  int64_t l1 = 0, p1 = 0, l4 = 0, p4 = 0;
  Ok(sa_session_node_streams(session, conv1, &l1, &p1), "node_streams", session);
  Ok(sa_session_node_streams(session, conv4, &l4, &p4), "node_streams", session);
  Expect(l1 == l4 && p1 != p4, "the main chain is split over two physical streams");
  Expect(l1 == logical[conv1], "logical ids are stable across the stages");

  // Step 6: Send/Recv generation, then the host materialises them in its own node list.
  Ok(sa_session_generate_send_recv(session), "generate_send_recv", session);
  std::vector<std::vector<HostNode>> before(node_count), after(node_count);
  size_t inserted = 0U;
  Ok(sa_session_inserted_count(session, &inserted), "inserted_count", session);
  size_t sends = 0U, recvs = 0U;
  for (size_t k = 0U; k < inserted; ++k) {
    const char *name = nullptr, *type = nullptr;
    size_t anchor = 0U;
    int32_t is_before = 0;
    int64_t stream = 0, logical_stream = 0, sync_id = 0;
    Ok(sa_session_inserted_node(session, k, &name, &type, &anchor, &is_before, &stream, &logical_stream, &sync_id),
       "inserted_node", session);
    HostNode n{name, type, stream, sync_id};
    (is_before != 0 ? before[anchor] : after[anchor]).push_back(n);
    sends += std::strcmp(type, "Send") == 0;
    recvs += std::strcmp(type, "Recv") == 0;
  }
  Expect(sends > 0U && sends == recvs, "every Send has its Recv");
  std::vector<HostNode> host;  // GE's graph after GenerateSyncEventNodes
  for (size_t i = 0U; i < node_count; ++i) {
    const char *name = nullptr;
    Ok(sa_session_node_name(session, i, &name, nullptr), "node_name", session);
    int64_t l = 0, p = 0;
    Ok(sa_session_node_streams(session, i, &l, &p), "node_streams", session);
    host.insert(host.end(), before[i].begin(), before[i].end());
    host.push_back(HostNode{name, "", p, -1});
    host.insert(host.end(), after[i].begin(), after[i].end());
  }
  std::cout << "host graph (" << host.size() << " nodes):\n";
  for (const HostNode &n : host) {
    std::cout << "  " << n.name << " stream " << n.stream;
    if (n.sync_id >= 0) std::cout << " event " << n.sync_id;
    std::cout << "\n";
  }

  // The attributes GE writes on the model (BuildModelDefForStream) and on a node.
  char *model_attrs = nullptr;
  Ok(sa_session_model_ge_attrs(session, &model_attrs), "model_ge_attrs", session);
  std::cout << "model attrs: " << model_attrs << "\n";
  Expect(std::strstr(model_attrs, "\"_split_logic_stream_2_origin_logic_stream\"") != nullptr, "split map");
  sa_string_free(model_attrs);
  char *node_attrs = nullptr;
  Ok(sa_session_node_ge_attrs(session, conv4, &node_attrs), "node_ge_attrs", session);
  std::cout << "conv4 attrs: " << node_attrs << "\n";
  Expect(std::strstr(node_attrs, "\"_logic_stream_id\"") != nullptr, "_logic_stream_id");
  sa_string_free(node_attrs);

  // Step 7: the summary, through GE's own classes.
  std::shared_ptr<ge::StreamAllocationSummary> summary;
  Expect(ge::GetStreamAllocationSummary(session, summary) == ge::SUCCESS, "GetStreamAllocationSummary");
  size_t stream_num = 0U;
  summary->GetStreamNum(stream_num);
  std::cout << "stream_num " << stream_num << "\n";
  bool split_seen = false;
  for (const auto &graph_infos : summary->GetAllLogicalStreamInfos()) {
    std::cout << "[" << graph_infos.first.GetString() << "]\n";
    for (const ge::LogicalStreamAllocationInfo &info : graph_infos.second) {
      std::cout << info.ToStringInfo().GetString();
      split_seen = split_seen || (info.GetLogicalStreamId() == l1 && info.GetPhysicalStreamNum() == 2U);
    }
  }
  Expect(split_seen, "the summary reports the split stream with 2 physical streams");
  std::cout << summary->ToStreamGraph().begin()->second.GetString();

  // The library's independent checker on the final allocation.
  size_t violations = 0U;
  char *message = nullptr;
  Ok(sa_session_verify(session, &violations, &message), "verify", session);
  Expect(violations == 0U, message);
  sa_string_free(message);

  sa_session_free(session);
  return 0;
}
