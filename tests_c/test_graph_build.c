/* The graph builder: every sa_graph_* function with valid, NULL and invalid input. A failed
 * call must leave its outputs untouched and record its message on the handle and thread. */
#include "check.h"

#define SENTINEL ((sa_graph *)0x1)

static void check_graph_error(const sa_graph *g, const char *code, const char *needle) {
    CHECK_STR(sa_graph_last_error_code(g), code);
    CHECK_CONTAINS(sa_graph_last_error(g), needle);
    CHECK_LAST_ERROR(code, needle);
}

/* A node setter (graph, graph name, node, key, value) on node "n" refuses each NULL argument
 * but the graph name (NULL: the root). */
static void check_setter_nulls(sa_status (*set)(sa_graph *, const char *, const char *, const char *, const char *),
                               sa_graph *g, const char *key, const char *value) {
    CHECK_STATUS(set(NULL, NULL, "n", key, value), SA_NULL_POINTER);
    CHECK_STATUS(set(g, NULL, NULL, key, value), SA_NULL_POINTER);
    CHECK_STATUS(set(g, NULL, "n", NULL, value), SA_NULL_POINTER);
    CHECK_STATUS(set(g, NULL, "n", key, NULL), SA_NULL_POINTER);
}

/* A node setter refuses, naming what is wrong: a value of the wrong kind for `key` (SA_FIELD,
 * the message containing `bad_says`), an unknown key (SA_FIELD, `unknown_says`), a node that
 * does not exist (SA_NOT_FOUND). */
static void check_setter_refusals(sa_status (*set)(sa_graph *, const char *, const char *, const char *, const char *),
                                  sa_graph *g, const char *key, const char *bad, const char *bad_says,
                                  const char *unknown_says) {
    CHECK_STATUS(set(g, NULL, "n", key, bad), SA_FIELD);
    check_graph_error(g, "SA1003", bad_says);
    CHECK_STATUS(set(g, NULL, "n", "colour", "1"), SA_FIELD);
    check_graph_error(g, "SA1003", unknown_says);
    CHECK_STATUS(set(g, NULL, "missing", key, "1"), SA_NOT_FOUND);
    check_graph_error(g, "SA3006", "missing");
}

static void test_new(void) {
    sa_graph *g = SENTINEL;
    CHECK_STATUS(sa_graph_new(NULL, &g), SA_NULL_POINTER);
    CHECK_LAST_ERROR("SA3001", "name");
    CHECK(g == SENTINEL);
    CHECK_STATUS(sa_graph_new("g", NULL), SA_NULL_POINTER);
    CHECK_LAST_ERROR("SA3001", "out");
    CHECK_STATUS(sa_graph_new("", &g), SA_INVALID_ARGUMENT);
    CHECK(g == SENTINEL);
    CHECK_STATUS(sa_graph_new("\xff\xfe", &g), SA_INVALID_ARGUMENT);
    CHECK_LAST_ERROR("SA3002", "UTF-8");
    CHECK(g == SENTINEL);
    CHECK_OK(sa_graph_new("g", &g));
    CHECK(g != SENTINEL && g != NULL);
    /* A fresh handle has no error. */
    CHECK_STR(sa_graph_last_error(g), "");
    CHECK_STR(sa_graph_last_error_code(g), "");
    sa_graph_free(g);
    sa_graph_free(NULL);
    CHECK(sa_graph_last_error(NULL) == NULL);
    CHECK(sa_graph_last_error_code(NULL) == NULL);
}

