/* stream_alloc_runtime.h: C ABI of stream-alloc's runtime half (hand-written).
 *
 * RT2 allocators (gert::StreamAllocator / EventAllocator / NotifyAllocator semantics), the V1
 * reusable stream pool (ge::ReusableStreamAllocator), RT2 resource counts, and the device-runtime
 * seam. Every function returns an sa_status code (SA_OK = 0, runtime codes 100..105 below),
 * except the _acquire functions, which return the vector or NULL; after any failure
 * sa_rt_last_error() gives the message. Outputs are written only on success. Thread-safe.
 */
#ifndef STREAM_ALLOC_RUNTIME_H
#define STREAM_ALLOC_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* sa_status codes of the runtime half. */
#define SA_OK 0
#define SA_RT_NO_RUNTIME 100   /* no device runtime registered or found in the process */
#define SA_RT_LIMIT 101        /* 2024 streams / 4096 events / 1024 notifies exceeded */
#define SA_RT_DEVICE_ERROR 102 /* the device runtime returned an error */
#define SA_RT_INVALID 103      /* invalid argument, table, unknown stream, mixed allocators */
#define SA_RT_NULL 104         /* a required pointer was NULL */
#define SA_RT_PANIC 105        /* internal error caught at the boundary (a bug) */

#define SA_RUNTIME_OPS_ABI_VERSION 1u

/* Where the runtime in use came from (sa_runtime_resolve). */
#define SA_RUNTIME_REGISTERED 1
#define SA_RUNTIME_PROCESS_SCOPE 2  /* dlsym(RTLD_DEFAULT, ...) */
#define SA_RUNTIME_LOADED_LIBRARY 3 /* dlopen(libacl_rt.so / libruntime.so / libascendcl.so, RTLD_NOLOAD) */
#define SA_RUNTIME_EXPLICIT_PATH 4  /* SA_RUNTIME_LIB */

/* The device-runtime seam. Entries return the runtime's own error code (0 = success) and get
 * `user` back. Stream flags are RT-encoded (RT_STREAM_*), event flags ACL-encoded. The six
 * create/destroy entries are required; the rest may be NULL. The table is copied at
 * registration and may be called from any thread. */
typedef struct sa_runtime_ops {
  uint32_t struct_size; /* sizeof(sa_runtime_ops) */
  uint32_t abi_version; /* SA_RUNTIME_OPS_ABI_VERSION */
  void *user;
  int32_t (*stream_create)(void *user, void **stream, int32_t priority, uint32_t rt_flags);
  int32_t (*stream_destroy)(void *user, void *stream, int32_t force);
  int32_t (*stream_get_id)(void *user, void *stream, int32_t *stream_id);
  int32_t (*event_create)(void *user, void **event, uint32_t acl_flag);
  int32_t (*event_destroy)(void *user, void *event);
  int32_t (*event_record)(void *user, void *event, void *stream);
  int32_t (*event_reset)(void *user, void *event, void *stream);
  int32_t (*stream_wait_event)(void *user, void *stream, void *event);
  int32_t (*notify_create)(void *user, void **notify, int32_t device_id);
  int32_t (*notify_destroy)(void *user, void *notify);
  int32_t (*notify_record)(void *user, void *notify, void *stream);
  int32_t (*notify_wait)(void *user, void *notify, void *stream, uint32_t timeout_ms);
  int32_t (*get_rt_capability)(void *user, int32_t feature, int32_t info, int64_t *value);
  int32_t (*max_stream_and_task)(void *user, uint32_t stream_type, uint32_t *max_streams, uint32_t *max_tasks);
  int32_t (*available_stream_num)(void *user, uint32_t *count);
  int32_t (*get_device)(void *user, int32_t *device_id);
} sa_runtime_ops;

/* Message of this thread's last failure ("" if none); valid until the next failure. */
const char *sa_rt_last_error(void);

/* Registers `ops` (copied) for allocators that resolve their runtime from now on; NULL returns
 * to automatic resolution: registered table, else Ascend symbols via dlsym(RTLD_DEFAULT), else an
 * already-loaded libacl_rt.so/libruntime.so/libascendcl.so (RTLD_NOLOAD), else SA_RUNTIME_LIB. */
