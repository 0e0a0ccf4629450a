/* The memory plan through the C ABI: peak, tensor count and each tensor's placement, on a
 * chain whose view (Reshape) keeps its base alive; a graph without out_bytes has no plan. */
#include "check.h"

static const char *GRAPH_JSON =
    "{\"format\":\"stream-graph\",\"version\":1,\"name\":\"chain\",\"nodes\":["
    "{\"name\":\"x\",\"type\":\"Data\",\"engine\":\"DNN_VM_GE_LOCAL\",\"tasks\":0,\"out_bytes\":[1000]},"
    "{\"name\":\"a\",\"type\":\"Relu\",\"engine\":\"AIcoreEngine\",\"cost_us\":1,\"out_bytes\":[4096]},"
    "{\"name\":\"v\",\"type\":\"Reshape\",\"engine\":\"DNN_VM_GE_LOCAL\",\"tasks\":0,\"alias_input\":0,"
    "\"out_bytes\":[4096]},"
    "{\"name\":\"c\",\"type\":\"Relu\",\"engine\":\"AIcoreEngine\",\"cost_us\":1,\"out_bytes\":[4096]},"
    "{\"name\":\"d\",\"type\":\"Relu\",\"engine\":\"AIcoreEngine\",\"cost_us\":1,\"out_bytes\":[4096]},"
    "{\"name\":\"out\",\"type\":\"NetOutput\",\"engine\":\"DNN_VM_GE_LOCAL\",\"tasks\":0}],"
    "\"edges\":[{\"src\":\"x\",\"dst\":\"a\"},{\"src\":\"a\",\"dst\":\"v\"},{\"src\":\"v\",\"dst\":\"c\"},"
    "{\"src\":\"c\",\"dst\":\"d\"},{\"src\":\"d\",\"dst\":\"out\"}]}";

/* The plan, by tensor in execution order: x lives until a, a (through the view v) until c,
 * so d reuses a's bytes and x sits where c later goes. */
static const char *NODES[] = {"x", "a", "c", "d"};
static const uint64_t BYTES[] = {1000, 4096, 4096, 4096};
static const uint64_t OFFSETS[] = {4096, 0, 4096, 0};

static void test_plan(void) {
    sa_graph *g = NULL;
    sa_allocation *a = NULL;
    CHECK_OK(sa_graph_from_json(GRAPH_JSON, &g));
    CHECK_OK(sa_graph_allocate(g, SA_STAGE_ALL, &a));
    uint64_t peak = 0;
    CHECK_OK(sa_allocation_memory_peak(a, &peak));
    CHECK(peak == 8192);
    size_t n = 0;
    CHECK_OK(sa_allocation_tensor_count(a, &n));
    CHECK(n == 4);
    for (size_t i = 0; i < n; i++) {
        sa_tensor t;
        memset(&t, 0, sizeof t);
        CHECK_OK(sa_allocation_tensor_at(a, i, &t));
        CHECK_STR(t.node, NODES[i]);
        CHECK_STR(t.graph, "");
        CHECK(t.port == 0);
        CHECK(t.bytes == BYTES[i]);
        CHECK(t.offset == OFFSETS[i]);
        CHECK(t.offset % 512 == 0 && t.offset + t.bytes <= peak);
    }
    sa_tensor t;
    CHECK_STATUS(sa_allocation_tensor_at(a, n, &t), SA_NOT_FOUND);
    CHECK_CONTAINS(sa_allocation_last_error(a), "out of range");
    CHECK_STATUS(sa_allocation_tensor_at(a, 0, NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_memory_peak(NULL, &peak), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_tensor_count(a, NULL), SA_NULL_POINTER);
    /* The JSON document carries the same plan. */
    char *json = NULL;
    CHECK_OK(sa_allocation_to_json(a, &json));
    CHECK(strstr(json, "\"peak_bytes\": 8192") != NULL);
    sa_string_free(json);
    sa_allocation_free(a);
    sa_graph_free(g);
}

static void test_no_sizes(void) {
    sa_graph *g = NULL;
    sa_allocation *a = NULL;
    CHECK_OK(sa_graph_new("plain", &g));
    CHECK_OK(sa_graph_add_node(g, NULL, "a", "Relu", "AIcoreEngine", 1, 1.0, 1));
    CHECK_OK(sa_graph_allocate(g, SA_STAGE_ALL, &a));
    uint64_t peak = 7;
    CHECK_STATUS(sa_allocation_memory_peak(a, &peak), SA_NOT_FOUND);
    CHECK(peak == 7);
    CHECK_CONTAINS(sa_allocation_last_error(a), "out_bytes");
    size_t n = 9;
    CHECK_OK(sa_allocation_tensor_count(a, &n));
    CHECK(n == 0);
    sa_tensor t;
    CHECK_STATUS(sa_allocation_tensor_at(a, 0, &t), SA_NOT_FOUND);
    sa_allocation_free(a);
    sa_graph_free(g);
}

int main(void) {
    test_plan();
    test_no_sizes();
    puts("test_memory: ok");
    return 0;
}
