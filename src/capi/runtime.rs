//! C ABI of the runtime half (`include/stream_alloc_runtime.h`). Every function checks its
//! pointers, runs inside a panic boundary, writes outputs only on success, and returns an
//! `sa_status` code: 0 (SA_OK) or one of the runtime codes 100…105 (see `RtErrorKind::status`).
//! A failure's message is kept per thread for `sa_rt_last_error`.

#![allow(unsafe_code)]

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::runtime::error::{RtError, RtErrorKind, RtResult};
use crate::runtime::pool::{PoolOptions, PoolStats, ReusableStreamPool};
use crate::runtime::rt2::{self, ExternalAllocators, ResourceCounts, StaticCounts};
use crate::runtime::seam::{Runtime, RuntimeOps};
use crate::runtime::{EventAllocator, NotifyAllocator, StreamAllocator};

pub const SA_OK: i32 = 0;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(e: &RtError) {
    let text = CString::new(e.message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|l| *l.borrow_mut() = text);
}

fn panic_error() -> RtError {
    RtError::new(RtErrorKind::Panic, "internal error: a panic was caught at the C boundary (a bug; please report)")
}

/// Runs `f` behind the panic boundary and turns its result into a status.
fn guard(f: impl FnOnce() -> RtResult<()>) -> i32 {
    let r = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err(panic_error()));
    match r {
        Ok(()) => SA_OK,
        Err(e) => {
            set_last_error(&e);
            e.status()
        }
    }
}

/// As `guard`, for functions returning a pointer (null on failure).
fn guard_ptr<T>(f: impl FnOnce() -> RtResult<*mut T>) -> *mut T {
    let r = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err(panic_error()));
    r.unwrap_or_else(|e| {
        set_last_error(&e);
        std::ptr::null_mut()
    })
}

fn null(what: &str) -> RtError {
    RtError::new(RtErrorKind::Null, format!("{what} is null"))
}

/// SAFETY (for callers of `out`): `p` must be null or valid for a write of `T`.
unsafe fn out<T>(p: *mut T, what: &str, v: T) -> RtResult<()> {
    if p.is_null() {
        return Err(null(what));
    }
    // SAFETY: non-null, and the caller promises validity.
    unsafe { p.write(v) };
    Ok(())
}

/// The message of the calling thread's last failure ("" if none). Valid until the next failing
/// call on this thread.
#[unsafe(no_mangle)]
pub extern "C" fn sa_rt_last_error() -> *const c_char {
    LAST_ERROR.with(|l| l.borrow().as_ptr())
}

/// Registers `ops` as the device runtime (copied); NULL returns to automatic resolution.
///
/// # Safety
/// `ops` is null or points to a `sa_runtime_ops` of at least `struct_size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_runtime_register(ops: *const RuntimeOps) -> i32 {
    guard(|| {
        if ops.is_null() {
            return Runtime::register(None);
        }
        // SAFETY: non-null; the caller promises a valid table. Read the size first so a short
        // (older or corrupt) table is rejected before the full struct is read.
        let size = unsafe { std::ptr::addr_of!((*ops).struct_size).read_unaligned() };
        if (size as usize) < std::mem::size_of::<RuntimeOps>() {
            return Err(RtError::new(
                RtErrorKind::Invalid,
                format!("sa_runtime_ops.struct_size {size} is below {}", std::mem::size_of::<RuntimeOps>()),
            ));
        }
        // SAFETY: at least size_of::<RuntimeOps>() bytes are valid.
        Runtime::register(Some(unsafe { &*ops }))
    })
}

/// Resolves the runtime now; `source` receives 1 registered, 2 process scope, 3 loaded library,
/// 4 SA_RUNTIME_LIB.
///
/// # Safety
/// `source` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_runtime_resolve(source: *mut i32) -> i32 {
    guard(|| {
        if source.is_null() {
            return Err(null("source"));
        }
        let rt = Runtime::current()?;
        // SAFETY: checked non-null above.
        unsafe { out(source, "source", rt.source() as i32) }
    })
}

/// `rtGetMaxStreamAndTask(stream_type, …)` through the seam.
///
/// # Safety
/// Both outputs are writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_runtime_task_limits(stream_type: u32, max_streams: *mut u32, max_tasks: *mut u32) -> i32 {
    guard(|| {
        if max_streams.is_null() || max_tasks.is_null() {
            return Err(null("max_streams/max_tasks"));
        }
        let (s, t) = Runtime::current()?.max_stream_and_task(stream_type)?;
        // SAFETY: checked non-null above.
        unsafe {
            out(max_streams, "max_streams", s)?;
            out(max_tasks, "max_tasks", t)
        }
    })
}

/// `FEATURE_TYPE_PERSISTENT_STREAM_UNLIMITED_DEPTH` through the seam: 1 supported, 0 not.
///
/// # Safety
/// `supported` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_runtime_unlimited_depth(supported: *mut i32) -> i32 {
    guard(|| {
        if supported.is_null() {
            return Err(null("supported"));
        }
        let v = Runtime::current()?.unlimited_depth()?;
        // SAFETY: checked non-null above.
        unsafe { out(supported, "supported", v as i32) }
    })
}

