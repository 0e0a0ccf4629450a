/* Plain-C use of stream_alloc_runtime.h, with the fake runtime compiled in and told through the
 * environment (FAKE_RT_FAIL_AT=2) to fail the second create: the header compiles as C, pointer
 * checks return SA_RT_NULL, bad options SA_RT_INVALID, and a device failure is reported with the
 * runtime's code in the message. */
#include <stdio.h>
#include <string.h>

#include "stream_alloc_runtime.h"

void fake_rt_counts(uint32_t kind, uint64_t *creates, uint64_t *destroys);

static int failures = 0;
#define CHECK(c)                                                   \
  do {                                                             \
    if (!(c)) {                                                    \
      fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #c); \
      ++failures;                                                  \
    }                                                              \
  } while (0)

int main(void) {
  sa_stream_allocator *a = NULL;
  CHECK(sa_stream_allocator_new(0, 0, NULL) == SA_RT_NULL);
  CHECK(sa_stream_allocator_acquire(NULL, 1) == NULL);
  CHECK(strstr(sa_rt_last_error(), "null") != NULL);
  CHECK(sa_stream_allocator_new(0, 0, &a) == SA_OK);
  CHECK(sa_stream_allocator_acquire(a, 4) == NULL); /* second create fails */
  CHECK(strstr(sa_rt_last_error(), "207008") != NULL);
  void *v = sa_stream_allocator_acquire(a, 4); /* the retry succeeds */
  CHECK(v != NULL);
  CHECK(v != NULL && ((const size_t *)v)[1] == 4);
  sa_stream_allocator_free(a);
  uint64_t c = 0, d = 0;
  fake_rt_counts(0, &c, &d);
  CHECK(c == 3 && d == 3);

  sa_reusable_pool *p = NULL;
  CHECK(sa_reusable_pool_new("reuse=sometimes", &p) == SA_RT_INVALID);
  CHECK(p == NULL);
  CHECK(sa_reusable_pool_new(NULL, &p) == SA_OK);
  void *s = NULL;
  CHECK(sa_reusable_pool_get_or_create(p, NULL, 1, 0, 1, 0) == SA_RT_NULL);
  CHECK(sa_reusable_pool_get_or_create(p, &s, 1, 0, 1, 0) == SA_OK);
  sa_pool_stats st;
  CHECK(sa_reusable_pool_stats(p, &st) == SA_OK && st.live == 1);
  CHECK(sa_reusable_pool_destroy_stream(p, &s, false) == SA_OK);
  CHECK(sa_reusable_pool_stats(p, &st) == SA_OK && st.live == 0 && st.destroyed == 1);
  sa_reusable_pool_free(p);
  sa_reusable_pool_free(NULL);
  fake_rt_counts(0, &c, &d);
  CHECK(c == d);
  printf("%s\n", failures == 0 ? "all passed" : "FAILED");
  return failures == 0 ? 0 : 1;
}
