// GE's own allocator unit-test cases, built exactly as GE's code is built: against GE's
// declarations (tests_c/runtime/ge_decls, a test-only copy written from ge-runtime-api.md §1, §2),
// not the project's shims, linking only libstream_alloc.so for the allocators. The fake Ascend
// runtime is compiled into this executable (exported: the library finds it by dlsym). So every
// member called here is one of GE's mangled symbols served by the library.
//
// The cases: stream_allocator_unittest.cc (5), event_allocator_unittest.cc (4),
// notify_allocator_unittest.cc (3) of GE's runtime tests, then GE's quirks (slot 0, shrink,
// bounds, event slot 0 owned, notify bound, the event write past capacity refused), the layouts
// seen through the objects' bytes, and ge::ReusableStreamAllocator as DavinciModel uses it.
// After each case every handle created was destroyed exactly once. Run under ASan/LSan and
// valgrind too: the holders GE's inline constructors allocate must be freed by the library.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "framework/runtime/event_allocator.h"
#include "framework/runtime/notify_allocator.h"
#include "framework/runtime/stream_allocator.h"
#include "graph/load/model_manager/reusable_stream_allocator.h"

#ifndef GE_DECLS_TEST_HEADERS
#error "built against the project's shims instead of GE's declarations"
#endif
#ifdef SA_GE_COMPAT_FRAMEWORK_RUNTIME_STREAM_ALLOCATOR_H
#error "the project's shims were included"
#endif

// GE's layouts, as GE's headers give them.
static_assert(sizeof(gert::StreamAllocator) == 16, "StreamAllocator");
static_assert(sizeof(gert::EventAllocator) == 16, "EventAllocator");
static_assert(sizeof(gert::NotifyAllocator) == 8, "NotifyAllocator");
static_assert(sizeof(gert::ContinuousVector) == 64, "ContinuousVector");

extern "C" {
// CANN's libc_sec, which metadef's ContinuousVector::Init calls from GE-built code.
int memset_s(void *dest, size_t dest_max, int c, size_t count) {
  if (dest == nullptr || count > dest_max) return 1;
  std::memset(dest, c, count);
  return 0;
}
// The fake runtime (fake_runtime.c): the runtime's own queries GE's tests use, and controls.
int aclrtGetStreamAvailableNum(uint32_t *count);
int32_t rtGetAvailEventNum(uint32_t *count);
void fake_rt_counts(uint32_t kind, uint64_t *creates, uint64_t *destroys);
uint64_t fake_rt_live(void);
uint64_t fake_rt_bad_destroys(void);
uint64_t fake_rt_forced(void);
int aclrtDestroyStream(void *stm);
void fake_rt_fail_at(uint64_t k);
void fake_rt_set_capacity(uint32_t kind, uint64_t max_live);
void fake_rt_last_create(int32_t *priority, uint32_t *flags);
}

