/* Plain-C use of the runtime half of stream_alloc.h, with the fake runtime compiled in and told
 * through the environment (FAKE_RT_FAIL_AT=2) to fail the second create: pointer checks return
 * SA_NULL_POINTER, bad options SA_INVALID_ARGUMENT, and a device failure is SA_DEVICE_ERROR
 * with the runtime's code in the message, all recorded as the thread's last error. */
#include <stdio.h>
#include <string.h>

#define SA_CHECK_KEEP_GOING
#include "../check.h"

#include "fake_runtime.h"

int main(void) {
  sa_stream_allocator *a = NULL;
  CHECK(sa_stream_allocator_new(0, 0, NULL) == SA_NULL_POINTER);
  CHECK(sa_stream_allocator_acquire(NULL, 1) == NULL);
  CHECK(strstr(sa_last_error_message(), "NULL") != NULL);
  CHECK(strcmp(sa_last_error_code(), "SA3001") == 0);
  CHECK(sa_stream_allocator_new(0, 0, &a) == SA_OK);
  CHECK(sa_stream_allocator_acquire(a, 4) == NULL); /* second create fails */
  CHECK(strstr(sa_last_error_message(), "207008") != NULL);
  CHECK(strcmp(sa_last_error_code(), "SA4002") == 0);
  void *v = sa_stream_allocator_acquire(a, 4); /* the retry succeeds */
  CHECK(v != NULL);
  CHECK(v != NULL && ((const size_t *)v)[1] == 4);
  sa_stream_allocator_free(a);
  uint64_t c = 0, d = 0;
  fake_rt_counts(0, &c, &d);
  CHECK(c == 3 && d == 3);

  /* Events and notifies: limits fail before any device call with SA_RUNTIME_LIMIT (NULL);
   * the vectors keep their address when they grow; freeing destroys every slot. */
  sa_event_allocator *ea = NULL;
  CHECK(sa_event_allocator_new(1, &ea) == SA_OK);
  CHECK(sa_event_allocator_acquire(ea, 4097) == NULL);
  CHECK(strcmp(sa_last_error_code(), "SA4001") == 0);
  void *ev = sa_event_allocator_acquire(ea, 2);
  CHECK(ev != NULL && ((const size_t *)ev)[1] == 2);
  CHECK(sa_event_allocator_acquire(ea, 3) == ev);
  CHECK(sa_event_allocator_acquire(NULL, 1) == NULL);
  sa_event_allocator_free(ea);
  sa_notify_allocator *na = NULL;
  CHECK(sa_notify_allocator_new(&na) == SA_OK);
  CHECK(sa_notify_allocator_acquire(na, 0, 1024) == NULL);
  CHECK(strcmp(sa_last_error_code(), "SA4001") == 0);
  void *nv = sa_notify_allocator_acquire(na, 0, 1);
  CHECK(nv != NULL && ((const size_t *)nv)[1] == 1);
  sa_notify_allocator_free(na);
  fake_rt_counts(1, &c, &d);
  CHECK(c == 3 && d == 3);
  fake_rt_counts(2, &c, &d);
  CHECK(c == 1 && d == 1);

  sa_reusable_pool *p = NULL;
  CHECK(sa_reusable_pool_new("reuse=sometimes", &p) == SA_INVALID_ARGUMENT);
  CHECK(strstr(sa_last_error_message(), "sometimes") != NULL);
  CHECK(p == NULL);
  CHECK(sa_reusable_pool_new(NULL, &p) == SA_OK);
  void *s = NULL;
  CHECK(sa_reusable_pool_get_or_create(p, NULL, 1, 0, 1, 0) == SA_NULL_POINTER);
  CHECK(sa_reusable_pool_get_or_create(p, &s, 1, 0, 1, 0) == SA_OK);
  sa_pool_stats st;
  CHECK(sa_reusable_pool_stats(p, &st) == SA_OK && st.live == 1);
  CHECK(sa_reusable_pool_destroy_stream(p, &s, false) == SA_OK);
  CHECK(sa_reusable_pool_stats(p, &st) == SA_OK && st.live == 0 && st.destroyed == 1);
  sa_reusable_pool_free(p);
  sa_reusable_pool_free(NULL);
  fake_rt_counts(0, &c, &d);
  CHECK(c == d);
  return SA_CHECK_RESULT();
}
