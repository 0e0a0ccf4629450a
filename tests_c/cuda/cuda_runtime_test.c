/* The CUDA backend of the runtime seam, from C, against the fake CUDA driver (fake_cuda.c):
 * selection by SA_RUNTIME=cuda (an unknown value named), a missing driver library and a library
 * that is not a CUDA driver (each error naming what was searched or missing), then every seam
 * call the pools use on the fake: streams from every pool (gert stream / event / notify
 * allocators, the V1 reusable pool, the stream context) on several threads (each must make the
 * primary context current), events recorded, waited for, queried while pending and after,
 * synchronised and timed, device memory through sa_mem_pool with an out-of-memory retry, and
 * driver failures (an invalid handle, an out-of-memory) reported with CUDA's error names.
 * Everything is released at the end: the fake holds no live stream, event or allocation.
 *
 * argv[1]: the fake driver; argv[2]: a shared library that is not a CUDA driver. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SA_CHECK_KEEP_GOING
#include "../check.h"


typedef void (*fail_next_fn)(int);
typedef uint64_t (*count_fn)(int);
typedef uint64_t (*get_fn)(void);
typedef void (*set_fn)(uint64_t);
typedef void (*void_fn)(void);

static fail_next_fn fail_next;
static count_fn live;
static get_fn mem_bytes;
static set_fn set_capacity;
static void_fn complete_all;

static void *thread_stream(void *arg) {
  sa_stream_ctx *ctx = arg;
  void *s = NULL;
  /* A fresh thread: the backend must bind the primary context before the driver call. */
  sa_status st = sa_stream_ctx_stream(ctx, 7, 0, 0, &s);
  return (void *)(uintptr_t)(st == SA_OK && s != NULL);
}

