//! C ABI of the user-level streams and events (the seed's `ms.hal.Stream` / `Event`):
//! [`sa_stream_ctx`], a context that creates each keyed stream once and reuses it, adopts
//! streams made elsewhere, and records, waits, queries, synchronises and times events. Its
//! records and waits also tell the memory pools built on it (`sa_mem_pool`) when a wait already
//! orders another stream's use of a block.
//!
//! Conventions of the whole C ABI (see `capi`): every function runs inside [`ffi_boundary`],
//! returns an `sa_status`, writes outputs only on success, and leaves the failure's message and
//! code on the calling thread. A context is thread-safe; freeing it while another thread uses it
//! is undefined behaviour.

#![allow(unsafe_code)]

use std::ffi::c_void;
use std::sync::Arc;

use super::{ApiResult, ffi_boundary, free_box, handle, out_ptr, write_out};
use crate::runtime::StreamContext;

/// User-level streams and events over the device runtime. Thread-safe.
pub struct sa_stream_ctx(pub(crate) Arc<StreamContext>);

/// Creates a context in `*out` over the device runtime in use now (registered with
/// `sa_runtime_register`, else found in the process): `SA_NO_RUNTIME` without one. No device
/// call.
/// Ownership: the caller frees `*out` with `sa_stream_ctx_free`.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_ctx_new(out: *mut *mut sa_stream_ctx) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        let out = out_ptr(out, "out")?;
        let ctx = Box::new(sa_stream_ctx(StreamContext::new()?));
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(out, Box::into_raw(ctx)) };
        Ok(())
    })
}

/// Frees the caller's reference to a context. Its streams and events are destroyed once no
/// memory pool made from it is left either (a pool keeps them alive). Adopted streams are never
/// destroyed. NULL is a no-op. Must not race with other calls on `ctx`.
///
/// Ownership: takes ownership of the caller's reference `ctx` and drops it (NULL is a no-op);
/// memory pools made from it keep its streams and events alive.
///
/// # Safety
/// `ctx` is NULL or came from `sa_stream_ctx_new` and is not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_ctx_free(ctx: *mut sa_stream_ctx) {
    ffi_boundary(|| unsafe { free_box(ctx) })
}

/// Writes the context's stream for `key` to `*stream`: created with `priority` and `rt_flags`
/// (RT encoding) on the first call, the same stream on every later call, so a function or layer
/// asks for its stream each time without creating one per call. Asking again with another
/// priority or flags is `SA_INVALID_STATE`. The stream belongs to the context (do not destroy
/// it). Thread-safe.
///
/// Ownership: borrows `ctx`; the stream in `*stream` is owned by the context: never destroy it.
///
/// # Safety
/// `ctx` is NULL or live; `stream` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_ctx_stream(
    ctx: *const sa_stream_ctx,
    key: u32,
    priority: i32,
    rt_flags: u32,
    stream: *mut *mut c_void,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        let c = unsafe { handle(ctx, "ctx") }?;
        let stream = out_ptr(stream, "stream")?;
        let s = c.0.stream(key, priority, rt_flags)?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(stream, s) };
        Ok(())
    })
}

/// Makes `stream`, created elsewhere (a GE allocator's, the caller's main stream), usable with
/// this context and its memory pools. The caller keeps ownership: the context never destroys
/// it, and the stream must outlive the context and its pools. Adopting twice is a no-op.
/// Thread-safe.
///
/// Ownership: borrows `ctx`; `stream` stays the caller's: the context never destroys it, and it
/// must outlive the context and its pools.
///
/// # Safety
/// `ctx` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_ctx_adopt_stream(
    ctx: *const sa_stream_ctx,
    stream: *mut c_void,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        Ok(unsafe { handle(ctx, "ctx") }?.0.adopt(stream)?)
    })
}

/// `waiter.wait_stream(other)`: work queued on `waiter` from now on runs after everything
/// already queued on `other` (an event of the context recorded on `other` and waited on by
/// `waiter`). Both streams must be the context's (`SA_UNKNOWN_HANDLE` otherwise). Thread-safe.
///
/// Ownership: borrows `ctx`, `waiter` and `other`; nothing changes hands.
///
/// # Safety
/// `ctx` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_ctx_wait_stream(
    ctx: *const sa_stream_ctx,
    waiter: *mut c_void,
    other: *mut c_void,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        Ok(unsafe { handle(ctx, "ctx") }?.0.wait_stream(waiter, other)?)
    })
}

