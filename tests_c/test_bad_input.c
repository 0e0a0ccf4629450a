/* The bad-input table through the C ABI (tests/fixtures/bad_input/table.tsv; the CLI and Rust
 * half is tests/bad_input.rs), then misuse of the ABI itself: NULL for every pointer argument,
 * calls that do not fit the handle's state, out-of-domain values and a buffer too small.
 *
 *   test_bad_input FIXTURE_DIR ROW_ID   runs one table row (one ctest per row)
 *   test_bad_input FIXTURE_DIR          runs every row and the misuse checks
 *
 * Each failure must return the row's status, leave the row's code as the thread's (and the
 * handle's) last error and a message containing the row's needles. Run under ASan/LSan too. */
#include "check.h"

#include <stdint.h>

#define MAX_LINE 4096

/* "SA1005" -> 1005, "E10001" -> 10001: a status equals the number of its code. */
static sa_status status_of_code(const char *code) {
    while (*code && (*code < '0' || *code > '9')) code++;
    return (sa_status)atoi(code);
}

static void check_message(const char *row, const char *msg, const char *needles) {
    char buf[MAX_LINE];
    snprintf(buf, sizeof buf, "%s", needles);
    for (char *save = NULL, *n = strtok_r(buf, "|", &save); n; n = strtok_r(NULL, "|", &save)) {
        if (msg == NULL || strstr(msg, n) == NULL) {
            fprintf(stderr, "row %s: message \"%s\" lacks \"%s\"\n", row, msg ? msg : "(null)", n);
            exit(1);
        }
    }
}

/* Runs one row; returns 1 if it ran. */
static int run_row(const char *dir, char *line, const char *only) {
    char *save = NULL;
    char *id = strtok_r(line, "\t", &save);
    char *fixture = strtok_r(NULL, "\t", &save);
    char *options = strtok_r(NULL, "\t", &save);
    char *code = strtok_r(NULL, "\t", &save);
    char *needles = strtok_r(NULL, "\t\n", &save);
    CHECK(id && fixture && options && code && needles);
    if (only && strcmp(only, id) != 0) return 0;
    sa_status expected = status_of_code(code);

    char path[MAX_LINE];
    snprintf(path, sizeof path, "%s/%s", dir, fixture);
    sa_graph *g = NULL;
    sa_allocation *a = NULL;
    sa_status s = sa_graph_from_json_file(path, &g);
    if (s == SA_OK) {
        CHECK(g != NULL);
        if (strcmp(options, "-") != 0) {
            char *osave = NULL;
            for (char *kv = strtok_r(options, " ", &osave); kv && s == SA_OK; kv = strtok_r(NULL, " ", &osave)) {
                char *eq = strchr(kv, '=');
                CHECK(eq != NULL);
                *eq = '\0';
                s = sa_graph_set_option(g, kv, eq + 1);
            }
        }
        if (s == SA_OK) s = sa_graph_build(g);
        if (s == SA_OK) s = sa_graph_allocate(g, SA_STAGE_ALL, &a);
    } else {
        CHECK(g == NULL); /* outputs are written only on success */
    }
    if (s != expected) {
        fprintf(stderr, "row %s: status %d (%s), expected %d (%s); message: %s\n", id, (int)s,
                sa_status_str(s), (int)expected, code, sa_last_error_message());
        exit(1);
    }
    CHECK(a == NULL);
    CHECK_STR(sa_last_error_code(), code);
    check_message(id, sa_last_error_message(), needles);
    if (g) {
        CHECK_STR(sa_graph_last_error_code(g), code);
        check_message(id, sa_graph_last_error(g), needles);
        sa_graph_free(g);
    }
    printf("ok %s: %s\n", id, code);
    return 1;
}

static void run_table(const char *dir, const char *only) {
    char path[MAX_LINE];
    snprintf(path, sizeof path, "%s/table.tsv", dir);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    char line[MAX_LINE];
    int ran = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        ran += run_row(dir, line, only);
    }
    fclose(f);
    CHECK(ran >= 1);
    if (!only) CHECK(ran >= 40);
}

