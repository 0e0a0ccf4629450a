/* The pluggable-allocator entry points (stream_alloc/pluggable.h) from plain C, against the fake
 * Ascend runtime compiled in (found by dlsym in the process scope), called the way PyTorch,
 * torch_npu and MindSpore call them: through function pointers of their types. Same-stream
 * reuse without a device call; a block used on another stream (record_stream) comes back only
 * once its event has completed, found by a query, never by a host wait; size 0 and NULL; out
 * of memory after emptying the cache and one retry; foreign and double frees refused, counted
 * and never freed; base_alloc; the memory fraction; a device the runtime does not serve; the
 * default (NULL) stream; an 8-thread stress on 8 streams with record_stream across them, and no
 * device byte left after reset. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define SA_CHECK_KEEP_GOING
#include "../check.h"

#include "fake_runtime.h"

/* The frameworks' types (torch/csrc/cuda/CUDAPluggableAllocator.h and torch_npu's
 * NPUPluggableAllocator.h), with an opaque stream. */
typedef void *(*alloc_fn)(ssize_t, int, void *);
typedef void (*free_fn)(void *, ssize_t, int, void *);
typedef void (*init_fn)(int);
typedef void (*reset_fn)(void);
typedef void (*fraction_fn)(double, int);
typedef void *(*base_alloc_fn)(void *, size_t *);
typedef void (*record_stream_fn)(void *, void *);

static const alloc_fn my_alloc = sa_pluggable_malloc;
static const free_fn my_free = sa_pluggable_free;
static const init_fn my_init = sa_pluggable_init;
static const reset_fn my_reset = sa_pluggable_reset;
static const fraction_fn my_fraction = sa_pluggable_memory_fraction;
static const base_alloc_fn my_base = sa_pluggable_base_alloc;
static const record_stream_fn my_record = sa_pluggable_record_stream;

static sa_pluggable_stats stats(int device) {
  sa_pluggable_stats st;
  memset(&st, 0, sizeof st);
  CHECK(sa_pluggable_get_stats(device, &st) == SA_OK);
  return st;
}

static int last_error_has(const char *what) { return strstr(sa_last_error_message(), what) != NULL; }

static void *new_stream(void) {
  void *s = NULL;
  CHECK(rtStreamCreateWithFlags(&s, 0, 0) == 0 && s != NULL);
  return s;
}

static void same_stream_reuse(void *s0) {
  my_init(1);
  void *p = my_alloc(1000, 0, s0);
  CHECK(p != NULL);
  uint64_t bytes = fake_rt_mem_bytes();
  my_free(p, 1000, 0, s0);
  void *q = my_alloc(800, 0, s0); /* fits the freed 1024-byte block: no device call */
  CHECK(q == p);
  CHECK(fake_rt_mem_bytes() == bytes);
  sa_pluggable_stats st = stats(0);
  CHECK(st.num_device_alloc == 1 && st.allocation_all_allocated == 2 && st.allocation_all_current == 1);
  CHECK(st.allocated_bytes_all_current == 1024 && st.reserved_bytes_all_current == 1024);
  my_free(q, 800, 0, s0);
}

static void cross_stream_reuse(void *s0, void *s1) {
  void *p = my_alloc(4000, 0, s0);
  CHECK(p != NULL);
  my_record(p, s1); /* a kernel on s1 reads p */
  my_free(p, 4000, 0, s0);
  uint64_t syncs = fake_rt_event_syncs();
  void *q = my_alloc(4000, 0, s0); /* s1's event pending: p is not handed out */
  CHECK(q != NULL && q != p);
  my_free(q, 4000, 0, s0);
  void *r = my_alloc(4000, 0, s0);
  CHECK(r == q);
  uint64_t queries = fake_rt_event_queries();
  fake_rt_complete_all(); /* the device catches up */
  void *t = my_alloc(4000, 0, s0); /* the pending event is queried now, complete: p is reused */
  CHECK(t == p);
  CHECK(fake_rt_event_queries() > queries);
  CHECK(fake_rt_event_syncs() == syncs); /* the host never waited */
  /* On s1 the blocks of s0 are not reused: a new one. */
  void *u = my_alloc(4000, 0, s1);
  CHECK(u != NULL && u != p && u != q);
  my_free(t, 4000, 0, s0);
  my_free(r, 4000, 0, s0);
  my_free(u, 4000, 0, s1);
  /* record_stream of a pointer no pool gave. */
  my_record((void *)0x5000, s1);
  CHECK(last_error_has("not allocated by any pool"));
}

