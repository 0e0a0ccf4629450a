// Benchmarks with the fake runtime compiled in: warm AcquireStreams, GetOrCreateRtStream +
// DestroyStream pairs on one thread, and pair throughput at 1, 2, 4 and 16 threads, for the
// drop-in classes and for a naive std::mutex + std::map implementation of GE's V1 allocator (the
// baseline, calling the same fake runtime directly).
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "framework/runtime/stream_allocator.h"
#include "graph/load/model_manager/reusable_stream_allocator.h"

extern "C" {
int32_t rtStreamCreateWithFlags(void **stm, int32_t priority, uint32_t flags);
int aclrtDestroyStream(void *stm);
int aclrtDestroyStreamForce(void *stm);
int aclrtStreamGetId(void *stm, int32_t *id);
}

namespace naive {
// GE's V1 allocator as written: one mutex, a map of sets and a map by handle.
struct Status {
  aclrtStream stream = nullptr;
  int32_t id = 0;
  std::set<uint32_t> models;
  uint32_t task_num = 0;
  bool valid = true;
};
using StatusPtr = std::shared_ptr<Status>;
struct Cmp {
  bool operator()(const StatusPtr &a, const StatusPtr &b) const {
    return a->task_num != b->task_num ? a->task_num < b->task_num : a->stream < b->stream;
  }
};
class Allocator {
 public:
  uint32_t GetOrCreate(aclrtStream &s, uint32_t model, int32_t prio, uint32_t flags, uint32_t tasks) {
    std::lock_guard<std::mutex> lk(mu_);
    if (rtStreamCreateWithFlags(&s, prio, flags) != 0) return 1;
    auto st = std::make_shared<Status>();
    st->stream = s;
    aclrtStreamGetId(s, &st->id);
    st->models.insert(model);
    st->task_num = tasks;
    list_[{prio, flags}].insert(st);
    ref_[s] = st;
    return 0;
  }
  uint32_t Destroy(aclrtStream &s, bool force) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = ref_.find(s);
    if (it == ref_.end()) return 1;
    if (!it->second->valid) return 0;
    if ((force ? aclrtDestroyStreamForce(s) : aclrtDestroyStream(s)) != 0) return 1;
    it->second->valid = false;
    // GE never erases; the benchmark erases so the maps stay comparable in size to ours.
    list_[{0, 1}].erase(it->second);
    ref_.erase(it);
    return 0;
  }

 private:
  std::map<std::pair<int32_t, uint32_t>, std::set<StatusPtr, Cmp>> list_;
  std::map<aclrtStream, StatusPtr> ref_;
  std::mutex mu_;
};
}  // namespace naive

using Clock = std::chrono::steady_clock;

template <typename F>
double ns_per_op(long iters, F f) {
  auto t0 = Clock::now();
  for (long i = 0; i < iters; ++i) f(i);
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / iters;
}

template <typename Pair>
double throughput(int threads, long per_thread, Pair pair) {
  std::vector<std::thread> ts;
  auto t0 = Clock::now();
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      for (long i = 0; i < per_thread; ++i) pair(static_cast<uint32_t>(t));
    });
  }
  for (auto &th : ts) th.join();
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  return threads * per_thread / s / 1e6;  // Mpairs/s
}

int main(int argc, char **argv) {
  double scale = argc > 1 ? std::atof(argv[1]) : 1.0;
  {
    gert::StreamAllocator a;
    if (a.AcquireStreams(64) == nullptr) return 1;
    volatile size_t sink = 0;
    double ns = ns_per_op(static_cast<long>(20000000 * scale) + 1, [&](long i) { sink += a.AcquireStreams(1 + (i & 31))->GetSize(); });
    std::printf("warm AcquireStreams (n <= size)             %8.2f ns/op\n", ns);
  }
  ge::ReusableStreamAllocator *pool = ge::ReusableStreamAllocator::Create();
  naive::Allocator base;
  auto ours = [&](uint32_t model) {
    aclrtStream s = nullptr;
    pool->GetOrCreateRtStream(s, model, 0, RT_STREAM_PERSISTENT, 10);
    pool->DestroyStream(s);
  };
  auto theirs = [&](uint32_t model) {
    aclrtStream s = nullptr;
    base.GetOrCreate(s, model, 0, RT_STREAM_PERSISTENT, 10);
    base.Destroy(s, false);
  };
  // Warm up both (allocator caches, runtime resolution).
  for (int i = 0; i < 10000; ++i) {
    ours(0);
    theirs(0);
  }
  long n = static_cast<long>(1000000 * scale) + 1;
  std::printf("GetOrCreateRtStream+DestroyStream, 1 thread  %8.1f ns/pair (naive std::mutex+std::map: %.1f ns/pair)\n",
              ns_per_op(n, [&](long) { ours(1); }), ns_per_op(n, [&](long) { theirs(1); }));
  std::printf("fake runtime alone (create+get id+destroy)   %8.1f ns/pair\n", ns_per_op(n, [&](long) {
                void *s = nullptr;
                int32_t id = 0;
                rtStreamCreateWithFlags(&s, 0, 1);
                aclrtStreamGetId(s, &id);
                aclrtDestroyStream(s);
              }));
  for (int threads : {1, 2, 4, 16}) {
    long per = static_cast<long>(400000 * scale) / threads + 1;
    double a = throughput(threads, per, ours);
    double b = throughput(threads, per, theirs);
    std::printf("threads %2d: stream-alloc %6.2f Mpairs/s   naive %6.2f Mpairs/s\n", threads, a, b);
  }
  delete pool;
  return 0;
}
