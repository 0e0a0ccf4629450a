/* A tiny check macro set for the C tests: no framework, a failed check prints where and why
 * (with the library's last error) and exits 1. */
#ifndef SA_TEST_CHECK_H
#define SA_TEST_CHECK_H

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream_alloc.h"

/* A failed check ends the test (exit 1), unless the test defines SA_CHECK_KEEP_GOING before
 * including this header: then CHECK counts the failure in sa_check_failures and goes on, and
 * main ends with `return SA_CHECK_RESULT();`. */
#ifdef SA_CHECK_KEEP_GOING
static int sa_check_failures = 0;
#define SA_CHECK_FAILED_ (++sa_check_failures)
#define SA_CHECK_RESULT() (printf("%s\n", sa_check_failures == 0 ? "all passed" : "FAILED"), sa_check_failures != 0)
#else
#define SA_CHECK_FAILED_ exit(1)
#endif

#define CHECK(cond)                                                                          \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n  last error: %s %s\n", __FILE__,      \
                    __LINE__, #cond, sa_last_error_code(), sa_last_error_message());          \
            SA_CHECK_FAILED_;                                                                \
        }                                                                                    \
    } while (0)

/* `call` must return `expected`. */
#define CHECK_STATUS(call, expected)                                                         \
    do {                                                                                     \
        sa_status got_ = (call);                                                             \
        if (got_ != (expected)) {                                                            \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %s\n  last error: %s %s\n", \
                    __FILE__, __LINE__, #call, (int)got_, sa_status_str(got_), #expected,    \
                    sa_last_error_code(), sa_last_error_message());                          \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, SA_OK)

#define CHECK_STR(actual, expected)                                                          \
    do {                                                                                     \
        const char *a_ = (actual);                                                           \
        const char *e_ = (expected);                                                         \
        if (a_ == NULL || strcmp(a_, e_) != 0) {                                             \
            fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__,    \
                    #actual, a_ ? a_ : "(null)", e_);                                        \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

#define CHECK_CONTAINS(haystack, needle)                                                     \
    do {                                                                                     \
        const char *h_ = (haystack);                                                         \
        if (h_ == NULL || strstr(h_, (needle)) == NULL) {                                    \
            fprintf(stderr, "%s:%d: %s (\"%s\") does not contain \"%s\"\n", __FILE__,        \
                    __LINE__, #haystack, h_ ? h_ : "(null)", (needle));                      \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* The thread's last error must have this code and mention `needle`. */
#define CHECK_LAST_ERROR(code, needle)                                                       \
    do {                                                                                     \
        CHECK_STR(sa_last_error_code(), code);                                               \
        CHECK_CONTAINS(sa_last_error_message(), needle);                                     \
    } while (0)

/* Every node and count getter of an allocation refuses a NULL handle, a NULL output and a
 * NULL node name with SA_NULL_POINTER and leaves its output untouched. */
static inline void check_allocation_getters_refuse_null(const sa_allocation *a) {
    const char *str = NULL;
    int64_t s = 7;
    uint32_t u = 7;
    size_t n = 7;
    sa_stage stage = -1;
    CHECK_STATUS(sa_allocation_node_count(NULL, &n), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_node_count(a, NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_node_name(NULL, 0, &str), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_node_name(a, 0, NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_node_graph(NULL, 0, &str), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_node_graph(a, 0, NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_stream_at(NULL, 0, &s), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_stream_at(a, 0, NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_logical_stream_at(NULL, 0, &s), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_logical_stream_at(a, 0, NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_stream_of(NULL, NULL, "a", &s), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_stream_of(a, NULL, NULL, &s), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_stream_of(a, NULL, "a", NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_logical_stream_of(NULL, NULL, "a", &s), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_logical_stream_of(a, NULL, NULL, &s), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_logical_stream_of(a, NULL, "a", NULL), SA_NULL_POINTER);
    sa_status (*const counts[])(const sa_allocation *, uint32_t *) = {
        sa_allocation_logical_stream_count, sa_allocation_physical_stream_count,
        sa_allocation_attached_stream_count, sa_allocation_sync_count};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        CHECK_STATUS(counts[i](NULL, &u), SA_NULL_POINTER);
        CHECK_STATUS(counts[i](a, NULL), SA_NULL_POINTER);
    }
    CHECK_STATUS(sa_allocation_mode(NULL, &str), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_mode(a, NULL), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_stage(NULL, &stage), SA_NULL_POINTER);
    CHECK_STATUS(sa_allocation_stage(a, NULL), SA_NULL_POINTER);
    CHECK(str == NULL && s == 7 && u == 7 && n == 7 && stage == -1);
}

/* Adds to graph `graph_name` of `g` one node `type` on `engine` with these tasks and cost for each
 * space-separated name in `names` ("a b c"). */
static inline void add_nodes(sa_graph *g, const char *graph_name, const char *type, const char *engine,
                             uint32_t tasks, double cost_us, const char *names) {
    char name[64];
    int used = 0;
    while (sscanf(names, " %63s%n", name, &used) == 1) {
        CHECK_OK(sa_graph_add_node(g, graph_name, name, type, engine, tasks, cost_us, 0));
        names += used;
    }
}

/* Adds to graph `graph_name` of `g` a data edge (port 0 to port 0) for each space-separated
 * "src>dst" in `edges` ("x>a a>b"). */
static inline void add_data_edges(sa_graph *g, const char *graph_name, const char *edges) {
    char src[64], dst[64];
    int used = 0;
    while (sscanf(edges, " %63[^> ]>%63s%n", src, dst, &used) == 2) {
        CHECK_OK(sa_graph_add_edge(g, graph_name, src, dst, SA_EDGE_DATA, 0, 0));
        edges += used;
    }
    CHECK(sscanf(edges, " %1s", src) != 1); /* the whole list was read */
}

/* A session on `g`, which it frees: the session shares the built model. */
static inline sa_session *session_taking(sa_graph *g) {
    sa_session *s = NULL;
    CHECK_OK(sa_session_new(g, &s));
    sa_graph_free(g);
    return s;
}

#endif
