//! `sa_stream_allocator`: GE's RT2 `gert::StreamAllocator`, a growing vector of device streams
//! in GE's `ContinuousVector` layout, made through the device-runtime seam (`sa_runtime_*`).
//! Thread-safe.

use std::ffi::c_void;

use super::{acquire_vector, ffi_boundary, free_box, new_boxed, sa_status};
use crate::runtime::StreamAllocator;

/// An RT2 stream allocator (`gert::StreamAllocator`). Thread-safe.
pub struct sa_stream_allocator(pub(crate) StreamAllocator);

/// Creates a `gert::StreamAllocator(priority, rt_flags)` (RT flag encoding) in `*out`. No device
/// call happens here: the runtime is resolved on the first growth.
/// Ownership: the caller frees `*out` with `sa_stream_allocator_free`.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_allocator_new(
    priority: i32,
    rt_flags: u32,
    out: *mut *mut sa_stream_allocator,
) -> sa_status {
    ffi_boundary(|| unsafe { new_boxed(out, || Ok(sa_stream_allocator(StreamAllocator::new(priority, rt_flags)?))) })
}

/// `AcquireStreams(n)`: the allocator's `TypedContinuousVector<rtStream_t>` (GE's
/// `ContinuousVector` layout: capacity at 0, size at 8, elements from offset 56), grown to at
/// least `n` and never shrunk; slot 0 is the caller's. NULL on failure: `n >= 2024`
/// (`SA_RUNTIME_LIMIT`, before any device call), no runtime, or a device error (the streams
/// already created are kept). Lifetime: the vector belongs to the allocator and stays valid,
/// at the same address, until the allocator is freed. Thread-safe.
///
/// Ownership: borrows `a`; the returned vector and the streams it created are owned by `a` and
/// valid until `sa_stream_allocator_free`; slot 0 stays the caller's.
///
/// # Safety
/// `a` is NULL or a live allocator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_allocator_acquire(a: *const sa_stream_allocator, n: usize) -> *mut c_void {
    ffi_boundary(|| unsafe { acquire_vector(a, |a| a.0.acquire(n)) })
}

/// Frees a stream allocator and destroys the streams it created (slots 1..size-1; slot 0 is
/// the caller's). NULL is a no-op. Must not race with other calls on `a`.
///
/// Ownership: takes ownership of `a` and frees it with the streams it created (NULL is a no-op);
/// slot 0 stays the caller's.
///
/// # Safety
/// `a` is NULL or came from `sa_stream_allocator_new` and is not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_stream_allocator_free(a: *mut sa_stream_allocator) {
    ffi_boundary(|| unsafe { free_box(a) })
}
