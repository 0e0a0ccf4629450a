//! C ABI of MindSpore's stream-ordered device memory pool: [`sa_mem_pool`], built on an
//! [`sa_stream_ctx`]. A block is reused only on the stream it was allocated on; a block other
//! streams read (`sa_mem_pool_record_use`, or the reader list of `sa_mem_pool_free_after`, fed
//! from the compile plan's reader streams of a tensor) waits after its free for events recorded
//! on those streams, and comes back when they complete or when a wait through the context
//! already orders them (the back-stream rule: no device call). On allocation failure the pool
//! synchronises its pending events, releases their blocks and retries once
//! (`SA_OUT_OF_MEMORY` after that).
//!
//! Conventions of the whole C ABI (see `capi`). A pool is thread-safe; freeing it while
//! another thread uses it is undefined behaviour.

#![allow(unsafe_code)]

use std::ffi::c_void;

use super::stream_ops::sa_stream_ctx;
use super::{ApiError, ApiResult, SA_NULL_POINTER, ffi_boundary, free_box, handle, out_ptr, write_out};
use crate::runtime::{MemPool, MemPoolStats};

/// A stream-ordered device memory pool. Thread-safe.
pub struct sa_mem_pool(MemPool);

/// Counters and byte totals of an `sa_mem_pool` (a consistent snapshot).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct sa_mem_stats {
    /// Bytes held by callers: allocated and not yet freed.
    pub in_use_bytes: u64,
    /// Bytes freed and waiting for other streams' events.
    pub pending_bytes: u64,
    /// Bytes in the per-stream free lists.
    pub cached_bytes: u64,
    /// Bytes the pool holds from the device: in use + pending + cached.
    pub device_bytes: u64,
    /// Highest `device_bytes` so far.
    pub peak_device_bytes: u64,
    /// Allocations served.
    pub allocs: u64,
    /// Frees accepted.
    pub frees: u64,
    /// Allocations served from a free list.
    pub reuses: u64,
    /// `aclrtMalloc` calls that succeeded.
    pub device_mallocs: u64,
    /// `aclrtFree` calls that succeeded.
    pub device_frees: u64,
    /// Events recorded to guard blocks used on other streams.
    pub guards: u64,
    /// Guards found done without a device call (a wait ordered them, or a completed record
    /// covered them).
    pub released_without_query: u64,
    /// Guards found done by `aclrtQueryEventStatus`.
    pub released_by_query: u64,
    /// Guards synchronised (allocation failure, `sa_mem_pool_empty_cache`).
    pub released_by_sync: u64,
    /// Device queries made.
    pub queries: u64,
    /// Allocations that failed once and went through synchronise-release-retry.
    pub retries: u64,
}

impl From<MemPoolStats> for sa_mem_stats {
    fn from(s: MemPoolStats) -> Self {
        sa_mem_stats {
            in_use_bytes: s.in_use_bytes,
            pending_bytes: s.pending_bytes,
            cached_bytes: s.cached_bytes,
            device_bytes: s.device_bytes,
            peak_device_bytes: s.peak_device_bytes,
            allocs: s.allocs,
            frees: s.frees,
            reuses: s.reuses,
            device_mallocs: s.device_mallocs,
            device_frees: s.device_frees,
            guards: s.guards,
            released_without_query: s.released_without_query,
            released_by_query: s.released_by_query,
            released_by_sync: s.released_by_sync,
            queries: s.queries,
            retries: s.retries,
        }
    }
}

/// Creates an empty pool over `ctx`'s runtime and streams in `*out`. No device call. The pool
/// keeps the context's streams and events alive, so `ctx` may be freed first.
/// Ownership: the caller frees `*out` with `sa_mem_pool_free`.
///
/// # Safety
/// `ctx` is NULL or live; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_mem_pool_new(ctx: *const sa_stream_ctx, out: *mut *mut sa_mem_pool) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        let c = unsafe { handle(ctx, "ctx") }?;
        let out = out_ptr(out, "out")?;
        let p = Box::new(sa_mem_pool(MemPool::new(c.0.clone())));
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(out, Box::into_raw(p)) };
        Ok(())
    })
}

/// Frees a pool and gives all its device memory back: pending events and the streams that own
/// or read blocks are synchronised, then every block is returned with `aclrtFree`, blocks still
/// allocated included (their pointers are invalid afterwards). NULL is a no-op. Must not race
/// with other calls on `pool`.
///
/// Ownership: takes ownership of `pool` and frees it with all its device memory, blocks still
/// allocated included (NULL is a no-op).
///
/// # Safety
/// `pool` is NULL or came from `sa_mem_pool_new` and is not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_mem_pool_free(pool: *mut sa_mem_pool) {
    ffi_boundary(|| unsafe { free_box(pool) })
}

