//! The C ABI (`include/stream_alloc.h`, generated from this module by cbindgen).
//!
//! Two opaque handles on the compile side: [`sa_graph`] (a model being described, then built)
//! and [`sa_allocation`] (the result of the pipeline on a built model); the runtime half
//! ([`runtime`]) adds the RT2 allocators, the V1 stream pool and the device-runtime seam, the
//! user-level streams and events ([`stream_ops`]), the stream-ordered memory pool
//! ([`mem_pool`]) and the frameworks' pluggable-allocator entry points over it ([`pluggable`]).
//! Every function returns an [`sa_status`], a value that cannot fail, or a pointer that is NULL
//! on failure; it checks every pointer it is given, writes its outputs only on success, and runs
//! inside one panic boundary, [`ffi_boundary`], so no Rust panic ever unwinds into C. The
//! failure's message and code are kept per thread (`sa_last_error_message`,
//! `sa_last_error_code`) for every function, and also on the compile-side handle the call was
//! made with (`sa_graph_last_error`, `sa_allocation_last_error`).

#![allow(unsafe_code)]
#![allow(non_camel_case_types)]

pub mod allocation;
pub mod event_allocator;
pub mod graph;
mod handle;
pub mod mem_pool;
pub mod notify_allocator;
pub mod pluggable;
pub mod reusable_pool;
pub mod rt2;
pub mod runtime;
/// GE's own C++ symbols, declared by GE's headers, not by stream_alloc.h.
/// cbindgen:ignore
pub mod runtime_ge;
pub mod session;
pub mod status;
pub mod stream_allocator;
pub mod stream_ops;
pub mod summary;

use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

pub use allocation::sa_allocation;
pub use graph::sa_graph;
pub use status::*;

use crate::error::Error;

/// A failed call: its status and a message naming the argument, node or value at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ApiError {
    pub status: sa_status,
    pub message: String,
}

impl ApiError {
    pub fn new(status: sa_status, message: impl Into<String>) -> Self {
        ApiError { status, message: message.into() }
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        ApiError { status: status_of(e.kind), message: e.message }
    }
}

impl From<crate::runtime::RtError> for ApiError {
    fn from(e: crate::runtime::RtError) -> Self {
        ApiError { status: status_of_runtime(e.kind), message: e.message }
    }
}

pub(crate) type ApiResult<T = ()> = Result<T, ApiError>;

/// The most recent failure, as C reads it.
#[derive(Debug)]
pub(crate) struct LastError {
    pub status: sa_status,
    pub message: CString,
}

impl Default for LastError {
    fn default() -> Self {
        LastError { status: SA_OK, message: CString::default() }
    }
}

impl LastError {
    pub fn set(&mut self, e: &ApiError) {
        self.status = e.status;
        self.message = lossy_cstring(&e.message);
    }
    pub fn message_ptr(&self) -> *const c_char {
        self.message.as_ptr()
    }
    pub fn code_ptr(&self) -> *const c_char {
        sa_status_code(self.status)
    }
}

thread_local! {
    static THREAD_ERROR: RefCell<LastError> = RefCell::new(LastError::default());
}

fn record_thread_error(e: &ApiError) {
    THREAD_ERROR.with(|t| t.borrow_mut().set(e));
}

/// What a closure run by [`ffi_boundary`] hands back, and what C receives for it.
pub(crate) trait FfiOutcome {
    type C;
    fn into_c(self) -> Self::C;
    /// What C receives when the closure panicked.
    fn panicked() -> Self::C;
}

impl FfiOutcome for ApiResult {
    type C = sa_status;
    fn into_c(self) -> sa_status {
        match self {
            Ok(()) => SA_OK,
            Err(e) => {
                record_thread_error(&e);
                e.status
            }
        }
    }
    fn panicked() -> sa_status {
        SA_PANIC
    }
}

/// Constructors and getters that hand C a pointer: NULL on failure (the thread's last error
/// says why) and on a panic.
impl<T> FfiOutcome for ApiResult<*mut T> {
    type C = *mut T;
    fn into_c(self) -> *mut T {
        match self {
            Ok(p) => p,
            Err(e) => {
                record_thread_error(&e);
                std::ptr::null_mut()
            }
        }
    }
    fn panicked() -> *mut T {
        std::ptr::null_mut()
    }
}

impl FfiOutcome for *const c_char {
    type C = *const c_char;
    fn into_c(self) -> Self {
        self
    }
    fn panicked() -> Self {
        std::ptr::null()
    }
}

impl FfiOutcome for () {
    type C = ();
    fn into_c(self) {}
    fn panicked() {}
}

/// The outcome of a `void` entry point with a fixed signature (the frameworks' allocator
/// hooks): a failure is only recorded as the thread's last error.
pub(crate) struct Recorded(pub ApiResult);

impl FfiOutcome for Recorded {
    type C = ();
    fn into_c(self) {
        if let Err(e) = self.0 {
            record_thread_error(&e);
        }
    }
    fn panicked() {}
}