static void selection_and_missing_library(const char *not_cuda) {
  sa_runtime_source source = 0;
  setenv("SA_RUNTIME", "tpu", 1);
  CHECK(sa_runtime_resolve(&source) == SA_INVALID_ARGUMENT);
  CHECK(strstr(sa_last_error_message(), "SA_RUNTIME='tpu'") != NULL);
  setenv("SA_RUNTIME", "cuda", 1);
  setenv("SA_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
  CHECK(sa_runtime_resolve(&source) == SA_NO_RUNTIME);
  CHECK(strstr(sa_last_error_message(), "no CUDA driver") != NULL);
  CHECK(strstr(sa_last_error_message(), "SA_CUDA_LIB=/nonexistent/libcuda.so.1") != NULL);
  setenv("SA_CUDA_LIB", not_cuda, 1);
  CHECK(sa_runtime_resolve(&source) == SA_NO_RUNTIME);
  CHECK(strstr(sa_last_error_message(), "not a usable CUDA driver") != NULL);
  CHECK(strstr(sa_last_error_message(), "cuInit") != NULL);
  /* Nothing was cached: the next lookup finds a real driver. */
}

static void streams_events_and_pools(void) {
  sa_runtime_source source = 0;
  CHECK(sa_runtime_resolve(&source) == SA_OK && source == SA_RUNTIME_CUDA);
  int32_t depth = -1;
  CHECK(sa_runtime_unlimited_depth(&depth) == SA_NO_RUNTIME); /* CUDA has no such query */

  /* gert allocators and the V1 pool, unchanged on CUDA. */
  sa_stream_allocator *sa = NULL;
  CHECK(sa_stream_allocator_new(0, 0, &sa) == SA_OK);
  CHECK(sa_stream_allocator_acquire(sa, 4) != NULL);
  CHECK(live(1) == 3); /* slot 0 is the caller's */
  sa_event_allocator *ea = NULL;
  CHECK(sa_event_allocator_new(1, &ea) == SA_OK);
  CHECK(sa_event_allocator_acquire(ea, 5) != NULL);
  sa_notify_allocator *na = NULL;
  CHECK(sa_notify_allocator_new(&na) == SA_OK);
  CHECK(sa_notify_allocator_acquire(na, 0, 2) != NULL);
  CHECK(live(2) == 7); /* notifies are events on CUDA */
  sa_reusable_pool *rp = NULL;
  void *rs = NULL;
  CHECK(sa_reusable_pool_new("reuse=on,task_limit=100", &rp) == SA_OK);
  CHECK(sa_reusable_pool_get_or_create(rp, &rs, 1, 0, 0, 10) == SA_OK && rs != NULL);
  CHECK(sa_reusable_pool_destroy_stream(rp, &rs, false) == SA_OK);
  sa_reusable_pool_free(rp);
  sa_notify_allocator_free(na);
  sa_event_allocator_free(ea);
  sa_stream_allocator_free(sa);
  CHECK(live(1) == 0 && live(2) == 0);

  /* The stream context: streams on two threads, events pending then complete, timing. */
  sa_stream_ctx *ctx = NULL;
  void *s0 = NULL, *s1 = NULL;
  CHECK(sa_stream_ctx_new(&ctx) == SA_OK);
  CHECK(sa_stream_ctx_stream(ctx, 0, 0, 0, &s0) == SA_OK);
  CHECK(sa_stream_ctx_stream(ctx, 1, 0, 0, &s1) == SA_OK);
  pthread_t th;
  void *ok = NULL;
  CHECK(pthread_create(&th, NULL, thread_stream, ctx) == 0);
  CHECK(pthread_join(th, &ok) == 0 && ok != NULL);
  void *a = NULL, *b = NULL;
  int32_t done = -1;
  float ms = -1.0f;
  CHECK(sa_stream_ctx_event_new(ctx, 0, &a) == SA_OK);
  CHECK(sa_stream_ctx_event_new(ctx, 0, &b) == SA_OK);
  CHECK(sa_stream_ctx_event_query(ctx, a, &done) == SA_OK && done == 1); /* never recorded */
  CHECK(sa_stream_ctx_event_record(ctx, a, s0) == SA_OK);
  CHECK(sa_stream_ctx_event_wait(ctx, s1, a) == SA_OK);
  CHECK(sa_stream_ctx_event_record(ctx, b, s1) == SA_OK);
  CHECK(sa_stream_ctx_event_query(ctx, b, &done) == SA_OK && done == 0); /* CUDA_ERROR_NOT_READY */
  CHECK(sa_stream_ctx_event_elapsed_time(ctx, a, b, &ms) == SA_DEVICE_ERROR);
  CHECK(strstr(sa_last_error_message(), "CUDA_ERROR_NOT_READY (600)") != NULL);
  CHECK(sa_stream_ctx_event_synchronize(ctx, a) == SA_OK);
  CHECK(sa_stream_ctx_synchronize_stream(ctx, s1) == SA_OK);
  CHECK(sa_stream_ctx_event_query(ctx, b, &done) == SA_OK && done == 1);
  CHECK(sa_stream_ctx_event_elapsed_time(ctx, a, b, &ms) == SA_OK && ms > 0.0f);
  CHECK(sa_stream_ctx_wait_stream(ctx, s0, s1) == SA_OK);

  /* An invalid handle as the driver reports it. */
  fail_next(400);
  CHECK(sa_stream_ctx_event_record(ctx, a, s0) == SA_DEVICE_ERROR);
  CHECK(strstr(sa_last_error_message(), "CUDA_ERROR_INVALID_HANDLE (400)") != NULL);

  /* Device memory through the stream-ordered pool; out of memory after one retry. */
  sa_mem_pool *pool = NULL;
  void *p = NULL, *q = NULL;
  CHECK(sa_mem_pool_new(ctx, &pool) == SA_OK);
  CHECK(sa_mem_pool_alloc(pool, 1000, s0, &p) == SA_OK && p != NULL);
  CHECK(mem_bytes() >= 1000);
  CHECK(sa_mem_pool_record_use(pool, p, s1) == SA_OK);
  CHECK(sa_mem_pool_free_ptr(pool, p, s0) == SA_OK);
  CHECK(sa_mem_pool_alloc(pool, 1000, s0, &q) == SA_OK && q != p); /* s1's read is pending */
  CHECK(sa_mem_pool_free_ptr(pool, q, s0) == SA_OK);
  complete_all();
  CHECK(sa_mem_pool_empty_cache(pool) == SA_OK);
  CHECK(mem_bytes() == 0);
  set_capacity(4096);
  CHECK(sa_mem_pool_alloc(pool, 4096, s0, &p) == SA_OK);
  CHECK(sa_mem_pool_alloc(pool, 100, s0, &q) == SA_OUT_OF_MEMORY);
  CHECK(strstr(sa_last_error_message(), "CUDA_ERROR_OUT_OF_MEMORY (2)") != NULL);
  CHECK(strstr(sa_last_error_message(), "retry") != NULL);
  CHECK(sa_mem_pool_free_ptr(pool, p, s0) == SA_OK);
  set_capacity(UINT64_MAX);
  fail_next(2);
  CHECK(sa_mem_pool_alloc(pool, 64, s0, &q) == SA_OK); /* one failure: the retry succeeds */
  CHECK(sa_mem_pool_free_ptr(pool, q, s0) == SA_OK);

  CHECK(sa_stream_ctx_event_destroy(ctx, a) == SA_OK);
  CHECK(sa_stream_ctx_event_destroy(ctx, b) == SA_OK);
  sa_stream_ctx_free(ctx);
  sa_mem_pool_free(pool);
  CHECK(live(0) == 0);
  CHECK(mem_bytes() == 0);
}

/* The pluggable-allocator entry points on the CUDA backend (SA_RUNTIME=cuda): record_stream on
 * real (fake-driver) streams, the memory fraction from cuMemGetInfo_v2, the one device served. */
static void pluggable_on_cuda(void) {
  sa_stream_ctx *ctx = NULL;
  void *s0 = NULL, *s1 = NULL;
  CHECK(sa_stream_ctx_new(&ctx) == SA_OK);
  CHECK(sa_stream_ctx_stream(ctx, 0, 0, 0, &s0) == SA_OK && sa_stream_ctx_stream(ctx, 1, 0, 0, &s1) == SA_OK);
  void *p = sa_pluggable_malloc(1000, 0, s0);
  CHECK(p != NULL);
  sa_pluggable_record_stream(p, s1);
  sa_pluggable_free(p, 1000, 0, s0);
  void *q = sa_pluggable_malloc(1000, 0, s0); /* s1's event pending */
  CHECK(q != NULL && q != p);
  sa_pluggable_free(q, 1000, 0, s0);
  complete_all();
  void *r = sa_pluggable_malloc(1000, 0, s0), *t = sa_pluggable_malloc(1000, 0, s0);
  CHECK(r == q && t == p); /* cuEventQuery answered: complete */
  sa_pluggable_free(r, 1000, 0, s0);
  sa_pluggable_free(t, 1000, 0, s0);
  CHECK(sa_pluggable_malloc(64, 1, s0) == NULL);
  CHECK(strstr(sa_last_error_message(), "SA_CUDA_DEVICE") != NULL);
  sa_pluggable_reset();
  CHECK(mem_bytes() == 0);
  set_capacity(1 << 20);
  sa_pluggable_memory_fraction(0.5, 0);
  CHECK(sa_pluggable_malloc(600000, 0, s0) == NULL);
  CHECK(strstr(sa_last_error_message(), "limit of 524288 bytes") != NULL);
  sa_pluggable_memory_fraction(1.0, 0);
  p = sa_pluggable_malloc(600000, 0, s0);
  CHECK(p != NULL);
  sa_pluggable_free(p, 600000, 0, s0);
  sa_pluggable_reset();
  CHECK(mem_bytes() == 0);
  set_capacity(UINT64_MAX);
  sa_pluggable_stats st;
  CHECK(sa_pluggable_get_stats(0, &st) == SA_OK && st.num_ooms == 1 && st.reserved_bytes_all_current == 0);
  sa_stream_ctx_free(ctx);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s FAKE_CUDA_LIB NOT_A_CUDA_LIB\n", argv[0]);
    return 2;
  }
  selection_and_missing_library(argv[2]);
  setenv("SA_CUDA_LIB", argv[1], 1);
  sa_runtime_source source = 0;
  CHECK(sa_runtime_resolve(&source) == SA_OK);
  /* The library loaded the fake; reach its controls through the same copy. */
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
  CHECK(h != NULL);
  if (h == NULL) return 1;
  fail_next = (fail_next_fn)dlsym(h, "fake_cuda_fail_next");
  live = (count_fn)dlsym(h, "fake_cuda_live");
  mem_bytes = (get_fn)dlsym(h, "fake_cuda_mem_bytes");
  set_capacity = (set_fn)dlsym(h, "fake_cuda_set_mem_capacity");
  complete_all = (void_fn)dlsym(h, "fake_cuda_complete_all");
  CHECK(fail_next && live && mem_bytes && set_capacity && complete_all);
  if (sa_check_failures == 0) streams_events_and_pools();
  if (sa_check_failures == 0) pluggable_on_cuda();
  dlclose(h);
  if (sa_check_failures) {
    fprintf(stderr, "%d check(s) failed\n", sa_check_failures);
    return 1;
  }
  printf("cuda runtime: ok\n");
  return 0;
}
