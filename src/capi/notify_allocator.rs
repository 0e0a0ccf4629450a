//! `sa_notify_allocator`: GE's RT2 `gert::NotifyAllocator`, a growing vector of device
//! notifies made through the device-runtime seam. Thread-safe.

use std::ffi::c_void;

use super::{acquire_vector, ffi_boundary, free_box, new_boxed, sa_status};
use crate::runtime::NotifyAllocator;

/// An RT2 notify allocator (`gert::NotifyAllocator`). Thread-safe.
pub struct sa_notify_allocator(pub(crate) NotifyAllocator);

/// Creates a `gert::NotifyAllocator` in `*out`. No device call.
/// Ownership: the caller frees `*out` with `sa_notify_allocator_free`.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_notify_allocator_new(out: *mut *mut sa_notify_allocator) -> sa_status {
    ffi_boundary(|| unsafe { new_boxed(out, || Ok(sa_notify_allocator(NotifyAllocator::new()?))) })
}

/// `AcquireNotifies(device_id, n)`: the allocator's `TypedContinuousVector<aclrtNotify>`, grown
/// to at least `n`. NULL on failure (`n >= 1024`: `SA_RUNTIME_LIMIT`). Lifetime and thread
/// safety as `sa_stream_allocator_acquire`.
///
/// Ownership: borrows `a`; the returned vector and its notifies are owned by `a` and valid until
/// `sa_notify_allocator_free`.
///
/// # Safety
/// `a` is NULL or a live allocator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_notify_allocator_acquire(
    a: *const sa_notify_allocator,
    device_id: i32,
    n: usize,
) -> *mut c_void {
    ffi_boundary(|| unsafe { acquire_vector(a, |a| a.0.acquire(device_id, n)) })
}

/// Frees a notify allocator and destroys every notify it created. NULL is a no-op. Must not
/// race with other calls on `a`.
///
/// Ownership: takes ownership of `a` and frees it with the notifies it created (NULL is a no-op).
///
/// # Safety
/// `a` is NULL or came from `sa_notify_allocator_new` and is not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_notify_allocator_free(a: *mut sa_notify_allocator) {
    ffi_boundary(|| unsafe { free_box(a) })
}