/// The one panic boundary of the C ABI: every `extern "C"` function's body is a single call to
/// it. A panic becomes `SA_PANIC` (NULL for pointer getters) and a thread-local error message;
/// a failure is recorded as the thread's last error.
pub(crate) fn ffi_boundary<O: FfiOutcome>(f: impl FnOnce() -> O) -> O::C {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(outcome) => outcome.into_c(),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-string panic payload".to_string());
            // Dropping the payload could itself panic; leak it instead (this is a bug path).
            std::mem::forget(payload);
            let _ = catch_unwind(|| record_thread_error(&ApiError::new(SA_PANIC, format!("internal panic: {what}"))));
            O::panicked()
        }
    }
}

/// A C string for C: interior NULs (possible in names read from JSON) become U+FFFD.
pub(crate) fn lossy_cstring(s: &str) -> CString {
    CString::new(s).unwrap_or_else(|_| CString::new(s.replace('\0', "\u{FFFD}")).expect("no NUL remains"))
}

/// A required string argument.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn arg_str<'a>(p: *const c_char, what: &str) -> ApiResult<&'a str> {
    if p.is_null() {
        return Err(ApiError::new(SA_NULL_POINTER, format!("argument '{what}' is NULL")));
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str().map_err(|e| ApiError::new(SA_INVALID_ARGUMENT, format!("argument '{what}' is not UTF-8: {e}")))
}

/// An optional string argument: NULL is `None`.
///
/// # Safety
/// As [`arg_str`].
pub(crate) unsafe fn opt_str<'a>(p: *const c_char, what: &str) -> ApiResult<Option<&'a str>> {
    if p.is_null() { Ok(None) } else { unsafe { arg_str(p, what) }.map(Some) }
}

/// Checks an output pointer before any work is done, so a NULL one fails without effects.
pub(crate) fn out_ptr<T>(p: *mut T, what: &str) -> ApiResult<*mut T> {
    if p.is_null() { Err(ApiError::new(SA_NULL_POINTER, format!("output argument '{what}' is NULL"))) } else { Ok(p) }
}

/// Writes an output checked by [`out_ptr`].
///
/// # Safety
/// `p` came from [`out_ptr`] and points to writable memory for a `T`.
pub(crate) unsafe fn write_out<T>(p: *mut T, v: T) {
    // SAFETY: non-NULL (checked by out_ptr) and writable by the caller's contract.
    unsafe { p.write(v) }
}

/// The body of a getter of one value: checks the output `out` (the argument `what`) first, so
/// a NULL one fails without effects, then stores `value()` there.
///
/// # Safety
/// `out` is NULL or writable.
pub(crate) unsafe fn put<T>(out: *mut T, what: &str, value: impl FnOnce() -> ApiResult<T>) -> ApiResult {
    let out = out_ptr(out, what)?;
    let v = value()?;
    // SAFETY: checked by out_ptr, writable by the caller's contract.
    unsafe { write_out(out, v) };
    Ok(())
}

/// Writes `v` to an output the caller may leave NULL (then nothing is written).
///
/// # Safety
/// `p` is NULL or points to writable memory for a `T`.
pub(crate) unsafe fn write_opt<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-NULL, and writable by the caller's contract.
        unsafe { p.write(v) }
    }
}

/// A required handle argument.
///
/// # Safety
/// `p` is NULL or points to a live `T` that outlives `'a`.
pub(crate) unsafe fn handle<'a, T>(p: *const T, what: &str) -> ApiResult<&'a T> {
    // SAFETY: NULL or live, by the caller's contract.
    unsafe { p.as_ref() }.ok_or_else(|| ApiError::new(SA_NULL_POINTER, format!("argument '{what}' is NULL")))
}

/// The body of a constructor: checks `out`, then makes the handle with `make` and stores it
/// boxed in `*out` (the caller frees it with the handle's `_free`).
///
/// # Safety
/// `out` is NULL or writable.
pub(crate) unsafe fn new_boxed<T>(out: *mut *mut T, make: impl FnOnce() -> ApiResult<T>) -> ApiResult {
    let out = out_ptr(out, "out")?;
    let v = Box::new(make()?);
    // SAFETY: checked by out_ptr, writable by the caller's contract.
    unsafe { write_out(out, Box::into_raw(v)) };
    Ok(())
}

/// Frees a boxed handle; NULL is a no-op.
///
/// # Safety
/// `p` is NULL or came from `Box::into_raw` in this module's constructors and is not used
/// afterwards.
pub(crate) unsafe fn free_box<T>(p: *mut T) {
    if !p.is_null() {
        // SAFETY: from Box::into_raw in the matching `_new`, by the caller's contract.
        drop(unsafe { Box::from_raw(p) });
    }
}

