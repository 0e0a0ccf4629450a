/* A fake Ascend device runtime for the tests: exports the real rt and aclrt symbol names with the
 * real error codes, hands out a fresh heap block per handle, counts every create and destroy per
 * kind, flags destroys of unknown or already destroyed handles, and fails the k-th create on
 * request (fake_rt_fail_at, or FAKE_RT_FAIL_AT counted from process start). Other switches:
 * FAKE_RT_MAX_TASKS (default 1024), FAKE_RT_UNLIMITED (0/1), FAKE_RT_MAX_STREAMS (default 1024). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum { K_STREAM = 0, K_EVENT = 1, K_NOTIFY = 2, K_NUM = 3 };
#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000
#define ACL_ERROR_RT_NO_EVENT_RESOURCE 207007
#define ACL_ERROR_RT_NO_STREAM_RESOURCE 207008
#define ACL_ERROR_RT_NO_NOTIFY_RESOURCE 207009

typedef struct {
  uint32_t kind;
  int32_t id;
  int32_t priority;
  uint32_t flags;
} handle_t;

#define TABLE_BITS 16
#define TABLE_SIZE (1u << TABLE_BITS)
#define TOMB ((handle_t *)1)

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static handle_t *g_table[TABLE_SIZE];
static uint64_t g_creates[K_NUM], g_destroys[K_NUM], g_forced, g_bad, g_calls, g_fail_at, g_live;
static uint32_t g_max_tasks = 1024, g_max_streams = 1024;
static int64_t g_unlimited;
static int32_t g_next_id;
static uint32_t g_last_flags;
static int32_t g_last_priority;
static int g_env_read;

static void read_env_locked(void) {
  if (g_env_read) return;
  g_env_read = 1;
  const char *v;
  if ((v = getenv("FAKE_RT_FAIL_AT")) != NULL) g_fail_at = strtoull(v, NULL, 10);
  if ((v = getenv("FAKE_RT_MAX_TASKS")) != NULL) g_max_tasks = (uint32_t)strtoul(v, NULL, 10);
  if ((v = getenv("FAKE_RT_MAX_STREAMS")) != NULL) g_max_streams = (uint32_t)strtoul(v, NULL, 10);
  if ((v = getenv("FAKE_RT_UNLIMITED")) != NULL) g_unlimited = strtoll(v, NULL, 10);
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

static int create(uint32_t kind, void **out, int32_t priority, uint32_t flags) {
  static const int no_resource[K_NUM] = {ACL_ERROR_RT_NO_STREAM_RESOURCE, ACL_ERROR_RT_NO_EVENT_RESOURCE,
                                         ACL_ERROR_RT_NO_NOTIFY_RESOURCE};
  if (out == NULL) return ACL_ERROR_RT_PARAM_INVALID;
  pthread_mutex_lock(&g_mu);
  read_env_locked();
  uint64_t n = ++g_calls;
  if (g_fail_at != 0 && n == g_fail_at) {
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
  g_last_flags = flags;
  g_last_priority = priority;
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
EXPORT int aclrtRecordEvent(void *evt, void *stm) { return (evt && stm) ? 0 : ACL_ERROR_RT_PARAM_INVALID; }
EXPORT int aclrtResetEvent(void *evt, void *stm) { return (evt && stm) ? 0 : ACL_ERROR_RT_PARAM_INVALID; }
EXPORT int aclrtStreamWaitEvent(void *stm, void *evt) { return (evt && stm) ? 0 : ACL_ERROR_RT_PARAM_INVALID; }
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
  *count = g_max_streams > g_creates[K_STREAM] - g_destroys[K_STREAM]
               ? (uint32_t)(g_max_streams - (g_creates[K_STREAM] - g_destroys[K_STREAM]))
               : 0;
  pthread_mutex_unlock(&g_mu);
  return 0;
}
EXPORT int aclrtGetDevice(int32_t *device) {
  if (device == NULL) return ACL_ERROR_RT_PARAM_INVALID;
  *device = 0;
  return 0;
}

/* ---- control and introspection ---- */
EXPORT void fake_rt_counts(uint32_t kind, uint64_t *creates, uint64_t *destroys) {
  pthread_mutex_lock(&g_mu);
  *creates = kind < K_NUM ? g_creates[kind] : 0;
  *destroys = kind < K_NUM ? g_destroys[kind] : 0;
  pthread_mutex_unlock(&g_mu);
}
EXPORT uint64_t fake_rt_live(void) {
  pthread_mutex_lock(&g_mu);
  uint64_t v = g_live;
  pthread_mutex_unlock(&g_mu);
  return v;
}
/* Destroys of unknown, already destroyed or wrong-kind handles. */
EXPORT uint64_t fake_rt_bad_destroys(void) {
  pthread_mutex_lock(&g_mu);
  uint64_t v = g_bad;
  pthread_mutex_unlock(&g_mu);
  return v;
}
EXPORT uint64_t fake_rt_forced(void) {
  pthread_mutex_lock(&g_mu);
  uint64_t v = g_forced;
  pthread_mutex_unlock(&g_mu);
  return v;
}
/* Fails the k-th create call from now (1 = the next one); 0 disables. */
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
