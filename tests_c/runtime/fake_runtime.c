/* A fake Ascend device runtime for the tests: exports the real rt and aclrt symbol names with the
 * real error codes, hands out a fresh heap block per handle (device memory included), counts
 * every create and destroy per kind (stream, event, notify, memory), flags destroys of unknown or
 * already destroyed handles, and fails the k-th counted call on request (fake_rt_fail_at, or
 * FAKE_RT_FAIL_AT counted from process start). Counted calls: creates, aclrtMalloc, aclrtFree,
 * aclrtQueryEventStatus, aclrtSynchronizeEvent, aclrtEventElapsedTime.
 * Events: a record leaves the event pending until aclrtSynchronizeEvent on it or
 * fake_rt_complete_all() (the device catching up); queries answer from that state.
 * Capacities: fake_rt_set_capacity(kind, n) makes creates of that kind fail with the runtime's
 * no-resource code while n of them are alive (0: unlimited, the default), as GE's runtime stub's
 * free-stream counter does; aclrtGetStreamAvailableNum / rtGetAvailEventNum report what is left.
 * Other switches: FAKE_RT_MAX_TASKS (default 1024), FAKE_RT_UNLIMITED (0/1), FAKE_RT_MAX_STREAMS
 * (default 1024), FAKE_RT_MEM_CAPACITY (bytes, default unlimited; aclrtGetMemInfo reports it as
 * the total). A NULL stream is the default stream, as in ACL. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum { K_STREAM = 0, K_EVENT = 1, K_NOTIFY = 2, K_MEM = 3, K_NUM = 4 };
enum { EV_NEVER = 0, EV_PENDING = 1, EV_COMPLETE = 2 };
#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000
#define ACL_ERROR_RT_NO_EVENT_RESOURCE 207007
#define ACL_ERROR_RT_NO_STREAM_RESOURCE 207008
#define ACL_ERROR_RT_NO_NOTIFY_RESOURCE 207009

typedef struct {
  uint32_t kind;
  int32_t id;
  int32_t priority;
  uint32_t flags;
  int32_t state;  /* events: EV_* */
  uint64_t stamp; /* events: time of the last record; memory: size */
} handle_t;

#define TABLE_BITS 16
#define TABLE_SIZE (1u << TABLE_BITS)
#define TOMB ((handle_t *)1)

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static handle_t *g_table[TABLE_SIZE];
static uint64_t g_creates[K_NUM], g_destroys[K_NUM], g_forced, g_bad, g_calls, g_fail_at, g_live;
static uint64_t g_mem_capacity = UINT64_MAX, g_mem_bytes, g_queries, g_syncs, g_clock;
static uint32_t g_max_tasks = 1024, g_max_streams = 1024;
static int64_t g_unlimited;
static int32_t g_next_id;
static uint32_t g_last_flags;
static int32_t g_last_priority;
static int g_env_read;
static uint64_t g_capacity[K_NUM];

static void read_env_locked(void) {
  if (g_env_read) return;
  g_env_read = 1;
  const char *v;
  if ((v = getenv("FAKE_RT_FAIL_AT")) != NULL) g_fail_at = strtoull(v, NULL, 10);
  if ((v = getenv("FAKE_RT_MAX_TASKS")) != NULL) g_max_tasks = (uint32_t)strtoul(v, NULL, 10);
  if ((v = getenv("FAKE_RT_MAX_STREAMS")) != NULL) g_max_streams = (uint32_t)strtoul(v, NULL, 10);
  if ((v = getenv("FAKE_RT_UNLIMITED")) != NULL) g_unlimited = strtoll(v, NULL, 10);
  if ((v = getenv("FAKE_RT_MEM_CAPACITY")) != NULL) g_mem_capacity = strtoull(v, NULL, 10);
}

/* Counts a call; 1 when this one is to fail. */
static int inject_locked(void) {
  read_env_locked();
  uint64_t n = ++g_calls;
  return g_fail_at != 0 && n == g_fail_at;
}

/* Takes the lock for a counted call; a failure injected into it returns nonzero, the lock
 * released. */