// Makes the next nothrow new[] fail (GE's ContinuousVector::Create then yields a null holder).
// The replacement is global: the library's own nothrow new[] comes here too.
static int g_fail_nothrow_array_new = 0;
// The replacements pair malloc with free by design; GCC's pairing check cannot see that.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void *operator new[](size_t size, const std::nothrow_t &) noexcept {
  if (g_fail_nothrow_array_new > 0) {
    --g_fail_nothrow_array_new;
    return nullptr;
  }
  return std::malloc(size == 0 ? 1 : size);
}
void *operator new[](size_t size) {
  void *p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete[](void *p, size_t) noexcept { std::free(p); }

#include "../expect.hpp"

namespace {
enum { kStream = 0, kEvent = 1, kNotify = 2 };
// The fake's counters are cumulative; each case reads them relative to its start.
uint64_t g_base_creates[3], g_base_destroys[3], g_base_forced;
uint64_t creates(uint32_t k) {
  uint64_t c = 0, d = 0;
  fake_rt_counts(k, &c, &d);
  return c - g_base_creates[k];
}
uint64_t destroys(uint32_t k) {
  uint64_t c = 0, d = 0;
  fake_rt_counts(k, &c, &d);
  return d - g_base_destroys[k];
}
uint64_t forced() { return fake_rt_forced() - g_base_forced; }
// The first 8 bytes of an object: its unique_ptr holder (libstdc++'s is one pointer).
template <typename T>
const void *holder_of(const T &object) {
  const void *p = nullptr;
  std::memcpy(&p, &object, sizeof(p));
  return p;
}

// ---- stream_allocator_unittest.cc ----
void StreamAllocatorUT_AcquireStreams_Success_StreamPoolEmpty() {
  gert::StreamAllocator sa;
  size_t num = 22;
  auto streams = sa.AcquireStreams(num);
  ASSERT_NE(streams, nullptr);
  ASSERT_EQ(streams->GetSize(), num);
  for (size_t i = 1U; i < num; ++i) ASSERT_NE(streams->GetData()[i], nullptr);
}
void StreamAllocatorUT_Acquire_Success_Expand() {
  gert::StreamAllocator sa;
  ASSERT_NE(sa.AcquireStreams(11), nullptr);
  size_t num = 22;
  auto streams = sa.AcquireStreams(num);
  ASSERT_NE(streams, nullptr);
  ASSERT_EQ(streams->GetSize(), num);
  for (size_t i = 1U; i < num; ++i) ASSERT_NE(streams->GetData()[i], nullptr);
}
void StreamAllocatorUT_Acquire_Success_Shrink() {
  gert::StreamAllocator sa;
  ASSERT_NE(sa.AcquireStreams(33), nullptr);
  size_t num = 22;
  auto streams = sa.AcquireStreams(num);
  ASSERT_NE(streams, nullptr);
  ASSERT_EQ(streams->GetSize(), 33U);  // "shrink" returns the old size
  for (size_t i = 1U; i < num; ++i) ASSERT_NE(streams->GetData()[i], nullptr);
}
void StreamAllocatorUT_AcquireStreams_FirstOneIsReserved() {
  {
    gert::StreamAllocator sa;
    size_t num = 22;
    auto streams = sa.AcquireStreams(num);
    ASSERT_NE(streams, nullptr);
    ASSERT_EQ(streams->GetSize(), num);
    ASSERT_EQ(streams->GetData()[0], nullptr);
    streams->MutableData()[0] = reinterpret_cast<rtStream_t>(1);  // never destroyed: not a stream
    EXPECT_EQ(creates(kStream), 21U);
  }
  EXPECT_EQ(destroys(kStream), 21U);
}
void StreamAllocatorUT_AcquireStreams_Fail_NoEnoughStreamResource() {
  fake_rt_set_capacity(kStream, 64);
  uint32_t system_stream_cap = 0;
  ASSERT_EQ(aclrtGetStreamAvailableNum(&system_stream_cap), 0);
  ASSERT_EQ(system_stream_cap, 64U);
  {
    gert::StreamAllocator sa;
    EXPECT_EQ(sa.AcquireStreams(system_stream_cap + 8U), nullptr);
    EXPECT_EQ(creates(kStream), 64U);  // what was created stays, counted in the size
  }
  fake_rt_set_capacity(kStream, 0);
}

// ---- event_allocator_unittest.cc ----
void EventAllocatorUT_Acquire_Success_EventPoolEmpty() {
  size_t num = 22U;
  gert::EventAllocator ea;
  auto events = ea.AcquireEvents(num);
  ASSERT_NE(events, nullptr);
  ASSERT_EQ(events->GetSize(), num);
  for (size_t i = 0U; i < num; ++i) ASSERT_NE(events->GetData()[i], nullptr);  // slot 0 is an event
}
void EventAllocatorUT_Acquire_Success_Expand() {
  gert::EventAllocator ea;
  ASSERT_NE(ea.AcquireEvents(11), nullptr);
  size_t num = 22U;
  auto events = ea.AcquireEvents(num);
  ASSERT_NE(events, nullptr);
  ASSERT_EQ(events->GetSize(), num);
  for (size_t i = 0U; i < num; ++i) ASSERT_NE(events->GetData()[i], nullptr);
}
void EventAllocatorUT_Acquire_Success_Shrink() {
  gert::EventAllocator ea;
  ASSERT_NE(ea.AcquireEvents(33), nullptr);
  size_t num = 22U;
  auto events = ea.AcquireEvents(num);
  ASSERT_NE(events, nullptr);
  ASSERT_EQ(events->GetSize(), 33U);
  for (size_t i = 0U; i < num; ++i) ASSERT_NE(events->GetData()[i], nullptr);
}
void EventAllocatorUT_AcquireEvents_Fail_NoEnoughEventResource() {
  fake_rt_set_capacity(kEvent, 100);
  uint32_t max_event_num = 0;
  ASSERT_EQ(rtGetAvailEventNum(&max_event_num), 0);
  size_t n_events = max_event_num + 8U;
  {
    gert::EventAllocator ea;
    EXPECT_EQ(ea.AcquireEvents(n_events), nullptr);
  }
  fake_rt_set_capacity(kEvent, 0);
}

// ---- notify_allocator_unittest.cc ----
void NotifyAllocatorUT_Acquire_Success_NotifyPoolEmpty() {
  size_t num = 22U;
  gert::NotifyAllocator na;
  auto notifies = na.AcquireNotifies(0, num);
  ASSERT_NE(notifies, nullptr);
  ASSERT_EQ(notifies->GetSize(), num);
  for (size_t i = 0U; i < num; ++i) ASSERT_NE(notifies->GetData()[i], nullptr);
}
void NotifyAllocatorUT_Acquire_Success_Expand() {
  gert::NotifyAllocator na;
  ASSERT_NE(na.AcquireNotifies(0, 11), nullptr);
  size_t num = 22U;
  auto notifies = na.AcquireNotifies(0, num);
  ASSERT_NE(notifies, nullptr);
  ASSERT_EQ(notifies->GetSize(), num);
  for (size_t i = 0U; i < num; ++i) ASSERT_NE(notifies->GetData()[i], nullptr);
}
void NotifyAllocatorUT_Acquire_Success_Shrink() {
  gert::NotifyAllocator na;
  ASSERT_NE(na.AcquireNotifies(0, 33), nullptr);
  size_t num = 22U;
  auto notifies = na.AcquireNotifies(0, num);
  ASSERT_NE(notifies, nullptr);
  ASSERT_EQ(notifies->GetSize(), 33U);
  for (size_t i = 0U; i < num; ++i) ASSERT_NE(notifies->GetData()[i], nullptr);
}

// ---- GE's quirks and layouts ----
void Quirk_StreamLayoutAndBound() {
  gert::StreamAllocator sa(5, RT_STREAM_PERSISTENT);
  int32_t priority = 0;
  uint32_t flags = 0;
  std::memcpy(&priority, reinterpret_cast<const char *>(&sa) + 8, 4);
  std::memcpy(&flags, reinterpret_cast<const char *>(&sa) + 12, 4);
  EXPECT_EQ(priority, 5);
  EXPECT_EQ(flags, RT_STREAM_PERSISTENT);
  auto v = sa.AcquireStreams(0);  // n <= 1: the 1-element vector, no device call
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(static_cast<const void *>(v), holder_of(sa));
  EXPECT_EQ(v->GetSize(), 1U);
  EXPECT_EQ(v->GetCapacity(), gert::StreamAllocator::kMaxStreamNum);
  EXPECT_EQ(sa.AcquireStreams(gert::StreamAllocator::kMaxStreamNum), nullptr);  // strictly less
  EXPECT_EQ(creates(kStream), 0U);
  ASSERT_NE(sa.AcquireStreams(3), nullptr);
  fake_rt_last_create(&priority, &flags);
  EXPECT_EQ(priority, 5);
  EXPECT_EQ(flags, RT_STREAM_PERSISTENT);
  auto full = sa.AcquireStreams(gert::StreamAllocator::kMaxStreamNum - 1U);
  ASSERT_NE(full, nullptr);
  EXPECT_EQ(full->GetSize(), 2023U);
}
void Quirk_StreamPartialFailureKeepsWhatWasCreated() {
  gert::StreamAllocator sa;
  fake_rt_set_capacity(kStream, 4);
  EXPECT_EQ(sa.AcquireStreams(8), nullptr);
  fake_rt_set_capacity(kStream, 0);
  auto v = sa.AcquireStreams(1);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->GetSize(), 5U);  // slot 0 + the 4 created
  v = sa.AcquireStreams(8);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->GetSize(), 8U);
}
void Quirk_EventBoundRefusedBeforeCreating() {
  gert::EventAllocator ea(0x8U);
  auto v = ea.AcquireEvents(gert::EventAllocator::kMaxEventNum + 1U);
  EXPECT_EQ(v, nullptr);  // GE creates 4097 events, writes past capacity and leaks one
  EXPECT_EQ(creates(kEvent), 0U);
  v = ea.AcquireEvents(2);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(static_cast<const void *>(v), holder_of(ea));
  int32_t priority = 0;
  uint32_t flag = 0;
  fake_rt_last_create(&priority, &flag);
  EXPECT_EQ(flag, 0x8U);  // default_flag_ read from the object
  EXPECT_EQ(v->GetCapacity(), gert::EventAllocator::kMaxEventNum);
}
void Quirk_EventCapacityIsReachable() {
  gert::EventAllocator ea;
  auto v = ea.AcquireEvents(gert::EventAllocator::kMaxEventNum);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->GetSize(), 4096U);
}
void Quirk_NotifyBound() {
  gert::NotifyAllocator na;
  EXPECT_EQ(na.AcquireNotifies(0, gert::NotifyAllocator::kMaxNotifyNum), nullptr);
  EXPECT_EQ(creates(kNotify), 0U);
  auto v = na.AcquireNotifies(7, gert::NotifyAllocator::kMaxNotifyNum - 1U);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->GetSize(), 1023U);
  EXPECT_EQ(static_cast<const void *>(v), holder_of(na));
}
void Quirk_NullHolders() {
  // A tool that interposes the allocator itself (valgrind) bypasses the replacement: skip then.
  g_fail_nothrow_array_new = 1;
  uint8_t *probe = new (std::nothrow) uint8_t[1];
  if (probe != nullptr) {
    operator delete[](probe, std::nothrow);  // the tool's own pair (not replaced here)
    g_fail_nothrow_array_new = 0;
    std::printf("(skipped: the allocator is interposed by a tool)\n");
    return;
  }
  g_fail_nothrow_array_new = 1;
  gert::EventAllocator ea;  // metadef's Create: new (std::nothrow) failed
  EXPECT_EQ(holder_of(ea), nullptr);
  EXPECT_EQ(ea.AcquireEvents(1), nullptr);
  g_fail_nothrow_array_new = 1;
  gert::NotifyAllocator na;
  EXPECT_EQ(na.AcquireNotifies(0, 1), nullptr);
  g_fail_nothrow_array_new = 1;
  gert::StreamAllocator sa;  // the library's constructor, same failure
  EXPECT_EQ(holder_of(sa), nullptr);
  EXPECT_EQ(sa.AcquireStreams(2), nullptr);
  g_fail_nothrow_array_new = 0;
}
void Quirk_AllocatorsOnTheHeapInDestructionOrder() {
  // ModelV2Executor's members: events, streams, notifies; destroyed in reverse.
  struct Executor {
    gert::EventAllocator events;
    gert::StreamAllocator streams;
    gert::NotifyAllocator notifies;
  };
  Executor *e = new Executor();
  ASSERT_NE(e->streams.AcquireStreams(4), nullptr);
  ASSERT_NE(e->events.AcquireEvents(3), nullptr);
  ASSERT_NE(e->notifies.AcquireNotifies(0, 2), nullptr);
  delete e;
  EXPECT_EQ(destroys(kStream), 3U);
  EXPECT_EQ(destroys(kEvent), 3U);
  EXPECT_EQ(destroys(kNotify), 2U);
}

