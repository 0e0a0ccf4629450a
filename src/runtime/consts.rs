//! Constants of GE and the device runtime (reference: ge-runtime-api.md §1, §4).

/// `gert::StreamAllocator::kMaxStreamNum` and `gert::NotifyAllocator::kMaxNotifyNum`, defined
/// with the device's other limits.
pub use crate::graph::device::{MAX_NOTIFY_NUM, MAX_STREAM_NUM};
/// `gert::EventAllocator::kMaxEventNum`: requests up to and including it are served.
pub const MAX_EVENT_NUM: usize = 4096;

pub const RT_STREAM_PRIORITY_DEFAULT: i32 = 0;

// RT stream flags (`rt_external_stream.h`); GE passes this encoding everywhere.
pub const RT_STREAM_DEFAULT: u32 = 0x00;
pub const RT_STREAM_PERSISTENT: u32 = 0x01;
pub const RT_STREAM_FORCE_COPY: u32 = 0x02;
pub const RT_STREAM_HUGE: u32 = 0x04;
pub const RT_STREAM_AICPU: u32 = 0x08;
pub const RT_STREAM_FORBIDDEN_DEFAULT: u32 = 0x10;
pub const RT_STREAM_HEAD: u32 = 0x20;
pub const RT_STREAM_PRIMARY_DEFAULT: u32 = 0x40;
pub const RT_STREAM_PRIMARY_FIRST_DEFAULT: u32 = 0x80;
pub const RT_STREAM_OVERFLOW: u32 = 0x100;
pub const RT_STREAM_FAST_LAUNCH: u32 = 0x200;
pub const RT_STREAM_FAST_SYNC: u32 = 0x400;
pub const RT_STREAM_CP_PROCESS_USE: u32 = 0x800;

// ACL stream flags (`acl_rt.h`), used only when falling back to `aclrtCreateStreamWithConfig`.
pub const ACL_STREAM_FAST_LAUNCH: u32 = 0x01;
pub const ACL_STREAM_FAST_SYNC: u32 = 0x02;
pub const ACL_STREAM_PERSISTENT: u32 = 0x04;
pub const ACL_STREAM_HUGE: u32 = 0x08;
pub const ACL_STREAM_CPU_SCHEDULE: u32 = 0x10;
pub const ACL_STREAM_DEVICE_USE_ONLY: u32 = 0x20;

/// `EventAllocator`'s default flag.
pub const ACL_EVENT_SYNC: u32 = 0x01;
pub const ACL_NOTIFY_DEFAULT: u64 = 0;

/// `aclrtMemMallocPolicy::ACL_MEM_MALLOC_HUGE_FIRST`, the policy the memory pool asks for.
pub const ACL_MEM_MALLOC_HUGE_FIRST: u32 = 0;

/// Stream types of `rtGetMaxStreamAndTask`.
pub const RT_NORMAL_STREAM: u32 = 0x00;
pub const RT_HUGE_STREAM: u32 = 0x01;

/// `rtFeatureType_t::FEATURE_TYPE_PERSISTENT_STREAM_UNLIMITED_DEPTH`.
pub const FEATURE_TYPE_PERSISTENT_STREAM_UNLIMITED_DEPTH: i32 = 3;
pub const RT_CAPABILITY_SUPPORT: i64 = 1;

/// GE's `kReservedTaskNum` (7 profiling tasks + 20): headroom kept on every stream.
pub const RESERVED_TASK_NUM: u32 = 27;
/// `RT_MAX_MODELS_IN_ONE_STREAM`: a stream binds at most this many models.
pub const MAX_MODELS_IN_ONE_STREAM: usize = 256;

// Runtime error codes (`rt_error_codes.h`).
pub const ACL_ERROR_RT_PARAM_INVALID: i32 = 107000;
pub const ACL_ERROR_RT_FEATURE_NOT_SUPPORT: i32 = 207000;
pub const ACL_ERROR_RT_RESOURCE_ALLOC_FAIL: i32 = 207005;
pub const ACL_ERROR_RT_NO_EVENT_RESOURCE: i32 = 207007;
pub const ACL_ERROR_RT_NO_STREAM_RESOURCE: i32 = 207008;
pub const ACL_ERROR_RT_NO_NOTIFY_RESOURCE: i32 = 207009;
pub const ACL_ERROR_RT_OVER_LIMIT: i32 = 207012;
pub const ACL_ERROR_RT_STREAM_TASK_FULL: i32 = 507002;
/// `aclrtMalloc` found no device memory (`rt_error_codes.h`; not in the reference's table).
pub const ACL_ERROR_RT_MEMORY_ALLOCATION: i32 = 207001;

/// RT flags → ACL flags for `aclrtCreateStreamWithConfig`; `Err(bits)` names the RT bits that
/// have no ACL equivalent (FORCE_COPY, OVERFLOW, FORBIDDEN_DEFAULT, HEAD, DQS_*, ...).
pub fn rt_to_acl_stream_flags(rt: u32) -> Result<u32, u32> {
    const MAP: [(u32, u32); 6] = [
        (RT_STREAM_PERSISTENT, ACL_STREAM_PERSISTENT),
        (RT_STREAM_HUGE, ACL_STREAM_HUGE),
        (RT_STREAM_AICPU, ACL_STREAM_CPU_SCHEDULE),
        (RT_STREAM_FAST_LAUNCH, ACL_STREAM_FAST_LAUNCH),
        (RT_STREAM_FAST_SYNC, ACL_STREAM_FAST_SYNC),
        (RT_STREAM_CP_PROCESS_USE, ACL_STREAM_DEVICE_USE_ONLY),
    ];
    let mut acl = 0;
    let mut left = rt;
    for (r, a) in MAP {
        if rt & r != 0 {
            acl |= a;
            left &= !r;
        }
    }
    if left == 0 { Ok(acl) } else { Err(left) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_translation() {
        assert_eq!(rt_to_acl_stream_flags(0), Ok(0));
        assert_eq!(rt_to_acl_stream_flags(RT_STREAM_PERSISTENT | RT_STREAM_HUGE), Ok(0x0c));
        assert_eq!(rt_to_acl_stream_flags(RT_STREAM_PERSISTENT | RT_STREAM_FORCE_COPY), Err(RT_STREAM_FORCE_COPY));
        assert_eq!(rt_to_acl_stream_flags(RT_STREAM_OVERFLOW | RT_STREAM_HEAD), Err(0x120));
    }
}