/// The body of an `_acquire` function: `acquire` on the live allocator `a`, its vector handed
/// to C as an untyped pointer.
///
/// # Safety
/// `a` is NULL or points to a live allocator.
pub(crate) unsafe fn acquire_vector<T>(
    a: *const T,
    acquire: impl FnOnce(&T) -> crate::runtime::RtResult<*mut crate::runtime::VecHeader>,
) -> ApiResult<*mut std::ffi::c_void> {
    // SAFETY: NULL or live, by the caller's contract.
    let a = unsafe { handle(a, "a") }?;
    Ok(acquire(a)?.cast())
}

/// The message of the most recent call that failed on the calling thread (any handle, or none:
/// this is where constructors such as `sa_graph_from_json` leave their errors). `""` when no
/// call has failed on this thread. Never NULL.
///
/// Lifetime: the string belongs to the library and stays valid until the next failing call on
/// the same thread; copy it to keep it. Thread safety: each thread has its own last error.
///
/// Ownership: the returned string is owned by the library (per thread) and valid until the calling
/// thread's next failing call; the caller does not free it.
#[unsafe(no_mangle)]
pub extern "C" fn sa_last_error_message() -> *const c_char {
    ffi_boundary(|| THREAD_ERROR.with(|t| t.borrow().message_ptr()))
}

/// The code string (`"SA1005"`, GE's `"E10001"`, ...) of the calling thread's most recent
/// failure, `""` when none. Static storage: never NULL, never freed, valid forever.
/// Thread safety: each thread has its own last error.
///
/// Ownership: the returned string is static: never freed.
#[unsafe(no_mangle)]
pub extern "C" fn sa_last_error_code() -> *const c_char {
    ffi_boundary(|| THREAD_ERROR.with(|t| t.borrow().code_ptr()))
}

/// The library version, e.g. `"0.1.0"`. Static storage: never NULL, never freed. Thread-safe.
///
/// Ownership: the returned string is static: never freed.
#[unsafe(no_mangle)]
pub extern "C" fn sa_version() -> *const c_char {
    ffi_boundary(|| concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast::<c_char>())
}

/// Frees a string the library returned as owned (`sa_allocation_to_json`). NULL is a no-op.
/// Passing any other pointer, or freeing twice, is undefined behaviour. Thread-safe for
/// distinct strings.
///
/// Ownership: takes ownership of `s`, a string the library returned as owned, and frees it (NULL is
/// a no-op).
///
/// # Safety
/// `s` is NULL or a string returned as owned by this library and not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_string_free(s: *mut c_char) {
    ffi_boundary(|| {
        if !s.is_null() {
            // SAFETY: `s` came from CString::into_raw in this library, by the caller's contract.
            drop(unsafe { CString::from_raw(s) });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_sa_panic_with_a_message() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let status = ffi_boundary(|| -> ApiResult { panic!("boom {}", 7) });
        let ptr = ffi_boundary(|| -> *const c_char { panic!("again") });
        std::panic::set_hook(prev);
        assert_eq!(status, SA_PANIC);
        assert!(ptr.is_null());
        let msg = unsafe { CStr::from_ptr(sa_last_error_message()) }.to_str().unwrap().to_string();
        assert_eq!(msg, "internal panic: again");
        assert_eq!(unsafe { CStr::from_ptr(sa_last_error_code()) }.to_str().unwrap(), "SA3004");
    }

    #[test]
    fn failures_are_recorded_per_thread() {
        let s = ffi_boundary(|| -> ApiResult { Err(ApiError::new(SA_NOT_FOUND, "no node 'x'")) });
        assert_eq!(s, SA_NOT_FOUND);
        let msg = unsafe { CStr::from_ptr(sa_last_error_message()) }.to_str().unwrap().to_string();
        assert_eq!(msg, "no node 'x'");
        let other =
            std::thread::spawn(|| unsafe { CStr::from_ptr(sa_last_error_message()) }.to_bytes().len()).join().unwrap();
        assert_eq!(other, 0);
    }

    #[test]
    fn pointer_results_are_null_on_failure_and_panic() {
        let ok = ffi_boundary(|| -> ApiResult<*mut u8> { Ok(8 as *mut u8) });
        assert_eq!(ok as usize, 8);
        let failed = ffi_boundary(|| -> ApiResult<*mut u8> { Err(ApiError::new(SA_RUNTIME_LIMIT, "n = 5000")) });
        assert!(failed.is_null());
        assert_eq!(unsafe { CStr::from_ptr(sa_last_error_code()) }.to_str().unwrap(), "SA4001");
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let panicked = ffi_boundary(|| -> ApiResult<*mut u8> { panic!("vector") });
        std::panic::set_hook(prev);
        assert!(panicked.is_null());
        assert_eq!(unsafe { CStr::from_ptr(sa_last_error_code()) }.to_str().unwrap(), "SA3004");
    }

    #[test]
    fn interior_nul_is_replaced() {
        assert_eq!(lossy_cstring("a\0b").to_str().unwrap(), "a\u{FFFD}b");
    }
}
