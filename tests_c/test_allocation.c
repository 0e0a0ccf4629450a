/* Allocation through the C ABI: every sa_allocation_* function, per-stage runs, lookups by
 * index and by name, counts, both JSON forms with the size protocol, and allocation errors
 * coming out as status + message + code. Built against the shared and the static library. */
#include "check.h"

/* Execution order (GE's GetAllNodes): root in topological order, `then` right after `b`. */
static const char *NAMES[] = {"x", "a", "b", "t_in", "t1", "c", "out"};
static const char *GRAPHS[] = {"", "", "", "then", "then", "", ""};
/* Single stream: data nodes without inputs get no stream, everything else stream 0. */
static const int64_t STREAMS[] = {-1, 0, 0, -1, 0, 0, 0};
#define NODES (sizeof NAMES / sizeof NAMES[0])

static sa_graph *make_graph(const char *name) {
    sa_graph *g = NULL;
    CHECK_OK(sa_graph_new(name, &g));
    CHECK_OK(sa_graph_add_node(g, NULL, "x", "Data", "DNN_VM_GE_LOCAL", 0, 0.0, 0));
    CHECK_OK(sa_graph_add_node(g, NULL, "a", "Conv2D", "AIcoreEngine", 1, 2.0, 20));
    CHECK_OK(sa_graph_add_node(g, NULL, "b", "If", "DNN_VM_GE_LOCAL", 0, 0.0, 0));
    CHECK_OK(sa_graph_add_node(g, NULL, "c", "Relu", "VectorEngine", 1, 1.0, 8));
    CHECK_OK(sa_graph_add_node(g, NULL, "out", "NetOutput", "DNN_VM_GE_LOCAL", 0, 0.0, 0));
    add_data_edges(g, NULL, "x>a a>b b>c c>out");
    CHECK_OK(sa_graph_add_subgraph(g, NULL, "b", "then", SA_SHAPE_STATIC));
    CHECK_OK(sa_graph_add_node(g, "then", "t_in", "Data", "DNN_VM_GE_LOCAL", 0, 0.0, 0));
    CHECK_OK(sa_graph_add_node(g, "then", "t1", "Relu", "AIcoreEngine", 1, 0.5, 0));
    CHECK_OK(sa_graph_add_edge(g, "then", "t_in", "t1", SA_EDGE_DATA, 0, 0));
    return g;
}

static void check_alloc_error(const sa_allocation *a, const char *code, const char *needle) {
    CHECK_STR(sa_allocation_last_error_code(a), code);
    CHECK_CONTAINS(sa_allocation_last_error(a), needle);
    CHECK_LAST_ERROR(code, needle);
}