static void sizes_and_null(void *s0) {
  CHECK(my_alloc(0, 0, s0) == NULL);
  CHECK(stats(0).num_ooms == 0);
  my_free(NULL, 0, 0, s0); /* what size 0 returned: a no-op */
  CHECK(stats(0).num_foreign_frees == 0);
  CHECK(my_alloc(-8, 0, s0) == NULL);
  CHECK(last_error_has("size -8 is negative"));
  CHECK(my_alloc(64, -1, s0) == NULL);
  CHECK(last_error_has("device -1 is negative"));
  /* The fake runtime serves device 0 (aclrtGetDevice). */
  CHECK(my_alloc(64, 1, s0) == NULL);
  CHECK(last_error_has("device 1 asked for, but the runtime serves device 0"));
  my_init(-1);
  CHECK(last_error_has("device count -1 is negative"));
  /* The default stream, NULL. */
  void *p = my_alloc(100, 0, NULL);
  CHECK(p != NULL);
  my_free(p, 100, 0, NULL);
  CHECK(my_alloc(100, 0, NULL) == p);
  my_free(p, 100, 0, NULL);
}

static void bad_frees(void *s0) {
  sa_pluggable_stats before = stats(0);
  uint64_t bytes = fake_rt_mem_bytes();
  char foreign[16];
  my_free(foreign, 16, 0, s0);
  CHECK(last_error_has("never gave"));
  CHECK(strcmp(sa_last_error_code(), "SA4003") == 0); /* SA_UNKNOWN_HANDLE */
  void *p = my_alloc(2000, 0, s0);
  my_free(p, 2000, 0, s0);
  my_free(p, 2000, 0, s0);
  CHECK(last_error_has("double free"));
  CHECK(strcmp(sa_last_error_code(), "SA3005") == 0); /* SA_INVALID_STATE */
  sa_pluggable_stats st = stats(0);
  CHECK(st.num_foreign_frees == before.num_foreign_frees + 1);
  CHECK(st.num_double_frees == before.num_double_frees + 1);
  CHECK(st.allocation_all_freed == before.allocation_all_freed + 1);
  CHECK(fake_rt_bad_destroys() == 0);
  CHECK(st.num_device_free == before.num_device_free); /* nothing was given back to the device */
  CHECK(fake_rt_mem_bytes() >= bytes);
}

static void base_alloc(void *s0) {
  void *p = my_alloc(1000, 0, s0);
  size_t size = 0;
  CHECK(my_base((char *)p + 100, &size) == p && size == 1024);
  CHECK(my_base(p, NULL) == NULL && last_error_has("'size' is NULL"));
  my_free(p, 1000, 0, s0);
  CHECK(my_base(p, &size) == NULL); /* freed: in no allocated block */
  CHECK(last_error_has("inside no block"));
}

static void out_of_memory(void *s0) {
  my_reset();
  CHECK(fake_rt_mem_bytes() == 0);
  fake_rt_set_mem_capacity(8192);
  void *a = my_alloc(4096, 0, s0), *b = my_alloc(4096, 0, s0);
  CHECK(a != NULL && b != NULL);
  my_free(a, 4096, 0, s0);
  my_free(b, 4096, 0, s0);
  sa_pluggable_stats before = stats(0);
  /* 8 KiB cached: the device refuses 8 KiB more, the cache is emptied and the retry succeeds. */
  void *c = my_alloc(8192, 0, s0);
  CHECK(c != NULL);
  sa_pluggable_stats st = stats(0);
  CHECK(st.num_alloc_retries == before.num_alloc_retries + 1 && st.num_ooms == before.num_ooms);
  CHECK(st.num_device_free == before.num_device_free + 2);
  /* Nothing cached to give back: NULL, the reason, counted. */
  CHECK(my_alloc(512, 0, s0) == NULL);
  CHECK(last_error_has("cannot allocate 512 bytes") && last_error_has("device 0"));
  CHECK(strcmp(sa_last_error_code(), "SA4004") == 0);
  CHECK(stats(0).num_ooms == before.num_ooms + 1);
  my_free(c, 8192, 0, s0);
  my_reset();
  CHECK(fake_rt_mem_bytes() == 0);

  /* The memory fraction: half of a 64 KiB device (aclrtGetMemInfo). */
  fake_rt_set_mem_capacity(65536);
  my_fraction(0.5, 0);
  CHECK(my_alloc(40000, 0, s0) == NULL && last_error_has("limit of 32768 bytes"));
  void *d = my_alloc(30000, 0, s0);
  CHECK(d != NULL);
  my_fraction(1.5, 0);
  CHECK(last_error_has("memory fraction 1.5 of device 0 is not between 0 and 1"));
  my_fraction(1.0, 0);
  void *e = my_alloc(30000, 0, s0);
  CHECK(e != NULL);
  my_free(d, 30000, 0, s0);
  my_free(e, 30000, 0, s0);
  my_reset();
  fake_rt_set_mem_capacity(UINT64_MAX);
  my_fraction(1.0, 0);
  CHECK(fake_rt_mem_bytes() == 0);
}

#define THREADS 8
#define ROUNDS 2000
#define LIVE 16

static void *g_streams[THREADS];
static int g_failures[THREADS];

/* Each thread allocates on its own stream and frees in a scrambled order; one block in four is
 * also used on the next thread's stream. */
