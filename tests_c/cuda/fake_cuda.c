/* A fake CUDA driver (libcuda.so.1's API) for the tests of the CUDA backend: exports the driver
 * symbols stream-alloc looks up, with CUDA's error codes and names, and checks what a real
 * driver checks: cuInit first, a current context on the calling thread for every context call
 * (CUDA_ERROR_INVALID_CONTEXT otherwise), live handles of the right kind
 * (CUDA_ERROR_INVALID_HANDLE), device pointers inside a live allocation
 * (CUDA_ERROR_INVALID_VALUE), memory within FAKE_CUDA_MEM_CAPACITY bytes
 * (CUDA_ERROR_OUT_OF_MEMORY), PTX that declares the functions asked for.
 *
 * Streams run nothing on their own: a record leaves its event pending (cuEventQuery answers
 * CUDA_ERROR_NOT_READY) until cuEventSynchronize on it or on a later record of its stream,
 * cuStreamSynchronize on its stream or fake_cuda_complete_all(). Launches of the replay kernel
 * (sa_replay_kernel) are executed at launch, in issue order, by a host model of the PTX:
 * dependency flags checked, violations, arrivals, times and flags written, every pointer
 * argument checked against the allocations. Issue order puts every record before its waits,
 * so a correct plan finds every producer finished, as on a GPU.
 *
 * Stream capture and graphs, as the replay uses them: one capture at a time. A captured launch
 * keeps copies of its arguments and runs when the graph is launched, in capture order. As in
 * CUDA: a stream joins the capture by waiting on an event recorded in it; a capturing stream
 * may not wait on an event recorded outside it (CUDA_ERROR_STREAM_CAPTURE_ISOLATION); every
 * joined stream must be joined back into the origin before cuStreamEndCapture
 * (CUDA_ERROR_STREAM_CAPTURE_UNJOINED); synchronous calls (allocation, copies, memset, stream
 * synchronisation) during a capture are refused (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) and
 * invalidate it (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED at its end).
 *
 * Control: fake_cuda_fail_next(code) makes the next driver call after cuInit return `code`;
 * fake_cuda_live() counts live streams, events, allocations and modules; fake_cuda_calls()
 * counts calls; FAKE_CUDA_SMS (default 8), FAKE_CUDA_DEVICES (default 1). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_ILLEGAL_STATE = 401,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
  CUDA_ERROR_STREAM_CAPTURE_UNJOINED = 904,
  CUDA_ERROR_STREAM_CAPTURE_ISOLATION = 905
};
enum { K_STREAM = 1, K_EVENT = 2, K_MODULE = 3, K_FUNC = 4, K_MEM = 5, K_GRAPH = 6, K_EXEC = 7 };
#define REPLAY_KERNEL_ARGS 10
enum { EV_NEVER = 0, EV_PENDING = 1, EV_DONE = 2 };
#define CU_EVENT_DISABLE_TIMING 2u
#define MAX_HANDLES 65536

/* A captured launch of the replay kernel, with copies of its arguments. */
typedef struct launch {
  struct obj *fn;
  unsigned grid;
  uint64_t args[REPLAY_KERNEL_ARGS];
} launch;

typedef struct obj {
  int kind;
  int live;
  uint32_t flags;
  int state;            /* events */
  uint64_t stamp;       /* events: clock at the record */
  struct obj *stream;   /* events: stream of the last record */
  uint64_t id;          /* streams */
  struct obj *module;   /* functions */
  char name[64];        /* functions */
  char *image;          /* modules */
  unsigned char *bytes; /* memory */
  size_t size;          /* memory */
  int capturing;        /* streams: part of the capture */
  uint64_t cap_last;    /* streams: sequence number of its last captured work */
  uint64_t cap_joined;  /* streams: the origin has waited on its work up to here */
  uint64_t cap_seq;     /* events: sequence number of its record in the capture (0: none) */
  launch *launches;     /* graphs and executable graphs */
  size_t nlaunches;
} obj;

