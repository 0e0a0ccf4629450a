/* sa_status values, sa_status_str, sa_status_code, sa_version, thread last error before any
 * failure, and the functions that accept NULL: sa_string_free. */
#include "check.h"

static_assert(sizeof(sa_status) == 4, "sa_status is a fixed 32-bit integer");
static_assert(sizeof(sa_stage) == 4 && sizeof(sa_shape) == 4 && sizeof(sa_edge_kind) == 4, "int32 enums");
static_assert(SA_OK == 0, "SA_OK is 0");

struct known {
    sa_status status;
    const char *name;
    const char *code;
};

/* Stable values: each status equals the number of its code string. */
static const struct known KNOWN[] = {
    {SA_OK, "SA_OK", ""},
    {SA_IO, "SA_IO", "SA1000"},
    {SA_JSON, "SA_JSON", "SA1001"},
    {SA_FORMAT, "SA_FORMAT", "SA1002"},
    {SA_FIELD, "SA_FIELD", "SA1003"},
    {SA_DUPLICATE_NAME, "SA_DUPLICATE_NAME", "SA1004"},
    {SA_UNKNOWN_NODE, "SA_UNKNOWN_NODE", "SA1005"},
    {SA_CYCLE, "SA_CYCLE", "SA1006"},
    {SA_UNKNOWN_ENGINE, "SA_UNKNOWN_ENGINE", "SA1007"},
    {SA_ATTRIBUTE, "SA_ATTRIBUTE", "SA1008"},
    {SA_SUBGRAPH, "SA_SUBGRAPH", "SA1009"},
    {SA_PARTITION, "SA_PARTITION", "SA1010"},
    {SA_NOT_IMPLEMENTED, "SA_NOT_IMPLEMENTED", "SA2000"},
    {SA_FAILED, "SA_FAILED", "SA2001"},
    {SA_STAGE, "SA_STAGE", "SA2002"},
    {SA_LIMIT, "SA_LIMIT", "SA2003"},
    {SA_NULL_POINTER, "SA_NULL_POINTER", "SA3001"},
    {SA_INVALID_ARGUMENT, "SA_INVALID_ARGUMENT", "SA3002"},
    {SA_BUFFER_TOO_SMALL, "SA_BUFFER_TOO_SMALL", "SA3003"},
    {SA_PANIC, "SA_PANIC", "SA3004"},
    {SA_INVALID_STATE, "SA_INVALID_STATE", "SA3005"},
    {SA_NOT_FOUND, "SA_NOT_FOUND", "SA3006"},
    {SA_INVALID_OPTION, "SA_INVALID_OPTION", "E10001"},
    {SA_INVALID_HCOM_PARALLEL, "SA_INVALID_HCOM_PARALLEL", "E10006"},
    {SA_SINGLE_STREAM_LABEL, "SA_SINGLE_STREAM_LABEL", "E10055"},
    {SA_SINGLE_STREAM_AUTO_MODE, "SA_SINGLE_STREAM_AUTO_MODE", "E10056"},
    {SA_INTERNAL, "SA_INTERNAL", "E19999"},
};

int main(void) {
    /* Nothing failed yet on this thread. */
    CHECK_STR(sa_last_error_message(), "");
    CHECK_STR(sa_last_error_code(), "");

    for (size_t i = 0; i < sizeof KNOWN / sizeof KNOWN[0]; i++) {
        const struct known *k = &KNOWN[i];
        const char *text = sa_status_str(k->status);
        CHECK(text != NULL);
        CHECK(strncmp(text, k->name, strlen(k->name)) == 0 && text[strlen(k->name)] == ':');
        CHECK(strlen(text) > strlen(k->name) + 2);
        CHECK_STR(sa_status_code(k->status), k->code);
        if (k->status != SA_OK) {
            const char *digits = k->code + strcspn(k->code, "0123456789");
            CHECK(atoi(digits) == k->status);
        }
    }
    /* Unknown values are described, never NULL. */
    CHECK_STR(sa_status_str(-1), "SA_UNKNOWN: unknown status");
    CHECK_STR(sa_status_str(42), "SA_UNKNOWN: unknown status");
    CHECK_STR(sa_status_code(-1), "");
    CHECK_STR(sa_status_code(2147483647), "");

    CHECK(sa_version() != NULL);
    CHECK(strchr(sa_version(), '.') != NULL);

    /* Freeing NULL is a no-op. */
    sa_string_free(NULL);
    puts("test_status: ok");
    return 0;
}