static int lock_counted(void) {
  pthread_mutex_lock(&g_mu);
  if (inject_locked()) {
    pthread_mutex_unlock(&g_mu);
    return 1;
  }
  return 0;
}

static uint32_t slot_of(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (uint32_t)(x & (TABLE_SIZE - 1));
}

static int insert_locked(handle_t *h) {
  uint32_t i = slot_of(h);
  for (uint32_t n = 0; n < TABLE_SIZE; ++n, i = (i + 1) & (TABLE_SIZE - 1)) {
    if (g_table[i] == NULL || g_table[i] == TOMB) {
      g_table[i] = h;
      return 1;
    }
  }
  return 0;
}

static int remove_locked(void *p) {
  uint32_t i = slot_of(p);
  for (uint32_t n = 0; n < TABLE_SIZE; ++n, i = (i + 1) & (TABLE_SIZE - 1)) {
    if (g_table[i] == NULL) return 0;
    if (g_table[i] == p) {
      g_table[i] = TOMB;
      return 1;
    }
  }
  return 0;
}

static handle_t *find_locked(const void *p, uint32_t kind) {
  if (p == NULL) return NULL;
  uint32_t i = slot_of(p);
  for (uint32_t n = 0; n < TABLE_SIZE; ++n, i = (i + 1) & (TABLE_SIZE - 1)) {
    if (g_table[i] == NULL) return NULL;
    if (g_table[i] == p) return g_table[i]->kind == kind ? g_table[i] : NULL;
  }
  return NULL;
}

static int create(uint32_t kind, void **out, int32_t priority, uint32_t flags) {
  static const int no_resource[K_NUM] = {ACL_ERROR_RT_NO_STREAM_RESOURCE, ACL_ERROR_RT_NO_EVENT_RESOURCE,
                                         ACL_ERROR_RT_NO_NOTIFY_RESOURCE, ACL_ERROR_RT_MEMORY_ALLOCATION};
  if (out == NULL) return ACL_ERROR_RT_PARAM_INVALID;
  pthread_mutex_lock(&g_mu);
  if (inject_locked() || (g_capacity[kind] != 0 && g_creates[kind] - g_destroys[kind] >= g_capacity[kind])) {
    pthread_mutex_unlock(&g_mu);
    return no_resource[kind];
  }
  handle_t *h = (handle_t *)malloc(sizeof(handle_t));
  if (h == NULL || !insert_locked(h)) {
    free(h);
    pthread_mutex_unlock(&g_mu);
    return no_resource[kind];
  }
  h->kind = kind;
  h->id = g_next_id++;
  h->priority = priority;
  h->flags = flags;
  h->state = EV_NEVER;
  h->stamp = 0;
  if (kind != K_MEM) {
    g_last_flags = flags;
    g_last_priority = priority;
  }
  g_creates[kind]++;
  g_live++;
  pthread_mutex_unlock(&g_mu);
  *out = h;
  return 0;
}

static int destroy(uint32_t kind, void *p, int force) {
  pthread_mutex_lock(&g_mu);
  if (p == NULL || !remove_locked(p)) {
    g_bad++;
    pthread_mutex_unlock(&g_mu);
    return ACL_ERROR_RT_PARAM_INVALID;
  }
  handle_t *h = (handle_t *)p;
  if (h->kind != kind) {
    g_bad++;
    insert_locked(h);
    pthread_mutex_unlock(&g_mu);
    return ACL_ERROR_RT_PARAM_INVALID;
  }
  g_destroys[kind]++;
  g_live--;
  if (force) g_forced++;
  pthread_mutex_unlock(&g_mu);
  free(h);
  return 0;
}