/// Writes `size` bytes (rounded up to 512) of device memory for use on `stream` to `*ptr`.
/// `stream` must be a stream of the pool's context (`SA_UNKNOWN_HANDLE` otherwise); `size` 0 is
/// `SA_INVALID_ARGUMENT`. When the device has no memory left the pool synchronises its pending
/// events, releases those blocks, returns its cached blocks and retries once;
/// `SA_OUT_OF_MEMORY` then names the size, the stream and what was tried. The memory belongs
/// to the pool: give it back with `sa_mem_pool_free_ptr` or `sa_mem_pool_free_after`.
/// Thread-safe.
///
/// Ownership: borrows `pool` and `stream`; the device memory in `*ptr` belongs to the pool: give it
/// back with `sa_mem_pool_free_ptr` or `sa_mem_pool_free_after` (or it goes with the pool).
///
/// # Safety
/// `pool` is NULL or live; `ptr` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_mem_pool_alloc(
    pool: *const sa_mem_pool,
    size: usize,
    stream: *mut c_void,
    ptr: *mut *mut c_void,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        let p = unsafe { handle(pool, "pool") }?;
        let ptr = out_ptr(ptr, "ptr")?;
        let v = p.0.alloc(size, stream)?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(ptr, v) };
        Ok(())
    })
}

/// Frees `ptr` once the work queued on `stream` so far is done (normally the stream it was
/// allocated on). Every other stream that used it (`sa_mem_pool_record_use`, or `stream` when
/// it is not the owner) gets an event now, and the block is reused on its owner stream only
/// after those events. An unknown pointer is `SA_UNKNOWN_HANDLE`, a second free
/// `SA_INVALID_STATE`; on a device error the block stays allocated and the free may be retried.
/// Thread-safe.
///
/// Ownership: borrows `pool` and `stream`; gives `ptr` back to the pool, so the caller must not use
/// it afterwards.
///
/// # Safety
/// `pool` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_mem_pool_free_ptr(
    pool: *const sa_mem_pool,
    ptr: *mut c_void,
    stream: *mut c_void,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        Ok(unsafe { handle(pool, "pool") }?.0.free(ptr, stream)?)
    })
}

/// Notes that `stream` uses the allocated block `ptr` (the seed's `record_stream`): its free
/// will wait for the work queued on `stream` until then. Using it on its own stream is a no-op.
/// Thread-safe.
///
/// Ownership: borrows `pool`, `ptr` and `stream`; nothing changes hands.
///
/// # Safety
/// `pool` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_mem_pool_record_use(
    pool: *const sa_mem_pool,
    ptr: *mut c_void,
    stream: *mut c_void,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        Ok(unsafe { handle(pool, "pool") }?.0.record_use(ptr, stream)?)
    })
}

/// Frees `ptr` after its owner stream's queued work and after the work queued so far on each of
/// the `n` streams in `readers`: the automatic lifetime extension, fed from the compile plan's
/// reader streams of the tensor (map each logical stream id to its device stream). Equivalent to
/// `sa_mem_pool_record_use` on each reader then `sa_mem_pool_free_ptr` on the owner, in one step:
/// every stream is checked first, and a failure changes nothing. `readers` may be NULL when `n`
/// is 0; it is only read during the call. Thread-safe.
///
/// Ownership: borrows `pool` and reads `readers` only during the call; gives `ptr` back to the
/// pool, so the caller must not use it afterwards.
///
/// # Safety
/// `pool` is NULL or live; `readers` is NULL or points to `n` readable stream handles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_mem_pool_free_after(
    pool: *const sa_mem_pool,
    ptr: *mut c_void,
    readers: *const *mut c_void,
    n: usize,
) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        let p = unsafe { handle(pool, "pool") }?;
        let readers: &[*mut c_void] = if n == 0 {
            &[]
        } else if readers.is_null() {
            return Err(ApiError::new(SA_NULL_POINTER, format!("argument 'readers' is NULL with n = {n}")));
        } else {
            // SAFETY: non-NULL with `n` readable elements, by the contract.
            unsafe { std::slice::from_raw_parts(readers, n) }
        };
        Ok(p.0.free_after(ptr, readers)?)
    })
}

/// Waits for every pending block's events, then returns every cached block to the device
/// (each owner stream synchronised first). Allocated blocks are kept. On a device error what
/// is left stays in the pool. Thread-safe.
///
/// Ownership: borrows `pool`; only cached blocks, which the caller does not hold, go back to the
/// device.
///
/// # Safety
/// `pool` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_mem_pool_empty_cache(pool: *const sa_mem_pool) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        Ok(unsafe { handle(pool, "pool") }?.0.empty_cache()?)
    })
}

/// Writes the pool's counters to `*stats`. Thread-safe (a consistent snapshot).
///
/// Ownership: borrows `pool`; nothing is allocated, `*stats` is written.
///
/// # Safety
/// `pool` is NULL or live; `stats` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_mem_pool_stats(pool: *const sa_mem_pool, stats: *mut sa_mem_stats) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        let p = unsafe { handle(pool, "pool") }?;
        let stats = out_ptr(stats, "stats")?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(stats, p.0.stats().into()) };
        Ok(())
    })
}
