/* GE's ge::Status, ge::SUCCESS and ge::FAILED, defined once for every C++ shim of stream-alloc
 * (framework/runtime/{stream,event,notify}_allocator.h,
 * graph/load/model_manager/reusable_stream_allocator.h, ge/ge_graph_compile_summary.h), so any
 * of them can share a translation unit, in any order.
 *
 * Inside a GE source tree (framework/common/ge_inner_error_codes.h on the include path) GE's
 * own definitions are used instead; define SA_OWN_GE_STATUS to use these even there. The file
 * name is the project's own, so it never shadows a GE header. */
#ifndef STREAM_ALLOC_GE_COMPAT_GE_STATUS_H
#define STREAM_ALLOC_GE_COMPAT_GE_STATUS_H

#include <cstdint>

#if defined(__has_include) && !defined(SA_OWN_GE_STATUS)
#if __has_include("framework/common/ge_inner_error_codes.h")
#define SA_GE_STATUS_FROM_GE 1
#endif
#endif

#ifdef SA_GE_STATUS_FROM_GE
#include "framework/common/ge_inner_error_codes.h"
#else
namespace ge {
using Status = uint32_t;
constexpr Status SUCCESS = 0U;
constexpr Status FAILED = 0xFFFFFFFFU;
}  // namespace ge
#endif

#endif  // STREAM_ALLOC_GE_COMPAT_GE_STATUS_H
