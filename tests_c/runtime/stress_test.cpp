// 16 threads hammer GetOrCreateRtStream / DestroyStream on one ge::ReusableStreamAllocator (reuse
// off, then on). Nothing may be lost or destroyed twice, and creates must equal destroys. The
// fake runtime is compiled into this executable.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "graph/load/model_manager/reusable_stream_allocator.h"

#include "fake_runtime.h"

static int run(const char *options) {
  if (options != nullptr) setenv("SA_REUSABLE_STREAM_OPTIONS", options, 1);
  ge::ReusableStreamAllocator *pool = ge::ReusableStreamAllocator::Create();
  unsetenv("SA_REUSABLE_STREAM_OPTIONS");
  if (pool == nullptr) return 1;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      std::vector<aclrtStream> held;
      for (uint32_t i = 0; i < 2000; ++i) {
        aclrtStream s = nullptr;
        if (pool->GetOrCreateRtStream(s, t * 16 + i % 5, static_cast<int32_t>(i % 2), 0x01U, 1) != ge::SUCCESS ||
            s == nullptr) {
          errors++;
          continue;
        }
        held.push_back(s);
        if (i % 4 == 3) {
          for (aclrtStream &h : held) {
            if (pool->DestroyStream(h, (i & 8) != 0) != ge::SUCCESS) errors++;
          }
          held.clear();
        }
      }
      for (aclrtStream &h : held) {
        if (pool->DestroyStream(h) != ge::SUCCESS) errors++;
      }
    });
  }
  for (auto &th : threads) th.join();
  sa_pool_stats stats;
  (void)stats;
  delete pool;
  uint64_t c = 0, d = 0;
  fake_rt_counts(0, &c, &d);
  std::printf("%s: created %llu destroyed %llu live %llu bad %llu errors %d\n", options ? options : "reuse=off",
              (unsigned long long)c, (unsigned long long)d, (unsigned long long)fake_rt_live(),
              (unsigned long long)fake_rt_bad_destroys(), errors.load());
  return (errors.load() == 0 && c == d && fake_rt_live() == 0 && fake_rt_bad_destroys() == 0 && c > 0) ? 0 : 1;
}

int main() {
  int rc = run(nullptr);
  rc |= run("reuse=on,task_limit=100000");
  std::printf("%s\n", rc == 0 ? "all passed" : "FAILED");
  return rc;
}
