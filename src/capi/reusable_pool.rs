//! `sa_reusable_pool`: GE's V1 `ge::ReusableStreamAllocator`, device streams shared between
//! models when reuse is on. Thread-safe.

use std::ffi::{c_char, c_void};

use super::{
    ApiError, ApiResult, SA_NULL_POINTER, ffi_boundary, free_box, handle, new_boxed, opt_str, out_ptr, sa_status,
    write_out,
};
use crate::runtime::pool::{PoolOptions, PoolStats, ReusableStreamPool};

/// A V1 reusable stream pool (`ge::ReusableStreamAllocator`). Thread-safe.
pub struct sa_reusable_pool(ReusableStreamPool);

/// Counters of an `sa_reusable_pool`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct sa_pool_stats {
    /// Device streams alive (created and not yet destroyed).
    pub live: u64,
    /// Device streams created.
    pub created: u64,
    /// Device streams destroyed.
    pub destroyed: u64,
    /// Grants served by an existing stream.
    pub reused: u64,
    /// Outstanding grants (sum of reference counts).
    pub grants: u64,
}

impl From<PoolStats> for sa_pool_stats {
    fn from(s: PoolStats) -> Self {
        sa_pool_stats { live: s.live, created: s.created, destroyed: s.destroyed, reused: s.reused, grants: s.grants }
    }
}

/// Creates a V1 reusable stream pool in `*out`. `options`: NULL or `"reuse=on|off,task_limit=N"`
/// (default `reuse=off`: every request creates a stream, as GE does); a malformed string fails
/// with `SA_INVALID_ARGUMENT` naming the item. `options` is only read during the call.
/// Ownership: the caller frees `*out` with `sa_reusable_pool_free`.
///
/// # Safety
/// `options` is NULL or NUL-terminated; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_reusable_pool_new(options: *const c_char, out: *mut *mut sa_reusable_pool) -> sa_status {
    ffi_boundary(|| unsafe {
        new_boxed(out, || {
            // SAFETY: NULL or NUL-terminated, by the contract.
            let opts = match opt_str(options, "options")? {
                None => PoolOptions::default(),
                Some(text) => PoolOptions::parse(text)?,
            };
            Ok(sa_reusable_pool(ReusableStreamPool::new(opts)))
        })
    })
}

/// `GetOrCreateRtStream(stream, rt_model_id, priority, stream_flag, task_num)`: writes a device
/// stream for model `rt_model_id` to `*stream`, shared with other models when reuse is on and
/// the stream's task budget allows. The stream belongs to the pool; give it back with
/// `sa_reusable_pool_destroy_stream`. Thread-safe (the device call runs under the pool's lock,
/// as in GE).
///
/// Ownership: borrows `pool`; the stream in `*stream` is owned by the pool: give it back with
/// `sa_reusable_pool_destroy_stream`, never destroy it directly.
///
/// # Safety
/// `pool` is NULL or live; `stream` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_reusable_pool_get_or_create(
    pool: *const sa_reusable_pool,
    stream: *mut *mut c_void,
    rt_model_id: u32,
    priority: i32,
    rt_flags: u32,
    task_num: u32,
) -> sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        let p = unsafe { handle(pool, "pool") }?;
        let stream = out_ptr(stream, "stream")?;
        let (s, _) = p.0.get_or_create(rt_model_id, priority, rt_flags, task_num)?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(stream, s) };
        Ok(())
    })
}

/// `DestroyStream(stream, is_force_destroy)`: drops one grant of `*stream`; the last one
/// destroys the device stream (forced if `force`). Destroying an already destroyed stream
/// succeeds; a stream this pool never created is `SA_UNKNOWN_HANDLE`; on a device error the
/// grant is kept. `*stream` is left unchanged, as in GE. Thread-safe.
///
/// Ownership: borrows `pool`; gives back one grant of `*stream` (the pool destroys the stream with
/// the last one); `*stream` is not written.
///
/// # Safety
/// `pool` is NULL or live; `stream` is NULL or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_reusable_pool_destroy_stream(
    pool: *const sa_reusable_pool,
    stream: *mut *mut c_void,
    force: bool,
) -> sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        let p = unsafe { handle(pool, "pool") }?;
        if stream.is_null() {
            return Err(ApiError::new(SA_NULL_POINTER, "argument 'stream' is NULL"));
        }
        // SAFETY: non-NULL and readable by the contract.
        Ok(p.0.destroy(unsafe { stream.read() }, force)?)
    })
}

/// Writes the pool's counters to `*stats`. Thread-safe (a consistent snapshot).
///
/// Ownership: borrows `pool`; nothing is allocated, `*stats` is written.
///
/// # Safety
/// `pool` is NULL or live; `stats` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_reusable_pool_stats(pool: *const sa_reusable_pool, stats: *mut sa_pool_stats) -> sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY: NULL or live, by the contract.
        let p = unsafe { handle(pool, "pool") }?;
        let stats = out_ptr(stats, "stats")?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(stats, p.0.stats().into()) };
        Ok(())
    })
}

/// Frees a pool. It destroys no stream (GE's pool does not either): streams still granted stay
/// with the device. NULL is a no-op. Must not race with other calls on `pool`.
///
/// Ownership: takes ownership of `pool` and frees it (NULL is a no-op); streams still granted are
/// not destroyed and stay with the device.
///
/// # Safety
/// `pool` is NULL or came from `sa_reusable_pool_new` and is not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_reusable_pool_free(pool: *mut sa_reusable_pool) {
    ffi_boundary(|| unsafe { free_box(pool) })
}
