//! GE's own allocator classes, exported under GE's mangled names (ge-runtime-api.md §1.5, §2.6):
//! the out-of-line members of `gert::StreamAllocator`, `gert::EventAllocator`,
//! `gert::NotifyAllocator` and `ge::ReusableStreamAllocator`, so a binary built against GE's
//! headers, or against the shims in `include/stream_alloc/ge_compat` (which are GE's
//! declarations), links and runs against this library (docs/drop-in.md).
//!
//! A non-virtual member is an ordinary function whose first argument is `this`; constructors and
//! destructors return nothing on x86-64 and AArch64, and the complete (`C1`/`D1`) and base
//! (`C2`/`D2`) variants share one body. The objects keep GE's layouts ([`GeStreamAllocator`] and
//! siblings): each holds `std::unique_ptr<uint8_t[]>` to a `ContinuousVector` block that C++
//! allocated (`new[]`), here or in GE's inline constructors, and that the destructors free with
//! `delete[]` through the C++ unit (`cxx/ge_abi.cc`). The growth state (runtime, created
//! handles) lives in a table keyed by `this`, which is stable (the classes can be neither copied
//! nor moved), created on the first growth and removed by the destructor; the warm path
//! (`n <= size`) reads the holder only. `ge::ReusableStreamAllocator` objects are real C++
//! objects built by the C++ unit; their pools live in a table keyed by the object, released
//! through a deleter the object's own map runs when the caller deletes it.
//!
//! Every entry point runs inside [`ffi_boundary`]: a failure is the thread's last error
//! (`sa_last_error_message`), nothing unwinds into C++. None is declared in `stream_alloc.h`:
//! their declarations are GE's headers.

#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::ffi::{c_char, c_void};
use std::ptr::NonNull;
use std::sync::Arc;

use parking_lot::Mutex;

use super::{ApiError, ApiResult, SA_NULL_POINTER, SA_RUNTIME_LIMIT, SA_UNKNOWN_HANDLE, ffi_boundary, sa_status};
use crate::runtime::allocators::{HandleKind, HolderState, VecHeader, holder_has, init_holder};
use crate::runtime::pool::{PoolOptions, ReusableStreamPool};
use crate::runtime::{RtError, RtErrorKind, Runtime};

unsafe extern "C" {
    fn stream_alloc_cxx_holder_new(bytes: usize) -> *mut u8;
    fn stream_alloc_cxx_holder_delete(holder: *mut u8);
    fn stream_alloc_cxx_reusable_new(on_delete: unsafe extern "C" fn(object: *mut c_void)) -> *mut c_void;
    fn stream_alloc_cxx_reusable_size() -> usize;
    fn stream_alloc_cxx_glibcxx_cxx11_abi() -> i32;
    #[cfg(test)]
    fn stream_alloc_cxx_reusable_delete(object: *mut c_void);
}

/// `gert::StreamAllocator`: `std::unique_ptr<uint8_t[]> streams_holder_` (one pointer in
/// libstdc++), `int32_t default_priority_`, `uint32_t default_flags_`; 16 bytes.
#[repr(C)]
pub struct GeStreamAllocator {
    pub holder: *mut VecHeader,
    pub default_priority: i32,
    pub default_flags: u32,
}

/// `gert::EventAllocator`: `events_holder_`, `uint32_t default_flag_`; 16 bytes with padding.
#[repr(C)]
pub struct GeEventAllocator {
    pub holder: *mut VecHeader,
    pub default_flag: u32,
}

/// `gert::NotifyAllocator`: `notifies_holder_`; 8 bytes.
#[repr(C)]
pub struct GeNotifyAllocator {
    pub holder: *mut VecHeader,
}

const _: () = assert!(std::mem::size_of::<GeStreamAllocator>() == 16);
const _: () = assert!(std::mem::size_of::<GeEventAllocator>() == 16);
const _: () = assert!(std::mem::size_of::<GeNotifyAllocator>() == 8);