/* ---- the Ascend API surface (ge-runtime-api.md §4.9) ---- */
EXPORT int32_t rtStreamCreateWithFlags(void **stm, int32_t priority, uint32_t flags) {
  return create(K_STREAM, stm, priority, flags);
}
EXPORT int aclrtCreateStreamWithConfig(void **stm, uint32_t priority, uint32_t flags) {
  return create(K_STREAM, stm, (int32_t)priority, flags | 0x80000000u);
}
EXPORT int aclrtDestroyStream(void *stm) { return destroy(K_STREAM, stm, 0); }
EXPORT int aclrtDestroyStreamForce(void *stm) { return destroy(K_STREAM, stm, 1); }
EXPORT int aclrtStreamGetId(void *stm, int32_t *id) {
  if (stm == NULL || id == NULL) return ACL_ERROR_RT_PARAM_INVALID;
  *id = ((handle_t *)stm)->id;
  return 0;
}
EXPORT int aclrtCreateEventExWithFlag(void **evt, uint32_t flag) { return create(K_EVENT, evt, 0, flag); }
EXPORT int aclrtCreateEventWithFlag(void **evt, uint32_t flag) { return create(K_EVENT, evt, 0, flag); }
EXPORT int aclrtDestroyEvent(void *evt) { return destroy(K_EVENT, evt, 0); }
/* A NULL stream is the device's default stream, as in ACL. */
EXPORT int aclrtRecordEvent(void *evt, void *stm) {
  (void)stm;
  if (evt == NULL) return ACL_ERROR_RT_PARAM_INVALID;
  pthread_mutex_lock(&g_mu);
  handle_t *h = find_locked(evt, K_EVENT);
  if (h != NULL) {
    h->state = EV_PENDING;
    h->stamp = ++g_clock;
  }
  pthread_mutex_unlock(&g_mu);
  return h != NULL ? 0 : ACL_ERROR_RT_PARAM_INVALID;
}
/* aclrtEventRecordedStatus: ACL_EVENT_RECORDED_STATUS_NOT_READY 0, _COMPLETE 1. */
EXPORT int aclrtQueryEventStatus(void *evt, int32_t *status) {
  if (status == NULL) return ACL_ERROR_RT_PARAM_INVALID;
  if (lock_counted()) return ACL_ERROR_RT_PARAM_INVALID;
  handle_t *h = find_locked(evt, K_EVENT);
  g_queries++;
  if (h != NULL) *status = h->state == EV_PENDING ? 0 : 1;
  pthread_mutex_unlock(&g_mu);
  return h != NULL ? 0 : ACL_ERROR_RT_PARAM_INVALID;
}
EXPORT int aclrtSynchronizeEvent(void *evt) {
  if (lock_counted()) return ACL_ERROR_RT_PARAM_INVALID;
  handle_t *h = find_locked(evt, K_EVENT);
  g_syncs++;
  if (h != NULL && h->state == EV_PENDING) h->state = EV_COMPLETE;
  pthread_mutex_unlock(&g_mu);
  return h != NULL ? 0 : ACL_ERROR_RT_PARAM_INVALID;
}
/* A quarter of a millisecond per record between the two. */
EXPORT int aclrtEventElapsedTime(float *ms, void *start, void *end) {
  if (ms == NULL) return ACL_ERROR_RT_PARAM_INVALID;
  if (lock_counted()) return ACL_ERROR_RT_PARAM_INVALID;
  handle_t *a = find_locked(start, K_EVENT), *b = find_locked(end, K_EVENT);
  int ok = a != NULL && b != NULL && a->state == EV_COMPLETE && b->state == EV_COMPLETE;
  if (ok) *ms = ((float)b->stamp - (float)a->stamp) * 0.25f;
  pthread_mutex_unlock(&g_mu);
  return ok ? 0 : ACL_ERROR_RT_PARAM_INVALID;
}
EXPORT int aclrtMalloc(void **dev_ptr, size_t size, uint32_t policy) {
  (void)policy;
  if (dev_ptr == NULL || size == 0) return ACL_ERROR_RT_PARAM_INVALID;
  pthread_mutex_lock(&g_mu);
  read_env_locked();
  int full = g_mem_bytes + size > g_mem_capacity;
  if (!full) g_mem_bytes += size;
  pthread_mutex_unlock(&g_mu);
  if (full) return ACL_ERROR_RT_MEMORY_ALLOCATION;
  int rc = create(K_MEM, dev_ptr, 0, 0);
  pthread_mutex_lock(&g_mu);
  if (rc == 0) {
    ((handle_t *)*dev_ptr)->stamp = size;
  } else {
    g_mem_bytes -= size;
  }
  pthread_mutex_unlock(&g_mu);
  return rc;
}
EXPORT int aclrtFree(void *dev_ptr) {
  if (lock_counted()) return ACL_ERROR_RT_PARAM_INVALID;
  handle_t *h = find_locked(dev_ptr, K_MEM);
  if (h != NULL) g_mem_bytes -= h->stamp;
  pthread_mutex_unlock(&g_mu);
  return destroy(K_MEM, dev_ptr, 0);
}
EXPORT int aclrtResetEvent(void *evt, void *stm) { return (evt && stm) ? 0 : ACL_ERROR_RT_PARAM_INVALID; }
EXPORT int aclrtStreamWaitEvent(void *stm, void *evt) {
  (void)stm;
  return evt ? 0 : ACL_ERROR_RT_PARAM_INVALID;
}
EXPORT int aclrtCreateNotify(void **notify, uint64_t flag) {
  return flag == 0 ? create(K_NOTIFY, notify, 0, 0) : ACL_ERROR_RT_PARAM_INVALID;
}
EXPORT int aclrtDestroyNotify(void *notify) { return destroy(K_NOTIFY, notify, 0); }
EXPORT int aclrtRecordNotify(void *n, void *stm) { return (n && stm) ? 0 : ACL_ERROR_RT_PARAM_INVALID; }
EXPORT int aclrtWaitAndResetNotify(void *n, void *stm, uint32_t t) {
  (void)t;
  return (n && stm) ? 0 : ACL_ERROR_RT_PARAM_INVALID;
}
EXPORT int32_t rtGetRtCapability(int32_t feature, int32_t info, int64_t *val) {
  (void)info;
  if (val == NULL) return ACL_ERROR_RT_PARAM_INVALID;
  pthread_mutex_lock(&g_mu);
  read_env_locked();
  *val = feature == 3 ? g_unlimited : 0;
  pthread_mutex_unlock(&g_mu);
  return 0;
}
EXPORT int32_t rtGetMaxStreamAndTask(uint32_t type, uint32_t *max_streams, uint32_t *max_tasks) {
  if (max_streams == NULL || max_tasks == NULL) return ACL_ERROR_RT_PARAM_INVALID;
  if (type > 1) return ACL_ERROR_RT_PARAM_INVALID;
  pthread_mutex_lock(&g_mu);
  read_env_locked();
  *max_streams = type == 0 ? g_max_streams : 8192;
  *max_tasks = type == 0 ? g_max_tasks : 8192;
  pthread_mutex_unlock(&g_mu);
  return 0;
}
EXPORT int aclrtGetStreamAvailableNum(uint32_t *count) {
  if (count == NULL) return ACL_ERROR_RT_PARAM_INVALID;
  pthread_mutex_lock(&g_mu);
  read_env_locked();
  uint64_t limit = g_capacity[K_STREAM] != 0 ? g_capacity[K_STREAM] : g_max_streams;
  *count = limit > g_creates[K_STREAM] - g_destroys[K_STREAM]
               ? (uint32_t)(limit - (g_creates[K_STREAM] - g_destroys[K_STREAM]))
               : 0;
  pthread_mutex_unlock(&g_mu);
  return 0;
}
/* Events left: the capacity minus live events, 65536 without a capacity. */
EXPORT int32_t rtGetAvailEventNum(uint32_t *count) {
  if (count == NULL) return ACL_ERROR_RT_PARAM_INVALID;
  pthread_mutex_lock(&g_mu);
  uint64_t live = g_creates[K_EVENT] - g_destroys[K_EVENT];
  uint64_t limit = g_capacity[K_EVENT] != 0 ? g_capacity[K_EVENT] : 65536;
  *count = limit > live ? (uint32_t)(limit - live) : 0;
  pthread_mutex_unlock(&g_mu);
  return 0;
}
/* aclrtGetMemInfo(attr, free, total): the capacity (64 GiB when unlimited) and what is left. */
EXPORT int aclrtGetMemInfo(int32_t attr, size_t *free_bytes, size_t *total_bytes) {
  (void)attr;
  if (free_bytes == NULL || total_bytes == NULL) return ACL_ERROR_RT_PARAM_INVALID;
  pthread_mutex_lock(&g_mu);
  read_env_locked();
  uint64_t total = g_mem_capacity == UINT64_MAX ? (uint64_t)64 << 30 : g_mem_capacity;
  *total_bytes = (size_t)total;
  *free_bytes = (size_t)(total > g_mem_bytes ? total - g_mem_bytes : 0);
  pthread_mutex_unlock(&g_mu);
  return 0;
}
EXPORT int aclrtGetDevice(int32_t *device) {
  if (device == NULL) return ACL_ERROR_RT_PARAM_INVALID;
  *device = 0;
  return 0;
}

