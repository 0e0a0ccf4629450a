// GE's compiled graph summary read the way GE's test GetCompiledGraphSummaryWithStreamInfo_KnownGraph_Success
// reads it: every LogicalStreamAllocationInfo getter, ToStreamGraph and the nine
// GEStreamAllocationSummary* functions, on a graph with four logical streams, a user stream
// label, an attached stream and an HCCL node. Only the line that obtains the summary differs
// from GE (sa::GetCompiledGraphSummary(session) for session.GetCompiledGraphSummary(graph_id)).
//
// Every value is checked against the CLI on the same graph: `stream-alloc summary GRAPH
// --format json` for the stream summary and `stream-alloc allocate GRAPH -o FILE` for the
// memory plan. Arguments: CLI GRAPH GRAPH_WITHOUT_SIZES DYNAMIC_GRAPH WORK_DIR.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ge/ge_graph_compile_summary.h"
#include "stream_alloc.h"
#include "../expect.hpp"

namespace {

// A JSON value, enough to read the CLI's documents.
struct Json {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  bool b = false;
  double num = 0.0;
  std::string str;
  std::vector<Json> items;
  std::map<std::string, Json> fields;

  const Json &operator[](const char *key) const {
    static const Json missing;
    auto it = fields.find(key);
    return it == fields.end() ? missing : it->second;
  }
  int64_t Int() const { return static_cast<int64_t>(num); }
};

class JsonReader {
 public:
  explicit JsonReader(const std::string &text) : s_(text) {}
  Json Read() {
    Json v = Value();
    Space();
    REQUIRE_TRUE(pos_ == s_.size());
    return v;
  }

 private:
  void Space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Eat(const char *word) {
    const size_t n = std::strlen(word);
    if (s_.compare(pos_, n, word) == 0) {
      pos_ += n;
      return true;
    }
    return false;
  }
  std::string String() {
    REQUIRE_TRUE(Eat("\""));
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (c == '\\') {
        REQUIRE_TRUE(pos_ < s_.size());
        const char e = s_[pos_++];
        switch (e) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case 'u':  // the CLI escapes only control characters this way
            REQUIRE_TRUE(pos_ + 4 <= s_.size());
            c = static_cast<char>(std::strtol(s_.substr(pos_, 4).c_str(), nullptr, 16));
            pos_ += 4;
            break;
          default: c = e; break;
        }
      }
      out.push_back(c);
    }
    REQUIRE_TRUE(Eat("\""));
    return out;
  }
  Json Value() {
    Space();
    Json v;
    REQUIRE_TRUE(pos_ < s_.size());
    const char c = s_[pos_];
    if (c == '{') {
      v.kind = Json::kObject;
      ++pos_;
      Space();
      if (Eat("}")) return v;
      do {
        Space();
        std::string key = String();
        Space();
        REQUIRE_TRUE(Eat(":"));
        v.fields[key] = Value();
        Space();
      } while (Eat(","));
      REQUIRE_TRUE(Eat("}"));
    } else if (c == '[') {
      v.kind = Json::kArray;
      ++pos_;
      Space();
      if (Eat("]")) return v;
      do {
        v.items.push_back(Value());
        Space();
      } while (Eat(","));
      REQUIRE_TRUE(Eat("]"));
    } else if (c == '"') {
      v.kind = Json::kString;
      v.str = String();
    } else if (Eat("true")) {
      v.kind = Json::kBool;
      v.b = true;
    } else if (Eat("false")) {
      v.kind = Json::kBool;
    } else if (Eat("null")) {
      v.kind = Json::kNull;
    } else {
      v.kind = Json::kNumber;
      char *end = nullptr;
      v.num = std::strtod(s_.c_str() + pos_, &end);
      REQUIRE_TRUE(end != s_.c_str() + pos_);
      pos_ = static_cast<size_t>(end - s_.c_str());
    }
    return v;
  }
  const std::string &s_;
  size_t pos_ = 0U;
};

std::string Slurp(FILE *f) {
  std::string text;
  char buf[4096];
  size_t n = 0U;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0U) text.append(buf, n);
  return text;
}

// Runs the CLI and parses its JSON: stdout, or the file `out` when given.
Json RunCli(const std::string &cmd, const char *out = nullptr) {
  FILE *p = popen(cmd.c_str(), "r");
  REQUIRE_TRUE(p != nullptr);
  std::string text = Slurp(p);
  REQUIRE_TRUE(pclose(p) == 0);
  if (out != nullptr) {
    FILE *f = std::fopen(out, "rb");
    REQUIRE_TRUE(f != nullptr);
    text = Slurp(f);
    std::fclose(f);
  }
  return JsonReader(text).Read();
}