static void test_queries(sa_allocation *a) {
    size_t n = 0;
    CHECK_OK(sa_allocation_node_count(a, &n));
    CHECK(n == NODES);
    CHECK_STATUS(sa_allocation_node_count(NULL, &n), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_node_count(a, NULL), SA_NULL_POINTER);
    check_alloc_error(a, "SA3001", "out");

    for (size_t i = 0; i < NODES; i++) {
        const char *name = NULL, *graph = NULL;
        int64_t s = 99, l = 99, by_name = 99, logical_by_name = 99;
        CHECK_OK(sa_allocation_node_name(a, i, &name));
        CHECK_STR(name, NAMES[i]);
        CHECK_OK(sa_allocation_node_graph(a, i, &graph));
        CHECK_STR(graph, GRAPHS[i]);
        CHECK_OK(sa_allocation_stream_at(a, i, &s));
        CHECK(s == STREAMS[i]);
        CHECK_OK(sa_allocation_logical_stream_at(a, i, &l));
        CHECK(l == STREAMS[i]);
        CHECK_OK(sa_allocation_stream_of(a, graph, name, &by_name));
        CHECK(by_name == s);
        CHECK_OK(sa_allocation_logical_stream_of(a, graph, name, &logical_by_name));
        CHECK(logical_by_name == l);
    }
    /* The root can be named by NULL, "" or its own name. */
    int64_t s = 99;
    CHECK_OK(sa_allocation_stream_of(a, NULL, "c", &s));
    CHECK(s == 0);
    s = 99;
    CHECK_OK(sa_allocation_stream_of(a, "main", "c", &s));
    CHECK(s == 0);

    /* Out of range and unknown names: SA_NOT_FOUND, outputs untouched. */
    const char *str = "untouched";
    s = 42;
    CHECK_STATUS(sa_allocation_node_name(a, NODES, &str), SA_NOT_FOUND);
    check_alloc_error(a, "SA3006", "index 7 is out of range");
    CHECK_STR(str, "untouched");
    CHECK_STATUS(sa_allocation_node_graph(a, (size_t)-1, &str), SA_NOT_FOUND);
    CHECK_STR(str, "untouched");
    CHECK_STATUS(sa_allocation_stream_at(a, NODES, &s), SA_NOT_FOUND);
    CHECK_STATUS(sa_allocation_logical_stream_at(a, NODES, &s), SA_NOT_FOUND);
    CHECK_STATUS(sa_allocation_stream_of(a, NULL, "t1", &s), SA_NOT_FOUND); /* t1 lives in `then` */
    check_alloc_error(a, "SA3006", "'t1' is not a node of root graph 'main'");
    CHECK_STATUS(sa_allocation_stream_of(a, "else", "t1", &s), SA_NOT_FOUND);
    check_alloc_error(a, "SA3006", "graph 'else'");
    CHECK_STATUS(sa_allocation_logical_stream_of(a, "then", "zz", &s), SA_NOT_FOUND);
    check_alloc_error(a, "SA3006", "subgraph 'then'");
    CHECK(s == 42);

    /* NULL arguments. */
    check_allocation_getters_refuse_null(a);
    CHECK_STATUS(sa_allocation_stream_of(a, NULL, NULL, &s), SA_NULL_POINTER);
    check_alloc_error(a, "SA3001", "node");
    CHECK_STATUS(sa_allocation_stream_of(a, NULL, "\xc3\x28", &s), SA_INVALID_ARGUMENT);

    /* Counts. */
    uint32_t c = 99;
    CHECK_OK(sa_allocation_logical_stream_count(a, &c));
    CHECK(c == 1);
    CHECK_OK(sa_allocation_physical_stream_count(a, &c));
    CHECK(c == 1);
    CHECK_OK(sa_allocation_attached_stream_count(a, &c));
    CHECK(c == 0);
    c = 99;
    CHECK_OK(sa_allocation_sync_count(a, &c));
    CHECK(c == 0);

    const char *mode = NULL;
    CHECK_OK(sa_allocation_mode(a, &mode));
    CHECK_STR(mode, "static-single");

    CHECK(sa_allocation_last_error(NULL) == NULL);
    CHECK(sa_allocation_last_error_code(NULL) == NULL);
}