/* The one capture in progress (origin NULL: none). */
static struct {
  obj *origin;
  uint64_t seq;
  int invalid;
  launch *launches;
  size_t n, cap;
} g_capture;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static obj *g_objs[MAX_HANDLES];
static size_t g_count;
static int g_inited, g_fail_code, g_ctx_retains;
static uint64_t g_calls, g_clock = 1000, g_mem_bytes, g_mem_capacity = UINT64_MAX, g_next_stream_id = 1;
static uint64_t g_launches, g_waits;
static int g_sms = 8, g_devices = 1;
static int g_ctx_token; /* the primary context is the address of this */
static __thread int t_ctx_current;

static void read_env(void) {
  const char *v;
  if ((v = getenv("FAKE_CUDA_SMS")) != NULL) g_sms = atoi(v);
  if ((v = getenv("FAKE_CUDA_DEVICES")) != NULL) g_devices = atoi(v);
  if ((v = getenv("FAKE_CUDA_MEM_CAPACITY")) != NULL) g_mem_capacity = strtoull(v, NULL, 10);
}

/* Entry of every call but cuInit and cuGetErrorName: counts it, answers an injected failure,
 * then the initialisation and context checks. Returns with g_mu held on success. */
static int enter(int needs_ctx) {
  pthread_mutex_lock(&g_mu);
  ++g_calls;
  int rc = CUDA_SUCCESS;
  if (!g_inited) rc = CUDA_ERROR_NOT_INITIALIZED;
  else if (g_fail_code != 0) {
    rc = g_fail_code;
    g_fail_code = 0;
  } else if (needs_ctx && !t_ctx_current) rc = CUDA_ERROR_INVALID_CONTEXT;
  if (rc != CUDA_SUCCESS) pthread_mutex_unlock(&g_mu);
  return rc;
}
static int leave(int rc) {
  pthread_mutex_unlock(&g_mu);
  return rc;
}

static obj *find(const void *h, int kind) {
  for (size_t i = 0; i < g_count; ++i)
    if (g_objs[i] == h && g_objs[i]->live && g_objs[i]->kind == kind) return g_objs[i];
  return NULL;
}
/* enter(1), then the live handle `h` of `kind` in *o; CUDA_ERROR_INVALID_HANDLE (the lock
 * released) when there is none. */
static int enter_on(void *h, int kind, obj **o) {
  int rc = enter(1);
  if (rc) return rc;
  *o = find(h, kind);
  return *o ? CUDA_SUCCESS : leave(CUDA_ERROR_INVALID_HANDLE);
}
static obj *add(int kind) {
  if (g_count == MAX_HANDLES) return NULL;
  obj *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->kind = kind;
  o->live = 1;
  g_objs[g_count++] = o;
  return o;
}
/* Marks the handle dead; its memory stays until exit-free so stale handles are caught. */
static void kill(obj *o) {
  o->live = 0;
  if (o->kind == K_MEM) {
    g_mem_bytes -= o->size;
    free(o->bytes);
    o->bytes = NULL;
  }
  if (o->kind == K_MODULE) {
    free(o->image);
    o->image = NULL;
  }
  if (o->kind == K_GRAPH || o->kind == K_EXEC) {
    free(o->launches);
    o->launches = NULL;
  }
}
/* A synchronous call while a capture is in progress: refused, and the capture is spoilt. */
static int capture_forbids(void) {
  if (!g_capture.origin) return 0;
  g_capture.invalid = 1;
  return 1;
}
/* The allocation holding [p, p + n), or NULL. */
static obj *mem_at(uint64_t p, size_t n) {
  for (size_t i = 0; i < g_count; ++i) {
    obj *o = g_objs[i];
    if (o->live && o->kind == K_MEM) {
      uint64_t b = (uint64_t)(uintptr_t)o->bytes;
      if (p >= b && p + n <= b + o->size && p + n >= p) return o;
    }
  }
  return NULL;
}

/* Frees the bookkeeping at exit, so a leak check sees only what the library leaked. */
__attribute__((destructor)) static void fake_cuda_teardown(void) {
  for (size_t i = 0; i < g_count; ++i) {
    kill(g_objs[i]);
    free(g_objs[i]);
  }
  free(g_capture.launches);
  g_count = 0;
}