// A session of `graph` run through every stage (or none when `finish` is false).
sa_session *Compile(const char *graph_path, sa_graph **graph, bool finish) {
  REQUIRE_TRUE(sa_graph_from_json_file(graph_path, graph) == SA_OK);
  sa_session *session = nullptr;
  REQUIRE_TRUE(sa_session_new(*graph, &session) == SA_OK);
  REQUIRE_TRUE(sa_session_assign_logical_streams(session) == SA_OK);
  if (finish) {
    REQUIRE_TRUE(sa_session_insert_syncs(session) == SA_OK);
    REQUIRE_TRUE(sa_session_split_streams(session) == SA_OK);
    REQUIRE_TRUE(sa_session_generate_send_recv(session) == SA_OK);
  }
  return session;
}

bool ErrorMentions(const char *what) { return std::strstr(sa_last_error_message(), what) != nullptr; }

// A size query that cannot answer: not SUCCESS, its output 0, the reason naming `why`.
void ExpectSizeFails(const ge::CompiledGraphSummary &summary, ge::Status (ge::CompiledGraphSummary::*get)(size_t &) const,
                     const char *why) {
  size_t size = 9U;
  EXPECT_NE((summary.*get)(size), ge::SUCCESS);
  EXPECT_EQ(size, 0U);
  EXPECT_TRUE(ErrorMentions(why));
}

std::string Str(const ge::AscendString &s) { return std::string(s.GetString(), s.GetLength()); }