macro_rules! boxed_free {
    ($name:ident, $ty:ty) => {
        /// Frees the object (NULL is a no-op), destroying what it created.
        ///
        /// # Safety
        /// `p` is null or came from the matching `_new` and is not used afterwards.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(p: *mut $ty) {
            let _ = catch_unwind(AssertUnwindSafe(|| {
                if !p.is_null() {
                    // SAFETY: from Box::into_raw in `_new`.
                    drop(unsafe { Box::from_raw(p) });
                }
            }));
        }
    };
}

/// `gert::StreamAllocator(priority, flags)`; flags in RT encoding. No device call.
///
/// # Safety
/// `out_alloc` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_allocator_new(
    priority: i32,
    rt_flags: u32,
    out_alloc: *mut *mut StreamAllocator,
) -> i32 {
    guard(|| {
        if out_alloc.is_null() {
            return Err(null("out"));
        }
        let a = Box::new(StreamAllocator::new(priority, rt_flags)?);
        // SAFETY: checked non-null above.
        unsafe { out(out_alloc, "out", Box::into_raw(a)) }
    })
}

/// `AcquireStreams(n)`: the `TypedContinuousVector<rtStream_t>*`, or NULL (see sa_rt_last_error).
///
/// # Safety
/// `p` is null or a live allocator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_allocator_acquire(p: *const StreamAllocator, n: usize) -> *mut c_void {
    guard_ptr(|| {
        // SAFETY: null or live, per the contract.
        let a = unsafe { p.as_ref() }.ok_or_else(|| null("stream allocator"))?;
        a.acquire(n).map(|v| v.cast())
    })
}

boxed_free!(sa_stream_allocator_free, StreamAllocator);

/// `gert::EventAllocator(flag)`; `flag` is an ACL event flag (default ACL_EVENT_SYNC).
///
/// # Safety
/// `out_alloc` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_event_allocator_new(acl_flag: u32, out_alloc: *mut *mut EventAllocator) -> i32 {
    guard(|| {
        if out_alloc.is_null() {
            return Err(null("out"));
        }
        let a = Box::new(EventAllocator::new(acl_flag)?);
        // SAFETY: checked non-null above.
        unsafe { out(out_alloc, "out", Box::into_raw(a)) }
    })
}

/// `AcquireEvents(n)`: the `TypedContinuousVector<aclrtEvent>*`, or NULL.
///
/// # Safety
/// `p` is null or a live allocator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_event_allocator_acquire(p: *const EventAllocator, n: usize) -> *mut c_void {
    guard_ptr(|| {
        // SAFETY: null or live, per the contract.
        let a = unsafe { p.as_ref() }.ok_or_else(|| null("event allocator"))?;
        a.acquire(n).map(|v| v.cast())
    })
}

boxed_free!(sa_event_allocator_free, EventAllocator);

/// `gert::NotifyAllocator()`.
///
/// # Safety
/// `out_alloc` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_notify_allocator_new(out_alloc: *mut *mut NotifyAllocator) -> i32 {
    guard(|| {
        if out_alloc.is_null() {
            return Err(null("out"));
        }
        let a = Box::new(NotifyAllocator::new()?);
        // SAFETY: checked non-null above.
        unsafe { out(out_alloc, "out", Box::into_raw(a)) }
    })
}

/// `AcquireNotifies(device_id, n)`: the `TypedContinuousVector<aclrtNotify>*`, or NULL.
///
/// # Safety
/// `p` is null or a live allocator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_notify_allocator_acquire(
    p: *const NotifyAllocator,
    device_id: i32,
    n: usize,
) -> *mut c_void {
    guard_ptr(|| {
        // SAFETY: null or live, per the contract.
        let a = unsafe { p.as_ref() }.ok_or_else(|| null("notify allocator"))?;
        a.acquire(device_id, n).map(|v| v.cast())
    })
}

boxed_free!(sa_notify_allocator_free, NotifyAllocator);

/// A `ge::ReusableStreamAllocator` pool. `options`: NULL or "reuse=on|off,task_limit=N".
///
/// # Safety
/// `options` is null or NUL-terminated; `out_pool` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_reusable_pool_new(options: *const c_char, out_pool: *mut *mut ReusableStreamPool) -> i32 {
    guard(|| {
        if out_pool.is_null() {
            return Err(null("out"));
        }
        let opts = if options.is_null() {
            PoolOptions::default()
        } else {
            // SAFETY: non-null NUL-terminated string, per the contract.
            let text = unsafe { CStr::from_ptr(options) }
                .to_str()
                .map_err(|_| RtError::new(RtErrorKind::Invalid, "pool options are not UTF-8"))?;
            PoolOptions::parse(text)?
        };
        let p = Box::new(ReusableStreamPool::new(opts));
        // SAFETY: checked non-null above.
        unsafe { out(out_pool, "out", Box::into_raw(p)) }
    })
}