/// GE's allocator symbols this library exports, in the order of ge-runtime-api.md §1.5 and §2.6,
/// then the project's extensions. `tests/it/header.rs` checks the list against the
/// `export_name`s below and the shims' declarations; `tests_c` checks it against `nm -D`.
pub const GE_SYMBOLS: &[&str] = &[
    "_ZN4gert15StreamAllocatorC1Eij",
    "_ZN4gert15StreamAllocatorC2Eij",
    "_ZN4gert15StreamAllocatorD1Ev",
    "_ZN4gert15StreamAllocatorD2Ev",
    "_ZNK4gert15StreamAllocator14AcquireStreamsEm",
    "_ZNK4gert15StreamAllocator7StreamsEv",
    "_ZN4gert14EventAllocatorD1Ev",
    "_ZN4gert14EventAllocatorD2Ev",
    "_ZNK4gert14EventAllocator13AcquireEventsEm",
    "_ZNK4gert14EventAllocator6EventsEv",
    "_ZN4gert15NotifyAllocatorD1Ev",
    "_ZN4gert15NotifyAllocatorD2Ev",
    "_ZNK4gert15NotifyAllocator15AcquireNotifiesEim",
    "_ZNK4gert15NotifyAllocator8NotifiesEv",
    "_ZN2ge23ReusableStreamAllocator6CreateEv",
    "_ZN2ge23ReusableStreamAllocator19GetOrCreateRtStreamERPvjijj",
    "_ZN2ge23ReusableStreamAllocator13DestroyStreamERPvb",
    "_ZNK4gert15StreamAllocator9GetStatusEv",
    "_ZNK4gert15StreamAllocator16GetStatusMessageEv",
    "_ZNK4gert14EventAllocator9GetStatusEv",
    "_ZNK4gert14EventAllocator16GetStatusMessageEv",
    "_ZNK4gert15NotifyAllocator9GetStatusEv",
    "_ZNK4gert15NotifyAllocator16GetStatusMessageEv",
];

// B-trees rather than hash maps: a hash table's buffer is held by an interior pointer, which
// valgrind reports as "possibly lost" at exit; a B-tree's nodes are held from their start.
/// Growth states of the gert allocators, by object address.
static HOLDERS: Mutex<BTreeMap<usize, Arc<HolderState>>> = Mutex::new(BTreeMap::new());
/// Pools of the `ge::ReusableStreamAllocator` objects, by object address.
static POOLS: Mutex<BTreeMap<usize, Arc<ReusableStreamPool>>> = Mutex::new(BTreeMap::new());

fn no_holder(class: &str) -> ApiError {
    ApiError::new(
        SA_RUNTIME_LIMIT,
        format!("gert::{class} has no vector: its constructor could not allocate one (out of host memory)"),
    )
}

/// GE's `Acquire*`: the bound first (as GE's assert), then the warm path on the holder alone,
/// then growth through the object's state, created on first use.
///
/// # Safety
/// `holder` is NULL or the object's initialised holder, alive for the call.
unsafe fn acquire(
    this: usize,
    holder: *mut VecHeader,
    kind: HandleKind,
    n: usize,
    device_id: i32,
    class: &str,
) -> ApiResult<*mut c_void> {
    let holder = NonNull::new(holder).ok_or_else(|| no_holder(class))?;
    kind.check_bound(n)?;
    // SAFETY: initialised holder, by the contract.
    if unsafe { holder_has(holder, n) } {
        return Ok(holder.as_ptr().cast());
    }
    let state = {
        let mut table = HOLDERS.lock();
        match table.get(&this) {
            // An entry for another holder is stale (an object freed without its destructor
            // once lived here): its handles are that object's leak, not ours to destroy.
            Some(s) if s.holder() == holder.as_ptr() && s.kind() == kind => s.clone(),
            _ => {
                // SAFETY: initialised holder of this kind, freed only by the object's destructor,
                // which removes this entry first.
                let s = Arc::new(unsafe { HolderState::new(kind, holder) }?);
                table.insert(this, s.clone());
                s
            }
        }
    };
    Ok(state.acquire(n, device_id)?.cast())
}

