//! A fake device runtime for the reliability tests and fuzz targets: unique handles, a live set
//! that catches double and stray destroys, and "the k-th device call fails" injection over
//! every entry of the table (create, destroy, get-id, capability and limit queries).
//! Shared by tests/ (through `#[path]`) and fuzz/ so both check the same model.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;
use stream_alloc::runtime::consts::*;
use stream_alloc::runtime::{Runtime, RuntimeOps, RuntimeSource};

pub const STREAM: usize = 0;
pub const EVENT: usize = 1;
pub const NOTIFY: usize = 2;

/// The runtime code the fake returns for an injected failure of each call.
pub const INJECTED: i32 = 507_899;

#[derive(Default)]
pub struct Fake {
    next: AtomicUsize,
    /// Every device call, in order (1-based index when counted).
    pub calls: AtomicU64,
    /// 1-based index of the device call that fails; 0 = none.
    pub fail_at: AtomicU64,
    /// Name of the call that was failed, once it has been.
    pub failed_call: Mutex<Option<&'static str>>,
    pub creates: [AtomicU64; 3],
    pub destroys: [AtomicU64; 3],
    pub live: Mutex<BTreeSet<usize>>,
    /// Handles whose destroy was failed by injection (still live on the "device").
    pub destroy_failed: Mutex<BTreeSet<usize>>,
    pub errors: Mutex<Vec<String>>,
    /// Streams the device has left; creates beyond it fail with "no stream resource".
    pub stream_budget: AtomicU64,
}

impl Fake {
    /// Counts a device call; true when this one is to fail.
    fn inject(&self, name: &'static str) -> bool {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.fail_at.load(Ordering::SeqCst) {
            *self.failed_call.lock() = Some(name);
            return true;
        }
        false
    }

    fn create(&self, kind: usize, name: &'static str, out: *mut *mut c_void) -> i32 {
        if self.inject(name) {
            return INJECTED;
        }
        if kind == STREAM {
            let left = self.stream_budget.load(Ordering::SeqCst);
            if left == 0 {
                return ACL_ERROR_RT_NO_STREAM_RESOURCE;
            }
            if left != u64::MAX {
                self.stream_budget.fetch_sub(1, Ordering::SeqCst);
            }
        }
        let h = 0x1000 + 16 * self.next.fetch_add(1, Ordering::SeqCst) + kind;
        self.live.lock().insert(h);
        self.creates[kind].fetch_add(1, Ordering::SeqCst);
        // SAFETY: the library passes a writable out-pointer.
        unsafe { out.write(h as *mut c_void) };
        0
    }

    fn destroy(&self, kind: usize, name: &'static str, h: *mut c_void) -> i32 {
        if self.inject(name) {
            self.destroy_failed.lock().insert(h as usize);
            return INJECTED;
        }
        if (h as usize) % 16 != kind || !self.live.lock().remove(&(h as usize)) {
            self.errors.lock().push(format!("{name} of unknown or dead handle {h:p}"));
            return ACL_ERROR_RT_PARAM_INVALID;
        }
        self.destroy_failed.lock().remove(&(h as usize));
        if kind == STREAM && self.stream_budget.load(Ordering::SeqCst) != u64::MAX {
            self.stream_budget.fetch_add(1, Ordering::SeqCst);
        }
        self.destroys[kind].fetch_add(1, Ordering::SeqCst);
        0
    }

    pub fn count(&self, a: &[AtomicU64; 3], k: usize) -> u64 {
        a[k].load(Ordering::SeqCst)
    }

    /// Everything created was destroyed exactly once, except handles whose destroy the device
    /// itself refused (those cannot be given back by anyone).
    pub fn check_balanced(&self) -> Result<(), String> {
        let errors = self.errors.lock();
        if !errors.is_empty() {
            return Err(format!("device saw bad calls: {errors:?}"));
        }
        let live = self.live.lock();
        let refused = self.destroy_failed.lock();
        if *live != *refused {
            return Err(format!("live handles {live:x?} are not exactly the refused destroys {refused:x?}"));
        }
        Ok(())
    }
}

fn fake(user: *mut c_void) -> &'static Fake {
    // SAFETY: `user` is the leaked Fake registered with the table.
    unsafe { &*(user as *const Fake) }
}

unsafe extern "C" fn stream_create(u: *mut c_void, s: *mut *mut c_void, _p: i32, _f: u32) -> i32 {
    fake(u).create(STREAM, "stream_create", s)
}
unsafe extern "C" fn stream_destroy(u: *mut c_void, s: *mut c_void, _force: i32) -> i32 {
    fake(u).destroy(STREAM, "stream_destroy", s)
}
unsafe extern "C" fn stream_get_id(u: *mut c_void, s: *mut c_void, id: *mut i32) -> i32 {
    if fake(u).inject("stream_get_id") {
        return INJECTED;
    }
    // SAFETY: writable by the seam's contract.
    unsafe { id.write(((s as usize) / 16) as i32) };
    0
}
unsafe extern "C" fn event_create(u: *mut c_void, e: *mut *mut c_void, _flag: u32) -> i32 {
    fake(u).create(EVENT, "event_create", e)
}
unsafe extern "C" fn event_destroy(u: *mut c_void, e: *mut c_void) -> i32 {
    fake(u).destroy(EVENT, "event_destroy", e)
}
unsafe extern "C" fn notify_create(u: *mut c_void, n: *mut *mut c_void, _d: i32) -> i32 {
    fake(u).create(NOTIFY, "notify_create", n)
}
unsafe extern "C" fn notify_destroy(u: *mut c_void, n: *mut c_void) -> i32 {
    fake(u).destroy(NOTIFY, "notify_destroy", n)
}
unsafe extern "C" fn capability(u: *mut c_void, feat: i32, _i: i32, v: *mut i64) -> i32 {
    if fake(u).inject("get_rt_capability") {
        return INJECTED;
    }
    if feat != FEATURE_TYPE_PERSISTENT_STREAM_UNLIMITED_DEPTH {
        return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    }
    // SAFETY: writable by the seam's contract.
    unsafe { v.write(0) };
    0
}
unsafe extern "C" fn limits(u: *mut c_void, _ty: u32, s: *mut u32, t: *mut u32) -> i32 {
    if fake(u).inject("max_stream_and_task") {
        return INJECTED;
    }
    // SAFETY: writable by the seam's contract.
    unsafe {
        s.write(1024);
        t.write(1024);
    }
    0
}

/// A fresh fake (leaked: the runtime table keeps a raw pointer to it) and its runtime.
pub fn new_fake() -> (Arc<Runtime>, &'static Fake) {
    let f: &'static Fake = Box::leak(Box::default());
    f.stream_budget.store(u64::MAX, Ordering::SeqCst);
    let mut ops = RuntimeOps::empty();
    ops.user = f as *const Fake as *mut c_void;
    ops.stream_create = Some(stream_create);
    ops.stream_destroy = Some(stream_destroy);
    ops.stream_get_id = Some(stream_get_id);
    ops.event_create = Some(event_create);
    ops.event_destroy = Some(event_destroy);
    ops.notify_create = Some(notify_create);
    ops.notify_destroy = Some(notify_destroy);
    ops.get_rt_capability = Some(capability);
    ops.max_stream_and_task = Some(limits);
    (Runtime::from_ops(&ops, RuntimeSource::Registered).expect("a complete table"), f)
}