/* ---- control and introspection ---- */
/* A counter, read under the lock. */
static uint64_t read_locked(const uint64_t *counter) {
  pthread_mutex_lock(&g_mu);
  uint64_t v = *counter;
  pthread_mutex_unlock(&g_mu);
  return v;
}
EXPORT void fake_rt_counts(uint32_t kind, uint64_t *creates, uint64_t *destroys) {
  pthread_mutex_lock(&g_mu);
  *creates = kind < K_NUM ? g_creates[kind] : 0;
  *destroys = kind < K_NUM ? g_destroys[kind] : 0;
  pthread_mutex_unlock(&g_mu);
}
EXPORT uint64_t fake_rt_live(void) { return read_locked(&g_live); }
/* Destroys of unknown, already destroyed or wrong-kind handles. */
EXPORT uint64_t fake_rt_bad_destroys(void) { return read_locked(&g_bad); }
EXPORT uint64_t fake_rt_forced(void) { return read_locked(&g_forced); }
/* Counted calls so far (see the top of the file). */
EXPORT uint64_t fake_rt_calls(void) { return read_locked(&g_calls); }
/* Every recorded event completes (the device has caught up). */
EXPORT void fake_rt_complete_all(void) {
  pthread_mutex_lock(&g_mu);
  for (uint32_t i = 0; i < TABLE_SIZE; ++i) {
    handle_t *h = g_table[i];
    if (h != NULL && h != TOMB && h->kind == K_EVENT && h->state == EV_PENDING) h->state = EV_COMPLETE;
  }
  pthread_mutex_unlock(&g_mu);
}
EXPORT uint64_t fake_rt_event_queries(void) { return read_locked(&g_queries); }
EXPORT uint64_t fake_rt_event_syncs(void) { return read_locked(&g_syncs); }
/* Device memory allocated now, and the capacity (UINT64_MAX: unlimited). */
EXPORT uint64_t fake_rt_mem_bytes(void) { return read_locked(&g_mem_bytes); }
EXPORT void fake_rt_set_mem_capacity(uint64_t bytes) {
  pthread_mutex_lock(&g_mu);
  read_env_locked();
  g_mem_capacity = bytes;
  pthread_mutex_unlock(&g_mu);
}
/* Fails the k-th counted call from now (1 = the next one); 0 disables. */
EXPORT void fake_rt_set_capacity(uint32_t kind, uint64_t max_live) {
  if (kind >= K_NUM) return;
  pthread_mutex_lock(&g_mu);
  g_capacity[kind] = max_live;
  pthread_mutex_unlock(&g_mu);
}
EXPORT void fake_rt_fail_at(uint64_t k) {
  pthread_mutex_lock(&g_mu);
  read_env_locked();
  g_fail_at = k == 0 ? 0 : g_calls + k;
  pthread_mutex_unlock(&g_mu);
}
EXPORT void fake_rt_set_limits(uint32_t max_tasks, int64_t unlimited) {
  pthread_mutex_lock(&g_mu);
  read_env_locked();
  g_max_tasks = max_tasks;
  g_unlimited = unlimited;
  pthread_mutex_unlock(&g_mu);
}
EXPORT void fake_rt_last_create(int32_t *priority, uint32_t *flags) {
  pthread_mutex_lock(&g_mu);
  *priority = g_last_priority;
  *flags = g_last_flags;
  pthread_mutex_unlock(&g_mu);
}
