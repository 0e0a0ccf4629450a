/* Builds a small graph through the C ABI, allocates it in single-stream mode, prints streams. */
#include <stdio.h>
#include "stream_alloc.h"

#define TRY(call) do { if ((call) != SA_OK) { fprintf(stderr, "%s: %s\n", sa_last_error_code(), sa_last_error_message()); return 1; } } while (0)

int main(void) {
    sa_graph *g = NULL; sa_allocation *a = NULL; size_t n = 0;
    TRY(sa_graph_new("tiny", &g));
    TRY(sa_graph_add_node(g, NULL, "x", "Data", "DNN_VM_GE_LOCAL", 0, 0.0, 0));
    TRY(sa_graph_add_node(g, NULL, "conv", "Conv2D", "AIcoreEngine", 1, 12.5, 20));
    TRY(sa_graph_add_node(g, NULL, "relu", "Relu", "VectorEngine", 1, 1.0, 8));
    TRY(sa_graph_add_edge(g, NULL, "x", "conv", SA_EDGE_DATA, 0, 0));
    TRY(sa_graph_add_edge(g, NULL, "conv", "relu", SA_EDGE_DATA, 0, 0));
    TRY(sa_graph_set_option(g, "enable_single_stream", "true"));
    TRY(sa_graph_allocate(g, SA_STAGE_ALL, &a));
    TRY(sa_allocation_node_count(a, &n));
    for (size_t i = 0; i < n; i++) {
        const char *name; int64_t s; TRY(sa_allocation_node_name(a, i, &name)); TRY(sa_allocation_stream_at(a, i, &s));
        printf("%s -> stream %lld\n", name, (long long)s);
    }
    sa_allocation_free(a); sa_graph_free(g);
    return 0;
}
