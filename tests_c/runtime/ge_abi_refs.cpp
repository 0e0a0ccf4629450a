// References every public member of GE's allocator classes, so that `nm -u` of this object lists
// the symbols a caller needs. Compiled twice by ge_abi_symbols.cmake: against GE's declarations
// (ge_decls/) and against the project's shims (include/stream_alloc/ge_compat), whose
// extensions it references too.
#include "framework/runtime/event_allocator.h"
#include "framework/runtime/notify_allocator.h"
#include "framework/runtime/stream_allocator.h"
#include "graph/load/model_manager/reusable_stream_allocator.h"

int ge_abi_refs(void);
int ge_abi_refs(void) {
  int n = 0;
  {
    gert::StreamAllocator s(1, 2);
    gert::EventAllocator e;
    gert::NotifyAllocator no;
    n += s.AcquireStreams(1) != nullptr;
    n += e.AcquireEvents(1) != nullptr;
    n += no.AcquireNotifies(0, 1) != nullptr;
#ifdef SA_GE_COMPAT_FRAMEWORK_RUNTIME_STREAM_ALLOCATOR_H
    n += s.GetStatus() + e.GetStatus() + no.GetStatus();
    n += *s.GetStatusMessage() + *e.GetStatusMessage() + *no.GetStatusMessage();
#endif
  }
  ge::ReusableStreamAllocator *r = ge::ReusableStreamAllocator::Create();
  aclrtStream stream = nullptr;
  n += static_cast<int>(r->GetOrCreateRtStream(stream, 0, 0, 0));
  n += static_cast<int>(r->DestroyStream(stream));
  delete r;
  return n;
}