EXPORT int cuGetErrorName(int code, const char **name) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  switch (code) {
    case CUDA_SUCCESS: *name = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_NOT_INITIALIZED: *name = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case CUDA_ERROR_INVALID_DEVICE: *name = "CUDA_ERROR_INVALID_DEVICE"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *name = "CUDA_ERROR_INVALID_CONTEXT"; break;
    case CUDA_ERROR_INVALID_PTX: *name = "CUDA_ERROR_INVALID_PTX"; break;
    case CUDA_ERROR_INVALID_HANDLE: *name = "CUDA_ERROR_INVALID_HANDLE"; break;
    case CUDA_ERROR_NOT_FOUND: *name = "CUDA_ERROR_NOT_FOUND"; break;
    case CUDA_ERROR_NOT_READY: *name = "CUDA_ERROR_NOT_READY"; break;
    case CUDA_ERROR_ILLEGAL_STATE: *name = "CUDA_ERROR_ILLEGAL_STATE"; break;
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: *name = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"; break;
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: *name = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"; break;
    case CUDA_ERROR_STREAM_CAPTURE_UNMATCHED: *name = "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED"; break;
    case CUDA_ERROR_STREAM_CAPTURE_UNJOINED: *name = "CUDA_ERROR_STREAM_CAPTURE_UNJOINED"; break;
    case CUDA_ERROR_STREAM_CAPTURE_ISOLATION: *name = "CUDA_ERROR_STREAM_CAPTURE_ISOLATION"; break;
    default: *name = NULL; return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

EXPORT int cuInit(unsigned flags) {
  pthread_mutex_lock(&g_mu);
  ++g_calls;
  int rc = CUDA_SUCCESS;
  if (flags != 0) rc = CUDA_ERROR_INVALID_VALUE;
  else if (!g_inited) {
    read_env();
    g_inited = 1;
  }
  return leave(rc);
}
EXPORT int cuDeviceGetCount(int *n) {
  int rc = enter(0);
  if (rc) return rc;
  if (!n) return leave(CUDA_ERROR_INVALID_VALUE);
  *n = g_devices;
  return leave(CUDA_SUCCESS);
}
EXPORT int cuDeviceGet(int *dev, int ordinal) {
  int rc = enter(0);
  if (rc) return rc;
  if (!dev) return leave(CUDA_ERROR_INVALID_VALUE);
  if (ordinal < 0 || ordinal >= g_devices) return leave(CUDA_ERROR_INVALID_DEVICE);
  *dev = ordinal;
  return leave(CUDA_SUCCESS);
}
EXPORT int cuDeviceGetAttribute(int *v, int attr, int dev) {
  int rc = enter(0);
  if (rc) return rc;
  if (!v) return leave(CUDA_ERROR_INVALID_VALUE);
  if (dev < 0 || dev >= g_devices) return leave(CUDA_ERROR_INVALID_DEVICE);
  if (attr == 16) *v = g_sms;                 /* MULTIPROCESSOR_COUNT */
  else if (attr == 97) *v = 99 * 1024;        /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
  else return leave(CUDA_ERROR_INVALID_VALUE);
  return leave(CUDA_SUCCESS);
}
EXPORT int cuDeviceGetName(char *name, int len, int dev) {
  int rc = enter(0);
  if (rc) return rc;
  if (!name || len <= 0) return leave(CUDA_ERROR_INVALID_VALUE);
  if (dev < 0 || dev >= g_devices) return leave(CUDA_ERROR_INVALID_DEVICE);
  snprintf(name, (size_t)len, "Fake CUDA Device %d", dev);
  return leave(CUDA_SUCCESS);
}
EXPORT int cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  int rc = enter(0);
  if (rc) return rc;
  if (!ctx) return leave(CUDA_ERROR_INVALID_VALUE);
  if (dev < 0 || dev >= g_devices) return leave(CUDA_ERROR_INVALID_DEVICE);
  ++g_ctx_retains;
  *ctx = &g_ctx_token;
  return leave(CUDA_SUCCESS);
}
EXPORT int cuCtxSetCurrent(void *ctx) {
  int rc = enter(0);
  if (rc) return rc;
  if (ctx != NULL && ctx != &g_ctx_token) return leave(CUDA_ERROR_INVALID_CONTEXT);
  t_ctx_current = ctx != NULL;
  return leave(CUDA_SUCCESS);
}

