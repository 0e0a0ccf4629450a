//! The device-runtime seam of the C ABI's runtime half: the function table a host registers
//! (`sa_runtime_ops`), how the runtime is resolved, and the device limits read through it.
//! The handles that call through it have a module each: the RT2 allocators
//! ([`super::stream_allocator`], [`super::event_allocator`], [`super::notify_allocator`]), the
//! V1 reusable stream pool ([`super::reusable_pool`]), the stream context
//! ([`super::stream_ops`]) and the memory pool ([`super::mem_pool`]); [`super::rt2`] holds the
//! RT2 `ModelDesc` counts and `OccupyStreamResource`.
//!
//! Conventions are those of the whole C ABI (see `capi`): every function runs inside
//! [`ffi_boundary`], returns an `sa_status` (the `_acquire` functions: the vector or NULL),
//! writes outputs only on success and leaves the failure's message and code for
//! `sa_last_error_message` / `sa_last_error_code` on the calling thread. Runtime failures have
//! their own status range (`SA_NO_RUNTIME` = 4000 …); NULL pointers, bad arguments and panics
//! share the common statuses.
//!
//! The handles here are thread-safe (unlike `sa_graph`): allocators and pools may be used from
//! several threads at once; freeing one while another thread uses it is undefined behaviour.

#![allow(unsafe_code)]

use std::ffi::c_void;

use super::{ApiError, ApiResult, ffi_boundary, out_ptr, sa_status, write_out};
use crate::runtime::seam::{RUNTIME_OPS_ABI_VERSION, Runtime, RuntimeOps};

/// Version of `sa_runtime_ops` this library writes in its header; entries are only ever
/// appended. Version 2 appended `mem_malloc` … `event_elapsed_time`; a version-1 table
/// (`abi_version` 1, `struct_size` at least `SA_RUNTIME_OPS_V1_SIZE`) is still accepted and
/// reads as one whose version-2 entries are NULL.
pub const SA_RUNTIME_OPS_ABI_VERSION: u32 = 2;
/// `struct_size` of a version-1 `sa_runtime_ops` (16 entries after `user`).
pub const SA_RUNTIME_OPS_V1_SIZE: u32 = 144;

/// Where the device runtime in use came from (`sa_runtime_resolve`).
pub type sa_runtime_source = i32;
/// A table registered with `sa_runtime_register`.
pub const SA_RUNTIME_REGISTERED: sa_runtime_source = 1;
/// The Ascend runtime's symbols in the process scope, `dlsym(RTLD_DEFAULT, ...)`.
pub const SA_RUNTIME_PROCESS_SCOPE: sa_runtime_source = 2;
/// An already-loaded `libacl_rt.so` / `libruntime.so` / `libascendcl.so` (`RTLD_NOLOAD`).
pub const SA_RUNTIME_LOADED_LIBRARY: sa_runtime_source = 3;
/// The library named by the environment variable `SA_RUNTIME_LIB`.
pub const SA_RUNTIME_EXPLICIT_PATH: sa_runtime_source = 4;
/// The CUDA driver, selected with the environment variable `SA_RUNTIME=cuda` (found as
/// `libcuda.so.1`, or the library `SA_CUDA_LIB` names).
pub const SA_RUNTIME_CUDA: sa_runtime_source = 5;

