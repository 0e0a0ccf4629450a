// The C++ classes of framework/runtime/mem_pool.h (sa::StreamContext, sa::Event, sa::MemPool)
// with the fake runtime compiled in: a single-thread walk through the seed's example (a tensor
// made on the default stream, read on a side stream, freed, its memory reused only after the
// back-stream wait), then 8 threads allocating, sharing across streams and freeing; every byte
// and handle is returned at the end.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "framework/runtime/mem_pool.h"

#include "../expect.hpp"

#include "fake_runtime.h"

int main() {
  {
    sa::StreamContext ctx;
    EXPECT_TRUE(ctx.ok() && ctx.status() == SA_OK);
    aclrtStream def = ctx.Stream(0);
    aclrtStream s1 = ctx.Stream(1);
    EXPECT_TRUE(def != nullptr && s1 != nullptr && ctx.Stream(1) == s1);
    sa::MemPool pool(ctx);
    EXPECT_TRUE(pool.ok());

    // add_s0 on the default stream; s1.wait_stream(default); read on s1; del add_s0.
    void *add_s0 = pool.Alloc(10 * 32 * 32 * 32 * 4, def);
    EXPECT_TRUE(add_s0 != nullptr);
    EXPECT_TRUE(ctx.WaitStream(s1, def) == SA_OK);
    EXPECT_TRUE(pool.FreeAfter(add_s0, {s1}) == SA_OK);
    // mess_output on the default stream must not get add_s0's memory yet.
    void *mess = pool.Alloc(10 * 32 * 32 * 32 * 4, def);
    EXPECT_TRUE(mess != nullptr && mess != add_s0);
    EXPECT_TRUE(pool.Free(mess, def) == SA_OK);
    // ev = s1.record_event(); ev.wait() on the default stream: the back-stream.
    sa::Event ev(ctx);
    EXPECT_TRUE(ev.ok() && ev.Record(s1) == SA_OK && ev.Wait(def) == SA_OK);
    uint64_t queries = fake_rt_event_queries();
    void *a = pool.Alloc(10 * 32 * 32 * 32 * 4, def);
    void *b = pool.Alloc(10 * 32 * 32 * 32 * 4, def);
    EXPECT_TRUE((a == add_s0 || b == add_s0) && fake_rt_event_queries() == queries);
    EXPECT_TRUE(pool.Free(a, def) == SA_OK && pool.Free(b, def) == SA_OK);
    sa_mem_stats st = pool.Stats();
    EXPECT_TRUE(st.released_without_query == 1 && st.in_use_bytes == 0);

    sa::Event start(ctx), end(ctx);
    EXPECT_TRUE(start.Record(def) == SA_OK && end.Record(def) == SA_OK);
    EXPECT_TRUE(end.Query() == 0);
    EXPECT_TRUE(start.Synchronize() == SA_OK && end.Synchronize() == SA_OK && end.Query() == 1);
    EXPECT_TRUE(start.ElapsedMs(end) > 0.0f);
    EXPECT_TRUE(ctx.Synchronize(s1) == SA_OK);

    // 8 threads: alloc on a random stream, share with another, free after it.
    std::vector<aclrtStream> streams = {def, s1, ctx.Stream(2), ctx.Stream(3)};
    std::atomic<int> errors{0};
    std::vector<std::thread> threads;
    auto t0 = std::chrono::steady_clock::now();
    const int kOps = 4000;
    for (unsigned t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        unsigned x = 2654435761u * (t + 1);
        for (int i = 0; i < kOps; ++i) {
          x = x * 1664525u + 1013904223u;
          aclrtStream own = streams[(x >> 8) % streams.size()];
          aclrtStream other = streams[(x >> 16) % streams.size()];
          void *p = pool.Alloc(1 + (x >> 4) % 65536, own);
          if (p == nullptr) {
            errors++;
            continue;
          }
          if (ctx.WaitStream(other, own) != SA_OK || pool.RecordUse(p, other) != SA_OK) errors++;
          if ((x & 3) == 0 && ctx.WaitStream(own, other) != SA_OK) errors++;
          if (pool.Free(p, own) != SA_OK) errors++;
          if ((x & 63) == 0) fake_rt_complete_all();
        }
      });
    }
    for (auto &th : threads) th.join();
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    st = pool.Stats();
    std::printf("8 threads x %d alloc+record_use+free: %.0f ns per cycle; reuses %llu, guards %llu, "
                "back-stream %llu, by query %llu\n",
                kOps, ns / (8.0 * kOps), (unsigned long long)st.reuses, (unsigned long long)st.guards,
                (unsigned long long)st.released_without_query, (unsigned long long)st.released_by_query);
    EXPECT_TRUE(errors.load() == 0);
    EXPECT_TRUE(st.in_use_bytes == 0 && st.allocs == st.frees);
    EXPECT_TRUE(pool.EmptyCache() == SA_OK);
    EXPECT_TRUE(pool.Stats().device_bytes == 0 && fake_rt_mem_bytes() == 0);
    aclrtStream none[1] = {nullptr};
    void *p = pool.Alloc(8, def);
    EXPECT_TRUE(pool.FreeAfter(p, none, 1) == SA_NULL_POINTER);
    EXPECT_TRUE(pool.Free(p, def) == SA_OK);
  }
  EXPECT_TRUE(fake_rt_live() == 0 && fake_rt_bad_destroys() == 0 && fake_rt_mem_bytes() == 0);
  std::printf("%s\n", g_failures == 0 ? "all passed" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