/* A built graph and its allocation for the misuse checks. */
static sa_graph *small_graph(void) {
    sa_graph *g = NULL;
    CHECK_OK(sa_graph_new("g", &g));
    CHECK_OK(sa_graph_add_node(g, NULL, "x", "Data", "DNN_VM_GE_LOCAL", 0, 0.0, 0));
    CHECK_OK(sa_graph_add_node(g, NULL, "a", "Conv2D", "AIcoreEngine", 1, 1.0, 1));
    CHECK_OK(sa_graph_add_edge(g, NULL, "x", "a", SA_EDGE_DATA, 0, 0));
    return g;
}

#define NUL SA_NULL_POINTER

static void null_for_every_pointer(void) {
    sa_graph *g = small_graph();
    sa_graph *gout = NULL;
    size_t n = 0;
    /* Constructors. */
    CHECK_STATUS(sa_graph_new(NULL, &gout), NUL);
    CHECK_STATUS(sa_graph_new("g", NULL), NUL);
    CHECK_STATUS(sa_graph_from_json(NULL, &gout), NUL);
    CHECK_STATUS(sa_graph_from_json("{}", NULL), NUL);
    CHECK_STATUS(sa_graph_from_json_file(NULL, &gout), NUL);
    CHECK_STATUS(sa_graph_from_json_file("x.json", NULL), NUL);
    CHECK(gout == NULL);
    /* Description. */
    CHECK_STATUS(sa_graph_set_option(NULL, "event", "event"), NUL);
    CHECK_STATUS(sa_graph_set_option(g, NULL, "event"), NUL);
    CHECK_STATUS(sa_graph_set_option(g, "event", NULL), NUL);
    CHECK_STATUS(sa_graph_set_graph_attr(NULL, "k", "1"), NUL);
    CHECK_STATUS(sa_graph_set_graph_attr(g, NULL, "1"), NUL);
    CHECK_STATUS(sa_graph_set_graph_attr(g, "k", NULL), NUL);
    CHECK_STATUS(sa_graph_set_shape(NULL, NULL, SA_SHAPE_STATIC), NUL);
    CHECK_STATUS(sa_graph_add_subgraph(NULL, NULL, "a", "sub", SA_SHAPE_STATIC), NUL);
    CHECK_STATUS(sa_graph_add_subgraph(g, NULL, NULL, "sub", SA_SHAPE_STATIC), NUL);
    CHECK_STATUS(sa_graph_add_subgraph(g, NULL, "a", NULL, SA_SHAPE_STATIC), NUL);
    CHECK_STATUS(sa_graph_add_node(NULL, NULL, "b", "Relu", "AIcoreEngine", 1, 0.0, 0), NUL);
    CHECK_STATUS(sa_graph_add_node(g, NULL, NULL, "Relu", "AIcoreEngine", 1, 0.0, 0), NUL);
    CHECK_STATUS(sa_graph_add_node(g, NULL, "b", NULL, "AIcoreEngine", 1, 0.0, 0), NUL);
    CHECK_STATUS(sa_graph_add_node(g, NULL, "b", "Relu", NULL, 1, 0.0, 0), NUL);
    CHECK_STATUS(sa_graph_add_edge(NULL, NULL, "x", "a", SA_EDGE_DATA, 0, 0), NUL);
    CHECK_STATUS(sa_graph_add_edge(g, NULL, NULL, "a", SA_EDGE_DATA, 0, 0), NUL);
    CHECK_STATUS(sa_graph_add_edge(g, NULL, "x", NULL, SA_EDGE_DATA, 0, 0), NUL);
    CHECK_STATUS(sa_graph_set_node_attr(NULL, NULL, "a", "stream_label", "\"s\""), NUL);
    CHECK_STATUS(sa_graph_set_node_attr(g, NULL, NULL, "stream_label", "\"s\""), NUL);
    CHECK_STATUS(sa_graph_set_node_attr(g, NULL, "a", NULL, "\"s\""), NUL);
    CHECK_STATUS(sa_graph_set_node_attr(g, NULL, "a", "stream_label", NULL), NUL);
    CHECK_STATUS(sa_graph_set_node_attr_str(NULL, NULL, "a", "stream_label", "s"), NUL);
    CHECK_STATUS(sa_graph_set_node_attr_str(g, NULL, NULL, "stream_label", "s"), NUL);
    CHECK_STATUS(sa_graph_set_node_attr_str(g, NULL, "a", NULL, "s"), NUL);
    CHECK_STATUS(sa_graph_set_node_attr_str(g, NULL, "a", "stream_label", NULL), NUL);
    CHECK_STATUS(sa_graph_set_node_ge_attr(NULL, NULL, "a", "_batch_num", "1"), NUL);
    CHECK_STATUS(sa_graph_set_node_ge_attr(g, NULL, NULL, "_batch_num", "1"), NUL);
    CHECK_STATUS(sa_graph_set_node_ge_attr(g, NULL, "a", NULL, "1"), NUL);
    CHECK_STATUS(sa_graph_set_node_ge_attr(g, NULL, "a", "_batch_num", NULL), NUL);
    CHECK_STATUS(sa_graph_set_node_stream(NULL, NULL, "a", 0), NUL);
    CHECK_STATUS(sa_graph_set_node_stream(g, NULL, NULL, 0), NUL);
    CHECK_STATUS(sa_graph_node_count(NULL, &n), NUL);
    CHECK_STATUS(sa_graph_node_count(g, NULL), NUL);
    CHECK_STATUS(sa_graph_build(NULL), NUL);
    CHECK(sa_graph_last_error(NULL) == NULL);
    CHECK(sa_graph_last_error_code(NULL) == NULL);
    /* The failures above changed nothing: the graph still builds and allocates. */
    CHECK_OK(sa_graph_node_count(g, &n));
    CHECK(n == 2);
    sa_allocation *a = NULL;
    CHECK_STATUS(sa_graph_allocate(NULL, SA_STAGE_ALL, &a), NUL);
    CHECK_STATUS(sa_graph_allocate(g, SA_STAGE_ALL, NULL), NUL);
    CHECK_OK(sa_graph_allocate(g, SA_STAGE_ALL, &a));

    /* Result accessors. */
    char *json = NULL;
    check_allocation_getters_refuse_null(a);
    CHECK_STATUS(sa_allocation_to_json(NULL, &json), NUL);
    CHECK_STATUS(sa_allocation_to_json(a, NULL), NUL);
    CHECK(json == NULL);
    size_t needed = 0;
    char small[4];
    CHECK_STATUS(sa_allocation_copy_json(NULL, small, sizeof small, &needed), NUL);
    CHECK_STATUS(sa_allocation_copy_json(a, NULL, 8, &needed), NUL);
    CHECK_STATUS(sa_allocation_copy_json(a, small, sizeof small, NULL), NUL);
    CHECK(sa_allocation_last_error(NULL) == NULL);
    CHECK(sa_allocation_last_error_code(NULL) == NULL);
    /* The NULL message names the argument. */
    CHECK_STATUS(sa_allocation_stream_of(a, NULL, "a", NULL), NUL);
    CHECK(strstr(sa_last_error_message(), "'stream'") != NULL);
    /* No-ops. */
    sa_allocation_free(NULL);
    sa_graph_free(NULL);
    sa_string_free(NULL);
    sa_allocation_free(a);
    sa_graph_free(g);
}