/// The device-runtime seam: a host's function table, copied at registration. Every entry
/// returns the runtime's own error code (0 = success) and receives `user` unchanged. Stream
/// flags are RT-encoded (`RT_STREAM_*`), event flags ACL-encoded. The six create/destroy
/// entries are required; the others may be NULL (the calls that need them then fail with
/// `SA_NO_RUNTIME` naming the entry: the memory pool needs `mem_malloc`, `mem_free`,
/// `event_record`, `event_query` and `event_synchronize`). The entries may be called from any
/// thread, and until every allocator and pool created while the table was registered is freed.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sa_runtime_ops {
    /// `sizeof(sa_runtime_ops)` as the host compiled it: at least this version's size.
    pub struct_size: u32,
    /// `SA_RUNTIME_OPS_ABI_VERSION`.
    pub abi_version: u32,
    /// Passed back to every entry.
    pub user: *mut c_void,
    /// `rtStreamCreateWithFlags(stream, priority, rt_flags)`.
    pub stream_create:
        Option<unsafe extern "C" fn(user: *mut c_void, stream: *mut *mut c_void, priority: i32, rt_flags: u32) -> i32>,
    /// `aclrtDestroyStream`, or `aclrtDestroyStreamForce` when `force` is non-zero.
    pub stream_destroy: Option<unsafe extern "C" fn(user: *mut c_void, stream: *mut c_void, force: i32) -> i32>,
    /// `aclrtStreamGetId`.
    pub stream_get_id: Option<unsafe extern "C" fn(user: *mut c_void, stream: *mut c_void, stream_id: *mut i32) -> i32>,
    /// `aclrtCreateEventExWithFlag(event, acl_flag)`.
    pub event_create: Option<unsafe extern "C" fn(user: *mut c_void, event: *mut *mut c_void, acl_flag: u32) -> i32>,
    /// `aclrtDestroyEvent`.
    pub event_destroy: Option<unsafe extern "C" fn(user: *mut c_void, event: *mut c_void) -> i32>,
    /// `aclrtRecordEvent(event, stream)`.
    pub event_record: Option<unsafe extern "C" fn(user: *mut c_void, event: *mut c_void, stream: *mut c_void) -> i32>,
    /// `aclrtResetEvent(event, stream)`.
    pub event_reset: Option<unsafe extern "C" fn(user: *mut c_void, event: *mut c_void, stream: *mut c_void) -> i32>,
    /// `aclrtStreamWaitEvent(stream, event)`.
    pub stream_wait_event:
        Option<unsafe extern "C" fn(user: *mut c_void, stream: *mut c_void, event: *mut c_void) -> i32>,
    /// `aclrtCreateNotify` on `device_id`.
    pub notify_create: Option<unsafe extern "C" fn(user: *mut c_void, notify: *mut *mut c_void, device_id: i32) -> i32>,
    /// `aclrtDestroyNotify`.
    pub notify_destroy: Option<unsafe extern "C" fn(user: *mut c_void, notify: *mut c_void) -> i32>,
    /// `aclrtRecordNotify(notify, stream)`.
    pub notify_record: Option<unsafe extern "C" fn(user: *mut c_void, notify: *mut c_void, stream: *mut c_void) -> i32>,
    /// `aclrtWaitAndResetNotify(notify, stream, timeout_ms)`.
    pub notify_wait: Option<
        unsafe extern "C" fn(user: *mut c_void, notify: *mut c_void, stream: *mut c_void, timeout_ms: u32) -> i32,
    >,
    /// `rtGetRtCapability(feature, info, value)`.
    pub get_rt_capability:
        Option<unsafe extern "C" fn(user: *mut c_void, feature: i32, info: i32, value: *mut i64) -> i32>,
    /// `rtGetMaxStreamAndTask(stream_type, max_streams, max_tasks)`.
    pub max_stream_and_task: Option<
        unsafe extern "C" fn(user: *mut c_void, stream_type: u32, max_streams: *mut u32, max_tasks: *mut u32) -> i32,
    >,
    /// `aclrtGetStreamAvailableNum(count)`.
    pub available_stream_num: Option<unsafe extern "C" fn(user: *mut c_void, count: *mut u32) -> i32>,
    /// `aclrtGetDevice(device_id)`.
    pub get_device: Option<unsafe extern "C" fn(user: *mut c_void, device_id: *mut i32) -> i32>,
    /// Version 2. `aclrtMalloc(dev_ptr, size, policy)`; the library asks for policy 0
    /// (`ACL_MEM_MALLOC_HUGE_FIRST`).
    pub mem_malloc:
        Option<unsafe extern "C" fn(user: *mut c_void, dev_ptr: *mut *mut c_void, size: usize, policy: u32) -> i32>,
    /// Version 2. `aclrtFree(dev_ptr)`.
    pub mem_free: Option<unsafe extern "C" fn(user: *mut c_void, dev_ptr: *mut c_void) -> i32>,
    /// Version 2. `aclrtQueryEventStatus(event, status)`, normalised: writes 1 to `*complete`
    /// when the work before the event's last record has completed (or it was never recorded),
    /// 0 when not yet.
    pub event_query: Option<unsafe extern "C" fn(user: *mut c_void, event: *mut c_void, complete: *mut i32) -> i32>,
    /// Version 2. `aclrtSynchronizeEvent(event)`: blocks until the event has completed.
    pub event_synchronize: Option<unsafe extern "C" fn(user: *mut c_void, event: *mut c_void) -> i32>,
    /// Version 2. `aclrtEventElapsedTime(ms, start, end)`.
    pub event_elapsed_time:
        Option<unsafe extern "C" fn(user: *mut c_void, ms: *mut f32, start: *mut c_void, end: *mut c_void) -> i32>,
}