/// GE's destructors: destroy the handles the object's state created, set the size to 0, free the
/// holder with `delete[]`, and forget the state.
///
/// # Safety
/// `holder` points to the object's holder slot; the holder is NULL or a live `new[]` block.
unsafe fn release(this: usize, holder: *mut *mut VecHeader) {
    let state = HOLDERS.lock().remove(&this);
    // SAFETY: the object's holder slot, by the contract.
    let h = unsafe { holder.read() };
    match state {
        Some(s) if s.holder() == h => s.release(),
        _ => {
            if let Some(h) = NonNull::new(h) {
                // SAFETY: a live holder: nothing was created in it, only its size is reset.
                unsafe { h.as_ref() }.size.store(0, std::sync::atomic::Ordering::Release);
            }
        }
    }
    if !h.is_null() {
        // SAFETY: a new[] block (GE's inline constructors or ours), freed once: the slot is cleared.
        unsafe {
            stream_alloc_cxx_holder_delete(h.cast());
            holder.write(std::ptr::null_mut());
        }
    }
}

/// `GetStatus()`: SA_RUNTIME_LIMIT without a vector, else whether a runtime resolves.
fn status(holder: *mut VecHeader, class: &str) -> ApiResult {
    if holder.is_null() {
        return Err(no_holder(class));
    }
    Runtime::current()?;
    Ok(())
}

/// `GetStatusMessage()`: `""` when `GetStatus()` is SA_OK, else its reason (the thread's last
/// error, which the status check just recorded).
fn status_message(holder: *mut VecHeader, class: &str) -> *const c_char {
    if ffi_boundary(|| status(holder, class)) == super::SA_OK { c"".as_ptr() } else { super::sa_last_error_message() }
}

/// `gert::StreamAllocator::StreamAllocator(int32_t priority, uint32_t flags)` (complete object):
/// the vector with slot 0 NULL and size 1; no device call. Out of memory leaves the holder NULL:
/// `AcquireStreams` then fails and `GetStatus` says why.
///
/// # Safety
/// `this` points to 16 writable bytes of a `gert::StreamAllocator` under construction.
#[unsafe(export_name = "_ZN4gert15StreamAllocatorC1Eij")]
pub unsafe extern "C" fn ge_stream_allocator_c1(this: *mut GeStreamAllocator, priority: i32, flags: u32) {
    ffi_boundary(|| {
        let kind = HandleKind::Stream { priority, flags };
        // SAFETY: a fresh block of holder_bytes, 8-aligned (operator new[]), initialised at once.
        let holder = unsafe { stream_alloc_cxx_holder_new(kind.holder_bytes()) }.cast::<VecHeader>();
        if !holder.is_null() {
            unsafe { init_holder(holder, kind) };
        }
        // SAFETY: writable, by the contract.
        unsafe { this.write(GeStreamAllocator { holder, default_priority: priority, default_flags: flags }) };
    })
}

/// `gert::StreamAllocator::StreamAllocator(int32_t, uint32_t)` (base object): as `C1`.
///
/// # Safety
/// As [`ge_stream_allocator_c1`].
#[unsafe(export_name = "_ZN4gert15StreamAllocatorC2Eij")]
pub unsafe extern "C" fn ge_stream_allocator_c2(this: *mut GeStreamAllocator, priority: i32, flags: u32) {
    ffi_boundary(|| unsafe { ge_stream_allocator_c1(this, priority, flags) })
}

/// `gert::StreamAllocator::~StreamAllocator()` (complete object): destroys the streams it created
/// (slots 1..size-1, never the caller's slot 0) and frees the vector.
///
/// # Safety
/// `this` is a constructed `gert::StreamAllocator`, not used afterwards.
#[unsafe(export_name = "_ZN4gert15StreamAllocatorD1Ev")]
pub unsafe extern "C" fn ge_stream_allocator_d1(this: *mut GeStreamAllocator) {
    ffi_boundary(|| unsafe { release(this as usize, std::ptr::addr_of_mut!((*this).holder)) })
}