static void test_nodes_and_edges(void) {
    sa_graph *g = NULL;
    size_t n = 99;
    CHECK_OK(sa_graph_new("net", &g));
    CHECK_OK(sa_graph_node_count(g, &n));
    CHECK(n == 0);
    CHECK_STATUS(sa_graph_node_count(NULL, &n), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_node_count(g, NULL), SA_NULL_POINTER);
    check_graph_error(g, "SA3001", "out");

    CHECK_OK(sa_graph_add_node(g, NULL, "x", "Data", "DNN_VM_GE_LOCAL", 0, 0.0, 0));
    CHECK_OK(sa_graph_add_node(g, "", "a", "Conv2D", "AIcoreEngine", 1, 3.5, 20));
    CHECK_OK(sa_graph_add_node(g, "net", "b", "Relu", "VectorEngine", 2, 1.0, 8));
    CHECK_STATUS(sa_graph_add_node(NULL, NULL, "c", "Relu", "VectorEngine", 1, 0.0, 0), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_add_node(g, NULL, NULL, "Relu", "VectorEngine", 1, 0.0, 0), SA_NULL_POINTER);
    check_graph_error(g, "SA3001", "name");
    CHECK_STATUS(sa_graph_add_node(g, NULL, "c", NULL, "VectorEngine", 1, 0.0, 0), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_add_node(g, NULL, "c", "Relu", NULL, 1, 0.0, 0), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_add_node(g, NULL, "", "Relu", "VectorEngine", 1, 0.0, 0), SA_INVALID_ARGUMENT);
    CHECK_STATUS(sa_graph_add_node(g, NULL, "c", "", "VectorEngine", 1, 0.0, 0), SA_INVALID_ARGUMENT);
    check_graph_error(g, "SA3002", "op_type");
    CHECK_STATUS(sa_graph_add_node(g, NULL, "c", "Relu", "VectorEngine", 1, -1.0, 0), SA_INVALID_ARGUMENT);
    check_graph_error(g, "SA3002", "cost_us");
    CHECK_STATUS(sa_graph_add_node(g, NULL, "c", "Relu", "VectorEngine", 1, 0.0 / 0.0, 0), SA_INVALID_ARGUMENT);
    CHECK_STATUS(sa_graph_add_node(g, NULL, "a", "Relu", "VectorEngine", 1, 0.0, 0), SA_DUPLICATE_NAME);
    check_graph_error(g, "SA1004", "'a'");
    CHECK_STATUS(sa_graph_add_node(g, "nowhere", "c", "Relu", "VectorEngine", 1, 0.0, 0), SA_NOT_FOUND);
    check_graph_error(g, "SA3006", "nowhere");
    CHECK_OK(sa_graph_node_count(g, &n));
    CHECK(n == 3);

    CHECK_OK(sa_graph_add_edge(g, NULL, "x", "a", SA_EDGE_DATA, 0, 0));
    CHECK_OK(sa_graph_add_edge(g, NULL, "a", "b", SA_EDGE_DATA, 0, 1));
    CHECK_OK(sa_graph_add_edge(g, NULL, "x", "b", SA_EDGE_CONTROL, 0, 0));
    CHECK_STATUS(sa_graph_add_edge(NULL, NULL, "x", "a", SA_EDGE_DATA, 0, 0), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_add_edge(g, NULL, NULL, "a", SA_EDGE_DATA, 0, 0), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_add_edge(g, NULL, "x", NULL, SA_EDGE_DATA, 0, 0), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_add_edge(g, NULL, "x", "zz", SA_EDGE_DATA, 0, 0), SA_UNKNOWN_NODE);
    check_graph_error(g, "SA1005", "destination 'zz'");
    CHECK_STATUS(sa_graph_add_edge(g, NULL, "x", "a", 7, 0, 0), SA_INVALID_ARGUMENT);
    check_graph_error(g, "SA3002", "edge kind 7");
    CHECK_STATUS(sa_graph_add_edge(g, "nope", "x", "a", SA_EDGE_DATA, 0, 0), SA_NOT_FOUND);

    /* A cycle is found at build time; the description survives and can be rebuilt. */
    CHECK_OK(sa_graph_add_node(g, NULL, "c", "Add", "AIcoreEngine", 1, 0.0, 0));
    CHECK_OK(sa_graph_add_edge(g, NULL, "b", "c", SA_EDGE_DATA, 0, 0));
    CHECK_OK(sa_graph_add_edge(g, NULL, "c", "b", SA_EDGE_CONTROL, 0, 0));
    CHECK_STATUS(sa_graph_build(g), SA_CYCLE);
    check_graph_error(g, "SA1006", "cycle");
    CHECK_STATUS(sa_graph_build(NULL), SA_NULL_POINTER);
    sa_graph_free(g);

    /* Unknown engines are reported by the build, naming node and engine. */
    CHECK_OK(sa_graph_new("eng", &g));
    CHECK_OK(sa_graph_add_node(g, NULL, "k", "Foo", "NoSuchEngine", 1, 0.0, 0));
    CHECK_STATUS(sa_graph_build(g), SA_UNKNOWN_ENGINE);
    check_graph_error(g, "SA1007", "NoSuchEngine");
    sa_graph_free(g);
}