/// `GetOrCreateRtStream(stream, rt_model_id, priority, stream_flag, task_num)`.
///
/// # Safety
/// `pool` is null or live; `stream` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_reusable_pool_get_or_create(
    pool: *const ReusableStreamPool,
    stream: *mut *mut c_void,
    rt_model_id: u32,
    priority: i32,
    rt_flags: u32,
    task_num: u32,
) -> i32 {
    guard(|| {
        // SAFETY: null or live, per the contract.
        let p = unsafe { pool.as_ref() }.ok_or_else(|| null("pool"))?;
        if stream.is_null() {
            return Err(null("stream"));
        }
        let (s, _) = p.get_or_create(rt_model_id, priority, rt_flags, task_num)?;
        // SAFETY: checked non-null above.
        unsafe { out(stream, "stream", s) }
    })
}

/// `DestroyStream(stream, is_force_destroy)`. `*stream` is left unchanged, as in GE.
///
/// # Safety
/// `pool` is null or live; `stream` is null or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_reusable_pool_destroy_stream(
    pool: *const ReusableStreamPool,
    stream: *mut *mut c_void,
    force: bool,
) -> i32 {
    guard(|| {
        // SAFETY: null or live, per the contract.
        let p = unsafe { pool.as_ref() }.ok_or_else(|| null("pool"))?;
        if stream.is_null() {
            return Err(null("stream"));
        }
        // SAFETY: checked non-null above.
        p.destroy(unsafe { stream.read() }, force)
    })
}

/// Pool counters.
///
/// # Safety
/// `pool` is null or live; `stats` is null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_reusable_pool_stats(pool: *const ReusableStreamPool, stats: *mut PoolStats) -> i32 {
    guard(|| {
        // SAFETY: null or live, per the contract.
        let p = unsafe { pool.as_ref() }.ok_or_else(|| null("pool"))?;
        // SAFETY: `out` checks null.
        unsafe { out(stats, "stats", p.stats()) }
    })
}

boxed_free!(sa_reusable_pool_free, ReusableStreamPool);

/// The four `ModelDesc` counts from model totals; `sub` (static sub-model usage) may be NULL.
///
/// # Safety
/// `sub` is null or readable; `counts` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_rt2_resource_counts(
    total_streams: usize,
    attached_streams: usize,
    events: usize,
    notifies: usize,
    sub: *const StaticCounts,
    counts: *mut ResourceCounts,
) -> i32 {
    guard(|| {
        if counts.is_null() {
            return Err(null("counts"));
        }
        // SAFETY: null or readable, per the contract.
        let sub = unsafe { sub.as_ref() }.copied().unwrap_or_default();
        let c = ResourceCounts::from_totals(total_streams, attached_streams, events, notifies, sub)?;
        // SAFETY: checked non-null above.
        unsafe { out(counts, "counts", c) }
    })
}

/// `OccupyStreamResource`: the external trio if all three are set, the built-in trio if none is
/// (the built-ins are required), SA_RT_INVALID for any other mix. On success writes the three
/// vectors, with `main_stream` in stream slot 0.
///
/// # Safety
/// Every non-null pointer is live/readable/writable as its type says.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_rt2_occupy(
    counts: *const ResourceCounts,
    main_stream: *mut c_void,
    device_id: i32,
    ext_stream: *const StreamAllocator,
    ext_event: *const EventAllocator,
    ext_notify: *const NotifyAllocator,
    builtin_stream: *const StreamAllocator,
    builtin_event: *const EventAllocator,
    builtin_notify: *const NotifyAllocator,
    out_streams: *mut *mut c_void,
    out_events: *mut *mut c_void,
    out_notifies: *mut *mut c_void,
) -> i32 {
    guard(|| {
        // SAFETY: null or valid, per the contract (all of the derefs below).
        let counts = unsafe { counts.as_ref() }.ok_or_else(|| null("counts"))?;
        if out_streams.is_null() || out_events.is_null() || out_notifies.is_null() {
            return Err(null("out_streams/out_events/out_notifies"));
        }
        let ext = unsafe {
            ExternalAllocators { stream: ext_stream.as_ref(), event: ext_event.as_ref(), notify: ext_notify.as_ref() }
        };
        let builtin = unsafe {
            (
                builtin_stream.as_ref().ok_or_else(|| null("builtin_stream"))?,
                builtin_event.as_ref().ok_or_else(|| null("builtin_event"))?,
                builtin_notify.as_ref().ok_or_else(|| null("builtin_notify"))?,
            )
        };
        let o = rt2::occupy(counts, main_stream, device_id, &ext, builtin)?;
        // SAFETY: checked non-null above.
        unsafe {
            out(out_streams, "out_streams", o.streams.cast())?;
            out(out_events, "out_events", o.events.cast())?;
            out(out_notifies, "out_notifies", o.notifies.cast())
        }
    })
}
