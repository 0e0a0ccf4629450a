/* Consumer of an installed stream-alloc: load graph JSON, allocate, print node streams. */
#include <stdio.h>
#include <string.h>

#include <stream_alloc.h>

static const char *GRAPH =
    "{\"format\": \"stream-graph\", \"version\": 1, \"name\": \"consumer\","
    " \"nodes\": [{\"name\": \"a\", \"type\": \"Conv2D\", \"engine\": \"AIcoreEngine\"},"
    "             {\"name\": \"b\", \"type\": \"Relu\", \"engine\": \"VectorEngine\"}],"
    " \"edges\": [{\"src\": \"a\", \"dst\": \"b\"}],"
    " \"options\": {\"enable_single_stream\": true}}";

int main(void) {
    sa_graph *g = NULL;
    sa_allocation *a = NULL;
    if (sa_graph_from_json(GRAPH, &g) != SA_OK || sa_graph_allocate(g, SA_STAGE_ALL, &a) != SA_OK) {
        fprintf(stderr, "error %s: %s\n", sa_last_error_code(), sa_last_error_message());
        return 1;
    }
    int64_t sa = -2, sb = -2;
    if (sa_allocation_stream_of(a, NULL, "a", &sa) != SA_OK || sa_allocation_stream_of(a, NULL, "b", &sb) != SA_OK) {
        return 1;
    }
    printf("stream-alloc %s: a -> %lld, b -> %lld\n", sa_version(), (long long)sa, (long long)sb);
    sa_allocation_free(a);
    sa_graph_free(g);
    return (sa == 0 && sb == 0) ? 0 : 1;
}
