// GE-style tests of the drop-in headers: the classes are used exactly as GE code uses them, with
// the device runtime found through one lookup path chosen on the command line:
//   inexe       the fake is compiled into this executable (-rdynamic): dlsym(RTLD_DEFAULT)
//   preload     the fake comes in through LD_PRELOAD: dlsym(RTLD_DEFAULT)
//   noload PATH the test dlopens the fake (SONAME libacl_rt.so) RTLD_LOCAL: dlopen(RTLD_NOLOAD)
//   registered PATH  the fake is dlopened RTLD_LOCAL under another name and registered as a table
// After every test, creates == destroys for every kind and no handle was destroyed twice.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "framework/runtime/event_allocator.h"
#include "framework/runtime/notify_allocator.h"
#include "framework/runtime/stream_allocator.h"
#include "graph/load/model_manager/reusable_stream_allocator.h"

#include "../expect.hpp"
#include "fake_runtime.h"

namespace {
struct Fake {
  void (*counts)(uint32_t, uint64_t *, uint64_t *);
  uint64_t (*live)();
  uint64_t (*bad)();
  uint64_t (*forced)();
  void (*fail_at)(uint64_t);
  void (*set_limits)(uint32_t, int64_t);
  void (*last_create)(int32_t *, uint32_t *);
  uint64_t creates(uint32_t k) const {
    uint64_t c, d;
    counts(k, &c, &d);
    return c;
  }
  uint64_t destroys(uint32_t k) const {
    uint64_t c, d;
    counts(k, &c, &d);
    return d;
  }
};
Fake g_fake;

template <typename F>
void load(void *h, const char *name, F &f) {
  f = reinterpret_cast<F>(dlsym(h, name));
  if (f == nullptr) {
    std::fprintf(stderr, "fake control symbol %s not found\n", name);
    std::exit(2);
  }
}
void load_fake(void *h) {
  load(h, "fake_rt_counts", g_fake.counts);
  load(h, "fake_rt_live", g_fake.live);
  load(h, "fake_rt_bad_destroys", g_fake.bad);
  load(h, "fake_rt_forced", g_fake.forced);
  load(h, "fake_rt_fail_at", g_fake.fail_at);
  load(h, "fake_rt_set_limits", g_fake.set_limits);
  load(h, "fake_rt_last_create", g_fake.last_create);
}

// ---- a registered table built from the fake's Ascend entry points ----
struct AscendFns {
  int32_t (*create)(void **, int32_t, uint32_t);
  int (*destroy)(void *);
  int (*destroy_force)(void *);
  int (*get_id)(void *, int32_t *);
  int (*event_create)(void **, uint32_t);
  int (*event_destroy)(void *);
  int (*notify_create)(void **, uint64_t);
  int (*notify_destroy)(void *);
  int32_t (*limits)(uint32_t, uint32_t *, uint32_t *);
  int32_t (*cap)(int32_t, int32_t, int64_t *);
};
AscendFns g_fns;
AscendFns *fns(void *u) { return static_cast<AscendFns *>(u); }
int32_t t_stream_create(void *u, void **s, int32_t p, uint32_t f) { return fns(u)->create(s, p, f); }
int32_t t_stream_destroy(void *u, void *s, int32_t force) {
  return force ? fns(u)->destroy_force(s) : fns(u)->destroy(s);
}
int32_t t_stream_get_id(void *u, void *s, int32_t *id) { return fns(u)->get_id(s, id); }
int32_t t_event_create(void *u, void **e, uint32_t f) { return fns(u)->event_create(e, f); }
int32_t t_event_destroy(void *u, void *e) { return fns(u)->event_destroy(e); }
int32_t t_notify_create(void *u, void **n, int32_t) { return fns(u)->notify_create(n, 0); }
int32_t t_notify_destroy(void *u, void *n) { return fns(u)->notify_destroy(n); }
int32_t t_limits(void *u, uint32_t t, uint32_t *s, uint32_t *k) { return fns(u)->limits(t, s, k); }
int32_t t_cap(void *u, int32_t f, int32_t i, int64_t *v) { return fns(u)->cap(f, i, v); }

sa_runtime_ops table_from(void *h) {
  load(h, "rtStreamCreateWithFlags", g_fns.create);
  load(h, "aclrtDestroyStream", g_fns.destroy);
  load(h, "aclrtDestroyStreamForce", g_fns.destroy_force);
  load(h, "aclrtStreamGetId", g_fns.get_id);
  load(h, "aclrtCreateEventExWithFlag", g_fns.event_create);
  load(h, "aclrtDestroyEvent", g_fns.event_destroy);
  load(h, "aclrtCreateNotify", g_fns.notify_create);
  load(h, "aclrtDestroyNotify", g_fns.notify_destroy);
  load(h, "rtGetMaxStreamAndTask", g_fns.limits);
  load(h, "rtGetRtCapability", g_fns.cap);
  sa_runtime_ops ops = fake_rt_table(&g_fns, t_stream_create, t_stream_destroy, t_event_create, t_event_destroy,
                                     t_notify_create, t_notify_destroy);
  ops.stream_get_id = t_stream_get_id;
  ops.max_stream_and_task = t_limits;
  ops.get_rt_capability = t_cap;
  return ops;
}

// ---- the tests ----
void StreamAllocator_AcquireStreams_FirstOneIsReserved() {
  {
    gert::StreamAllocator allocator;
    auto streams = allocator.AcquireStreams(1);
    ASSERT_TRUE(streams != nullptr);
    EXPECT_EQ(streams->GetSize(), 1U);
    EXPECT_EQ(streams->GetCapacity(), 2024U);
    EXPECT_EQ(streams->GetData()[0], nullptr);
    streams->MutableData()[0] = reinterpret_cast<rtStream_t>(0x1234);  // bogus: never destroyed
    streams = allocator.AcquireStreams(4);
    ASSERT_TRUE(streams != nullptr);
    EXPECT_EQ(streams->GetSize(), 4U);
    EXPECT_EQ(streams->GetData()[0], reinterpret_cast<rtStream_t>(0x1234));
    for (size_t i = 1; i < 4; ++i) EXPECT_NE(streams->GetData()[i], nullptr);
    EXPECT_EQ(g_fake.creates(0), 3U);
  }
  EXPECT_EQ(g_fake.destroys(0), 3U);
}

void StreamAllocator_Acquire_Success_Shrink() {
  gert::StreamAllocator allocator(5, RT_STREAM_PERSISTENT);
  auto a = allocator.AcquireStreams(10);
  ASSERT_TRUE(a != nullptr);
  int32_t prio = -1;
  uint32_t flags = 0;
  g_fake.last_create(&prio, &flags);
  EXPECT_EQ(prio, 5);
  EXPECT_EQ(flags, RT_STREAM_PERSISTENT);
  auto b = allocator.AcquireStreams(3);
  EXPECT_EQ(a, b);
  EXPECT_EQ(b->GetSize(), 10U);
  EXPECT_EQ(g_fake.creates(0), 9U);
}

void StreamAllocator_Limit() {
  gert::StreamAllocator allocator;
  EXPECT_TRUE(allocator.AcquireStreams(gert::StreamAllocator::kMaxStreamNum) == nullptr);
  EXPECT_EQ(g_fake.creates(0), 0U);
  EXPECT_TRUE(std::strstr(sa_last_error_message(), "2024") != nullptr);
  EXPECT_EQ(std::strcmp(sa_last_error_code(), "SA4001"), 0);  // SA_RUNTIME_LIMIT
  auto v = allocator.AcquireStreams(gert::StreamAllocator::kMaxStreamNum - 1);
  ASSERT_TRUE(v != nullptr);
  EXPECT_EQ(v->GetSize(), 2023U);
}

void StreamAllocator_PartialFailure() {
  gert::StreamAllocator allocator;
  g_fake.fail_at(3);
  EXPECT_TRUE(allocator.AcquireStreams(6) == nullptr);
  EXPECT_EQ(std::strcmp(sa_last_error_code(), "SA4002"), 0);  // SA_DEVICE_ERROR
  g_fake.fail_at(0);
  EXPECT_EQ(g_fake.creates(0), 2U);
  auto v = allocator.AcquireStreams(1);  // the vector kept what was created
  ASSERT_TRUE(v != nullptr);
  EXPECT_EQ(v->GetSize(), 3U);
  v = allocator.AcquireStreams(6);
  ASSERT_TRUE(v != nullptr);
  EXPECT_EQ(v->GetSize(), 6U);
}

void EventAllocator_AllSlotsOwned() {
  {
    gert::EventAllocator allocator;
    auto e = allocator.AcquireEvents(3);
    ASSERT_TRUE(e != nullptr);
    EXPECT_EQ(e->GetSize(), 3U);
    EXPECT_EQ(e->GetCapacity(), 4096U);
    EXPECT_NE(e->GetData()[0], nullptr);
    EXPECT_TRUE(allocator.AcquireEvents(gert::EventAllocator::kMaxEventNum + 1) == nullptr);
    EXPECT_EQ(g_fake.creates(1), 3U);
    EXPECT_EQ(allocator.AcquireEvents(1), e);
  }
  EXPECT_EQ(g_fake.destroys(1), 3U);
}

void NotifyAllocator_Limit() {
  {
    gert::NotifyAllocator allocator;
    EXPECT_TRUE(allocator.AcquireNotifies(0, gert::NotifyAllocator::kMaxNotifyNum) == nullptr);
    auto n = allocator.AcquireNotifies(0, 2);
    ASSERT_TRUE(n != nullptr);
    EXPECT_EQ(n->GetSize(), 2U);
    EXPECT_EQ(n->GetCapacity(), 1024U);
  }
  EXPECT_EQ(g_fake.destroys(2), 2U);
}

void Reusable_NeverReuseByDefault_DoubleDestroy_Force() {
  ge::ReusableStreamAllocator *allocator = ge::ReusableStreamAllocator::Create();
  ASSERT_TRUE(allocator != nullptr);
  aclrtStream s1 = nullptr, s2 = nullptr;
  EXPECT_EQ(allocator->GetOrCreateRtStream(s1, 1, 0, RT_STREAM_PERSISTENT, 10), ge::SUCCESS);
  EXPECT_EQ(allocator->GetOrCreateRtStream(s2, 2, 0, RT_STREAM_PERSISTENT), ge::SUCCESS);
  EXPECT_NE(s1, s2);
  EXPECT_EQ(allocator->DestroyStream(s1), ge::SUCCESS);
  EXPECT_EQ(allocator->DestroyStream(s1), ge::SUCCESS);  // second destroy: no device call
  EXPECT_EQ(allocator->DestroyStream(s2, true), ge::SUCCESS);
  EXPECT_EQ(g_fake.forced(), 1U);
  aclrtStream stranger = reinterpret_cast<aclrtStream>(0x42);
  EXPECT_EQ(allocator->DestroyStream(stranger), static_cast<ge::Status>(SA_UNKNOWN_HANDLE));
  aclrtStream null_stream = nullptr;
  EXPECT_EQ(allocator->DestroyStream(null_stream), static_cast<ge::Status>(SA_NULL_POINTER));
  delete allocator;
}

void Reusable_ReuseRules() {
  setenv("SA_REUSABLE_STREAM_OPTIONS", "reuse=on,task_limit=200", 1);
  ge::ReusableStreamAllocator *allocator = ge::ReusableStreamAllocator::Create();
  unsetenv("SA_REUSABLE_STREAM_OPTIONS");
  ASSERT_TRUE(allocator != nullptr);
  aclrtStream a = nullptr, b = nullptr, c = nullptr, d = nullptr, e = nullptr;
  EXPECT_EQ(allocator->GetOrCreateRtStream(a, 1, 0, RT_STREAM_PERSISTENT, 100), ge::SUCCESS);
  EXPECT_EQ(allocator->GetOrCreateRtStream(b, 1, 0, RT_STREAM_PERSISTENT, 20), ge::SUCCESS);
  EXPECT_NE(a, b);  // same model: never shared
  EXPECT_EQ(allocator->GetOrCreateRtStream(c, 2, 0, RT_STREAM_PERSISTENT, 30), ge::SUCCESS);
  EXPECT_EQ(c, b);  // least loaded
  EXPECT_EQ(allocator->GetOrCreateRtStream(d, 3, 0, RT_STREAM_PERSISTENT, 150), ge::SUCCESS);
  EXPECT_NE(d, a);  // over budget everywhere: new stream
  EXPECT_NE(d, b);
  EXPECT_EQ(allocator->GetOrCreateRtStream(e, 2, 1, RT_STREAM_PERSISTENT, 0), ge::SUCCESS);
  EXPECT_NE(e, a);  // other priority: other key
  EXPECT_EQ(g_fake.creates(0), 4U);
  EXPECT_EQ(allocator->DestroyStream(b), ge::SUCCESS);
  EXPECT_EQ(g_fake.destroys(0), 0U);  // model 2 still holds it
  EXPECT_EQ(allocator->DestroyStream(c, true), ge::SUCCESS);
  EXPECT_EQ(g_fake.destroys(0), 1U);
  EXPECT_EQ(g_fake.forced(), 1U);
  for (aclrtStream *s : {&a, &d, &e}) EXPECT_EQ(allocator->DestroyStream(*s), ge::SUCCESS);
  delete allocator;
}

void Rt2_AllOrNone() {
  sa_stream_allocator *s = nullptr, *bs = nullptr;
  sa_event_allocator *e = nullptr, *be = nullptr;
  sa_notify_allocator *n = nullptr, *bn = nullptr;
  ASSERT_TRUE(sa_stream_allocator_new(0, 0, &s) == SA_OK && sa_stream_allocator_new(0, 0, &bs) == SA_OK);
  ASSERT_TRUE(sa_event_allocator_new(ACL_EVENT_SYNC, &e) == SA_OK && sa_event_allocator_new(ACL_EVENT_SYNC, &be) == SA_OK);
  ASSERT_TRUE(sa_notify_allocator_new(&n) == SA_OK && sa_notify_allocator_new(&bn) == SA_OK);
  sa_resource_counts counts;
  EXPECT_EQ(sa_rt2_resource_counts(5, 1, 4, 0, nullptr, &counts), SA_OK);
  EXPECT_EQ(counts.reusable_stream_num, 4U);
  void *vs = nullptr, *ve = nullptr, *vn = nullptr;
  EXPECT_EQ(sa_rt2_occupy(&counts, reinterpret_cast<void *>(0x99), 0, s, e, nullptr, bs, be, bn, &vs, &ve, &vn),
            SA_INVALID_ARGUMENT);
  EXPECT_TRUE(vs == nullptr);  // outputs untouched on failure
  EXPECT_EQ(sa_rt2_occupy(&counts, reinterpret_cast<void *>(0x99), 0, s, e, n, bs, be, bn, &vs, &ve, &vn), SA_OK);
  auto *streams = static_cast<gert::TypedContinuousVector<rtStream_t> *>(vs);
  EXPECT_EQ(streams->GetSize(), 5U);
  EXPECT_EQ(streams->GetData()[0], reinterpret_cast<void *>(0x99));
  EXPECT_EQ(static_cast<gert::TypedContinuousVector<aclrtEvent> *>(ve)->GetSize(), 4U);
  EXPECT_EQ(sa_rt2_occupy(&counts, nullptr, 0, nullptr, nullptr, nullptr, bs, be, bn, &vs, &ve, &vn), SA_OK);
  sa_stream_allocator_free(s);
  sa_stream_allocator_free(bs);
  sa_event_allocator_free(e);
  sa_event_allocator_free(be);
  sa_notify_allocator_free(n);
  sa_notify_allocator_free(bn);
  EXPECT_EQ(g_fake.creates(0), 8U);
}

void Capability_Queries() {
  uint32_t streams = 0, tasks = 0;
  g_fake.set_limits(2013, 0);
  EXPECT_EQ(sa_runtime_task_limits(0, &streams, &tasks), SA_OK);
  EXPECT_EQ(tasks, 2013U);
  int32_t unlimited = -1;
  EXPECT_EQ(sa_runtime_unlimited_depth(&unlimited), SA_OK);
  EXPECT_EQ(unlimited, 0);
  EXPECT_EQ(sa_runtime_task_limits(0, nullptr, &tasks), SA_NULL_POINTER);
  g_fake.set_limits(1024, 0);
}

struct Case {
  const char *name;
  void (*fn)();
};
}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s inexe|preload|noload PATH|registered PATH\n", argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  int expected_source = SA_RUNTIME_PROCESS_SCOPE;
  void *scope = RTLD_DEFAULT;
  if (mode == "noload" || mode == "registered") {
    if (argc < 3) return 2;
    scope = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    if (scope == nullptr) {
      std::fprintf(stderr, "dlopen %s: %s\n", argv[2], dlerror());
      return 2;
    }
    expected_source = mode == "noload" ? SA_RUNTIME_LOADED_LIBRARY : SA_RUNTIME_REGISTERED;
  }
  load_fake(scope);
  if (mode == "registered") {
    sa_runtime_ops ops = table_from(scope);
    if (sa_runtime_register(&ops) != SA_OK) {
      std::fprintf(stderr, "register: %s\n", sa_last_error_message());
      return 1;
    }
  }
  int32_t source = 0;
  if (sa_runtime_resolve(&source) != SA_OK) {
    std::fprintf(stderr, "resolve: %s\n", sa_last_error_message());
    return 1;
  }
  EXPECT_EQ(source, expected_source);

  const Case cases[] = {
      {"StreamAllocator_AcquireStreams_FirstOneIsReserved", StreamAllocator_AcquireStreams_FirstOneIsReserved},
      {"StreamAllocator_Acquire_Success_Shrink", StreamAllocator_Acquire_Success_Shrink},
      {"StreamAllocator_Limit", StreamAllocator_Limit},
      {"StreamAllocator_PartialFailure", StreamAllocator_PartialFailure},
      {"EventAllocator_AllSlotsOwned", EventAllocator_AllSlotsOwned},
      {"NotifyAllocator_Limit", NotifyAllocator_Limit},
      {"Reusable_NeverReuseByDefault_DoubleDestroy_Force", Reusable_NeverReuseByDefault_DoubleDestroy_Force},
      {"Reusable_ReuseRules", Reusable_ReuseRules},
      {"Rt2_AllOrNone", Rt2_AllOrNone},
      {"Capability_Queries", Capability_Queries},
  };
  for (const Case &c : cases) {
    // Counters are cumulative; tests compare against a baseline.
    uint64_t base_c[3], base_d[3];
    for (uint32_t k = 0; k < 3; ++k) g_fake.counts(k, &base_c[k], &base_d[k]);
    uint64_t base_forced = g_fake.forced();
    int before = g_failures;
    // Rebase the fake's counters by wrapping the accessors.
    static uint64_t s_c[3], s_d[3], s_f;
    for (int k = 0; k < 3; ++k) {
      s_c[k] = base_c[k];
      s_d[k] = base_d[k];
    }
    s_f = base_forced;
    Fake saved = g_fake;
    static Fake s_raw;
    s_raw = saved;
    g_fake.counts = [](uint32_t k, uint64_t *c, uint64_t *d) {
      s_raw.counts(k, c, d);
      *c -= s_c[k];
      *d -= s_d[k];
    };
    g_fake.forced = [] { return s_raw.forced() - s_f; };
    c.fn();
    g_fake = saved;
    for (uint32_t k = 0; k < 3; ++k) {
      uint64_t cr, de;
      g_fake.counts(k, &cr, &de);
      if (cr - base_c[k] != de - base_d[k]) {
        std::fprintf(stderr, "%s: kind %u created %llu destroyed %llu\n", c.name, k,
                     (unsigned long long)(cr - base_c[k]), (unsigned long long)(de - base_d[k]));
        ++g_failures;
      }
    }
    EXPECT_EQ(g_fake.bad(), 0U);
    EXPECT_EQ(g_fake.live(), 0U);
    std::printf("[%s] %s %s\n", mode.c_str(), g_failures == before ? "ok  " : "FAIL", c.name);
  }
  if (mode == "registered") {
    // Unregistering falls back to automatic resolution; this process has no runtime in scope.
    sa_runtime_register(nullptr);
    EXPECT_EQ(sa_runtime_resolve(&source), SA_NO_RUNTIME);
    EXPECT_EQ(std::strcmp(sa_status_code(SA_NO_RUNTIME), "SA4000"), 0);
    EXPECT_TRUE(std::strstr(sa_last_error_message(), "no device runtime") != nullptr);
  }
  if (mode == "inexe") {
    // A registered table wins over the process scope; NULL goes back to it.
    sa_runtime_ops ops = table_from(RTLD_DEFAULT);
    EXPECT_EQ(sa_runtime_register(&ops), SA_OK);
    EXPECT_EQ(sa_runtime_resolve(&source), SA_OK);
    EXPECT_EQ(source, SA_RUNTIME_REGISTERED);
    ops.struct_size = 8;
    EXPECT_EQ(sa_runtime_register(&ops), SA_INVALID_ARGUMENT);
    EXPECT_EQ(sa_runtime_register(nullptr), SA_OK);
    EXPECT_EQ(sa_runtime_resolve(&source), SA_OK);
    EXPECT_EQ(source, SA_RUNTIME_PROCESS_SCOPE);
  }
  std::printf("%s\n", g_failures == 0 ? "all passed" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
