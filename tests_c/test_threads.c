/* Thread safety as documented: one sa_allocation queried from several threads at once, graphs
 * built on separate threads, and a last error per thread. */
#include <pthread.h>

#include "check.h"

#define THREADS 4
#define ROUNDS 200

static sa_allocation *shared;

static void *query(void *arg) {
    size_t id = (size_t)arg;
    size_t n = 0;
    CHECK_OK(sa_allocation_node_count(shared, &n));
    for (int r = 0; r < ROUNDS; r++) {
        for (size_t i = 0; i < n; i++) {
            const char *name = NULL;
            int64_t at = -2, by_name = -3;
            CHECK_OK(sa_allocation_node_name(shared, i, &name));
            CHECK_OK(sa_allocation_stream_at(shared, i, &at));
            CHECK_OK(sa_allocation_stream_of(shared, NULL, name, &by_name));
            CHECK(at == by_name);
        }
        char *json = NULL;
        CHECK_OK(sa_allocation_to_json(shared, &json));
        sa_string_free(json);
    }
    /* A failure on this thread is visible here only. */
    char missing[32];
    snprintf(missing, sizeof missing, "missing_%zu", id);
    int64_t s;
    CHECK_STATUS(sa_allocation_stream_of(shared, NULL, missing, &s), SA_NOT_FOUND);
    CHECK_CONTAINS(sa_last_error_message(), missing);
    return NULL;
}

static void *build_own(void *arg) {
    (void)arg;
    sa_graph *g = NULL;
    sa_allocation *a = NULL;
    CHECK_OK(sa_graph_new("own", &g));
    CHECK_OK(sa_graph_add_node(g, NULL, "a", "Conv2D", "AIcoreEngine", 1, 0.0, 0));
    CHECK_OK(sa_graph_add_node(g, NULL, "b", "Relu", "AIcoreEngine", 1, 0.0, 0));
    CHECK_OK(sa_graph_add_edge(g, NULL, "a", "b", SA_EDGE_DATA, 0, 0));
    CHECK_OK(sa_graph_set_option(g, "enable_single_stream", "true"));
    CHECK_OK(sa_graph_allocate(g, SA_STAGE_ALL, &a));
    sa_graph_free(g);
    uint32_t c = 0;
    CHECK_OK(sa_allocation_logical_stream_count(a, &c));
    CHECK(c == 1);
    sa_allocation_free(a);
    return NULL;
}

int main(void) {
    sa_graph *g = NULL;
    CHECK_OK(sa_graph_new("shared", &g));
    char name[16];
    for (int i = 0; i < 50; i++) {
        snprintf(name, sizeof name, "n%d", i);
        CHECK_OK(sa_graph_add_node(g, NULL, name, "Relu", "AIcoreEngine", 1, 0.0, 0));
        if (i > 0) {
            char prev[16];
            snprintf(prev, sizeof prev, "n%d", i - 1);
            CHECK_OK(sa_graph_add_edge(g, NULL, prev, name, SA_EDGE_DATA, 0, 0));
        }
    }
    CHECK_OK(sa_graph_set_option(g, "enable_single_stream", "true"));
    CHECK_OK(sa_graph_allocate(g, SA_STAGE_ALL, &shared));
    sa_graph_free(g);

    pthread_t t[2 * THREADS];
    for (size_t i = 0; i < THREADS; i++) CHECK(pthread_create(&t[i], NULL, query, (void *)i) == 0);
    for (size_t i = THREADS; i < 2 * THREADS; i++) CHECK(pthread_create(&t[i], NULL, build_own, NULL) == 0);
    for (size_t i = 0; i < 2 * THREADS; i++) CHECK(pthread_join(t[i], NULL) == 0);

    /* The main thread's own last error is untouched by the workers' failures. */
    CHECK_STR(sa_last_error_message(), "");
    sa_allocation_free(shared);
    puts("test_threads: ok");
    return 0;
}
