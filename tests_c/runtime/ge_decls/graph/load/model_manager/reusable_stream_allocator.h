/* TEST-ONLY: GE's runtime/v1/graph/load/model_manager/reusable_stream_allocator.h declaration,
 * from ge-runtime-api.md §2.1; the inline bodies of RtStreamStatus::Create and StreamCompareKey
 * are the test's own (their behaviour as §2.2 describes it). */
#ifndef GE_DECLS_REUSABLE_STREAM_ALLOCATOR_H
#define GE_DECLS_REUSABLE_STREAM_ALLOCATOR_H
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include "framework/runtime/ge_decls_common.h"
namespace ge {
struct RtStreamStatus;
using RtStreamStatusPtr = std::shared_ptr<RtStreamStatus>;

struct RtStreamStatus {
  aclrtStream stream = nullptr;
  int32_t rt_stream_id;
  std::set<uint32_t> rt_model_id;  // cannot reuse streams of its own model
  uint32_t task_num = 0U;
  bool is_valid = true;

  static RtStreamStatusPtr Create(aclrtStream &stream, const int32_t rt_stream_id, const uint32_t rt_model_id,
                                  const uint32_t task_num = 0U) {
    auto status = std::make_shared<RtStreamStatus>();
    status->stream = stream;
    status->rt_stream_id = rt_stream_id;
    status->rt_model_id.insert(rt_model_id);
    status->task_num = task_num;
    return status;
  }
};

struct StreamCompareKey {
  bool operator()(const RtStreamStatusPtr &status1, const RtStreamStatusPtr &status2) const {
    return status1->task_num != status2->task_num ? status1->task_num < status2->task_num
                                                  : status1->stream < status2->stream;
  }
};

class ReusableStreamAllocator {
 public:
  static ReusableStreamAllocator *Create();
  Status GetOrCreateRtStream(aclrtStream &stream, const uint32_t rt_model_id, const int32_t priority,
                             const uint32_t stream_flag, const uint32_t task_num = 0U);
  Status DestroyStream(aclrtStream &stream, const bool is_force_destroy = false);

 private:
  ReusableStreamAllocator() = default;
  ReusableStreamAllocator(const ReusableStreamAllocator &) = delete;
  ReusableStreamAllocator(ReusableStreamAllocator &&) = delete;
  ReusableStreamAllocator operator=(const ReusableStreamAllocator &) = delete;
  ReusableStreamAllocator operator=(ReusableStreamAllocator &&) = delete;

  RtStreamStatusPtr CreateNewStream(aclrtStream &stream, const uint32_t rt_model_id, const int32_t priority,
                                    const uint32_t stream_flag, const uint32_t task_num = 0U) const;
  // <<priority, stream_flag>, std::set<RtStreamStatus>>
  std::map<std::pair<int32_t, uint32_t>, std::set<RtStreamStatusPtr, StreamCompareKey>> rt_stream_list_{};
  // to get stream_status easier
  std::map<aclrtStream, RtStreamStatusPtr> stream_ref_;
  std::mutex mutex_;
};
}  // namespace ge
#endif
