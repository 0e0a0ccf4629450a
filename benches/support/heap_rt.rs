//! The benchmarks' fake device runtime, the part every seam table needs: each stream and notify
//! a heap object (as a real runtime allocates one), stream ids from a counter, and no lock of its
//! own, so a benchmark measures the allocator's bookkeeping and locking, not the fake's.
#![allow(dead_code)] // each benchmark uses part of it

use std::ffi::c_void;
use std::sync::atomic::{AtomicI32, Ordering};

use stream_alloc::runtime::RuntimeOps;

struct FakeStream {
    id: i32,
}

static NEXT_ID: AtomicI32 = AtomicI32::new(0);

pub unsafe extern "C" fn stream_create(_: *mut c_void, out: *mut *mut c_void, _: i32, _: u32) -> i32 {
    let s = Box::new(FakeStream { id: NEXT_ID.fetch_add(1, Ordering::Relaxed) });
    // SAFETY: the seam passes a valid out pointer.
    unsafe { out.write(Box::into_raw(s).cast()) };
    0
}
pub unsafe extern "C" fn stream_destroy(_: *mut c_void, s: *mut c_void, _: i32) -> i32 {
    // SAFETY: `s` came from `stream_create` and is destroyed once.
    drop(unsafe { Box::from_raw(s.cast::<FakeStream>()) });
    0
}
pub unsafe extern "C" fn stream_get_id(_: *mut c_void, s: *mut c_void, id: *mut i32) -> i32 {
    // SAFETY: `s` is a live stream from `stream_create`; `id` is a valid out pointer.
    unsafe { id.write((*s.cast::<FakeStream>()).id) };
    0
}
unsafe extern "C" fn notify_create(_: *mut c_void, out: *mut *mut c_void, _: i32) -> i32 {
    // SAFETY: the seam passes a valid out pointer; freed by notify_destroy.
    unsafe { out.write(Box::into_raw(Box::new(0u8)).cast()) };
    0
}
unsafe extern "C" fn notify_destroy(_: *mut c_void, n: *mut c_void) -> i32 {
    // SAFETY: from notify_create, destroyed once.
    drop(unsafe { Box::from_raw(n.cast::<u8>()) });
    0
}

/// A table with the fake's streams and notifies; the benchmark adds its events and memory.
pub fn streams_and_notifies() -> RuntimeOps {
    RuntimeOps {
        stream_create: Some(stream_create),
        stream_destroy: Some(stream_destroy),
        stream_get_id: Some(stream_get_id),
        notify_create: Some(notify_create),
        notify_destroy: Some(notify_destroy),
        ..RuntimeOps::empty()
    }
}