/// `gert::StreamAllocator::~StreamAllocator()` (base object): as `D1`.
///
/// # Safety
/// As [`ge_stream_allocator_d1`].
#[unsafe(export_name = "_ZN4gert15StreamAllocatorD2Ev")]
pub unsafe extern "C" fn ge_stream_allocator_d2(this: *mut GeStreamAllocator) {
    ffi_boundary(|| unsafe { ge_stream_allocator_d1(this) })
}

/// `gert::StreamAllocator::AcquireStreams(size_t) const`: the vector grown to at least
/// `stream_num` (never shrunk), or NULL (`stream_num >= 2024`, no runtime, a device error).
///
/// # Safety
/// `this` is a constructed `gert::StreamAllocator`.
#[unsafe(export_name = "_ZNK4gert15StreamAllocator14AcquireStreamsEm")]
pub unsafe extern "C" fn ge_stream_allocator_acquire(this: *const GeStreamAllocator, stream_num: usize) -> *mut c_void {
    ffi_boundary(|| -> ApiResult<*mut c_void> {
        // SAFETY: constructed, by the contract.
        let a = unsafe { &*this };
        let kind = HandleKind::Stream { priority: a.default_priority, flags: a.default_flags };
        unsafe { acquire(this as usize, a.holder, kind, stream_num, 0, "StreamAllocator") }
    })
}

/// `gert::StreamAllocator::Streams() const` (private in GE): the vector as it is.
///
/// # Safety
/// `this` is a constructed `gert::StreamAllocator`.
#[unsafe(export_name = "_ZNK4gert15StreamAllocator7StreamsEv")]
pub unsafe extern "C" fn ge_stream_allocator_streams(this: *const GeStreamAllocator) -> *mut c_void {
    ffi_boundary(|| -> ApiResult<*mut c_void> { Ok(unsafe { (*this).holder }.cast()) })
}

/// `gert::StreamAllocator::GetStatus() const` (extension).
///
/// # Safety
/// `this` is a constructed `gert::StreamAllocator`.
#[unsafe(export_name = "_ZNK4gert15StreamAllocator9GetStatusEv")]
pub unsafe extern "C" fn ge_stream_allocator_get_status(this: *const GeStreamAllocator) -> sa_status {
    ffi_boundary(|| status(unsafe { (*this).holder }, "StreamAllocator"))
}

/// `gert::StreamAllocator::GetStatusMessage() const` (extension): never NULL.
///
/// # Safety
/// `this` is a constructed `gert::StreamAllocator`.
#[unsafe(export_name = "_ZNK4gert15StreamAllocator16GetStatusMessageEv")]
pub unsafe extern "C" fn ge_stream_allocator_get_status_message(this: *const GeStreamAllocator) -> *const c_char {
    ffi_boundary(|| status_message(unsafe { (*this).holder }, "StreamAllocator"))
}

/// `gert::EventAllocator::~EventAllocator()` (complete object): destroys every event it created
/// and frees the caller-allocated vector (`delete[]`; NULL when GE's `new (std::nothrow)` failed).
///
/// # Safety
/// `this` is a constructed `gert::EventAllocator`, not used afterwards.
#[unsafe(export_name = "_ZN4gert14EventAllocatorD1Ev")]
pub unsafe extern "C" fn ge_event_allocator_d1(this: *mut GeEventAllocator) {
    ffi_boundary(|| unsafe { release(this as usize, std::ptr::addr_of_mut!((*this).holder)) })
}

/// `gert::EventAllocator::~EventAllocator()` (base object): as `D1`.
///
/// # Safety
/// As [`ge_event_allocator_d1`].
#[unsafe(export_name = "_ZN4gert14EventAllocatorD2Ev")]
pub unsafe extern "C" fn ge_event_allocator_d2(this: *mut GeEventAllocator) {
    ffi_boundary(|| unsafe { ge_event_allocator_d1(this) })
}

