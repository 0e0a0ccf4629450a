/* What the runtime tests share about a device runtime: the control hooks of the fake Ascend
 * runtime (fake_runtime.c), the Ascend entry points the tests call themselves, and a table
 * builder for the tests that register their own runtime. */
#ifndef SA_TEST_FAKE_RUNTIME_H
#define SA_TEST_FAKE_RUNTIME_H

#include <stdint.h>
#include <string.h>

#include "stream_alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The fake's counters (kind 0 streams, 1 events, 2 notifies) and failure injection. */
void fake_rt_counts(uint32_t kind, uint64_t *creates, uint64_t *destroys);
uint64_t fake_rt_live(void);
uint64_t fake_rt_bad_destroys(void);
uint64_t fake_rt_forced(void);
uint64_t fake_rt_calls(void);
void fake_rt_fail_at(uint64_t k);
void fake_rt_set_capacity(uint32_t kind, uint64_t max_live);
void fake_rt_set_limits(uint32_t max_tasks, int64_t unlimited);
void fake_rt_last_create(int32_t *priority, uint32_t *flags);
/* Its device memory and event completion. */
void fake_rt_complete_all(void);
uint64_t fake_rt_event_queries(void);
uint64_t fake_rt_event_syncs(void);
uint64_t fake_rt_mem_bytes(void);
void fake_rt_set_mem_capacity(uint64_t bytes);

/* The Ascend entry points the fake serves, as the tests call them directly. */
int32_t rtStreamCreateWithFlags(void **stm, int32_t priority, uint32_t flags);
int aclrtDestroyStream(void *stm);
int aclrtCreateEventExWithFlag(void **evt, uint32_t flag);
int aclrtDestroyEvent(void *evt);
int aclrtCreateNotify(void **notify, uint64_t flag);
int aclrtDestroyNotify(void *notify);

#ifdef __cplusplus
}
#endif

/* A current-version table with `user` and the six entries every runtime must have (create and
 * destroy of streams, events and notifies); the optional entries are NULL for the test to set. */
static inline sa_runtime_ops fake_rt_table(void *user,
                                           int32_t (*stream_create)(void *, void **, int32_t, uint32_t),
                                           int32_t (*stream_destroy)(void *, void *, int32_t),
                                           int32_t (*event_create)(void *, void **, uint32_t),
                                           int32_t (*event_destroy)(void *, void *),
                                           int32_t (*notify_create)(void *, void **, int32_t),
                                           int32_t (*notify_destroy)(void *, void *)) {
    sa_runtime_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.struct_size = sizeof ops;
    ops.abi_version = SA_RUNTIME_OPS_ABI_VERSION;
    ops.user = user;
    ops.stream_create = stream_create;
    ops.stream_destroy = stream_destroy;
    ops.event_create = event_create;
    ops.event_destroy = event_destroy;
    ops.notify_create = notify_create;
    ops.notify_destroy = notify_destroy;
    return ops;
}

#endif
