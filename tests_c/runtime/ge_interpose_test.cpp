// Linked against the stand-in GE library (ge_standin.cpp), built against GE's declarations.
//   ge_interpose_test standin    : the stand-in answers (nullptr, no device call)
//   ge_interpose_test preloaded  : run with LD_PRELOAD=libstream_alloc.so; the project's code
//                                  answers, proven by the fake runtime's counters (streams,
//                                  events and notifies created and destroyed)
#include <cstdio>
#include <cstring>
#include <string>

#include "framework/runtime/event_allocator.h"
#include "framework/runtime/notify_allocator.h"
#include "framework/runtime/stream_allocator.h"
#include "graph/load/model_manager/reusable_stream_allocator.h"

extern "C" {
int memset_s(void *dest, size_t dest_max, int c, size_t count) {
  if (dest == nullptr || count > dest_max) return 1;
  std::memset(dest, c, count);
  return 0;
}
void fake_rt_counts(uint32_t kind, uint64_t *creates, uint64_t *destroys);
uint64_t fake_rt_live(void);
}

static uint64_t count(uint32_t kind, bool destroyed) {
  uint64_t c = 0, d = 0;
  fake_rt_counts(kind, &c, &d);
  return destroyed ? d : c;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const bool preloaded = std::string(argv[1]) == "preloaded";
  int failures = 0;
  auto expect = [&failures](bool ok, const char *what) {
    if (!ok) {
      std::fprintf(stderr, "expected: %s\n", what);
      ++failures;
    }
  };
  {
    gert::StreamAllocator streams;
    gert::EventAllocator events;
    gert::NotifyAllocator notifies;
    auto s = streams.AcquireStreams(4);
    auto e = events.AcquireEvents(3);
    auto n = notifies.AcquireNotifies(0, 2);
    if (preloaded) {
      expect(s != nullptr && s->GetSize() == 4U, "the project's AcquireStreams: 4 streams");
      expect(e != nullptr && e->GetSize() == 3U, "the project's AcquireEvents: 3 events");
      expect(n != nullptr && n->GetSize() == 2U, "the project's AcquireNotifies: 2 notifies");
      expect(count(0, false) == 3U && count(1, false) == 3U && count(2, false) == 2U,
             "the fake runtime saw the project's creates");
    } else {
      expect(s == nullptr && e == nullptr && n == nullptr, "the stand-in's nullptr");
      expect(count(0, false) == 0U && count(1, false) == 0U, "no device call from the stand-in");
    }
  }
  ge::ReusableStreamAllocator *pool = ge::ReusableStreamAllocator::Create();
  expect((pool != nullptr) == preloaded, "Create() from the expected library");
  if (pool != nullptr) {
    aclrtStream s = nullptr;
    expect(pool->GetOrCreateRtStream(s, 1, 0, RT_STREAM_PERSISTENT, 4) == ge::SUCCESS && s != nullptr,
           "the project's GetOrCreateRtStream");
    expect(pool->DestroyStream(s) == ge::SUCCESS, "the project's DestroyStream");
    delete pool;
  }
  if (preloaded) {
    expect(count(0, true) == 4U && count(1, true) == 3U && count(2, true) == 2U,
           "the project's destructors destroyed everything");
  }
  expect(fake_rt_live() == 0U, "no live handle");
  std::printf("%s: %s\n", preloaded ? "preloaded" : "standin", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