/// `gert::EventAllocator::AcquireEvents(size_t) const`: slot 0 is an event too; `event_num >
/// 4096` is refused before any event is created (GE creates one more and leaks it).
///
/// # Safety
/// `this` is a constructed `gert::EventAllocator`.
#[unsafe(export_name = "_ZNK4gert14EventAllocator13AcquireEventsEm")]
pub unsafe extern "C" fn ge_event_allocator_acquire(this: *const GeEventAllocator, event_num: usize) -> *mut c_void {
    ffi_boundary(|| -> ApiResult<*mut c_void> {
        // SAFETY: constructed, by the contract.
        let a = unsafe { &*this };
        let kind = HandleKind::Event { flag: a.default_flag };
        unsafe { acquire(this as usize, a.holder, kind, event_num, 0, "EventAllocator") }
    })
}

/// `gert::EventAllocator::Events() const` (private in GE): the vector as it is.
///
/// # Safety
/// `this` is a constructed `gert::EventAllocator`.
#[unsafe(export_name = "_ZNK4gert14EventAllocator6EventsEv")]
pub unsafe extern "C" fn ge_event_allocator_events(this: *const GeEventAllocator) -> *mut c_void {
    ffi_boundary(|| -> ApiResult<*mut c_void> { Ok(unsafe { (*this).holder }.cast()) })
}

/// `gert::EventAllocator::GetStatus() const` (extension).
///
/// # Safety
/// `this` is a constructed `gert::EventAllocator`.
#[unsafe(export_name = "_ZNK4gert14EventAllocator9GetStatusEv")]
pub unsafe extern "C" fn ge_event_allocator_get_status(this: *const GeEventAllocator) -> sa_status {
    ffi_boundary(|| status(unsafe { (*this).holder }, "EventAllocator"))
}

/// `gert::EventAllocator::GetStatusMessage() const` (extension): never NULL.
///
/// # Safety
/// `this` is a constructed `gert::EventAllocator`.
#[unsafe(export_name = "_ZNK4gert14EventAllocator16GetStatusMessageEv")]
pub unsafe extern "C" fn ge_event_allocator_get_status_message(this: *const GeEventAllocator) -> *const c_char {
    ffi_boundary(|| status_message(unsafe { (*this).holder }, "EventAllocator"))
}

/// `gert::NotifyAllocator::~NotifyAllocator()` (complete object): destroys every notify it
/// created and frees the caller-allocated vector.
///
/// # Safety
/// `this` is a constructed `gert::NotifyAllocator`, not used afterwards.
#[unsafe(export_name = "_ZN4gert15NotifyAllocatorD1Ev")]
pub unsafe extern "C" fn ge_notify_allocator_d1(this: *mut GeNotifyAllocator) {
    ffi_boundary(|| unsafe { release(this as usize, std::ptr::addr_of_mut!((*this).holder)) })
}

/// `gert::NotifyAllocator::~NotifyAllocator()` (base object): as `D1`.
///
/// # Safety
/// As [`ge_notify_allocator_d1`].
#[unsafe(export_name = "_ZN4gert15NotifyAllocatorD2Ev")]
pub unsafe extern "C" fn ge_notify_allocator_d2(this: *mut GeNotifyAllocator) {
    ffi_boundary(|| unsafe { ge_notify_allocator_d1(this) })
}

/// `gert::NotifyAllocator::AcquireNotifies(int32_t, size_t) const`: `notify_num < 1024`.
///
/// # Safety
/// `this` is a constructed `gert::NotifyAllocator`.
#[unsafe(export_name = "_ZNK4gert15NotifyAllocator15AcquireNotifiesEim")]
pub unsafe extern "C" fn ge_notify_allocator_acquire(
    this: *const GeNotifyAllocator,
    device_id: i32,
    notify_num: usize,
) -> *mut c_void {
    ffi_boundary(|| -> ApiResult<*mut c_void> {
        // SAFETY: constructed, by the contract.
        let holder = unsafe { (*this).holder };
        unsafe { acquire(this as usize, holder, HandleKind::Notify, notify_num, device_id, "NotifyAllocator") }
    })
}

