/* Loading graph JSON from a string and from a file, extending a loaded graph, and the
 * loader's errors (SA_JSON, SA_FORMAT, SA_FIELD, SA_IO, SA_INVALID_OPTION). */
#include "check.h"

static const char *GRAPH_JSON =
    "{\"format\": \"stream-graph\", \"version\": 1, \"name\": \"loaded\",\n"
    " \"nodes\": [\n"
    "  {\"name\": \"x\", \"type\": \"Data\", \"engine\": \"DNN_VM_GE_LOCAL\", \"tasks\": 0},\n"
    "  {\"name\": \"conv\", \"type\": \"Conv2D\", \"engine\": \"AIcoreEngine\", \"cost_us\": 4.0},\n"
    "  {\"name\": \"out\", \"type\": \"NetOutput\", \"engine\": \"DNN_VM_GE_LOCAL\", \"tasks\": 0}],\n"
    " \"edges\": [{\"src\": \"x\", \"dst\": \"conv\"}, {\"src\": \"conv\", \"dst\": \"out\"}],\n"
    " \"options\": {\"enable_single_stream\": true}}\n";

static void expect_load_error(const char *json, sa_status status, const char *code, const char *needle) {
    sa_graph *g = (sa_graph *)0x1;
    CHECK_STATUS(sa_graph_from_json(json, &g), status);
    CHECK(g == (sa_graph *)0x1);
    CHECK_LAST_ERROR(code, needle);
}

/* Importing the ONNX model `name` (under the fixtures' onnx/) fails with this status, a last
 * error of this code that mentions `needle`, and no graph. */
static void expect_onnx_error(const char *name, sa_status status, const char *code, const char *needle) {
    char path[4096];
    snprintf(path, sizeof path, "%s/onnx/%s.onnx", SA_FIXTURES_DIR, name);
    sa_graph *g = (sa_graph *)0x1;
    CHECK_STATUS(sa_graph_from_onnx_file(path, &g), status);
    CHECK(g == (sa_graph *)0x1);
    CHECK_LAST_ERROR(code, needle);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    sa_graph *g = NULL;
    sa_allocation *a = NULL;
    size_t n = 0;

    CHECK_OK(sa_graph_from_json(GRAPH_JSON, &g));
    CHECK_OK(sa_graph_node_count(g, &n));
    CHECK(n == 3);
    /* A loaded graph is still a description: extend it before building. */
    CHECK_OK(sa_graph_add_node(g, NULL, "relu", "Relu", "AIcoreEngine", 1, 1.0, 0));
    CHECK_OK(sa_graph_add_edge(g, NULL, "conv", "relu", SA_EDGE_DATA, 0, 0));
    CHECK_STATUS(sa_graph_add_node(g, "loaded", "x", "Data", "DNN_VM_GE_LOCAL", 0, 0.0, 0), SA_DUPLICATE_NAME);
    CHECK_OK(sa_graph_allocate(g, SA_STAGE_ALL, &a));
    CHECK_OK(sa_allocation_node_count(a, &n));
    CHECK(n == 4);
    int64_t s = 99;
    CHECK_OK(sa_allocation_stream_of(a, NULL, "relu", &s));
    CHECK(s == 0);
    sa_allocation_free(a);
    sa_graph_free(g);

    CHECK_STATUS(sa_graph_from_json(NULL, &g), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_from_json(GRAPH_JSON, NULL), SA_NULL_POINTER);
    expect_load_error("{\"format\": ", SA_JSON, "SA1001", "malformed");
    expect_load_error("{\"format\": \"other\", \"version\": 1}", SA_FORMAT, "SA1002", "other");
    expect_load_error("{\"format\": \"stream-graph\", \"version\": 1, \"name\": \"n\", \"nodes\": [], \"edges\": [], \"bogus\": 1}",
                      SA_FIELD, "SA1003", "bogus");
    expect_load_error("{\"format\": \"stream-graph\", \"version\": 1, \"name\": \"n\", \"nodes\": [], \"edges\": [],"
                      " \"options\": {\"event\": \"signal\"}}",
                      SA_INVALID_OPTION, "E10001", "signal");

    /* From a file. */
    char path[4096];
    snprintf(path, sizeof path, "%s/test_load_graph.json", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fputs(GRAPH_JSON, f) >= 0);
    CHECK(fclose(f) == 0);
    CHECK_OK(sa_graph_from_json_file(path, &g));
    CHECK_OK(sa_graph_node_count(g, &n));
    CHECK(n == 3);
    CHECK_OK(sa_graph_build(g));
    sa_graph_free(g);
    remove(path);

    g = (sa_graph *)0x1;
    CHECK_STATUS(sa_graph_from_json_file(path, &g), SA_IO);
    CHECK_LAST_ERROR("SA1000", "test_load_graph.json");
    CHECK(g == (sa_graph *)0x1);
    CHECK_STATUS(sa_graph_from_json_file(NULL, &g), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_from_json_file(path, NULL), SA_NULL_POINTER);

    /* ONNX models, imported with the JSON loader's errors. */
    snprintf(path, sizeof path, "%s/onnx/if.onnx", SA_FIXTURES_DIR);
    CHECK_OK(sa_graph_from_onnx_file(path, &g));
    CHECK_OK(sa_graph_node_count(g, &n));
    CHECK(n == 25); /* 8 in the root graph, 17 in the four branches */
    CHECK_OK(sa_graph_build(g));
    sa_graph_free(g);
    expect_onnx_error("bad_truncated", SA_FORMAT, "SA1002", "truncated");
    expect_onnx_error("bad_cycle", SA_CYCLE, "SA1006", "cycle");
    expect_onnx_error("bad_dangling", SA_UNKNOWN_NODE, "SA1005", "missing");
    expect_onnx_error("bad_broadcast", SA_ATTRIBUTE, "SA1008", "add_mismatch");
    expect_onnx_error("cnn", SA_FIELD, "SA1003", "dimension 0");
    expect_onnx_error("no_such_model", SA_IO, "SA1000", "no_such_model.onnx");
    g = (sa_graph *)0x1;
    snprintf(path, sizeof path, "%s/onnx/no_such_model.onnx", SA_FIXTURES_DIR);
    CHECK_STATUS(sa_graph_from_onnx_file(NULL, &g), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_from_onnx_file(path, NULL), SA_NULL_POINTER);

    puts("test_load: ok");
    return 0;
}
