// The GE drop-in classes with no device runtime at all (none registered, none in the process,
// SA_RUNTIME_LIB unset): nothing fails silently. GetStatus() / GetStatusMessage() say why the
// allocators cannot serve, the Acquire* calls return nullptr with the reason as the thread's
// last error, and ReusableStreamAllocator returns SA_NO_RUNTIME. Registering a runtime
// afterwards is seen by the same objects (only a resolved runtime is cached).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "framework/runtime/event_allocator.h"
#include "framework/runtime/notify_allocator.h"
#include "framework/runtime/stream_allocator.h"
#include "graph/load/model_manager/reusable_stream_allocator.h"

#include "../expect.hpp"
#include "fake_runtime.h"

namespace {

bool Mentions(const char *text, const char *word) { return text != nullptr && std::strstr(text, word) != nullptr; }

// A runtime table whose creates always fail: enough to see the status turn SA_OK.
int32_t FailStream(void *, void **, int32_t, uint32_t) { return 507000; }
int32_t FailEvent(void *, void **, uint32_t) { return 507000; }
int32_t FailNotify(void *, void **, int32_t) { return 507000; }
int32_t StreamDestroyed(void *, void *, int32_t) { return 0; }
int32_t Destroyed(void *, void *) { return 0; }
}  // namespace

int main() {
  if (std::getenv("SA_RUNTIME_LIB") != nullptr) {
    std::fprintf(stderr, "unset SA_RUNTIME_LIB for this test\n");
    return 2;
  }
  gert::StreamAllocator streams;
  EXPECT_TRUE(streams.GetStatus() == SA_NO_RUNTIME);
  const char *why = streams.GetStatusMessage();
  std::printf("StreamAllocator without a runtime: %s\n", why);
  EXPECT_TRUE(why != nullptr && why[0] != '\0');
  EXPECT_TRUE(Mentions(why, "runtime"));
  EXPECT_TRUE(streams.AcquireStreams(1) != nullptr);  // slot 0 is the caller's: no device call
  EXPECT_TRUE(streams.AcquireStreams(2) == nullptr);
  EXPECT_TRUE(std::strcmp(sa_last_error_code(), "SA4000") == 0);
  EXPECT_TRUE(Mentions(sa_last_error_message(), "runtime"));

  gert::EventAllocator events;
  EXPECT_TRUE(events.GetStatus() == SA_NO_RUNTIME);
  EXPECT_TRUE(events.GetStatusMessage()[0] != '\0');
  EXPECT_TRUE(events.AcquireEvents(1) == nullptr);
  EXPECT_TRUE(std::strcmp(sa_last_error_code(), "SA4000") == 0);

  gert::NotifyAllocator notifies;
  EXPECT_TRUE(notifies.GetStatus() == SA_NO_RUNTIME);
  EXPECT_TRUE(notifies.GetStatusMessage()[0] != '\0');
  EXPECT_TRUE(notifies.AcquireNotifies(0, 1) == nullptr);
  EXPECT_TRUE(std::strcmp(sa_last_error_code(), "SA4000") == 0);

  ge::ReusableStreamAllocator *pool = ge::ReusableStreamAllocator::Create();
  EXPECT_TRUE(pool != nullptr);  // no device call in Create
  if (pool != nullptr) {
    aclrtStream stream = nullptr;
    EXPECT_TRUE(pool->GetOrCreateRtStream(stream, 1U, 0, 0U) == static_cast<ge::Status>(SA_NO_RUNTIME));
    EXPECT_TRUE(stream == nullptr);
    EXPECT_TRUE(Mentions(sa_last_error_message(), "runtime"));
    delete pool;
  }

  // A runtime registered later is found by the allocators already constructed.
  sa_runtime_ops ops = fake_rt_table(nullptr, FailStream, StreamDestroyed, FailEvent, Destroyed, FailNotify, Destroyed);
  if (sa_runtime_register(&ops) != SA_OK) {
    std::fprintf(stderr, "register: %s\n", sa_last_error_message());
    return 1;
  }
  EXPECT_TRUE(streams.GetStatus() == SA_OK);
  EXPECT_TRUE(std::strcmp(streams.GetStatusMessage(), "") == 0);
  EXPECT_TRUE(streams.AcquireStreams(2) == nullptr);  // the device call fails now
  EXPECT_TRUE(std::strcmp(sa_last_error_code(), "SA4002") == 0);
  EXPECT_TRUE(Mentions(sa_last_error_message(), "507000"));
  (void)sa_runtime_register(nullptr);
  EXPECT_TRUE(events.GetStatus() == SA_NO_RUNTIME);

  std::printf("%s\n", g_failures == 0 ? "all passed" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