// The C table and the seam's table are the same record: the conversion below is field by
// field (so a type mismatch does not compile), these asserts pin size and version.
const _: () = assert!(std::mem::size_of::<sa_runtime_ops>() == std::mem::size_of::<RuntimeOps>());
const _: () = assert!(SA_RUNTIME_OPS_ABI_VERSION == RUNTIME_OPS_ABI_VERSION);
const _: () = assert!(SA_RUNTIME_OPS_V1_SIZE == crate::runtime::seam::RUNTIME_OPS_V1_SIZE);

impl From<&sa_runtime_ops> for RuntimeOps {
    fn from(o: &sa_runtime_ops) -> Self {
        RuntimeOps {
            struct_size: o.struct_size,
            abi_version: o.abi_version,
            user: o.user,
            stream_create: o.stream_create,
            stream_destroy: o.stream_destroy,
            stream_get_id: o.stream_get_id,
            event_create: o.event_create,
            event_destroy: o.event_destroy,
            event_record: o.event_record,
            event_reset: o.event_reset,
            stream_wait_event: o.stream_wait_event,
            notify_create: o.notify_create,
            notify_destroy: o.notify_destroy,
            notify_record: o.notify_record,
            notify_wait: o.notify_wait,
            get_rt_capability: o.get_rt_capability,
            max_stream_and_task: o.max_stream_and_task,
            available_stream_num: o.available_stream_num,
            get_device: o.get_device,
            mem_malloc: o.mem_malloc,
            mem_free: o.mem_free,
            event_query: o.event_query,
            event_synchronize: o.event_synchronize,
            event_elapsed_time: o.event_elapsed_time,
        }
    }
}

/// Registers `ops` as the device runtime for every allocator and pool that resolves its
/// runtime from now on; NULL returns to automatic resolution (`sa_runtime_resolve`). The table
/// is copied: `ops` may be freed on return, the functions and `user` it names may not (see
/// `sa_runtime_ops`). Allocators that already created handles keep the table they created
/// them with. Only the first `struct_size` bytes are read, so a version-1 table compiled
/// against an older header (`abi_version` 1, `struct_size` = `SA_RUNTIME_OPS_V1_SIZE`) works,
/// without the version-2 entries. Fails with `SA_INVALID_ARGUMENT` when `struct_size` is below
/// the size of the table's `abi_version`, `abi_version` is neither 1 nor
/// `SA_RUNTIME_OPS_ABI_VERSION`, or a required entry is NULL; the previous registration then
/// stays. Thread-safe.
///
/// Ownership: copies the table `ops` points to (it may be freed on return); the functions and
/// `user` it names are borrowed and must outlive every handle created with them.
///
/// # Safety
/// `ops` is NULL or points to a readable `sa_runtime_ops` of at least `ops->struct_size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_runtime_register(ops: *const sa_runtime_ops) -> sa_status {
    ffi_boundary(|| -> ApiResult {
        if ops.is_null() {
            return Ok(Runtime::register(None)?);
        }
        // SAFETY: non-NULL and readable by the contract. The size is read first so a short
        // (corrupt) table is refused before more of it is read.
        let size = unsafe { std::ptr::addr_of!((*ops).struct_size).read_unaligned() };
        if size < SA_RUNTIME_OPS_V1_SIZE {
            return Err(ApiError::new(
                super::SA_INVALID_ARGUMENT,
                format!(
                    "sa_runtime_ops.struct_size {size} is below the {SA_RUNTIME_OPS_V1_SIZE} bytes of ABI version 1"
                ),
            ));
        }
        // Copy what the host declared (at most this version's size) over an all-NULL table.
        let mut copy = std::mem::MaybeUninit::<sa_runtime_ops>::zeroed();
        let n = (size as usize).min(std::mem::size_of::<sa_runtime_ops>());
        // SAFETY: `ops` has `size >= n` readable bytes; `copy` has room for `n`; all-zero bytes
        // are a valid `sa_runtime_ops` (NULL entries), and so is any prefix of a host's table.
        let table = unsafe {
            std::ptr::copy_nonoverlapping(ops.cast::<u8>(), copy.as_mut_ptr().cast::<u8>(), n);
            RuntimeOps::from(&copy.assume_init())
        };
        Ok(Runtime::register(Some(&table))?)
    })
}