/// `gert::NotifyAllocator::Notifies() const` (private in GE): the vector as it is.
///
/// # Safety
/// `this` is a constructed `gert::NotifyAllocator`.
#[unsafe(export_name = "_ZNK4gert15NotifyAllocator8NotifiesEv")]
pub unsafe extern "C" fn ge_notify_allocator_notifies(this: *const GeNotifyAllocator) -> *mut c_void {
    ffi_boundary(|| -> ApiResult<*mut c_void> { Ok(unsafe { (*this).holder }.cast()) })
}

/// `gert::NotifyAllocator::GetStatus() const` (extension).
///
/// # Safety
/// `this` is a constructed `gert::NotifyAllocator`.
#[unsafe(export_name = "_ZNK4gert15NotifyAllocator9GetStatusEv")]
pub unsafe extern "C" fn ge_notify_allocator_get_status(this: *const GeNotifyAllocator) -> sa_status {
    ffi_boundary(|| status(unsafe { (*this).holder }, "NotifyAllocator"))
}

/// `gert::NotifyAllocator::GetStatusMessage() const` (extension): never NULL.
///
/// # Safety
/// `this` is a constructed `gert::NotifyAllocator`.
#[unsafe(export_name = "_ZNK4gert15NotifyAllocator16GetStatusMessageEv")]
pub unsafe extern "C" fn ge_notify_allocator_get_status_message(this: *const GeNotifyAllocator) -> *const c_char {
    ffi_boundary(|| status_message(unsafe { (*this).holder }, "NotifyAllocator"))
}

/// Called from the C++ object's own destructor (the deleter of its sentinel entry): the caller
/// deleted a `ge::ReusableStreamAllocator`, so its pool goes. Streams still granted stay with the
/// device, as with GE. An object never registered (its construction failed) is ignored.
unsafe extern "C" fn reusable_deleted(object: *mut c_void) {
    ffi_boundary(|| {
        let pool = POOLS.lock().remove(&(object as usize));
        drop(pool);
    })
}

/// The pool of a `ge::ReusableStreamAllocator` this library created.
fn pool_of(this: *const c_void) -> ApiResult<Arc<ReusableStreamPool>> {
    POOLS.lock().get(&(this as usize)).cloned().ok_or_else(|| {
        ApiError::new(
            SA_UNKNOWN_HANDLE,
            format!(
                "ge::ReusableStreamAllocator {this:p} was not created by this library's Create() \
                 (a GE build mixing GE's allocator and this one?)"
            ),
        )
    })
}

/// `ge::ReusableStreamAllocator::Create()`: a new allocator (the caller deletes it), with reuse as
/// `SA_REUSABLE_STREAM_OPTIONS` says (default off, as GE); NULL on a malformed option string or
/// out of memory. No device call.
#[unsafe(export_name = "_ZN2ge23ReusableStreamAllocator6CreateEv")]
pub extern "C" fn ge_reusable_create() -> *mut c_void {
    ffi_boundary(|| -> ApiResult<*mut c_void> {
        let options = match std::env::var("SA_REUSABLE_STREAM_OPTIONS") {
            Ok(text) => PoolOptions::parse(&text)
                .map_err(|e| RtError::new(e.kind, format!("SA_REUSABLE_STREAM_OPTIONS: {}", e.message)))?,
            Err(std::env::VarError::NotPresent) => PoolOptions::default(),
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(RtError::new(RtErrorKind::Invalid, "SA_REUSABLE_STREAM_OPTIONS is not UTF-8").into());
            }
        };
        let pool = Arc::new(ReusableStreamPool::new(options));
        // SAFETY: the callback never unwinds (ffi_boundary) and accepts unknown objects.
        let object = unsafe { stream_alloc_cxx_reusable_new(reusable_deleted) };
        if object.is_null() {
            return Err(ApiError::new(SA_RUNTIME_LIMIT, "out of host memory for a ge::ReusableStreamAllocator"));
        }
        POOLS.lock().insert(object as usize, pool);
        Ok(object)
    })
}