// GE's test body: the summary read through GE's classes and functions, checked against the CLI.
void KnownGraphSuccess(const ge::CompiledGraphSummaryPtr &summary, const Json &cli, const Json &alloc) {
  REQUIRE_TRUE(summary != nullptr);
  EXPECT_TRUE(summary->IsStatic());
  size_t stream_num = 0U;
  size_t event_num = 0U;
  EXPECT_EQ(summary->GetStreamNum(stream_num), ge::SUCCESS);
  EXPECT_EQ(summary->GetEventNum(event_num), ge::SUCCESS);
  EXPECT_EQ(static_cast<int64_t>(stream_num), cli["stream_num"].Int());
  EXPECT_EQ(static_cast<int64_t>(event_num), cli["event_num"].Int());

  std::shared_ptr<ge::StreamAllocationSummary> stream_summary;
  EXPECT_EQ(summary->GetStreamAllocationSummary(stream_summary), ge::SUCCESS);
  REQUIRE_TRUE(stream_summary != nullptr);
  const auto &all_infos = stream_summary->GetAllLogicalStreamInfos();
  const Json &graphs = cli["graphs"];
  REQUIRE_TRUE(all_infos.size() == graphs.items.size());

  size_t labelled = 0U;
  size_t attached = 0U;
  size_t hccl = 0U;
  size_t main_streams = 0U;
  for (const Json &g : graphs.items) {
    const ge::AscendString name(g["name"].str.c_str());
    auto it = all_infos.find(name);
    REQUIRE_TRUE(it != all_infos.end());
    const std::vector<ge::LogicalStreamAllocationInfo> &infos = it->second;
    const Json &streams = g["streams"];
    REQUIRE_TRUE(infos.size() == streams.items.size());
    for (size_t i = 0U; i < infos.size(); ++i) {
      const ge::LogicalStreamAllocationInfo &info = infos[i];
      const Json &want = streams.items[i];
      EXPECT_EQ(Str(info.ToStringInfo()), want["string_info"].str);
      EXPECT_EQ(info.GetLogicalStreamId(), want["logical_stream_id"].Int());
      EXPECT_EQ(Str(info.GetUsrStreamLabel()), want["user_stream_label"].str);
      EXPECT_EQ(info.IsAssignedByStreamPass(), want["is_assigned_by_stream_pass"].b);
      const std::vector<int64_t> ids = info.GetAttachedStreamIds();
      REQUIRE_TRUE(ids.size() == want["attached_stream_ids"].items.size());
      for (size_t k = 0U; k < ids.size(); ++k) EXPECT_EQ(ids[k], want["attached_stream_ids"].items[k].Int());
      EXPECT_EQ(static_cast<int64_t>(info.GetPhysicalStreamNum()), want["physical_stream_num"].Int());
      EXPECT_EQ(static_cast<int64_t>(info.GetHcclFollowedStreamNum()), want["hccl_followed_stream_num"].Int());
      const std::vector<ge::GNode> &nodes = info.GetAllNodes();
      REQUIRE_TRUE(nodes.size() == want["nodes"].items.size());
      for (size_t k = 0U; k < nodes.size(); ++k) {
        ge::AscendString node_name;
        EXPECT_EQ(nodes[k].GetName(node_name), 0U);
        EXPECT_EQ(Str(node_name), want["nodes"].items[k].str);
      }
      labelled += info.GetUsrStreamLabel().GetLength() > 0U ? 1U : 0U;
      attached += ids.size();
      hccl += info.GetHcclFollowedStreamNum() > 0U ? 1U : 0U;
    }
  }
  // The graph is what the test claims: four logical streams, a user label, an attached
  // stream (a fifth logical id) and an HCCL node with follow streams.
  main_streams = all_infos.begin()->second.size() - attached;
  EXPECT_EQ(main_streams, 4U);
  EXPECT_EQ(labelled, 1U);
  EXPECT_EQ(attached, 1U);
  EXPECT_EQ(hccl, 1U);

  const std::map<ge::AscendString, ge::AscendString> &stream_graphs = stream_summary->ToStreamGraph();
  EXPECT_EQ(stream_graphs.size(), graphs.items.size());
  for (const auto &g : stream_graphs) EXPECT_TRUE(std::strncmp(g.second.GetString(), "digraph", 7) == 0);

  // The nine C functions: the getters' values, flattened per graph.
  std::map<ge::AscendString, std::vector<ge::AscendString>> graph_to_string_infos;
  std::map<ge::AscendString, std::vector<int64_t>> graph_to_logical_stream_ids;
  std::map<ge::AscendString, std::vector<ge::AscendString>> graph_to_user_stream_labels;
  std::map<ge::AscendString, std::vector<bool>> graph_to_is_assigned_by_stream_pass;
  std::map<ge::AscendString, std::vector<std::vector<int64_t>>> graph_to_attached_stream_ids;
  std::map<ge::AscendString, std::vector<int64_t>> graph_to_physical_stream_nums;
  std::map<ge::AscendString, std::vector<int64_t>> graph_to_hccl_followed_stream_nums;
  std::map<ge::AscendString, std::vector<std::vector<ge::GNode>>> graph_to_all_nodes;
  std::map<ge::AscendString, ge::AscendString> graph_to_stream_graphs;
  // Unqualified, as GE code calls it: found by argument-dependent lookup in namespace ge.
  EXPECT_EQ(GEStreamAllocationSummaryGetStringInfos(*summary, graph_to_string_infos), ge::SUCCESS);
  EXPECT_EQ(ge::GEStreamAllocationSummaryGetLogicalStreamIds(*summary, graph_to_logical_stream_ids), ge::SUCCESS);
  EXPECT_EQ(ge::GEStreamAllocationSummaryGetUsrStreamLabels(*summary, graph_to_user_stream_labels), ge::SUCCESS);
  EXPECT_EQ(ge::GEStreamAllocationSummaryIsAssignedByStreamPass(*summary, graph_to_is_assigned_by_stream_pass),
            ge::SUCCESS);
  EXPECT_EQ(ge::GEStreamAllocationSummaryGetAttachedStreamIds(*summary, graph_to_attached_stream_ids), ge::SUCCESS);
  EXPECT_EQ(ge::GEStreamAllocationSummaryGetPhysicalStreamNums(*summary, graph_to_physical_stream_nums), ge::SUCCESS);
  EXPECT_EQ(ge::GEStreamAllocationSummaryGetHcclFollowedStreamNums(*summary, graph_to_hccl_followed_stream_nums),
            ge::SUCCESS);
  EXPECT_EQ(ge::GEStreamAllocationSummaryGetAllNodes(*summary, graph_to_all_nodes), ge::SUCCESS);
  EXPECT_EQ(ge::GEStreamAllocationSummaryGetStreamGraphs(*summary, graph_to_stream_graphs), ge::SUCCESS);
  for (const Json &g : graphs.items) {
    const ge::AscendString name(g["name"].str.c_str());
    const size_t n = g["streams"].items.size();
    REQUIRE_TRUE(graph_to_string_infos[name].size() == n && graph_to_logical_stream_ids[name].size() == n &&
                graph_to_user_stream_labels[name].size() == n && graph_to_is_assigned_by_stream_pass[name].size() == n &&
                graph_to_attached_stream_ids[name].size() == n && graph_to_physical_stream_nums[name].size() == n &&
                graph_to_hccl_followed_stream_nums[name].size() == n && graph_to_all_nodes[name].size() == n);
    for (size_t i = 0U; i < n; ++i) {
      EXPECT_EQ(Str(graph_to_string_infos[name][i]), g["streams"].items[i]["string_info"].str);
      EXPECT_EQ(graph_to_logical_stream_ids[name][i], g["logical_stream_ids"].items[i].Int());
      EXPECT_EQ(Str(graph_to_user_stream_labels[name][i]), g["user_stream_labels"].items[i].str);
      EXPECT_EQ(graph_to_is_assigned_by_stream_pass[name][i], g["is_assigned_by_stream_pass"].items[i].b);
      const Json &ids = g["attached_stream_ids"].items[i];
      REQUIRE_TRUE(graph_to_attached_stream_ids[name][i].size() == ids.items.size());
      for (size_t k = 0U; k < ids.items.size(); ++k) {
        EXPECT_EQ(graph_to_attached_stream_ids[name][i][k], ids.items[k].Int());
      }
      EXPECT_EQ(graph_to_physical_stream_nums[name][i], g["physical_stream_nums"].items[i].Int());
      EXPECT_EQ(graph_to_hccl_followed_stream_nums[name][i], g["hccl_followed_stream_nums"].items[i].Int());
      const Json &node_names = g["streams"].items[i]["nodes"];
      REQUIRE_TRUE(graph_to_all_nodes[name][i].size() == node_names.items.size());
      for (size_t k = 0U; k < node_names.items.size(); ++k) {
        ge::AscendString node_name;
        graph_to_all_nodes[name][i][k].GetName(node_name);
        EXPECT_EQ(Str(node_name), node_names.items[k].str);
      }
    }
    EXPECT_EQ(Str(graph_to_stream_graphs[name]), Str(stream_graphs.at(name)));
  }

  // Memory, from the plan: the arena `stream-alloc allocate` reports for the same graph.
  const int64_t peak = alloc["memory"]["peak_bytes"].Int();
  EXPECT_TRUE(peak > 0);
  size_t feature = 0U;
  size_t fixed = 1U;
  size_t refreshable = 0U;
  bool base_refreshable = false;
  EXPECT_EQ(summary->GetFeatureMemorySize(feature), ge::SUCCESS);
  EXPECT_EQ(static_cast<int64_t>(feature), peak);
  EXPECT_EQ(summary->GetFixedFeatureMemorySize(fixed), ge::SUCCESS);
  EXPECT_EQ(fixed, 0U);
  EXPECT_EQ(summary->GetRefreshableFeatureMemorySize(refreshable), ge::SUCCESS);
  EXPECT_EQ(refreshable, feature - fixed);
  EXPECT_EQ(summary->GetFeatureMemoryBaseRefreshable(base_refreshable), ge::SUCCESS);
  EXPECT_TRUE(base_refreshable);
  const std::vector<ge::FeatureMemoryPtr> all_memory = summary->GetAllFeatureMemoryTypeSize();
  REQUIRE_TRUE(all_memory.size() == 1U);
  EXPECT_EQ(all_memory[0]->GetType(), ge::MEMORY_TYPE_DEFAULT);
  EXPECT_EQ(all_memory[0]->GetSize(), feature);
  EXPECT_TRUE(!all_memory[0]->IsFixed());

  // What graph JSON cannot tell: FAILED, outputs empty, the reason in sa_last_error_message().
  ExpectSizeFails(*summary, &ge::CompiledGraphSummary::GetConstMemorySize, "GetConstMemorySize");
  std::vector<ge::Shape> shapes(2);
  EXPECT_NE(summary->GetOutputShapes(shapes), ge::SUCCESS);
  EXPECT_TRUE(shapes.empty() && ErrorMentions("GetOutputShapes"));
  std::vector<ge::DataType> dtypes(1, ge::DT_FLOAT);
  EXPECT_NE(summary->GetOutputDtypes(dtypes), ge::SUCCESS);
  EXPECT_TRUE(dtypes.empty() && ErrorMentions("GetOutputDtypes"));
  std::vector<std::pair<uint32_t, uint32_t>> io(1);
  EXPECT_NE(summary->GetIOIndexesWithSameAddr(io), ge::SUCCESS);
  EXPECT_TRUE(io.empty() && ErrorMentions("GetIOIndexesWithSameAddr"));
  std::vector<ge::ExternalWeightDescPtr> weights(1);
  EXPECT_NE(summary->GetExternalWeightPaths(weights), ge::SUCCESS);
  EXPECT_TRUE(weights.empty() && ErrorMentions("GetExternalWeightPaths"));
}

