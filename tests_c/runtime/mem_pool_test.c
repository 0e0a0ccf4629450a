/* The stream-ordered memory pool and the user-level streams and events from plain C, with the
 * fake runtime compiled in (found by dlsym in the process scope): a block read on stream 1 is not
 * reused on stream 0 until its event completes; the back-stream rule frees without a device
 * query; allocation failure synchronises and retries once, then fails naming size and stream;
 * bad inputs get their statuses; every counted device call failed in turn leaves nothing behind;
 * and a version-1 runtime table (compiled against the older header) still registers. */
#include <stdio.h>
#include <string.h>

#define SA_CHECK_KEEP_GOING
#include "../check.h"

#include "fake_runtime.h"

static sa_mem_stats stats_of(const sa_mem_pool *pool) {
  sa_mem_stats st;
  memset(&st, 0, sizeof st);
  CHECK(sa_mem_pool_stats(pool, &st) == SA_OK);
  return st;
}

static void cross_stream_reuse(void) {
  sa_stream_ctx *ctx = NULL;
  sa_mem_pool *pool = NULL;
  void *s0 = NULL, *s1 = NULL, *again = NULL;
  CHECK(sa_stream_ctx_new(&ctx) == SA_OK);
  CHECK(sa_stream_ctx_stream(ctx, 0, 0, 0, &s0) == SA_OK);
  CHECK(sa_stream_ctx_stream(ctx, 1, 0, 0, &s1) == SA_OK);
  /* Created once, reused: the same stream for the same key. */
  CHECK(sa_stream_ctx_stream(ctx, 1, 0, 0, &again) == SA_OK && again == s1);
  CHECK(sa_stream_ctx_stream(ctx, 1, 2, 0, &again) == SA_INVALID_STATE);
  CHECK(sa_mem_pool_new(ctx, &pool) == SA_OK);

  void *p = NULL, *q = NULL, *r = NULL;
  CHECK(sa_mem_pool_alloc(pool, 1000, s0, &p) == SA_OK && p != NULL);
  CHECK(sa_stream_ctx_wait_stream(ctx, s1, s0) == SA_OK);
  CHECK(sa_mem_pool_record_use(pool, p, s1) == SA_OK); /* read on stream 1 */
  CHECK(sa_mem_pool_free_ptr(pool, p, s0) == SA_OK);
  CHECK(stats_of(pool).pending_bytes == 1024);
  CHECK(sa_mem_pool_alloc(pool, 1000, s0, &q) == SA_OK && q != p); /* event pending */
  CHECK(sa_mem_pool_free_ptr(pool, q, s0) == SA_OK);
  fake_rt_complete_all();
  CHECK(sa_mem_pool_alloc(pool, 1000, s0, &r) == SA_OK && r == q);
  CHECK(sa_mem_pool_alloc(pool, 1000, s0, &r) == SA_OK && r == p); /* queried: complete */
  CHECK(stats_of(pool).released_by_query == 1);

  /* Back-stream: stream 0 waits on a record of stream 1 made after the read. */
  void *readers[1] = {s1};
  CHECK(sa_mem_pool_free_after(pool, p, readers, 1) == SA_OK);
  void *ev = NULL;
  CHECK(sa_stream_ctx_event_new(ctx, 0, &ev) == SA_OK);
  CHECK(sa_stream_ctx_event_record(ctx, ev, s1) == SA_OK);
  CHECK(sa_stream_ctx_event_wait(ctx, s0, ev) == SA_OK);
  uint64_t queries = fake_rt_event_queries();
  CHECK(sa_mem_pool_alloc(pool, 1000, s0, &r) == SA_OK && r == p);
  CHECK(fake_rt_event_queries() == queries);
  CHECK(stats_of(pool).released_without_query == 1);
  CHECK(sa_mem_pool_free_ptr(pool, p, s0) == SA_OK);
  CHECK(sa_mem_pool_free_ptr(pool, q, s0) == SA_OK);

  /* Events: query, synchronize, elapsed time, stream synchronize. */
  void *ev2 = NULL;
  int32_t done = -1;
  float ms = -1.0f;
  CHECK(sa_stream_ctx_event_new(ctx, 0, &ev2) == SA_OK);
  CHECK(sa_stream_ctx_event_record(ctx, ev2, s1) == SA_OK);
  CHECK(sa_stream_ctx_event_query(ctx, ev2, &done) == SA_OK && done == 0);
  CHECK(sa_stream_ctx_event_elapsed_time(ctx, ev, ev2, &ms) == SA_DEVICE_ERROR);
  CHECK(sa_stream_ctx_event_synchronize(ctx, ev) == SA_OK);
  CHECK(sa_stream_ctx_event_synchronize(ctx, ev2) == SA_OK);
  CHECK(sa_stream_ctx_event_query(ctx, ev2, &done) == SA_OK && done == 1);
  CHECK(sa_stream_ctx_event_elapsed_time(ctx, ev, ev2, &ms) == SA_OK && ms > 0.0f);
  CHECK(sa_stream_ctx_synchronize_stream(ctx, s0) == SA_OK);
  CHECK(sa_stream_ctx_event_destroy(ctx, ev2) == SA_OK);
  CHECK(sa_stream_ctx_event_destroy(ctx, ev2) == SA_UNKNOWN_HANDLE);

  /* Allocation failure: synchronise the pending event, release, retry once. */
  CHECK(sa_mem_pool_empty_cache(pool) == SA_OK);
  CHECK(fake_rt_mem_bytes() == 0);
  fake_rt_set_mem_capacity(8192);
  CHECK(sa_mem_pool_alloc(pool, 8192, s0, &p) == SA_OK);
  CHECK(sa_mem_pool_record_use(pool, p, s1) == SA_OK);
  CHECK(sa_mem_pool_free_ptr(pool, p, s0) == SA_OK);
  uint64_t syncs = fake_rt_event_syncs();
  CHECK(sa_mem_pool_alloc(pool, 8000, s0, &q) == SA_OK && q == p);
  CHECK(fake_rt_event_syncs() == syncs + 1);
  CHECK(stats_of(pool).retries == 1);
  CHECK(sa_mem_pool_alloc(pool, 100, s0, &r) == SA_OUT_OF_MEMORY);
  CHECK(strcmp(sa_last_error_code(), "SA4004") == 0);
  CHECK(strstr(sa_last_error_message(), "100 bytes") != NULL);
  CHECK(strstr(sa_last_error_message(), "retry") != NULL);
  CHECK(sa_mem_pool_free_ptr(pool, q, s0) == SA_OK);
  fake_rt_set_mem_capacity(UINT64_MAX);

  /* Bad inputs. */
  void *stranger = (void *)0x5a5a0;
  CHECK(sa_mem_pool_alloc(NULL, 8, s0, &p) == SA_NULL_POINTER);
  CHECK(sa_mem_pool_alloc(pool, 8, s0, NULL) == SA_NULL_POINTER);
  CHECK(sa_mem_pool_alloc(pool, 0, s0, &p) == SA_INVALID_ARGUMENT);
  CHECK(sa_mem_pool_alloc(pool, 8, stranger, &p) == SA_UNKNOWN_HANDLE);
  CHECK(sa_mem_pool_free_ptr(pool, stranger, s0) == SA_UNKNOWN_HANDLE);
  CHECK(sa_mem_pool_alloc(pool, 8, s0, &p) == SA_OK);
  CHECK(sa_mem_pool_free_after(pool, p, NULL, 1) == SA_NULL_POINTER);
  CHECK(sa_mem_pool_free_after(pool, p, NULL, 0) == SA_OK);
  CHECK(sa_mem_pool_free_ptr(pool, p, s0) == SA_INVALID_STATE);
  CHECK(strstr(sa_last_error_message(), "double free") != NULL);
  CHECK(sa_mem_pool_record_use(pool, p, s1) == SA_INVALID_STATE);
  CHECK(sa_stream_ctx_adopt_stream(ctx, NULL) == SA_NULL_POINTER);
  CHECK(sa_stream_ctx_adopt_stream(ctx, s0) == SA_OK);
  CHECK(sa_stream_ctx_wait_stream(ctx, s0, stranger) == SA_UNKNOWN_HANDLE);
  CHECK(sa_mem_pool_stats(pool, NULL) == SA_NULL_POINTER);
  CHECK(sa_mem_pool_new(NULL, &pool) == SA_NULL_POINTER);

  sa_stream_ctx_free(ctx); /* the pool keeps the streams alive */
  CHECK(sa_mem_pool_alloc(pool, 8, s1, &p) == SA_OK);
  sa_mem_pool_free(pool); /* returns everything, the held block too */
  sa_mem_pool_free(NULL);
  sa_stream_ctx_free(NULL);
  CHECK(fake_rt_mem_bytes() == 0);
}

