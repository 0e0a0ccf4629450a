/* The memory plan through the C ABI: peak, tensor count and each tensor's placement, on a
 * chain whose view (Reshape) keeps its base alive; a graph without out_bytes has no plan.
 * The same answers from a session and from the allocation taken from it, the summary from
 * both handles, and the execution order getters. */
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

/* The plan's tensors through either handle's getter must be the expected ones. */
static void check_plan(sa_status (*peak_of)(void *, uint64_t *), sa_status (*count_of)(void *, size_t *),
                       sa_status (*at)(void *, size_t, sa_tensor *), void *h) {
    uint64_t peak = 0;
    CHECK_OK(peak_of(h, &peak));
    CHECK(peak == 8192);
    size_t n = 0;
    CHECK_OK(count_of(h, &n));
    CHECK(n == 4);
    for (size_t i = 0; i < n; i++) {
        sa_tensor t;
        memset(&t, 0, sizeof t);
        CHECK_OK(at(h, i, &t));
        CHECK_STR(t.node, NODES[i]);
        CHECK_STR(t.graph, "");
        CHECK(t.port == 0);
        CHECK(t.bytes == BYTES[i] && t.offset == OFFSETS[i]);
        CHECK(t.offset % 512 == 0 && t.offset + t.bytes <= peak);
    }
    sa_tensor t;
    CHECK_STATUS(at(h, n, &t), SA_NOT_FOUND);
    CHECK_CONTAINS(sa_last_error_message(), "tensor index 4 is out of range");
}

static sa_status s_peak(void *h, uint64_t *o) { return sa_session_memory_peak((sa_session *)h, o); }
static sa_status s_count(void *h, size_t *o) { return sa_session_tensor_count((sa_session *)h, o); }
static sa_status s_at(void *h, size_t i, sa_tensor *o) { return sa_session_tensor_at((sa_session *)h, i, o); }
static sa_status a_peak(void *h, uint64_t *o) { return sa_allocation_memory_peak((const sa_allocation *)h, o); }
static sa_status a_count(void *h, size_t *o) { return sa_allocation_tensor_count((const sa_allocation *)h, o); }
static sa_status a_at(void *h, size_t i, sa_tensor *o) { return sa_allocation_tensor_at((const sa_allocation *)h, i, o); }