/// Resolves the device runtime now and writes where it came from (`SA_RUNTIME_REGISTERED`,
/// `_PROCESS_SCOPE`, `_LOADED_LIBRARY`, `_EXPLICIT_PATH`) to `*source`. Order: the registered
/// table; the Ascend symbols in the process (`dlsym(RTLD_DEFAULT)`); an already-loaded
/// `libacl_rt.so` / `libruntime.so` / `libascendcl.so` (`RTLD_NOLOAD`, never a second copy);
/// the library named by `SA_RUNTIME_LIB`. `SA_NO_RUNTIME` when none answers. Thread-safe.
///
/// Ownership: nothing is allocated that the caller owns; `*source` is written.
///
/// # Safety
/// `source` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_runtime_resolve(source: *mut sa_runtime_source) -> sa_status {
    ffi_boundary(|| -> ApiResult {
        let source = out_ptr(source, "source")?;
        let rt = Runtime::current()?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(source, rt.source() as sa_runtime_source) };
        Ok(())
    })
}

/// `rtGetMaxStreamAndTask(stream_type, ...)` through the seam (`stream_type` 0 normal, 1 huge):
/// the device's stream count and tasks per stream. The environment variable
/// `SA_RT_MAX_TASKS_PER_STREAM` overrides the task count. `SA_NO_RUNTIME` without a runtime or
/// query entry, `SA_DEVICE_ERROR` when the runtime fails. Thread-safe.
///
/// Ownership: nothing is allocated; `*max_streams` and `*max_tasks` are written.
///
/// # Safety
/// `max_streams` and `max_tasks` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_runtime_task_limits(
    stream_type: u32,
    max_streams: *mut u32,
    max_tasks: *mut u32,
) -> sa_status {
    ffi_boundary(|| -> ApiResult {
        let max_streams = out_ptr(max_streams, "max_streams")?;
        let max_tasks = out_ptr(max_tasks, "max_tasks")?;
        let (s, t) = Runtime::current()?.max_stream_and_task(stream_type)?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe {
            write_out(max_streams, s);
            write_out(max_tasks, t);
        }
        Ok(())
    })
}