/* One scenario through every counted device call; returns the number of failed calls. */
static int scenario(int expect_clean) {
  int errors = 0;
  sa_stream_ctx *ctx = NULL;
  sa_mem_pool *pool = NULL;
  void *s0 = NULL, *s1 = NULL, *p = NULL, *q = NULL, *ev = NULL;
  if (sa_stream_ctx_new(&ctx) != SA_OK) return 1;
  if (sa_stream_ctx_stream(ctx, 0, 0, 0, &s0) != SA_OK || sa_stream_ctx_stream(ctx, 1, 0, 0, &s1) != SA_OK ||
      sa_mem_pool_new(ctx, &pool) != SA_OK) {
    sa_stream_ctx_free(ctx);
    return 1;
  }
#define STEP(call)                                                                            \
  do {                                                                                        \
    sa_status st_ = (call);                                                                   \
    if (st_ != SA_OK) {                                                                       \
      ++errors;                                                                               \
      CHECK(!expect_clean);                                                                   \
      CHECK(st_ == SA_DEVICE_ERROR || st_ == SA_OUT_OF_MEMORY);                               \
      CHECK(strstr(sa_last_error_message(), "failed with runtime error") != NULL);            \
    }                                                                                         \
  } while (0)
  if (sa_mem_pool_alloc(pool, 4096, s0, &p) == SA_OK) {
    STEP(sa_mem_pool_record_use(pool, p, s1));
    sa_status st = sa_mem_pool_free_ptr(pool, p, s0);
    STEP(st);
    if (st != SA_OK) STEP(sa_mem_pool_free_ptr(pool, p, s0)); /* the block was kept: retry */
  } else {
    ++errors;
  }
  if (sa_mem_pool_alloc(pool, 4096, s0, &q) == SA_OK) {
    STEP(sa_mem_pool_free_ptr(pool, q, s0));
  } else {
    ++errors;
  }
  if (sa_stream_ctx_event_new(ctx, 0, &ev) == SA_OK) {
    int32_t done = 0;
    float ms = 0.0f;
    STEP(sa_stream_ctx_event_record(ctx, ev, s1));
    STEP(sa_stream_ctx_event_query(ctx, ev, &done));
    STEP(sa_stream_ctx_event_synchronize(ctx, ev));
    STEP(sa_stream_ctx_event_elapsed_time(ctx, ev, ev, &ms));
  } else {
    ++errors;
  }
  STEP(sa_mem_pool_empty_cache(pool));
#undef STEP
  sa_mem_pool_free(pool);
  sa_stream_ctx_free(ctx);
  return errors;
}