// A graph without out_bytes: the memory methods fail and say why; the rest still answers.
void WithoutSizes(const char *graph_path) {
  sa_graph *graph = nullptr;
  sa_session *session = Compile(graph_path, &graph, true);
  ge::CompiledGraphSummaryPtr summary = sa::GetCompiledGraphSummary(session);
  sa_session_free(session);  // the summary outlives its session
  sa_graph_free(graph);
  REQUIRE_TRUE(summary != nullptr);
  ExpectSizeFails(*summary, &ge::CompiledGraphSummary::GetFeatureMemorySize, "out_bytes");
  ExpectSizeFails(*summary, &ge::CompiledGraphSummary::GetRefreshableFeatureMemorySize, "out_bytes");
  ExpectSizeFails(*summary, &ge::CompiledGraphSummary::GetFixedFeatureMemorySize, "out_bytes");
  bool base = true;
  EXPECT_NE(summary->GetFeatureMemoryBaseRefreshable(base), ge::SUCCESS);
  EXPECT_TRUE(!base);
  EXPECT_TRUE(summary->GetAllFeatureMemoryTypeSize().empty());
  size_t streams = 0U;
  EXPECT_EQ(summary->GetStreamNum(streams), ge::SUCCESS);
  EXPECT_TRUE(streams > 0U);
  EXPECT_TRUE(summary->IsStatic());
}