// ---- ge::ReusableStreamAllocator as DavinciModel uses it ----
void Reusable_CreateGetDestroy() {
  ge::ReusableStreamAllocator *allocator = ge::ReusableStreamAllocator::Create();
  ASSERT_NE(allocator, nullptr);
  aclrtStream s1 = nullptr, s2 = nullptr;
  EXPECT_EQ(allocator->GetOrCreateRtStream(s1, 1, 0, RT_STREAM_PERSISTENT, 10), ge::SUCCESS);
  EXPECT_EQ(allocator->GetOrCreateRtStream(s2, 1, 0, RT_STREAM_PERSISTENT), ge::SUCCESS);
  EXPECT_NE(s1, nullptr);
  EXPECT_NE(s1, s2);  // always a new stream, as GE
  EXPECT_EQ(allocator->DestroyStream(s1), ge::SUCCESS);
  EXPECT_EQ(allocator->DestroyStream(s1), ge::SUCCESS);  // already destroyed: success, no device call
  EXPECT_EQ(allocator->DestroyStream(s2, true), ge::SUCCESS);
  EXPECT_EQ(forced(), 1U);
  aclrtStream unknown = reinterpret_cast<aclrtStream>(0x42);
  EXPECT_NE(allocator->DestroyStream(unknown), ge::SUCCESS);
  aclrtStream null_stream = nullptr;
  EXPECT_NE(allocator->DestroyStream(null_stream), ge::SUCCESS);
  delete allocator;  // GE's implicit destructor, inline here
}
void Reusable_DeleteWithStreamsStillGranted() {
  ge::ReusableStreamAllocator *allocator = ge::ReusableStreamAllocator::Create();
  ASSERT_NE(allocator, nullptr);
  aclrtStream s = nullptr;
  EXPECT_EQ(allocator->GetOrCreateRtStream(s, 3, 2, RT_STREAM_DEFAULT), ge::SUCCESS);
  delete allocator;  // destroys no stream, as GE: the stream stays with the device
  EXPECT_EQ(destroys(kStream), 0U);
  EXPECT_EQ(aclrtDestroyStream(s), 0);  // the process gives it back itself
}