/// Whether the device reports `FEATURE_TYPE_PERSISTENT_STREAM_UNLIMITED_DEPTH` (then GE does
/// not split streams): 1 or 0 in `*supported`. The environment variable `SA_RT_UNLIMITED_DEPTH`
/// (0 or 1) overrides the device. Thread-safe.
///
/// Ownership: nothing is allocated; `*supported` is written.
///
/// # Safety
/// `supported` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_runtime_unlimited_depth(supported: *mut i32) -> sa_status {
    ffi_boundary(|| -> ApiResult {
        let supported = out_ptr(supported, "supported")?;
        let v = Runtime::current()?.unlimited_depth()?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(supported, i32::from(v)) };
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    //! Paths that fail before any device call; the device paths are covered from C/C++
    //! (tests_c/runtime) and Rust (tests/runtime_*.rs) with fake runtimes. Nothing here
    //! registers a table: the lib's other tests compile graphs in the same process.
    use std::ffi::CStr;

    use super::*;
    use crate::capi::event_allocator::sa_event_allocator_acquire;
    use crate::capi::reusable_pool::{
        sa_pool_stats, sa_reusable_pool_destroy_stream, sa_reusable_pool_free, sa_reusable_pool_new,
        sa_reusable_pool_stats,
    };
    use crate::capi::rt2::{sa_resource_counts, sa_rt2_resource_counts, sa_static_counts};
    use crate::capi::stream_allocator::{
        sa_stream_allocator_acquire, sa_stream_allocator_free, sa_stream_allocator_new,
    };
    use crate::capi::{
        SA_INVALID_ARGUMENT, SA_NULL_POINTER, SA_OK, SA_UNKNOWN_HANDLE, sa_last_error_code, sa_last_error_message,
    };

    fn last() -> (String, String) {
        let code = unsafe { CStr::from_ptr(sa_last_error_code()) }.to_str().unwrap().to_string();
        let msg = unsafe { CStr::from_ptr(sa_last_error_message()) }.to_str().unwrap().to_string();
        (code, msg)
    }

    #[test]
    fn null_arguments_and_bad_options() {
        assert_eq!(unsafe { sa_stream_allocator_new(0, 0, std::ptr::null_mut()) }, SA_NULL_POINTER);
        assert_eq!(last(), ("SA3001".into(), "output argument 'out' is NULL".into()));
        assert!(unsafe { sa_event_allocator_acquire(std::ptr::null(), 1) }.is_null());
        assert_eq!(last(), ("SA3001".into(), "argument 'a' is NULL".into()));
        let mut pool = std::ptr::null_mut();
        assert_eq!(unsafe { sa_reusable_pool_new(c"reuse=on,task_limit=x".as_ptr(), &mut pool) }, SA_INVALID_ARGUMENT);
        assert!(pool.is_null(), "outputs untouched on failure");
        assert!(last().1.contains("task_limit=`x`"), "{:?}", last());
        let mut counts = sa_resource_counts::default();
        let sub = sa_static_counts { streams: 9, events: 0, notifies: 0 };
        assert_eq!(unsafe { sa_rt2_resource_counts(6, 2, 0, 0, &sub, &mut counts) }, SA_INVALID_ARGUMENT);
        assert_eq!(unsafe { sa_rt2_resource_counts(6, 2, 9, 0, std::ptr::null(), &mut counts) }, SA_OK);
        assert_eq!((counts.reusable_stream_num, counts.attached_stream_num, counts.reusable_event_num), (4, 2, 9));
    }

    #[test]
    fn limits_and_unknown_handles_need_no_device() {
        let mut a = std::ptr::null_mut();
        assert_eq!(unsafe { sa_stream_allocator_new(0, 0, &mut a) }, SA_OK);
        assert!(unsafe { sa_stream_allocator_acquire(a, 2024) }.is_null());
        let (code, msg) = last();
        assert_eq!(code, "SA4001");
        assert!(msg.contains("2024"), "{msg}");
        unsafe { sa_stream_allocator_free(a) };
        unsafe { sa_stream_allocator_free(std::ptr::null_mut()) };

        let mut pool = std::ptr::null_mut();
        assert_eq!(unsafe { sa_reusable_pool_new(std::ptr::null(), &mut pool) }, SA_OK);
        let mut stranger = 0x42 as *mut c_void;
        assert_eq!(unsafe { sa_reusable_pool_destroy_stream(pool, &mut stranger, false) }, SA_UNKNOWN_HANDLE);
        assert_eq!(last().0, "SA4003");
        let mut stats = sa_pool_stats { live: 7, ..Default::default() };
        assert_eq!(unsafe { sa_reusable_pool_stats(pool, &mut stats) }, SA_OK);
        assert_eq!(stats, sa_pool_stats::default());
        unsafe { sa_reusable_pool_free(pool) };
    }

    #[test]
    fn a_short_table_is_refused_before_it_is_read() {
        let ops = RuntimeOps::empty();
        // SAFETY: every field of the table is an integer, a pointer or an optional function
        // pointer, for which all-zero bytes are 0, NULL and `None`.
        let mut short =
            sa_runtime_ops { struct_size: 8, abi_version: SA_RUNTIME_OPS_ABI_VERSION, ..unsafe { std::mem::zeroed() } };
        assert_eq!(unsafe { sa_runtime_register(&short) }, SA_INVALID_ARGUMENT);
        assert!(last().1.contains("struct_size 8"), "{:?}", last());
        // Full size but no entries: refused by the seam's validation, nothing registered.
        short.struct_size = ops.struct_size;
        assert_eq!(unsafe { sa_runtime_register(&short) }, SA_INVALID_ARGUMENT);
        assert!(last().1.contains("stream_create"), "{:?}", last());
    }
}
