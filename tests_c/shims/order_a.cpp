// Every C++ header of include/stream_alloc/ge_compat/ and the C header in one translation unit,
// the C header first. order_b.cpp includes them in the reverse order; both are linked into one
// program, so a definition that two headers both make, or one that is not inline, fails the
// compile or the link. Built under C++11, C++14 and C++17 with -Wall -Wextra -Wpedantic -Werror
// (tests_c/CMakeLists.txt), and by the consumer of an installed copy (tests_c/consumer).
#include "stream_alloc.h"
#include "ge/ge_graph_compile_summary.h"
#include "graph/load/model_manager/reusable_stream_allocator.h"
#include "framework/runtime/stream_allocator.h"
#include "framework/runtime/event_allocator.h"
#include "framework/runtime/notify_allocator.h"
#if __cplusplus >= 201402L  // sa::StreamContext / Event / MemPool need C++14 (std::exchange)
#include "framework/runtime/mem_pool.h"
#endif

#include <cstdio>
#include <type_traits>

// GE's object sizes, checked again from a program that sees every header.
static_assert(sizeof(gert::StreamAllocator) == 16, "gert::StreamAllocator is 16 bytes in GE");
static_assert(sizeof(gert::EventAllocator) == 16, "gert::EventAllocator is 16 bytes in GE");
static_assert(sizeof(gert::NotifyAllocator) == 8, "gert::NotifyAllocator is 8 bytes in GE");
static_assert(sizeof(gert::ContinuousVector) == 64, "gert::ContinuousVector is 64 bytes");
static_assert(std::is_same<ge::Status, uint32_t>::value, "ge::Status is uint32_t");

// Defined in order_b.cpp: the same names seen from the other order.
ge::Status sa_shims_order_b(void);

int main() {
  // ge::SUCCESS and ge::FAILED are one definition, whichever header came first.
  if (ge::SUCCESS != 0U || ge::FAILED != 0xFFFFFFFFU || sa_shims_order_b() != ge::SUCCESS) {
    std::puts("FAILED");
    return 1;
  }
  std::puts("every shim header together: ok");
  return 0;
}