/// `ge::ReusableStreamAllocator::GetOrCreateRtStream(aclrtStream&, uint32_t rt_model_id, int32_t
/// priority, uint32_t stream_flag, uint32_t task_num)`: `ge::SUCCESS` (0) with the stream in
/// `*stream`, or the failure's `sa_status` with `*stream` unchanged.
///
/// # Safety
/// `this` came from [`ge_reusable_create`] and is alive; `stream` is NULL or writable.
#[unsafe(export_name = "_ZN2ge23ReusableStreamAllocator19GetOrCreateRtStreamERPvjijj")]
pub unsafe extern "C" fn ge_reusable_get_or_create(
    this: *mut c_void,
    stream: *mut *mut c_void,
    rt_model_id: u32,
    priority: i32,
    stream_flag: u32,
    task_num: u32,
) -> u32 {
    ffi_boundary(|| -> ApiResult {
        let pool = pool_of(this)?;
        if stream.is_null() {
            return Err(ApiError::new(SA_NULL_POINTER, "argument 'stream' is NULL"));
        }
        let (s, _) = pool.get_or_create(rt_model_id, priority, stream_flag, task_num)?;
        // SAFETY: non-NULL and writable, by the contract.
        unsafe { stream.write(s) };
        Ok(())
    }) as u32
}

/// `ge::ReusableStreamAllocator::DestroyStream(aclrtStream&, bool is_force_destroy)`: drops one
/// grant; the last destroys the device stream. `*stream` is left unchanged, as in GE.
///
/// # Safety
/// `this` came from [`ge_reusable_create`] and is alive; `stream` is NULL or readable.
#[unsafe(export_name = "_ZN2ge23ReusableStreamAllocator13DestroyStreamERPvb")]
pub unsafe extern "C" fn ge_reusable_destroy_stream(this: *mut c_void, stream: *mut *mut c_void, force: bool) -> u32 {
    ffi_boundary(|| -> ApiResult {
        let pool = pool_of(this)?;
        if stream.is_null() {
            return Err(ApiError::new(SA_NULL_POINTER, "argument 'stream' is NULL"));
        }
        // SAFETY: non-NULL and readable, by the contract.
        let s = unsafe { stream.read() };
        if s.is_null() {
            return Err(ApiError::new(SA_NULL_POINTER, "the stream to destroy is NULL"));
        }
        Ok(pool.destroy(s, force)?)
    }) as u32
}

/// `sizeof(ge::ReusableStreamAllocator)` as the C++ unit compiled it (two `std::map`s and a
/// `std::mutex`: 136 bytes with libstdc++ on LP64).
pub fn reusable_object_size() -> usize {
    // SAFETY: a pure function of the C++ unit.
    unsafe { stream_alloc_cxx_reusable_size() }
}

/// The `_GLIBCXX_USE_CXX11_ABI` the C++ unit was built with (0 with the `glibcxx-old-abi` feature).
pub fn cxx11_abi() -> i32 {
    // SAFETY: a pure function of the C++ unit.
    unsafe { stream_alloc_cxx_glibcxx_cxx11_abi() }
}

/// Live growth states and pools, for leak checks in tests.
pub fn live_objects() -> (usize, usize) {
    (HOLDERS.lock().len(), POOLS.lock().len())
}

#[cfg(test)]
mod tests {
    //! Paths without a device: construction, bounds, a missing vector, unknown objects, the
    //! C++ unit's build settings. The device paths run from C++ in tests_c/runtime.
    use std::ffi::CStr;

    use super::*;

    fn last_code() -> String {
        unsafe { CStr::from_ptr(super::super::sa_last_error_code()) }.to_str().unwrap().to_string()
    }