struct Case {
  const char *name;
  void (*fn)();
};
}  // namespace

int main() {
  fake_rt_fail_at(0);
  const Case cases[] = {
      {"StreamAllocatorUT.AcquireStreams_Success_StreamPoolEmpty", StreamAllocatorUT_AcquireStreams_Success_StreamPoolEmpty},
      {"StreamAllocatorUT.Acquire_Success_Expand", StreamAllocatorUT_Acquire_Success_Expand},
      {"StreamAllocatorUT.Acquire_Success_Shrink", StreamAllocatorUT_Acquire_Success_Shrink},
      {"StreamAllocatorUT.AcquireStreams_FirstOneIsReserved", StreamAllocatorUT_AcquireStreams_FirstOneIsReserved},
      {"StreamAllocatorUT.AcquireStreams_Fail_NoEnoughStreamResource",
       StreamAllocatorUT_AcquireStreams_Fail_NoEnoughStreamResource},
      {"EventAllocatorUT.Acquire_Success_EventPoolEmpty", EventAllocatorUT_Acquire_Success_EventPoolEmpty},
      {"EventAllocatorUT.Acquire_Success_Expand", EventAllocatorUT_Acquire_Success_Expand},
      {"EventAllocatorUT.Acquire_Success_Shrink", EventAllocatorUT_Acquire_Success_Shrink},
      {"EventAllocatorUT.AcquireEvents_Fail_NoEnoughEventResource", EventAllocatorUT_AcquireEvents_Fail_NoEnoughEventResource},
      {"NotifyAllocatorUT.Acquire_Success_NotifyPoolEmpty", NotifyAllocatorUT_Acquire_Success_NotifyPoolEmpty},
      {"NotifyAllocatorUT.Acquire_Success_Expand", NotifyAllocatorUT_Acquire_Success_Expand},
      {"NotifyAllocatorUT.Acquire_Success_Shrink", NotifyAllocatorUT_Acquire_Success_Shrink},
      {"Quirk.StreamLayoutAndBound", Quirk_StreamLayoutAndBound},
      {"Quirk.StreamPartialFailureKeepsWhatWasCreated", Quirk_StreamPartialFailureKeepsWhatWasCreated},
      {"Quirk.EventBoundRefusedBeforeCreating", Quirk_EventBoundRefusedBeforeCreating},
      {"Quirk.EventCapacityIsReachable", Quirk_EventCapacityIsReachable},
      {"Quirk.NotifyBound", Quirk_NotifyBound},
      {"Quirk.NullHolders", Quirk_NullHolders},
      {"Quirk.AllocatorsOnTheHeapInDestructionOrder", Quirk_AllocatorsOnTheHeapInDestructionOrder},
      {"Reusable.CreateGetDestroy", Reusable_CreateGetDestroy},
      {"Reusable.DeleteWithStreamsStillGranted", Reusable_DeleteWithStreamsStillGranted},
  };
  for (const Case &c : cases) {
    for (uint32_t k = 0; k < 3; ++k) fake_rt_counts(k, &g_base_creates[k], &g_base_destroys[k]);
    g_base_forced = fake_rt_forced();
    int before = g_failures;
    c.fn();
    for (uint32_t k = 0; k < 3; ++k) {
      if (creates(k) != destroys(k)) {
        std::fprintf(stderr, "%s: kind %u created %llu destroyed %llu\n", c.name, k,
                     static_cast<unsigned long long>(creates(k)), static_cast<unsigned long long>(destroys(k)));
        ++g_failures;
      }
    }
    EXPECT_EQ(fake_rt_bad_destroys(), 0U);
    EXPECT_EQ(fake_rt_live(), 0U);
    std::printf("%s %s\n", g_failures == before ? "ok  " : "FAIL", c.name);
  }
  std::printf("%s\n", g_failures == 0 ? "all passed" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
