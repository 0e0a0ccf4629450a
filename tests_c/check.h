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

#endif