int32_t sa_runtime_register(const sa_runtime_ops *ops);
int32_t sa_runtime_resolve(int32_t *source);
/* rtGetMaxStreamAndTask (stream_type 0 normal, 1 huge); SA_RT_MAX_TASKS_PER_STREAM overrides. */
int32_t sa_runtime_task_limits(uint32_t stream_type, uint32_t *max_streams, uint32_t *max_tasks);
/* FEATURE_TYPE_PERSISTENT_STREAM_UNLIMITED_DEPTH: 1 or 0; SA_RT_UNLIMITED_DEPTH overrides. */
int32_t sa_runtime_unlimited_depth(int32_t *supported);

/* RT2 allocators. The vectors have GE's ContinuousVector layout: capacity at 0, size at 8,
 * elements from offset 56. They only grow and stay valid until the allocator is freed. */
typedef struct sa_stream_allocator sa_stream_allocator;
typedef struct sa_event_allocator sa_event_allocator;
typedef struct sa_notify_allocator sa_notify_allocator;

/* Streams: slot 0 is the caller's; n >= 2024 fails; free destroys slots 1..size-1. */
int32_t sa_stream_allocator_new(int32_t priority, uint32_t rt_flags, sa_stream_allocator **out);
void *sa_stream_allocator_acquire(const sa_stream_allocator *a, size_t n);
void sa_stream_allocator_free(sa_stream_allocator *a);
/* Events: n > 4096 fails; free destroys every slot. */
int32_t sa_event_allocator_new(uint32_t acl_flag, sa_event_allocator **out);
void *sa_event_allocator_acquire(const sa_event_allocator *a, size_t n);
void sa_event_allocator_free(sa_event_allocator *a);
/* Notifies: n >= 1024 fails; free destroys every slot. */
int32_t sa_notify_allocator_new(sa_notify_allocator **out);
void *sa_notify_allocator_acquire(const sa_notify_allocator *a, int32_t device_id, size_t n);
void sa_notify_allocator_free(sa_notify_allocator *a);

/* V1 reusable stream pool. options: NULL or "reuse=on|off,task_limit=N" (default reuse=off:
 * every request creates a stream, as GE does). Freeing the pool destroys no stream. */
typedef struct sa_reusable_pool sa_reusable_pool;
typedef struct sa_pool_stats {
  uint64_t live;      /* device streams alive */
  uint64_t created;
  uint64_t destroyed;
  uint64_t reused;    /* grants served by an existing stream */
  uint64_t grants;    /* outstanding grants */
} sa_pool_stats;

int32_t sa_reusable_pool_new(const char *options, sa_reusable_pool **out);
int32_t sa_reusable_pool_get_or_create(const sa_reusable_pool *p, void **stream, uint32_t rt_model_id,
                                       int32_t priority, uint32_t rt_flags, uint32_t task_num);
/* Drops one grant; the last one destroys the device stream (forced if `force`). Destroying a
 * destroyed stream succeeds; *stream is left unchanged. */
int32_t sa_reusable_pool_destroy_stream(const sa_reusable_pool *p, void **stream, bool force);
int32_t sa_reusable_pool_stats(const sa_reusable_pool *p, sa_pool_stats *stats);
void sa_reusable_pool_free(sa_reusable_pool *p);

/* RT2: gert::ModelDesc counts, and OccupyStreamResource. */
typedef struct sa_resource_counts {
  size_t reusable_stream_num;
  size_t reusable_event_num;
  size_t reusable_notify_num;
  size_t attached_stream_num;
} sa_resource_counts;
typedef struct sa_static_counts {
  size_t streams;
  size_t events;
  size_t notifies;
} sa_static_counts;

int32_t sa_rt2_resource_counts(size_t total_streams, size_t attached_streams, size_t events, size_t notifies,
                               const sa_static_counts *sub, sa_resource_counts *counts);
/* External allocators all set: used; all NULL: the (required) built-ins are used; any other
 * mix: SA_RT_INVALID. Writes the three vectors, with main_stream in stream slot 0. */
int32_t sa_rt2_occupy(const sa_resource_counts *counts, void *main_stream, int32_t device_id,
                      const sa_stream_allocator *ext_stream, const sa_event_allocator *ext_event,
                      const sa_notify_allocator *ext_notify, const sa_stream_allocator *builtin_stream,
                      const sa_event_allocator *builtin_event, const sa_notify_allocator *builtin_notify,
                      void **out_streams, void **out_events, void **out_notifies);

#ifdef __cplusplus
}
#endif
#endif /* STREAM_ALLOC_RUNTIME_H */
