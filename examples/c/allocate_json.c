/* Loads a graph JSON file, allocates it with four AI-core streams, prints each node's stream.
 * Usage: allocate_json [GRAPH]  (default examples/resnet50.json) */
#include <stdio.h>
#include "stream_alloc.h"

int main(int argc, char **argv) {
    sa_graph *g = NULL; sa_allocation *a = NULL; size_t n = 0;
    if (sa_graph_from_json_file(argc > 1 ? argv[1] : "examples/resnet50.json", &g) != SA_OK) {
        fprintf(stderr, "%s: %s\n", sa_last_error_code(), sa_last_error_message());
        return 1;
    }
    sa_graph_set_option(g, "max_parallel_num", "AIcoreEngine:4");
    if (sa_graph_allocate(g, SA_STAGE_ALL, &a) != SA_OK) {
        fprintf(stderr, "%s: %s\n", sa_graph_last_error_code(g), sa_graph_last_error(g));
        sa_graph_free(g);
        return 1;
    }
    sa_allocation_node_count(a, &n);
    for (size_t i = 0; i < n; i++) {
        const char *name; int64_t s;
        sa_allocation_node_name(a, i, &name); sa_allocation_stream_at(a, i, &s);
        printf("%s -> stream %lld\n", name, (long long)s);
    }
    sa_allocation_free(a); sa_graph_free(g);
    return 0;
}
