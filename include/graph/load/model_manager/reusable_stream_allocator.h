/* Source drop-in for GE's runtime/v1/graph/load/model_manager/reusable_stream_allocator.h, served
 * by stream-alloc. Same namespace, class, public signatures and default arguments; created only
 * through Create() and released with delete, as GE does. Reuse is off unless the environment
 * variable SA_REUSABLE_STREAM_OPTIONS says otherwise (e.g. "reuse=on"), so behaviour matches GE
 * by default. Failures return the sa_status of the failed call (non-zero; SA4000... for runtime
 * failures), with the message in sa_last_error_message(). */
#ifndef SA_GE_COMPAT_REUSABLE_STREAM_ALLOCATOR_H
#define SA_GE_COMPAT_REUSABLE_STREAM_ALLOCATOR_H

#include <cstdint>
#include <cstdlib>
#include <new>

#include "stream_alloc.h"

typedef void *aclrtStream;

#if __has_include("framework/common/ge_inner_error_codes.h") && !defined(SA_OWN_GE_STATUS)
#include "framework/common/ge_inner_error_codes.h"
#else
namespace ge {
using Status = uint32_t;
#ifndef SA_GE_SUCCESS_DEFINED
#define SA_GE_SUCCESS_DEFINED
constexpr Status SUCCESS = 0U;
#endif
}  // namespace ge
#endif

namespace ge {
class ReusableStreamAllocator {
 public:
  static ReusableStreamAllocator *Create() {
    sa_reusable_pool *pool = nullptr;
    if (sa_reusable_pool_new(std::getenv("SA_REUSABLE_STREAM_OPTIONS"), &pool) != SA_OK) {
      return nullptr;
    }
    ReusableStreamAllocator *a = new (std::nothrow) ReusableStreamAllocator(pool);
    if (a == nullptr) {
      sa_reusable_pool_free(pool);
    }
    return a;
  }
  Status GetOrCreateRtStream(aclrtStream &stream, const uint32_t rt_model_id, const int32_t priority,
                             const uint32_t stream_flag, const uint32_t task_num = 0U) {
    return static_cast<Status>(
        sa_reusable_pool_get_or_create(pool_, &stream, rt_model_id, priority, stream_flag, task_num));
  }
  Status DestroyStream(aclrtStream &stream, const bool is_force_destroy = false) {
    return static_cast<Status>(sa_reusable_pool_destroy_stream(pool_, &stream, is_force_destroy));
  }
  ~ReusableStreamAllocator() { sa_reusable_pool_free(pool_); }

 private:
  explicit ReusableStreamAllocator(sa_reusable_pool *pool) : pool_(pool) {}
  ReusableStreamAllocator(const ReusableStreamAllocator &) = delete;
  ReusableStreamAllocator(ReusableStreamAllocator &&) = delete;
  ReusableStreamAllocator operator=(const ReusableStreamAllocator &) = delete;
  ReusableStreamAllocator operator=(ReusableStreamAllocator &&) = delete;

  sa_reusable_pool *pool_;
};
}  // namespace ge

#endif
