/* TEST-ONLY: what GE's runtime headers take from the runtime and from GE's common headers
 * (rt_external_stream.h, acl_base_rt.h, common/ge_visibility.h, ge_inner_error_codes.h). */
#ifndef GE_DECLS_COMMON_H
#define GE_DECLS_COMMON_H
#include <cstdint>
#define GE_DECLS_TEST_HEADERS 1
typedef void *rtStream_t;
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtNotify;
#define RT_STREAM_PRIORITY_DEFAULT (0U)
#define RT_STREAM_DEFAULT (0x00U)
#define RT_STREAM_PERSISTENT (0x01U)
#define ACL_EVENT_SYNC 0x00000001U
#define VISIBILITY_EXPORT __attribute__((visibility("default")))
namespace ge {
using Status = uint32_t;
constexpr Status SUCCESS = 0U;
}  // namespace ge
#endif