static void test_options_and_attrs(void) {
    sa_graph *g = NULL;
    CHECK_OK(sa_graph_new("opts", &g));
    CHECK_OK(sa_graph_set_option(g, "enable_single_stream", "true"));
    CHECK_OK(sa_graph_set_option(g, "ge.streamMaxParallelNum", "AIcoreEngine:4,VectorEngine:2"));
    CHECK_STATUS(sa_graph_set_option(NULL, "event", "event"), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_set_option(g, NULL, "event"), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_set_option(g, "event", NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_set_option(g, "event", "signal"), SA_INVALID_OPTION);
    check_graph_error(g, "E10001", "signal");
    CHECK_STATUS(sa_graph_set_option(g, "no_such_option", "1"), SA_INVALID_OPTION);
    check_graph_error(g, "E10001", "no_such_option");
    CHECK_STATUS(sa_graph_set_option(g, "ge.hcomParallel", "2"), SA_INVALID_HCOM_PARALLEL);
    check_graph_error(g, "E10006", "hcom");

    CHECK_OK(sa_graph_set_graph_attr(g, "some_attr", "{\"k\": [1, 2]}"));
    CHECK_STATUS(sa_graph_set_graph_attr(NULL, "k", "1"), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_set_graph_attr(g, NULL, "1"), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_set_graph_attr(g, "k", NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_set_graph_attr(g, "", "1"), SA_INVALID_ARGUMENT);
    CHECK_STATUS(sa_graph_set_graph_attr(g, "k", "cv"), SA_JSON);
    check_graph_error(g, "SA1001", "needs quotes");

    CHECK_OK(sa_graph_add_node(g, NULL, "n", "Conv2D", "AIcoreEngine", 1, 0.0, 0));
    CHECK_OK(sa_graph_set_node_attr(g, NULL, "n", "dims", "2"));
    CHECK_OK(sa_graph_set_node_attr(g, NULL, "n", "parallel_group", "\"pg\""));
    CHECK_OK(sa_graph_set_node_attr(g, NULL, "n", "attached_streams", "[{\"name\": \"r\", \"reuse_key\": \"k\", \"stream_num\": 1}]"));
    CHECK_OK(sa_graph_set_node_attr(g, NULL, "n", "rts_label_node", "true"));
    CHECK_OK(sa_graph_set_node_attr(g, NULL, "n", "event_multiplexing", "[\"SendTo;peer;0\"]"));
    check_setter_nulls(sa_graph_set_node_attr, g, "dims", "2");
    check_setter_refusals(sa_graph_set_node_attr, g, "dims", "\"two\"", "dims", "colour");
    CHECK_STATUS(sa_graph_set_node_attr(g, NULL, "n", "dims", "{"), SA_JSON);

    CHECK_OK(sa_graph_set_node_attr_str(g, NULL, "n", "user_stream_label", "u1"));
    CHECK_OK(sa_graph_set_node_attr_str(g, NULL, "n", "user_stream_label", ""));
    check_setter_nulls(sa_graph_set_node_attr_str, g, "stream_label", "s");
    CHECK_STATUS(sa_graph_set_node_attr_str(g, NULL, "n", "dims", "2"), SA_FIELD);
    CHECK_STATUS(sa_graph_set_node_attr_str(g, "other", "n", "stream_label", "s"), SA_NOT_FOUND);

    CHECK_OK(sa_graph_set_node_field(g, NULL, "n", "out_bytes", "[1024, 512]"));
    CHECK_OK(sa_graph_set_node_field(g, NULL, "n", "cores", "8"));
    CHECK_OK(sa_graph_set_node_field(g, NULL, "n", "out_bytes", "null"));
    check_setter_nulls(sa_graph_set_node_field, g, "cores", "8");
    check_setter_refusals(sa_graph_set_node_field, g, "cores", "-8", "field 'cores' must be an integer",
                          "unknown field 'colour' (known fields: name, type, engine");
    CHECK_STATUS(sa_graph_set_node_field(g, NULL, "n", "name", "\"m\""), SA_INVALID_ARGUMENT);
    CHECK_STATUS(sa_graph_set_node_field(g, NULL, "n", "type", "null"), SA_FIELD);

    CHECK_OK(sa_graph_set_node_ge_attr(g, NULL, "n", "_hccl_task_num", "3"));
    check_setter_nulls(sa_graph_set_node_ge_attr, g, "k", "1");
    CHECK_STATUS(sa_graph_set_node_ge_attr(g, NULL, "n", "", "1"), SA_INVALID_ARGUMENT);
    CHECK_STATUS(sa_graph_set_node_ge_attr(g, NULL, "n", "k", "not json"), SA_JSON);
    CHECK_STATUS(sa_graph_set_node_ge_attr(g, NULL, "ghost", "k", "1"), SA_NOT_FOUND);

    CHECK_OK(sa_graph_set_node_stream(g, NULL, "n", -1));
    CHECK_STATUS(sa_graph_set_node_stream(NULL, NULL, "n", 0), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_set_node_stream(g, NULL, NULL, 0), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_set_node_stream(g, NULL, "ghost", 0), SA_NOT_FOUND);

    CHECK_OK(sa_graph_set_shape(g, NULL, SA_SHAPE_STATIC));
    CHECK_STATUS(sa_graph_set_shape(NULL, NULL, SA_SHAPE_STATIC), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_set_shape(g, NULL, 5), SA_INVALID_ARGUMENT);
    check_graph_error(g, "SA3002", "shape 5");
    CHECK_STATUS(sa_graph_set_shape(g, "sub", SA_SHAPE_DYNAMIC), SA_NOT_FOUND);

    /* Subgraphs: owned by a node, addressed by name afterwards. */
    CHECK_OK(sa_graph_add_subgraph(g, NULL, "n", "sub", SA_SHAPE_STATIC));
    CHECK_OK(sa_graph_set_shape(g, "sub", SA_SHAPE_STATIC));
    CHECK_OK(sa_graph_add_node(g, "sub", "inner", "Relu", "AIcoreEngine", 1, 0.0, 0));
    CHECK_OK(sa_graph_add_node(g, "sub", "n", "Relu", "AIcoreEngine", 1, 0.0, 0)); /* same name, other graph */
    CHECK_OK(sa_graph_add_edge(g, "sub", "inner", "n", SA_EDGE_DATA, 0, 0));
    CHECK_STATUS(sa_graph_add_subgraph(NULL, NULL, "n", "s2", SA_SHAPE_STATIC), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_add_subgraph(g, NULL, NULL, "s2", SA_SHAPE_STATIC), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_add_subgraph(g, NULL, "n", NULL, SA_SHAPE_STATIC), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_add_subgraph(g, NULL, "n", "", SA_SHAPE_STATIC), SA_INVALID_ARGUMENT);
    CHECK_STATUS(sa_graph_add_subgraph(g, NULL, "n", "s2", 9), SA_INVALID_ARGUMENT);
    CHECK_STATUS(sa_graph_add_subgraph(g, NULL, "n", "sub", SA_SHAPE_STATIC), SA_DUPLICATE_NAME);
    CHECK_STATUS(sa_graph_add_subgraph(g, NULL, "n", "opts", SA_SHAPE_STATIC), SA_DUPLICATE_NAME);
    CHECK_STATUS(sa_graph_add_subgraph(g, NULL, "ghost", "s2", SA_SHAPE_STATIC), SA_NOT_FOUND);
    check_graph_error(g, "SA3006", "ghost");
    size_t n = 0;
    CHECK_OK(sa_graph_node_count(g, &n));
    CHECK(n == 3);

    /* Build validates the known ge_attrs types: fix a bad one and build again. */
    CHECK_OK(sa_graph_set_node_ge_attr(g, NULL, "n", "_hccl_task_num", "\"three\""));
    CHECK_STATUS(sa_graph_build(g), SA_ATTRIBUTE);
    check_graph_error(g, "SA1008", "_hccl_task_num");
    CHECK_OK(sa_graph_set_node_ge_attr(g, NULL, "n", "_hccl_task_num", "3"));
    CHECK_OK(sa_graph_build(g));
    CHECK_OK(sa_graph_build(g)); /* no-op */
    CHECK_OK(sa_graph_node_count(g, &n));
    CHECK(n == 3);

    /* A built graph is frozen. */
    CHECK_STATUS(sa_graph_add_node(g, NULL, "late", "Relu", "AIcoreEngine", 1, 0.0, 0), SA_INVALID_STATE);
    check_graph_error(g, "SA3005", "already built");
    CHECK_STATUS(sa_graph_add_edge(g, NULL, "n", "n", SA_EDGE_DATA, 0, 0), SA_INVALID_STATE);
    CHECK_STATUS(sa_graph_set_option(g, "event", "notify"), SA_INVALID_STATE);
    CHECK_STATUS(sa_graph_set_graph_attr(g, "k", "1"), SA_INVALID_STATE);
    CHECK_STATUS(sa_graph_set_shape(g, NULL, SA_SHAPE_DYNAMIC), SA_INVALID_STATE);
    CHECK_STATUS(sa_graph_add_subgraph(g, NULL, "n", "s3", SA_SHAPE_STATIC), SA_INVALID_STATE);
    CHECK_STATUS(sa_graph_set_node_attr(g, NULL, "n", "dims", "1"), SA_INVALID_STATE);
    CHECK_STATUS(sa_graph_set_node_attr_str(g, NULL, "n", "stream_label", "s"), SA_INVALID_STATE);
    CHECK_STATUS(sa_graph_set_node_ge_attr(g, NULL, "n", "k", "1"), SA_INVALID_STATE);
    CHECK_STATUS(sa_graph_set_node_stream(g, NULL, "n", 0), SA_INVALID_STATE);
    sa_graph_free(g);
}

int main(void) {
    test_new();
    test_nodes_and_edges();
    test_options_and_attrs();
    puts("test_graph_build: ok");
    return 0;
}