    #[test]
    fn the_stream_allocator_is_built_as_ge_builds_it() {
        let mut a = std::mem::MaybeUninit::<GeStreamAllocator>::uninit();
        unsafe { ge_stream_allocator_c1(a.as_mut_ptr(), 3, 1) };
        let a = unsafe { a.assume_init_mut() };
        assert_eq!((a.default_priority, a.default_flags), (3, 1));
        let h = unsafe { &*a.holder };
        assert_eq!((h.capacity, h.size.load(std::sync::atomic::Ordering::Relaxed)), (2024, 1));
        assert_eq!(h.reserved, [0; 40]);
        let slot0 = unsafe { a.holder.cast::<u8>().add(56).cast::<*mut c_void>().read() };
        assert!(slot0.is_null());
        // The bound and the warm path need no runtime.
        assert!(unsafe { ge_stream_allocator_acquire(a, 2024) }.is_null());
        assert_eq!(last_code(), "SA4001");
        assert_eq!(unsafe { ge_stream_allocator_acquire(a, 1) }, a.holder.cast());
        assert_eq!(unsafe { ge_stream_allocator_streams(a) }, a.holder.cast());
        unsafe { ge_stream_allocator_d1(a) };
        assert!(a.holder.is_null());
    }

    #[test]
    fn a_missing_vector_is_refused_and_reported() {
        let mut e = GeEventAllocator { holder: std::ptr::null_mut(), default_flag: 1 };
        assert!(unsafe { ge_event_allocator_acquire(&e, 1) }.is_null());
        assert_eq!(last_code(), "SA4001");
        assert_eq!(unsafe { ge_event_allocator_get_status(&e) }, SA_RUNTIME_LIMIT);
        let msg = unsafe { CStr::from_ptr(ge_event_allocator_get_status_message(&e)) }.to_str().unwrap();
        assert!(msg.contains("EventAllocator has no vector"), "{msg}");
        unsafe { ge_event_allocator_d1(&mut e) };
    }

    #[test]
    fn a_holder_of_another_capacity_is_refused() {
        let kind = HandleKind::Notify;
        let holder = unsafe { stream_alloc_cxx_holder_new(kind.holder_bytes()) }.cast::<VecHeader>();
        unsafe { init_holder(holder, HandleKind::Event { flag: 1 }) };
        let mut n = GeNotifyAllocator { holder };
        assert!(unsafe { ge_notify_allocator_acquire(&n, 0, 3) }.is_null());
        let msg = unsafe { CStr::from_ptr(super::super::sa_last_error_message()) }.to_str().unwrap().to_string();
        assert!(msg.contains("capacity 4096, GE's is 1024"), "{msg}");
        assert!(unsafe { ge_notify_allocator_acquire(&n, 0, 1024) }.is_null());
        assert_eq!(last_code(), "SA4001");
        unsafe { ge_notify_allocator_d2(&mut n) };
        assert!(n.holder.is_null());
    }

    #[test]
    fn unknown_reusable_objects_and_null_streams_are_refused() {
        let mut s: *mut c_void = std::ptr::null_mut();
        let stranger = 0x1000 as *mut c_void;
        assert_eq!(unsafe { ge_reusable_get_or_create(stranger, &mut s, 1, 0, 0, 0) }, SA_UNKNOWN_HANDLE as u32);
        let object = ge_reusable_create();
        assert!(!object.is_null());
        assert_eq!(unsafe { ge_reusable_destroy_stream(object, &mut s, false) }, SA_NULL_POINTER as u32);
        assert_eq!(unsafe { ge_reusable_destroy_stream(object, std::ptr::null_mut(), false) }, SA_NULL_POINTER as u32);
        // Deleting the object as GE does (inline destructor) releases its pool.
        unsafe { stream_alloc_cxx_reusable_delete(object) };
        assert!(!POOLS.lock().contains_key(&(object as usize)));
    }

    #[test]
    fn the_cxx_unit_matches_the_build() {
        assert_eq!(cxx11_abi(), if cfg!(feature = "glibcxx-old-abi") { 0 } else { 1 });
        assert_eq!(reusable_object_size(), 136);
    }
}
