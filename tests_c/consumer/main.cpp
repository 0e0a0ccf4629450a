// C++ consumer of an installed stream-alloc: the header works from C++ with C linkage.
#include <cstdio>
#include <memory>
#include <string>

#include <stream_alloc.h>

int main() {
    sa_graph *raw = nullptr;
    if (sa_graph_new("cxx", &raw) != SA_OK) return 1;
    std::unique_ptr<sa_graph, decltype(&sa_graph_free)> g(raw, &sa_graph_free);
    if (sa_graph_add_node(g.get(), nullptr, "a", "Conv2D", "AIcoreEngine", 1, 1.0, 0) != SA_OK) return 1;
    if (sa_graph_set_option(g.get(), "enable_single_stream", "true") != SA_OK) return 1;
    sa_allocation *a = nullptr;
    if (sa_graph_allocate(g.get(), SA_STAGE_ALL, &a) != SA_OK) {
        std::fprintf(stderr, "%s: %s\n", sa_graph_last_error_code(g.get()), sa_graph_last_error(g.get()));
        return 1;
    }
    std::unique_ptr<sa_allocation, decltype(&sa_allocation_free)> alloc(a, &sa_allocation_free);
    char *json = nullptr;
    if (sa_allocation_to_json(alloc.get(), &json) != SA_OK) return 1;
    std::string text(json);
    sa_string_free(json);
    std::printf("json bytes: %zu\n", text.size());
    return text.find("\"static-single\"") != std::string::npos ? 0 : 1;
}
