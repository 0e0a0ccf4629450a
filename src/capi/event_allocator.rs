//! `sa_event_allocator`: GE's RT2 `gert::EventAllocator`, a growing vector of device events
//! made through the device-runtime seam. Thread-safe.

use std::ffi::c_void;

use super::{acquire_vector, ffi_boundary, free_box, new_boxed, sa_status};
use crate::runtime::EventAllocator;

/// An RT2 event allocator (`gert::EventAllocator`). Thread-safe.
pub struct sa_event_allocator(pub(crate) EventAllocator);

/// Creates a `gert::EventAllocator(acl_flag)` (ACL event flag; GE's default is
/// `ACL_EVENT_SYNC` = 1) in `*out`. No device call.
/// Ownership: the caller frees `*out` with `sa_event_allocator_free`.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_event_allocator_new(acl_flag: u32, out: *mut *mut sa_event_allocator) -> sa_status {
    ffi_boundary(|| unsafe { new_boxed(out, || Ok(sa_event_allocator(EventAllocator::new(acl_flag)?))) })
}

/// `AcquireEvents(n)`: the allocator's `TypedContinuousVector<aclrtEvent>`, grown to at least
/// `n`. NULL on failure (`n > 4096`: `SA_RUNTIME_LIMIT`). Lifetime and thread safety as
/// `sa_stream_allocator_acquire`.
///
/// Ownership: borrows `a`; the returned vector and its events are owned by `a` and valid until
/// `sa_event_allocator_free`.
///
/// # Safety
/// `a` is NULL or a live allocator.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_event_allocator_acquire(a: *const sa_event_allocator, n: usize) -> *mut c_void {
    ffi_boundary(|| unsafe { acquire_vector(a, |a| a.0.acquire(n)) })
}

/// Frees an event allocator and destroys every event it created. NULL is a no-op. Must not
/// race with other calls on `a`.
///
/// Ownership: takes ownership of `a` and frees it with the events it created (NULL is a no-op).
///
/// # Safety
/// `a` is NULL or came from `sa_event_allocator_new` and is not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_event_allocator_free(a: *mut sa_event_allocator) {
    ffi_boundary(|| unsafe { free_box(a) })
}
