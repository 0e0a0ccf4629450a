// The reverse of order_a.cpp: every C++ shim, the one GE's runtime includes last first, and
// the C header last.
#if __cplusplus >= 201402L
#include "framework/runtime/mem_pool.h"
#endif
#include "framework/runtime/notify_allocator.h"
#include "framework/runtime/event_allocator.h"
#include "framework/runtime/stream_allocator.h"
#include "graph/load/model_manager/reusable_stream_allocator.h"
#include "ge/ge_graph_compile_summary.h"
#include "stream_alloc.h"

ge::Status sa_shims_order_b(void);

ge::Status sa_shims_order_b(void) {
  std::shared_ptr<ge::StreamAllocationSummary> summary;
  (void)summary;
  return ge::SUCCESS;
}