// A dynamic-shape graph: not static, and GE's event count is for static graphs only.
void DynamicGraph(const char *graph_path) {
  sa_graph *graph = nullptr;
  sa_session *session = Compile(graph_path, &graph, true);
  ge::CompiledGraphSummaryPtr summary = sa::GetCompiledGraphSummary(session);
  REQUIRE_TRUE(summary != nullptr);
  EXPECT_TRUE(!summary->IsStatic());
  ExpectSizeFails(*summary, &ge::CompiledGraphSummary::GetEventNum, "static graphs only");
  size_t streams = 0U;
  EXPECT_EQ(summary->GetStreamNum(streams), ge::SUCCESS);
  EXPECT_TRUE(streams > 0U);
  sa_session_free(session);
  sa_graph_free(graph);
}

// The factory refuses a NULL session and an unfinished one, and says why.
void FactoryRefuses(const char *graph_path) {
  EXPECT_TRUE(sa::GetCompiledGraphSummary(nullptr) == nullptr);
  EXPECT_TRUE(ErrorMentions("session"));
  sa_graph *graph = nullptr;
  sa_session *session = Compile(graph_path, &graph, false);
  EXPECT_TRUE(sa::GetCompiledGraphSummary(session) == nullptr);
  EXPECT_TRUE(ErrorMentions("not finished"));
  // The stage-agnostic free function still answers there, as before.
  std::shared_ptr<ge::StreamAllocationSummary> early;
  EXPECT_EQ(ge::GetStreamAllocationSummary(session, early), ge::SUCCESS);
  EXPECT_TRUE(early != nullptr && !early->GetAllLogicalStreamInfos().empty());
  sa_session_free(session);
  sa_graph_free(graph);
}
}  // namespace

int main(int argc, char **argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s CLI GRAPH GRAPH_WITHOUT_SIZES DYNAMIC_GRAPH WORK_DIR\n", argv[0]);
    return 2;
  }
  const std::string cli = std::string("\"") + argv[1] + "\"";
  const std::string graph_arg = std::string(" \"") + argv[2] + "\"";
  const std::string alloc_path = std::string(argv[5]) + "/compiled_summary.allocation.json";
  const Json cli_summary = RunCli(cli + " summary" + graph_arg + " --format json");
  const Json cli_alloc = RunCli(cli + " allocate" + graph_arg + " -o \"" + alloc_path + "\"", alloc_path.c_str());

  sa_graph *graph = nullptr;
  sa_session *session = Compile(argv[2], &graph, true);
  ge::CompiledGraphSummaryPtr summary = sa::GetCompiledGraphSummary(session);
  KnownGraphSuccess(summary, cli_summary, cli_alloc);
  sa_session_free(session);
  sa_graph_free(graph);

  WithoutSizes(argv[3]);
  DynamicGraph(argv[4]);
  FactoryRefuses(argv[2]);
  if (g_failures != 0) {
    std::fprintf(stderr, "%d check(s) failed\n", g_failures);
    return 1;
  }
  std::puts("compiled graph summary: ok");
  return 0;
}