static void *stress_thread(void *arg) {
  int id = (int)(intptr_t)arg;
  void *mine = g_streams[id], *other = g_streams[(id + 1) % THREADS];
  void *live[LIVE] = {0};
  unsigned seed = 12345u + (unsigned)id;
  for (int round = 0; round < ROUNDS; ++round) {
    seed = seed * 1103515245u + 12345u;
    int slot = (int)((seed >> 8) % LIVE);
    if (live[slot] != NULL) {
      my_free(live[slot], 0, 0, mine);
      live[slot] = NULL;
    } else {
      ssize_t size = (ssize_t)(1 + (seed >> 12) % 65536);
      live[slot] = my_alloc(size, 0, mine);
      if (live[slot] == NULL) g_failures[id]++;
      else if (((seed >> 4) & 3) == 0) my_record(live[slot], other);
    }
    if (round % 97 == 0) fake_rt_complete_all();
  }
  for (int i = 0; i < LIVE; ++i) {
    if (live[i] != NULL) my_free(live[i], 0, 0, mine);
  }
  return NULL;
}

static void stress_then_reset(void) {
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; ++i) g_streams[i] = new_stream();
  sa_pluggable_stats before = stats(0);
  for (int i = 0; i < THREADS; ++i) CHECK(pthread_create(&t[i], NULL, stress_thread, (void *)(intptr_t)i) == 0);
  for (int i = 0; i < THREADS; ++i) CHECK(pthread_join(t[i], NULL) == 0);
  for (int i = 0; i < THREADS; ++i) CHECK(g_failures[i] == 0);
  sa_pluggable_stats st = stats(0);
  CHECK(st.allocated_bytes_all_current == 0 && st.allocation_all_current == 0);
  CHECK(st.allocation_all_allocated - before.allocation_all_allocated ==
        st.allocation_all_freed - before.allocation_all_freed);
  CHECK(st.num_foreign_frees == before.num_foreign_frees && st.num_double_frees == before.num_double_frees);
  CHECK(st.num_device_alloc - before.num_device_alloc < (uint64_t)THREADS * ROUNDS / 4); /* reuse */
  fake_rt_complete_all();
  my_reset();
  st = stats(0);
  CHECK(st.reserved_bytes_all_current == 0);
  CHECK(fake_rt_mem_bytes() == 0); /* no device byte left */
  CHECK(fake_rt_bad_destroys() == 0);
  printf("stress: %llu allocations, %llu device allocations, peak %llu bytes allocated, %llu reserved\n",
         (unsigned long long)(st.allocation_all_allocated - before.allocation_all_allocated),
         (unsigned long long)(st.num_device_alloc - before.num_device_alloc),
         (unsigned long long)st.allocated_bytes_all_peak, (unsigned long long)st.reserved_bytes_all_peak);
}

/* Called by name too, as a C program linking the library would. */
static void direct_calls(void *s0) {
  sa_pluggable_init(1);
  void *p = sa_pluggable_malloc(300, 0, s0);
  size_t size = 0;
  CHECK(p != NULL && sa_pluggable_base_alloc(p, &size) == p && size == 512);
  sa_pluggable_record_stream(p, s0); /* its own stream: nothing to wait for */
  sa_pluggable_free(p, 300, 0, s0);
  CHECK(sa_pluggable_malloc(300, 0, s0) == p);
  sa_pluggable_free(p, 300, 0, s0);
  sa_pluggable_memory_fraction(-0.5, 0);
  CHECK(last_error_has("memory fraction -0.5"));
  sa_pluggable_reset();
  CHECK(fake_rt_mem_bytes() == 0);
}

static void stats_json(void) {
  char *json = sa_pluggable_stats_json(0);
  CHECK(json != NULL && strstr(json, "\"allocated_bytes.all.current\": 0") != NULL);
  CHECK(json != NULL && strstr(json, "\"num_double_frees\": ") != NULL);
  sa_string_free(json);
  CHECK(sa_pluggable_stats_json(-2) == NULL && last_error_has("device -2 is negative"));
  CHECK(sa_pluggable_get_stats(0, NULL) == SA_NULL_POINTER);
  sa_pluggable_stats st;
  memset(&st, 0xff, sizeof st);
  CHECK(sa_pluggable_get_stats(7, &st) == SA_OK && st.num_device_alloc == 0); /* never used: zeros */
}

int main(void) {
  void *s0 = new_stream(), *s1 = new_stream();
  same_stream_reuse(s0);
  cross_stream_reuse(s0, s1);
  sizes_and_null(s0);
  bad_frees(s0);
  base_alloc(s0);
  out_of_memory(s0);
  stress_then_reset();
  direct_calls(s0);
  stats_json();
  my_reset();
  CHECK(fake_rt_mem_bytes() == 0);
  int rc = SA_CHECK_RESULT();
  if (rc == 0) printf("pluggable: ok\n");
  return rc;
}