static void state_domain_and_buffers(void) {
    sa_graph *g = small_graph();
    sa_allocation *a = NULL;
    /* Out-of-domain enum values name the value. */
    CHECK_STATUS(sa_graph_allocate(g, 7, &a), SA_INVALID_ARGUMENT);
    CHECK(strstr(sa_graph_last_error(g), "7") != NULL);
    CHECK_STATUS(sa_graph_add_edge(g, NULL, "x", "a", 9, 0, 0), SA_INVALID_ARGUMENT);
    CHECK_STATUS(sa_graph_set_shape(g, NULL, 5), SA_INVALID_ARGUMENT);
    CHECK_STATUS(sa_graph_add_node(g, NULL, "c", "Relu", "AIcoreEngine", 1, -1.0, 0), SA_INVALID_ARGUMENT);
    /* Unknown graph and node names. */
    CHECK_STATUS(sa_graph_add_node(g, "nograph", "c", "Relu", "AIcoreEngine", 1, 0.0, 0), SA_NOT_FOUND);
    CHECK(strstr(sa_graph_last_error(g), "nograph") != NULL);
    CHECK_STATUS(sa_graph_set_node_stream(g, NULL, "ghost", 0), SA_NOT_FOUND);
    CHECK(strstr(sa_graph_last_error(g), "ghost") != NULL);
    /* Invalid JSON values of attributes. */
    CHECK_STATUS(sa_graph_set_node_attr(g, NULL, "a", "stream_label", "{not json"), SA_JSON);
    /* Calls that do not fit the state: describing a built graph. */
    CHECK_OK(sa_graph_build(g));
    CHECK_STATUS(sa_graph_add_node(g, NULL, "late", "Relu", "AIcoreEngine", 1, 0.0, 0), SA_INVALID_STATE);
    CHECK(strstr(sa_graph_last_error(g), "built") != NULL);
    CHECK_STATUS(sa_graph_set_option(g, "event", "notify"), SA_INVALID_STATE);
    CHECK_STATUS(sa_graph_add_edge(g, NULL, "a", "x", SA_EDGE_CONTROL, 0, 0), SA_INVALID_STATE);
    CHECK_OK(sa_graph_build(g)); /* building twice is a no-op */
    CHECK_OK(sa_graph_allocate(g, SA_STAGE_LOGICAL, &a));

    /* Index and name lookups out of range. */
    const char *str = NULL;
    int64_t stream = 0;
    CHECK_STATUS(sa_allocation_node_name(a, 99, &str), SA_NOT_FOUND);
    CHECK(strstr(sa_allocation_last_error(a), "99") != NULL);
    CHECK_STATUS(sa_allocation_stream_of(a, NULL, "ghost", &stream), SA_NOT_FOUND);
    CHECK(strstr(sa_allocation_last_error(a), "ghost") != NULL);
    CHECK_STATUS(sa_allocation_stream_of(a, "nograph", "a", &stream), SA_NOT_FOUND);

    /* A buffer too small: the size needed comes back, the buffer is untouched; a retry with
     * that size succeeds. */
    size_t needed = 0;
    char small[8];
    memset(small, 'Z', sizeof small);
    CHECK_STATUS(sa_allocation_copy_json(a, small, sizeof small, &needed), SA_BUFFER_TOO_SMALL);
    CHECK(needed > sizeof small);
    CHECK(small[0] == 'Z' && small[7] == 'Z');
    size_t asked = 0;
    CHECK_OK(sa_allocation_copy_json(a, NULL, 0, &asked));
    CHECK(asked == needed);
    char *buf = malloc(needed);
    CHECK(buf != NULL);
    CHECK_STATUS(sa_allocation_copy_json(a, buf, needed - 1, &asked), SA_BUFFER_TOO_SMALL);
    CHECK_OK(sa_allocation_copy_json(a, buf, needed, &asked));
    CHECK(strlen(buf) + 1 == needed);
    free(buf);
    sa_allocation_free(a);
    sa_graph_free(g);

    /* A failed build can be fixed and built again. */
    g = small_graph();
    CHECK_OK(sa_graph_add_edge(g, NULL, "a", "x", SA_EDGE_CONTROL, 0, 0));
    CHECK_STATUS(sa_graph_build(g), SA_CYCLE);
    sa_graph_free(g);
    /* Unknown statuses still describe themselves. */
    CHECK_STR(sa_status_str(-5), "SA_UNKNOWN: unknown status");
    CHECK_STR(sa_status_code(123456), "");
}

int main(int argc, char **argv) {
    CHECK(argc >= 2);
    char dir[MAX_LINE];
    snprintf(dir, sizeof dir, "%s", argv[1]);
    if (argc >= 3) {
        run_table(dir, argv[2]);
        return 0;
    }
    run_table(dir, NULL);
    null_for_every_pointer();
    state_domain_and_buffers();
    printf("ok: C ABI misuse\n");
    return 0;
}