static void test_json(const sa_allocation *a) {
    char *json = NULL;
    CHECK_OK(sa_allocation_to_json(a, &json));
    CHECK_CONTAINS(json, "\"format\": \"stream-allocation\"");
    CHECK_CONTAINS(json, "\"mode\": \"static-single\"");
    CHECK_CONTAINS(json, "\"name\": \"t1\"");
    size_t len = strlen(json);
    CHECK(len > 0 && json[len - 1] == '\n');
    CHECK_STATUS(sa_allocation_to_json(NULL, &json), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_to_json(a, NULL), SA_NULL_POINTER);

    /* Size protocol: query, too small, exact. */
    size_t needed = 0;
    CHECK_OK(sa_allocation_copy_json(a, NULL, 0, &needed));
    CHECK(needed == len + 1);
    char small[16];
    memset(small, 'Z', sizeof small);
    needed = 0;
    CHECK_STATUS(sa_allocation_copy_json(a, small, sizeof small, &needed), SA_BUFFER_TOO_SMALL);
    check_alloc_error(a, "SA3003", "bytes");
    CHECK(needed == len + 1);
    for (size_t i = 0; i < sizeof small; i++) CHECK(small[i] == 'Z');
    char *buf = malloc(needed);
    CHECK(buf != NULL);
    CHECK_STATUS(sa_allocation_copy_json(a, buf, needed - 1, &needed), SA_BUFFER_TOO_SMALL);
    CHECK_OK(sa_allocation_copy_json(a, buf, needed, &needed));
    CHECK_STR(buf, json);
    CHECK_STATUS(sa_allocation_copy_json(NULL, buf, needed, &needed), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_copy_json(a, buf, needed, NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_copy_json(a, NULL, 10, &needed), SA_NULL_POINTER);
    free(buf);
    sa_string_free(json);
}

static void test_errors(void) {
    sa_allocation *a = (sa_allocation *)0x1;
    sa_graph *g = make_graph("labelled");
    CHECK_OK(sa_graph_set_option(g, "ge.enableSingleStream", "true"));
    CHECK_STATUS(sa_graph_allocate(NULL, SA_STAGE_ALL, &a), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_allocate(g, SA_STAGE_ALL, NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_allocate(g, 4, &a), SA_INVALID_ARGUMENT);
    CHECK_STATUS(sa_graph_allocate(g, -1, &a), SA_INVALID_ARGUMENT);
    CHECK_STR(sa_graph_last_error_code(g), "SA3002");
    /* A stream label contradicts single-stream mode: GE's E10055, naming the node. */
    CHECK_OK(sa_graph_set_node_attr_str(g, NULL, "c", "stream_label", "side"));
    CHECK_STATUS(sa_graph_allocate(g, SA_STAGE_ALL, &a), SA_SINGLE_STREAM_LABEL);
    CHECK_STR(sa_graph_last_error_code(g), "E10055");
    CHECK_CONTAINS(sa_graph_last_error(g), "'c'");
    CHECK_CONTAINS(sa_graph_last_error(g), "side");
    CHECK_LAST_ERROR("E10055", "side");
    CHECK(a == (sa_allocation *)0x1);
    sa_graph_free(g);

    /* An auto multi-stream mode contradicts it too: E10056. */
    g = make_graph("auto");
    CHECK_OK(sa_graph_set_option(g, "enable_single_stream", "true"));
    CHECK_OK(sa_graph_set_option(g, "ge.autoMultistreamParallelMode", "cv"));
    CHECK_STATUS(sa_graph_allocate(g, SA_STAGE_LOGICAL, &a), SA_SINGLE_STREAM_AUTO_MODE);
    CHECK_STR(sa_graph_last_error_code(g), "E10056");
    CHECK_CONTAINS(sa_graph_last_error(g), "cv");
    sa_graph_free(g);

    /* Multi-stream mode: whatever this build does, a failure carries a matching code and a
     * message, and a success a usable allocation. */
    g = make_graph("multi");
    sa_status s = sa_graph_allocate(g, SA_STAGE_ALL, &a);
    if (s == SA_OK) {
        size_t n = 0;
        CHECK_OK(sa_allocation_node_count(a, &n));
        CHECK(n == NODES);
        sa_allocation_free(a);
    } else {
        CHECK_STR(sa_graph_last_error_code(g), sa_status_code(s));
        CHECK(strlen(sa_graph_last_error(g)) > 0);
        CHECK(a == (sa_allocation *)0x1);
    }
    sa_graph_free(g);
    sa_allocation_free(NULL);
}

int main(void) {
    sa_graph *g = make_graph("main");
    CHECK_OK(sa_graph_set_option(g, "enable_single_stream", "true"));

    static const sa_stage STAGES[] = {SA_STAGE_LOGICAL, SA_STAGE_SYNC, SA_STAGE_SPLIT, SA_STAGE_ALL};
    char *first_json = NULL;
    for (size_t i = 0; i < 4; i++) {
        sa_allocation *a = NULL;
        CHECK_OK(sa_graph_allocate(g, STAGES[i], &a));
        sa_stage stage = -1;
        CHECK_OK(sa_allocation_stage(a, &stage));
        CHECK(stage == STAGES[i]);
        CHECK_STR(sa_allocation_last_error(a), "");
        CHECK_STR(sa_allocation_last_error_code(a), "");
        if (STAGES[i] == SA_STAGE_ALL) {
            CHECK_OK(sa_allocation_to_json(a, &first_json));
        }
        sa_allocation_free(a);
    }

    /* The allocation shares the model and outlives the graph; results are deterministic. */
    sa_allocation *a = NULL;
    CHECK_OK(sa_graph_allocate(g, SA_STAGE_ALL, &a));
    sa_graph_free(g);
    char *again = NULL;
    CHECK_OK(sa_allocation_to_json(a, &again));
    CHECK_STR(again, first_json);
    sa_string_free(again);
    sa_string_free(first_json);
    test_queries(a);
    test_json(a);
    sa_allocation_free(a);

    test_errors();
    puts("test_allocation: ok");
    return 0;
}