/// Blocks until everything queued on `stream` so far has run. Thread-safe.
///
/// Ownership: borrows `ctx` and `stream`; nothing changes hands.
///
/// # Safety
/// `ctx` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_ctx_synchronize_stream(
    ctx: *const sa_stream_ctx,
    stream: *mut c_void,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        Ok(unsafe { handle(ctx, "ctx") }?.0.synchronize_stream(stream)?)
    })
}

/// Creates an event in `*event` with ACL flags `acl_flags` (0: `ACL_EVENT_SYNC |
/// ACL_EVENT_TIME_LINE`, so it can be synchronised on and timed). The event belongs to the
/// context: destroy it with `sa_stream_ctx_event_destroy`, or it goes with the context.
/// Thread-safe.
///
/// Ownership: borrows `ctx`; the event in `*event` is owned by the context: destroy it with
/// `sa_stream_ctx_event_destroy`, or it goes with the context.
///
/// # Safety
/// `ctx` is NULL or live; `event` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_ctx_event_new(
    ctx: *const sa_stream_ctx,
    acl_flags: u32,
    event: *mut *mut c_void,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        let c = unsafe { handle(ctx, "ctx") }?;
        let event = out_ptr(event, "event")?;
        let e = c.0.event_new(acl_flags)?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(event, e) };
        Ok(())
    })
}

/// Destroys an event made by `sa_stream_ctx_event_new`; any other handle is
/// `SA_UNKNOWN_HANDLE`. On a device error the event stays valid. Thread-safe.
///
/// Ownership: borrows `ctx`; destroys `event`, which the caller must not use afterwards.
///
/// # Safety
/// `ctx` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_ctx_event_destroy(
    ctx: *const sa_stream_ctx,
    event: *mut c_void,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        Ok(unsafe { handle(ctx, "ctx") }?.0.event_destroy(event)?)
    })
}

/// Records `event` on `stream` (`aclrtRecordEvent`). Thread-safe.
///
/// Ownership: borrows `ctx`, `event` and `stream`; nothing changes hands.
///
/// # Safety
/// `ctx` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_ctx_event_record(
    ctx: *const sa_stream_ctx,
    event: *mut c_void,
    stream: *mut c_void,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        Ok(unsafe { handle(ctx, "ctx") }?.0.record(event, stream)?)
    })
}

/// Makes `stream` wait for `event`'s last record (`aclrtStreamWaitEvent`); waiting on an event
/// never recorded does nothing, as in the runtime. Thread-safe.
///
/// Ownership: borrows `ctx`, `event` and `stream`; nothing changes hands.
///
/// # Safety
/// `ctx` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_ctx_event_wait(
    ctx: *const sa_stream_ctx,
    stream: *mut c_void,
    event: *mut c_void,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        Ok(unsafe { handle(ctx, "ctx") }?.0.wait(stream, event)?)
    })
}

/// Writes 1 to `*complete` when the work before `event`'s last record has completed (or it was
/// never recorded), 0 when not yet (`aclrtQueryEventStatus`). Thread-safe.
///
/// Ownership: borrows `ctx` and `event`; nothing is allocated, `*complete` is written.
///
/// # Safety
/// `ctx` is NULL or live; `complete` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_ctx_event_query(
    ctx: *const sa_stream_ctx,
    event: *mut c_void,
    complete: *mut i32,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        let c = unsafe { handle(ctx, "ctx") }?;
        let complete = out_ptr(complete, "complete")?;
        let done = c.0.query(event)?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(complete, i32::from(done)) };
        Ok(())
    })
}

/// Blocks until `event` has completed (`aclrtSynchronizeEvent`). Thread-safe.
///
/// Ownership: borrows `ctx` and `event`; nothing changes hands.
///
/// # Safety
/// `ctx` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_ctx_event_synchronize(
    ctx: *const sa_stream_ctx,
    event: *mut c_void,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        Ok(unsafe { handle(ctx, "ctx") }?.0.synchronize(event)?)
    })
}

/// Writes the milliseconds between the completion of `start`'s and `end`'s last records to
/// `*ms` (`aclrtEventElapsedTime`; both recorded and completed). Thread-safe.
///
/// Ownership: borrows `ctx`, `start` and `end`; nothing is allocated, `*ms` is written.
///
/// # Safety
/// `ctx` is NULL or live; `ms` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_ctx_event_elapsed_time(
    ctx: *const sa_stream_ctx,
    start: *mut c_void,
    end: *mut c_void,
    ms: *mut f32,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        let c = unsafe { handle(ctx, "ctx") }?;
        let ms = out_ptr(ms, "ms")?;
        let v = c.0.elapsed_ms(start, end)?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(ms, v) };
        Ok(())
    })
}
