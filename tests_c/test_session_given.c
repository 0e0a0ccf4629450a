/* The staged session from the host's own logical assignment: streams set per node, events
 * given before the split, the later stages run on them; bad events fail the build by name. */
#include "check.h"

/* a(0) -> b(1) -> d(0), a -> c(0); c and d carry the given streams, x none. */
static sa_graph *given_graph(void) {
    sa_graph *g = NULL;
    CHECK_OK(sa_graph_new("given", &g));
    CHECK_OK(sa_graph_add_node(g, NULL, "x", "Data", "DNN_VM_GE_LOCAL", 0, 0.0, 0));
    add_nodes(g, NULL, "Conv2D", "AIcoreEngine", 10, 1.0, "a b c d");
    add_data_edges(g, NULL, "x>a a>b a>c b>d c>d");
    CHECK_OK(sa_graph_set_node_stream(g, NULL, "a", 0));
    CHECK_OK(sa_graph_set_node_stream(g, NULL, "b", 1));
    CHECK_OK(sa_graph_set_node_stream(g, NULL, "c", 0));
    CHECK_OK(sa_graph_set_node_stream(g, NULL, "d", 0));
    return g;
}

static int64_t logical_of(sa_session *s, const char *node) {
    size_t i = 0;
    int64_t logical = -2, physical = -2;
    CHECK_OK(sa_session_node_index(s, NULL, node, &i));
    CHECK_OK(sa_session_node_streams(s, i, &logical, &physical));
    return logical;
}

/* From sync: the given streams stay; the session inserts the two syncs a -> b, b -> d. */
static void test_from_given_streams(void) {
    sa_session *s = session_taking(given_graph());
    CHECK_OK(sa_session_assign_given_streams(s));
    CHECK_STATUS(sa_session_assign_given_streams(s), SA_STAGE);
    CHECK_STATUS(sa_session_assign_logical_streams(s), SA_STAGE);
    CHECK(logical_of(s, "a") == 0 && logical_of(s, "b") == 1 && logical_of(s, "d") == 0);
    CHECK(logical_of(s, "x") == -1);
    sa_session_stage st = -1;
    CHECK_OK(sa_session_current_stage(s, &st));
    CHECK(st == SA_SESSION_LOGICAL);
    CHECK_OK(sa_session_insert_syncs(s));
    CHECK_STATUS(sa_session_insert_given_syncs(s), SA_STAGE);
    uint32_t events = 0, streams = 0;
    CHECK_OK(sa_session_counts(s, NULL, &streams, NULL, &events, NULL));
    CHECK(events == 2 && streams == 2);
    CHECK_OK(sa_session_split_streams(s));
    CHECK_OK(sa_session_generate_send_recv(s));
    size_t violations = 1;
    CHECK_OK(sa_session_verify(s, &violations, NULL));
    CHECK(violations == 0);
    sa_session_free(s);
}

/* From split: the events the host gives are the syncs as they are (ids kept), each with its
 * Send/Recv node; a task limit of 47 (20 tasks of room) cuts stream 0 (a, c, d: 10 tasks each,
 * with a's Send and d's Recv) into three pieces, each joined by an event of the split's own. */
static void test_from_given_syncs(void) {
    sa_graph *g = given_graph();
    CHECK_OK(sa_graph_add_event(g, 3, NULL, "a", -1, "", "b", -1));
    CHECK_OK(sa_graph_add_event(g, 4, NULL, "b", -1, NULL, "d", -1));
    CHECK_OK(sa_graph_set_option(g, "max_task_count", "47"));
    sa_session *s = session_taking(g);
    CHECK_STATUS(sa_session_insert_given_syncs(s), SA_STAGE);
    CHECK_OK(sa_session_assign_given_streams(s));
    CHECK_OK(sa_session_insert_given_syncs(s));
    uint32_t events = 0, streams = 0;
    CHECK_OK(sa_session_counts(s, NULL, &streams, NULL, &events, NULL));
    CHECK(events == 5 && streams == 2);
    size_t a = 0;
    CHECK_OK(sa_session_node_index(s, NULL, "a", &a));
    const uint32_t *send = NULL, *recv = NULL;
    size_t send_count = 0, recv_count = 0;
    CHECK_OK(sa_session_node_syncs(s, a, &send, &send_count, &recv, &recv_count));
    CHECK(send_count == 1 && send[0] == 3 && recv_count == 0);
    CHECK_OK(sa_session_split_streams(s));
    CHECK_OK(sa_session_counts(s, NULL, &streams, NULL, &events, NULL));
    CHECK(streams == 4);
    CHECK(events == 7);
    CHECK_OK(sa_session_generate_send_recv(s));
    size_t inserted = 0;
    CHECK_OK(sa_session_inserted_count(s, &inserted));
    CHECK(inserted == 8);
    sa_session_free(s);
}

/* Bad events and attached streams: refused by argument, or at the build naming the event. */
static void test_bad_given_input(void) {
    sa_graph *g = given_graph();
    CHECK_STATUS(sa_graph_add_event(g, 0, NULL, "a", -2, NULL, "b", -1), SA_INVALID_ARGUMENT);
    CHECK_CONTAINS(sa_graph_last_error(g), "from_attached");
    CHECK_STATUS(sa_graph_add_event(g, 0, NULL, NULL, -1, NULL, "b", -1), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_set_node_attached_streams(g, NULL, "a", NULL, 1), SA_NULL_POINTER);
    CHECK_STATUS(sa_graph_set_node_attached_streams(g, NULL, "zz", NULL, 0), SA_NOT_FOUND);
    CHECK_OK(sa_graph_add_event(g, 0, NULL, "a", -1, NULL, "nope", -1));
    sa_session *s = NULL;
    CHECK_STATUS(sa_session_new(g, &s), SA_UNKNOWN_NODE);
    CHECK(s == NULL);
    CHECK_CONTAINS(sa_graph_last_error(g), "events[0]");
    CHECK_CONTAINS(sa_graph_last_error(g), "'nope'");
    sa_graph_free(g);

    g = given_graph();
    CHECK_OK(sa_graph_add_event(g, 0, NULL, "a", -1, NULL, "c", -1));
    CHECK_STATUS(sa_session_new(g, &s), SA_FIELD);
    CHECK_CONTAINS(sa_graph_last_error(g), "both on stream 0");
    sa_graph_free(g);

    /* An attached stream set by the host is an end an event may name. */
    g = given_graph();
    const uint32_t att[] = {2};
    CHECK_OK(sa_graph_set_node_attached_streams(g, NULL, "c", att, 1));
    CHECK_OK(sa_graph_add_event(g, 0, NULL, "c", 2, NULL, "d", -1));
    CHECK_OK(sa_session_new(g, &s));
    CHECK_OK(sa_session_assign_given_streams(s));
    size_t c = 0;
    const int64_t *phys = NULL, *logical = NULL;
    size_t count = 0;
    CHECK_OK(sa_session_node_index(s, NULL, "c", &c));
    CHECK_OK(sa_session_node_attached(s, c, &phys, &logical, &count));
    CHECK(count == 1 && logical[0] == 2);
    sa_session_free(s);
    sa_graph_free(g);
}

int main(void) {
    test_from_given_streams();
    test_from_given_syncs();
    test_bad_given_input();
    puts("test_session_given: ok");
    return 0;
}