static void fault_injection(void) {
  uint64_t before = fake_rt_calls();
  CHECK(scenario(1) == 0);
  uint64_t calls = fake_rt_calls() - before, c = 0, d = 0;
  CHECK(calls > 8);
  int surfaced = 0;
  for (uint64_t k = 1; k <= calls; ++k) {
    fake_rt_fail_at(k);
    surfaced += scenario(0) > 0;
    fake_rt_fail_at(0);
    CHECK(fake_rt_live() == 0);
    CHECK(fake_rt_mem_bytes() == 0);
    CHECK(fake_rt_bad_destroys() == 0);
  }
  CHECK(surfaced > 0);
  fake_rt_counts(3, &c, &d);
  CHECK(c == d && c > 0);
}

/* A version-1 host: a table of the older size and version, entries up to get_device. */
static int32_t v1_stream_create(void *u, void **s, int32_t p, uint32_t f) {
  (void)u;
  return rtStreamCreateWithFlags(s, p, f);
}
static int32_t v1_stream_destroy(void *u, void *s, int32_t force) {
  (void)u;
  (void)force;
  return aclrtDestroyStream(s);
}
static int32_t v1_event_create(void *u, void **e, uint32_t f) {
  (void)u;
  return aclrtCreateEventExWithFlag(e, f);
}
static int32_t v1_event_destroy(void *u, void *e) {
  (void)u;
  return aclrtDestroyEvent(e);
}
static int32_t v1_notify_create(void *u, void **n, int32_t dev) {
  (void)u;
  (void)dev;
  return aclrtCreateNotify(n, 0);
}
static int32_t v1_notify_destroy(void *u, void *n) {
  (void)u;
  return aclrtDestroyNotify(n);
}

static void version_1_table(void) {
  const sa_runtime_ops v1 = fake_rt_table(NULL, v1_stream_create, v1_stream_destroy, v1_event_create,
                                          v1_event_destroy, v1_notify_create, v1_notify_destroy);
  sa_runtime_ops ops;
  memset(&ops, 0xAB, sizeof ops); /* bytes past the v1 size must not be read */
  memcpy(&ops, &v1, SA_RUNTIME_OPS_V1_SIZE);
  ops.struct_size = SA_RUNTIME_OPS_V1_SIZE;
  ops.abi_version = 1;
  CHECK(sa_runtime_register(&ops) == SA_OK);
  sa_stream_ctx *ctx = NULL;
  sa_mem_pool *pool = NULL;
  void *s = NULL, *p = NULL;
  CHECK(sa_stream_ctx_new(&ctx) == SA_OK);
  CHECK(sa_stream_ctx_stream(ctx, 0, 0, 0, &s) == SA_OK);
  CHECK(sa_mem_pool_new(ctx, &pool) == SA_OK);
  CHECK(sa_mem_pool_alloc(pool, 8, s, &p) == SA_NO_RUNTIME);
  CHECK(strstr(sa_last_error_message(), "mem_malloc") != NULL);
  sa_mem_pool_free(pool);
  sa_stream_ctx_free(ctx);
  ops.struct_size = SA_RUNTIME_OPS_V1_SIZE - 8;
  CHECK(sa_runtime_register(&ops) == SA_INVALID_ARGUMENT);
  ops.struct_size = SA_RUNTIME_OPS_V1_SIZE;
  ops.abi_version = SA_RUNTIME_OPS_ABI_VERSION; /* a v2 table must be v2-sized */
  CHECK(sa_runtime_register(&ops) == SA_INVALID_ARGUMENT);
  CHECK(sa_runtime_register(NULL) == SA_OK);
}

int main(void) {
  cross_stream_reuse();
  fault_injection();
  version_1_table();
  CHECK(fake_rt_live() == 0);
  CHECK(fake_rt_bad_destroys() == 0);
  return SA_CHECK_RESULT();
}