static void test_plan(void) {
    sa_graph *g = NULL;
    sa_allocation *a = NULL;
    CHECK_OK(sa_graph_from_json(GRAPH_JSON, &g));
    CHECK_OK(sa_graph_allocate(g, SA_STAGE_ALL, &a));
    check_plan(a_peak, a_count, a_at, a);
    CHECK_CONTAINS(sa_allocation_last_error(a), "out of range");
    uint64_t peak = 0;
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

/* The memory plan and the compiled summary from a session and from the allocation taken from
 * it; an unfinished session gives no allocation and no compiled summary. */
static void test_both_handles(void) {
    sa_graph *g = NULL;
    sa_session *s = NULL;
    sa_allocation *a = NULL;
    CHECK_OK(sa_graph_from_json(GRAPH_JSON, &g));
    CHECK_OK(sa_session_new(g, &s));
    sa_graph_free(g);

    /* Before logical assignment nothing is allocated. */
    uint64_t peak = 3;
    CHECK_STATUS(sa_session_memory_peak(s, &peak), SA_STAGE);
    CHECK(peak == 3);
    CHECK_CONTAINS(sa_session_last_error(s), "assign_logical_streams must run first");
    const size_t *order = NULL;
    size_t count = 0;
    CHECK_STATUS(sa_session_execution_order(s, &order, &count), SA_STAGE);
    CHECK_STATUS(sa_session_get_allocation(s, &a), SA_STAGE);
    CHECK(a == NULL);

    CHECK_OK(sa_session_assign_logical_streams(s));
    CHECK_OK(sa_session_insert_syncs(s));
    check_plan(s_peak, s_count, s_at, s);
    /* An unfinished session: no allocation, no compiled summary, saying which stage it is at. */
    CHECK_STATUS(sa_session_get_allocation(s, &a), SA_STAGE);
    CHECK(a == NULL);
    CHECK_LAST_ERROR("SA2002", "not finished (stage 'sync')");
    CHECK_OK(sa_session_split_streams(s));
    CHECK_OK(sa_session_generate_send_recv(s));
    check_plan(s_peak, s_count, s_at, s);
    CHECK_STATUS(sa_session_get_allocation(s, NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_session_get_allocation(NULL, &a), SA_NULL_POINTER);
    CHECK_LAST_ERROR("SA3001", "'session'");
    CHECK_STATUS(sa_session_memory_peak(NULL, &peak), SA_NULL_POINTER);
    CHECK_STATUS(sa_session_memory_peak(s, NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_session_tensor_count(s, NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_session_tensor_at(s, 0, NULL), SA_NULL_POINTER);

    CHECK_OK(sa_session_get_allocation(s, &a));
    CHECK_OK(sa_session_execution_order(s, &order, &count));
    CHECK(count == 6);
    size_t session_order[6];
    memcpy(session_order, order, sizeof session_order);
    char *session_json = NULL;
    CHECK_OK(sa_session_allocation_json(s, &session_json));
    sa_summary *from_session = NULL;
    CHECK_OK(sa_session_get_compiled_summary(s, &from_session));
    sa_session_free(s);

    /* The allocation outlives its session and answers as it did. */
    check_plan(a_peak, a_count, a_at, a);
    CHECK_OK(sa_allocation_execution_order(a, &order, &count));
    CHECK(count == 6 && memcmp(order, session_order, sizeof session_order) == 0);
    char *json = NULL;
    CHECK_OK(sa_allocation_to_json(a, &json));
    CHECK_STR(json, session_json);
    sa_string_free(json);
    sa_string_free(session_json);
    sa_stage stage = -1;
    CHECK_OK(sa_allocation_stage(a, &stage));
    CHECK(stage == SA_STAGE_ALL);

    /* The compiled summary from either handle carries the plan; the plain one does not. */
    sa_summary *from_alloc = NULL;
    CHECK_OK(sa_allocation_get_compiled_summary(a, &from_alloc));
    uint64_t v = 0, w = 0;
    CHECK_OK(sa_summary_ge_method(from_alloc, "GetFeatureMemorySize", &v));
    CHECK_OK(sa_summary_ge_method(from_session, "GetFeatureMemorySize", &w));
    CHECK(v == 8192 && w == 8192);
    const char *t1 = NULL, *t2 = NULL;
    CHECK_OK(sa_summary_render(from_alloc, "json", &t1));
    CHECK_OK(sa_summary_render(from_session, "json", &t2));
    CHECK_STR(t1, t2);
    sa_summary_free(from_alloc);
    sa_summary_free(from_session);
    sa_summary *plain = NULL;
    CHECK_OK(sa_allocation_get_summary(a, &plain));
    CHECK_STATUS(sa_summary_ge_method(plain, "GetFeatureMemorySize", &v), SA_STAGE);
    CHECK_CONTAINS(sa_last_error_message(), "sa_allocation_get_compiled_summary");
    sa_summary_free(plain);
    CHECK_STATUS(sa_allocation_get_summary(NULL, &plain), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_get_summary(a, NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_get_compiled_summary(a, NULL), SA_NULL_POINTER);
    sa_allocation_free(a);

    /* An allocation that stopped before the end has a summary but no compiled one. */
    CHECK_OK(sa_graph_from_json(GRAPH_JSON, &g));
    CHECK_OK(sa_graph_allocate(g, SA_STAGE_SPLIT, &a));
    plain = NULL;
    CHECK_STATUS(sa_allocation_get_compiled_summary(a, &plain), SA_STAGE);
    CHECK(plain == NULL);
    CHECK_CONTAINS(sa_allocation_last_error(a), "not finished (stage 'split')");
    CHECK_OK(sa_allocation_get_summary(a, &plain));
    sa_summary_free(plain);
    sa_allocation_free(a);
    sa_graph_free(g);
}

/* Two branches from x on one AI-core stream: the short one (a) is declared first, the long
 * one (b -> c) second; an all-reduce runs beside them on its own stream. GE's GetAllNodes
 * order keeps the declaration order; the allocation's execution order runs the critical path
 * first, except under compat=ge, where it is GE's order. */
static void test_execution_order(void) {
    static const char *FORK =
        "{\"format\":\"stream-graph\",\"version\":1,\"name\":\"fork\",\"nodes\":["
        "{\"name\":\"x\",\"type\":\"Data\",\"engine\":\"DNN_VM_GE_LOCAL\",\"tasks\":0},"
        "{\"name\":\"a\",\"type\":\"Relu\",\"engine\":\"AIcoreEngine\",\"cost_us\":1},"
        "{\"name\":\"b\",\"type\":\"Conv2D\",\"engine\":\"AIcoreEngine\",\"cost_us\":100},"
        "{\"name\":\"c\",\"type\":\"Conv2D\",\"engine\":\"AIcoreEngine\",\"cost_us\":100},"
        "{\"name\":\"ar\",\"type\":\"HcomAllReduce\",\"engine\":\"DNN_HCCL\",\"cost_us\":5},"
        "{\"name\":\"out\",\"type\":\"NetOutput\",\"engine\":\"DNN_VM_GE_LOCAL\",\"tasks\":0}],"
        "\"edges\":[{\"src\":\"x\",\"dst\":\"a\"},{\"src\":\"x\",\"dst\":\"b\"},{\"src\":\"b\",\"dst\":\"c\"},"
        "{\"src\":\"a\",\"dst\":\"out\"},{\"src\":\"c\",\"dst\":\"out\"},{\"src\":\"x\",\"dst\":\"ar\"},"
        "{\"src\":\"ar\",\"dst\":\"out\"}]}";
    for (int ge = 0; ge < 2; ge++) {
        sa_graph *g = NULL;
        sa_allocation *a = NULL;
        CHECK_OK(sa_graph_from_json(FORK, &g));
        if (ge) CHECK_OK(sa_graph_set_option(g, "compat", "ge"));
        CHECK_OK(sa_graph_allocate(g, SA_STAGE_ALL, &a));
        const size_t *order = NULL;
        size_t n = 0;
        CHECK_OK(sa_allocation_execution_order(a, &order, &n));
        CHECK(n == 6 && order != NULL);
        char names[64] = "";
        for (size_t i = 0; i < n; i++) {
            const char *name = NULL;
            CHECK_OK(sa_allocation_node_name(a, order[i], &name));
            strcat(names, name);
            strcat(names, i + 1 < n ? " " : "");
        }
        /* Node indexes stay GE's order on both. */
        const char *first = NULL;
        CHECK_OK(sa_allocation_node_name(a, 1, &first));
        CHECK_STR(first, "a");
        CHECK_STR(names, ge ? "x a b c ar out" : "x b c a ar out");
        CHECK_STATUS(sa_allocation_execution_order(NULL, &order, &n), SA_NULL_POINTER);
        CHECK_STATUS(sa_allocation_execution_order(a, NULL, &n), SA_NULL_POINTER);
        CHECK_STATUS(sa_allocation_execution_order(a, &order, NULL), SA_NULL_POINTER);
        CHECK_CONTAINS(sa_allocation_last_error(a), "'count'");
        sa_allocation_free(a);
        sa_graph_free(g);
    }
}

int main(void) {
    test_plan();
    test_no_sizes();
    test_both_handles();
    test_execution_order();
    puts("test_memory: ok");
    return 0;
}