EXPORT int cuStreamCreateWithPriority(void **s, unsigned flags, int priority) {
  int rc = enter(1);
  if (rc) return rc;
  (void)priority;
  if (!s || flags > 1) return leave(CUDA_ERROR_INVALID_VALUE);
  obj *o = add(K_STREAM);
  if (!o) return leave(CUDA_ERROR_OUT_OF_MEMORY);
  o->flags = flags;
  o->id = g_next_stream_id++;
  *s = o;
  return leave(CUDA_SUCCESS);
}
/* Completes every event recorded on `s` (the device catching up). */
static void drain(const obj *s) {
  for (size_t i = 0; i < g_count; ++i)
    if (g_objs[i]->live && g_objs[i]->kind == K_EVENT && g_objs[i]->stream == s && g_objs[i]->state == EV_PENDING)
      g_objs[i]->state = EV_DONE;
}
EXPORT int cuStreamDestroy_v2(void *s) {
  obj *o;
  int rc = enter_on(s, K_STREAM, &o);
  if (rc) return rc;
  drain(o);
  kill(o);
  return leave(CUDA_SUCCESS);
}
EXPORT int cuStreamSynchronize(void *s) {
  int rc = enter(1);
  if (rc) return rc;
  if (capture_forbids()) return leave(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  obj *o = find(s, K_STREAM);
  if (!o) return leave(CUDA_ERROR_INVALID_HANDLE);
  drain(o);
  return leave(CUDA_SUCCESS);
}
EXPORT int cuStreamGetId(void *s, unsigned long long *id) {
  obj *o;
  int rc = enter_on(s, K_STREAM, &o);
  if (rc) return rc;
  if (!id) return leave(CUDA_ERROR_INVALID_VALUE);
  *id = o->id;
  return leave(CUDA_SUCCESS);
}
EXPORT int cuEventCreate(void **e, unsigned flags) {
  int rc = enter(1);
  if (rc) return rc;
  if (!e || (flags & ~0xfu) != 0) return leave(CUDA_ERROR_INVALID_VALUE);
  obj *o = add(K_EVENT);
  if (!o) return leave(CUDA_ERROR_OUT_OF_MEMORY);
  o->flags = flags;
  *e = o;
  return leave(CUDA_SUCCESS);
}
/* A destroy call: a live handle of `kind` is killed. */
static int destroy(void *h, int kind) {
  obj *o;
  int rc = enter_on(h, kind, &o);
  if (rc) return rc;
  kill(o);
  return leave(CUDA_SUCCESS);
}
EXPORT int cuEventDestroy_v2(void *e) { return destroy(e, K_EVENT); }
EXPORT int cuEventRecord(void *e, void *s) {
  int rc = enter(1);
  if (rc) return rc;
  obj *ev = find(e, K_EVENT), *st = find(s, K_STREAM);
  if (!ev || !st) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (st->capturing) { /* a node of the graph, not a record */
    ev->cap_seq = st->cap_last = ++g_capture.seq;
    ev->stream = st;
    return leave(CUDA_SUCCESS);
  }
  ev->cap_seq = 0;
  ev->state = EV_PENDING;
  ev->stream = st;
  ev->stamp = g_clock += 10;
  return leave(CUDA_SUCCESS);
}
EXPORT int cuStreamWaitEvent(void *s, void *e, unsigned flags) {
  int rc = enter(1);
  if (rc) return rc;
  obj *st = find(s, K_STREAM), *ev = find(e, K_EVENT);
  if (!st || !ev) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (flags != 0) return leave(CUDA_ERROR_INVALID_VALUE);
  if (ev->cap_seq != 0) { /* an edge of the graph; the waiting stream joins the capture */
    st->capturing = 1;
    st->cap_last = ++g_capture.seq;
    if (st == g_capture.origin && ev->stream->cap_joined < ev->cap_seq) ev->stream->cap_joined = ev->cap_seq;
  } else if (st->capturing) {
    g_capture.invalid = 1;
    return leave(CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
  }
  ++g_waits;
  return leave(CUDA_SUCCESS);
}
EXPORT int cuEventQuery(void *e) {
  obj *o;
  int rc = enter_on(e, K_EVENT, &o);
  if (rc) return rc;
  return leave(o->state == EV_PENDING ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS);
}
EXPORT int cuEventSynchronize(void *e) {
  obj *o;
  int rc = enter_on(e, K_EVENT, &o);
  if (rc) return rc;
  /* Its stream ran up to it: every earlier record on that stream is complete too. */
  if (o->state == EV_PENDING) {
    for (size_t i = 0; i < g_count; ++i) {
      obj *x = g_objs[i];
      if (x->live && x->kind == K_EVENT && x->state == EV_PENDING && x->stream == o->stream && x->stamp <= o->stamp)
        x->state = EV_DONE;
    }
  }
  return leave(CUDA_SUCCESS);
}
EXPORT int cuEventElapsedTime(float *ms, void *a, void *b) {
  int rc = enter(1);
  if (rc) return rc;
  obj *x = find(a, K_EVENT), *y = find(b, K_EVENT);
  if (!x || !y) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (!ms) return leave(CUDA_ERROR_INVALID_VALUE);
  /* As CUDA: timing-free or never-recorded events are invalid here; pending ones not ready. */
  if ((x->flags | y->flags) & CU_EVENT_DISABLE_TIMING) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (x->state == EV_NEVER || y->state == EV_NEVER) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (x->state == EV_PENDING || y->state == EV_PENDING) return leave(CUDA_ERROR_NOT_READY);
  *ms = (float)((double)(y->stamp - x->stamp) * 0.001);
  return leave(CUDA_SUCCESS);
}

EXPORT int cuMemAlloc_v2(uint64_t *p, size_t size) {
  int rc = enter(1);
  if (rc) return rc;
  if (capture_forbids()) return leave(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  if (!p || size == 0) return leave(CUDA_ERROR_INVALID_VALUE);
  if (size > g_mem_capacity - g_mem_bytes) return leave(CUDA_ERROR_OUT_OF_MEMORY);
  obj *o = add(K_MEM);
  if (!o) return leave(CUDA_ERROR_OUT_OF_MEMORY);
  o->bytes = malloc(size);
  if (!o->bytes) {
    o->live = 0;
    return leave(CUDA_ERROR_OUT_OF_MEMORY);
  }
  memset(o->bytes, 0xa5, size); /* uninitialised, as device memory is */
  o->size = size;
  g_mem_bytes += size;
  *p = (uint64_t)(uintptr_t)o->bytes;
  return leave(CUDA_SUCCESS);
}
/* The capacity as the total (80 GiB when unlimited) and what is left of it. */
EXPORT int cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes) {
  int rc = enter(1);
  if (rc) return rc;
  if (!free_bytes || !total_bytes) return leave(CUDA_ERROR_INVALID_VALUE);
  uint64_t total = g_mem_capacity == UINT64_MAX ? (uint64_t)80 << 30 : g_mem_capacity;
  *total_bytes = (size_t)total;
  *free_bytes = (size_t)(total > g_mem_bytes ? total - g_mem_bytes : 0);
  return leave(CUDA_SUCCESS);
}
EXPORT int cuMemFree_v2(uint64_t p) {
  int rc = enter(1);
  if (rc) return rc;
  if (capture_forbids()) return leave(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  obj *o = mem_at(p, 1);
  if (!o || (uint64_t)(uintptr_t)o->bytes != p) return leave(CUDA_ERROR_INVALID_VALUE);
  kill(o);
  return leave(CUDA_SUCCESS);
}
EXPORT int cuMemcpyHtoD_v2(uint64_t dst, const void *src, size_t n) {
  int rc = enter(1);
  if (rc) return rc;
  if (capture_forbids()) return leave(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  if (!src || !mem_at(dst, n)) return leave(CUDA_ERROR_INVALID_VALUE);
  memcpy((void *)(uintptr_t)dst, src, n);
  return leave(CUDA_SUCCESS);
}
EXPORT int cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t n, void *s) {
  int rc = enter(1);
  if (rc) return rc;
  if (!find(s, K_STREAM)) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (!src || !mem_at(dst, n)) return leave(CUDA_ERROR_INVALID_VALUE);
  memcpy((void *)(uintptr_t)dst, src, n);
  return leave(CUDA_SUCCESS);
}
EXPORT int cuMemcpyDtoH_v2(void *dst, uint64_t src, size_t n) {
  int rc = enter(1);
  if (rc) return rc;
  if (capture_forbids()) return leave(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  if (!dst || !mem_at(src, n)) return leave(CUDA_ERROR_INVALID_VALUE);
  memcpy(dst, (const void *)(uintptr_t)src, n);
  return leave(CUDA_SUCCESS);
}
EXPORT int cuMemsetD32_v2(uint64_t dst, unsigned v, size_t n) {
  int rc = enter(1);
  if (rc) return rc;
  if (capture_forbids()) return leave(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  if (!mem_at(dst, n * 4)) return leave(CUDA_ERROR_INVALID_VALUE);
  uint32_t *w = (uint32_t *)(uintptr_t)dst;
  for (size_t i = 0; i < n; ++i) w[i] = v;
  return leave(CUDA_SUCCESS);
}

EXPORT int cuModuleLoadDataEx(void **m, const void *image, unsigned nopt, int *opts, void **vals) {
  int rc = enter(1);
  if (rc) return rc;
  if (!m || !image || (nopt > 0 && (!opts || !vals))) return leave(CUDA_ERROR_INVALID_VALUE);
  const char *ptx = image;
  if (!strstr(ptx, ".version") || !strstr(ptx, ".target")) {
    for (unsigned i = 0; i < nopt; ++i)
      if (opts[i] == 5 && vals[i]) snprintf((char *)vals[i], 64, "ptxas fatal: not a PTX module");
    return leave(CUDA_ERROR_INVALID_PTX);
  }
  obj *o = add(K_MODULE);
  if (!o) return leave(CUDA_ERROR_OUT_OF_MEMORY);
  o->image = strdup(ptx);
  *m = o;
  return leave(CUDA_SUCCESS);
}
EXPORT int cuModuleGetFunction(void **f, void *m, const char *name) {
  obj *mod;
  int rc = enter_on(m, K_MODULE, &mod);
  if (rc) return rc;
  if (!f || !name || strlen(name) >= 60) return leave(CUDA_ERROR_INVALID_VALUE);
  char entry[80];
  snprintf(entry, sizeof entry, ".entry %s(", name);
  if (!strstr(mod->image, entry)) return leave(CUDA_ERROR_NOT_FOUND);
  obj *o = add(K_FUNC);
  if (!o) return leave(CUDA_ERROR_OUT_OF_MEMORY);
  o->module = mod;
  strcpy(o->name, name);
  *f = o;
  return leave(CUDA_SUCCESS);
}
EXPORT int cuModuleUnload(void *m) {
  obj *mod;
  int rc = enter_on(m, K_MODULE, &mod);
  if (rc) return rc;
  for (size_t i = 0; i < g_count; ++i)
    if (g_objs[i]->live && g_objs[i]->kind == K_FUNC && g_objs[i]->module == mod) kill(g_objs[i]);
  kill(mod);
  return leave(CUDA_SUCCESS);
}
EXPORT int cuFuncSetAttribute(void *f, int attr, int value) {
  obj *o;
  int rc = enter_on(f, K_FUNC, &o);
  if (rc) return rc;
  if (attr != 8 || value < 0 || value > 99 * 1024) return leave(CUDA_ERROR_INVALID_VALUE);
  o->flags = (uint32_t)value; /* the function's dynamic shared-memory limit */
  return leave(CUDA_SUCCESS);
}

/* A parameter as a checked device pointer to n bytes. */
#define DEV(i, n) (mem_at(*(uint64_t *)params[i], (n)) ? (void *)(uintptr_t) * (uint64_t *)params[i] : NULL)

/* Runs the replay kernel's host model with g_mu held; `params` as cuLaunchKernel has them. */
static int run_kernel(obj *fn, unsigned gx, void **params) {
  ++g_launches;
  g_clock += 100;
  if (strcmp(fn->name, "sa_replay_kernel") != 0) return CUDA_SUCCESS;
  uint32_t k = *(uint32_t *)params[5], begin = *(uint32_t *)params[6], count = *(uint32_t *)params[7];
  uint32_t run = *(uint32_t *)params[8];
  uint64_t duration_ns = *(uint64_t *)params[9];
  uint32_t *flags = DEV(0, 4 * ((size_t)k + 1));
  uint32_t *deps = count ? DEV(1, 4 * ((size_t)begin + count)) : NULL;
  uint32_t *violations = DEV(2, 4 * ((size_t)k + 1));
  uint64_t *times = DEV(3, 16 * ((size_t)k + 1));
  uint32_t *arrivals = DEV(4, 4 * ((size_t)k + 1));
  if (!flags || (count && !deps) || !violations || !times || !arrivals || run == 0) return CUDA_ERROR_INVALID_VALUE;
  for (unsigned b = 0; b < gx; ++b) {
    if (b == 0) times[2 * k] = g_clock;
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t d = deps[begin + i];
      if (!mem_at((uint64_t)(uintptr_t)&flags[d], 4)) return CUDA_ERROR_INVALID_VALUE;
      if (flags[d] != run && violations[k] == 0) violations[k] = d + 1;
    }
    if (++arrivals[k] == gx * run) {
      times[2 * k + 1] = g_clock + duration_ns;
      flags[k] = run;
    }
  }
  g_clock += duration_ns;
  return CUDA_SUCCESS;
}

EXPORT int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned shared, void *s, void **params, void **extra) {
  int rc = enter(1);
  if (rc) return rc;
  obj *fn = find(f, K_FUNC), *st = find(s, K_STREAM);
  if (!fn || !st) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (gx == 0 || gy != 1 || gz != 1 || bx == 0 || bx > 1024 || by != 1 || bz != 1 || extra != NULL || !params)
    return leave(CUDA_ERROR_INVALID_VALUE);
  if (shared > 48 * 1024 && shared > fn->flags) return leave(CUDA_ERROR_INVALID_VALUE);
  if ((int)gx > g_sms) return leave(CUDA_ERROR_INVALID_VALUE); /* the replay never asks for more */
  if (!st->capturing) return leave(run_kernel(fn, gx, params));
  /* Captured: the arguments are copied now, as CUDA does, and run at cuGraphLaunch. */
  if (strcmp(fn->name, "sa_replay_kernel") != 0) return leave(CUDA_ERROR_INVALID_VALUE);
  if (g_capture.n == g_capture.cap) {
    size_t cap = g_capture.cap ? 2 * g_capture.cap : 64;
    launch *grown = realloc(g_capture.launches, cap * sizeof *grown);
    if (!grown) return leave(CUDA_ERROR_OUT_OF_MEMORY);
    g_capture.launches = grown;
    g_capture.cap = cap;
  }
  launch *l = &g_capture.launches[g_capture.n++];
  l->fn = fn;
  l->grid = gx;
  for (int i = 0; i < REPLAY_KERNEL_ARGS; ++i) {
    l->args[i] = 0;
    memcpy(&l->args[i], params[i], i >= 5 && i <= 8 ? 4 : 8); /* four u32 between the pointers and the u64 */
  }
  st->cap_last = ++g_capture.seq;
  return leave(CUDA_SUCCESS);
}

EXPORT int cuStreamBeginCapture_v2(void *s, int mode) {
  obj *st;
  int rc = enter_on(s, K_STREAM, &st);
  if (rc) return rc;
  if (mode < 0 || mode > 2) return leave(CUDA_ERROR_INVALID_VALUE);
  if (g_capture.origin) return leave(CUDA_ERROR_ILLEGAL_STATE); /* one capture at a time here */
  g_capture.origin = st;
  g_capture.invalid = 0;
  g_capture.n = 0;
  st->capturing = 1;
  st->cap_last = st->cap_joined = 0;
  return leave(CUDA_SUCCESS);
}

EXPORT int cuStreamEndCapture(void *s, void **graph) {
  obj *st;
  int rc = enter_on(s, K_STREAM, &st);
  if (rc) return rc;
  if (!graph) return leave(CUDA_ERROR_INVALID_VALUE);
  *graph = NULL;
  if (!st->capturing) return leave(CUDA_ERROR_ILLEGAL_STATE);
  if (st != g_capture.origin) return leave(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
  int unjoined = 0;
  for (size_t i = 0; i < g_count; ++i) {
    obj *o = g_objs[i];
    if (o->live && o->kind == K_STREAM && o->capturing && o != st && o->cap_joined < o->cap_last) unjoined = 1;
    if (o->kind == K_STREAM) o->capturing = 0, o->cap_last = o->cap_joined = 0;
    if (o->kind == K_EVENT) o->cap_seq = 0;
  }
  g_capture.origin = NULL;
  if (g_capture.invalid) return leave(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  if (unjoined) return leave(CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
  obj *g = add(K_GRAPH);
  if (!g) return leave(CUDA_ERROR_OUT_OF_MEMORY);
  g->launches = g_capture.launches;
  g->nlaunches = g_capture.n;
  g_capture.launches = NULL;
  g_capture.n = g_capture.cap = 0;
  *graph = g;
  return leave(CUDA_SUCCESS);
}

EXPORT int cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags) {
  obj *g;
  int rc = enter_on(graph, K_GRAPH, &g);
  if (rc) return rc;
  if (!exec || flags != 0) return leave(CUDA_ERROR_INVALID_VALUE);
  launch *copy = g->nlaunches ? malloc(g->nlaunches * sizeof *copy) : NULL;
  if (g->nlaunches && !copy) return leave(CUDA_ERROR_OUT_OF_MEMORY);
  obj *x = add(K_EXEC);
  if (!x) {
    free(copy);
    return leave(CUDA_ERROR_OUT_OF_MEMORY);
  }
  if (copy) memcpy(copy, g->launches, g->nlaunches * sizeof *copy);
  x->launches = copy;
  x->nlaunches = g->nlaunches;
  *exec = x;
  return leave(CUDA_SUCCESS);
}

EXPORT int cuGraphLaunch(void *exec, void *s) {
  int rc = enter(1);
  if (rc) return rc;
  obj *x = find(exec, K_EXEC), *st = find(s, K_STREAM);
  if (!x || !st) return leave(CUDA_ERROR_INVALID_HANDLE);
  if (st->capturing) return leave(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  for (size_t i = 0; i < x->nlaunches; ++i) {
    launch *l = &x->launches[i];
    void *params[REPLAY_KERNEL_ARGS];
    for (int j = 0; j < REPLAY_KERNEL_ARGS; ++j) params[j] = &l->args[j];
    if (!l->fn->live) return leave(CUDA_ERROR_INVALID_HANDLE); /* its module was unloaded */
    if ((rc = run_kernel(l->fn, l->grid, params)) != CUDA_SUCCESS) return leave(rc);
  }
  return leave(CUDA_SUCCESS);
}

EXPORT int cuGraphExecDestroy(void *exec) { return destroy(exec, K_EXEC); }

EXPORT int cuGraphDestroy(void *graph) { return destroy(graph, K_GRAPH); }

/* Test controls. */
EXPORT void fake_cuda_fail_next(int code) {
  pthread_mutex_lock(&g_mu);
  g_fail_code = code;
  pthread_mutex_unlock(&g_mu);
}
EXPORT uint64_t fake_cuda_live(int kind) {
  pthread_mutex_lock(&g_mu);
  uint64_t n = 0;
  for (size_t i = 0; i < g_count; ++i) n += g_objs[i]->live && (kind == 0 || g_objs[i]->kind == kind);
  pthread_mutex_unlock(&g_mu);
  return n;
}
/* A counter, read under the lock. */
static uint64_t read_locked(const uint64_t *counter) {
  pthread_mutex_lock(&g_mu);
  uint64_t v = *counter;
  pthread_mutex_unlock(&g_mu);
  return v;
}
EXPORT uint64_t fake_cuda_calls(void) { return read_locked(&g_calls); }
EXPORT uint64_t fake_cuda_launches(void) { return read_locked(&g_launches); }
EXPORT uint64_t fake_cuda_waits(void) { return read_locked(&g_waits); }
EXPORT uint64_t fake_cuda_mem_bytes(void) { return read_locked(&g_mem_bytes); }
EXPORT void fake_cuda_set_mem_capacity(uint64_t bytes) {
  pthread_mutex_lock(&g_mu);
  g_mem_capacity = bytes;
  pthread_mutex_unlock(&g_mu);
}
EXPORT void fake_cuda_complete_all(void) {
  pthread_mutex_lock(&g_mu);
  for (size_t i = 0; i < g_count; ++i)
    if (g_objs[i]->live && g_objs[i]->kind == K_EVENT && g_objs[i]->state == EV_PENDING) g_objs[i]->state = EV_DONE;
  pthread_mutex_unlock(&g_mu);
}
