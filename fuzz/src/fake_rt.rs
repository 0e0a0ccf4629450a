//! A fake device runtime for the reliability tests and fuzz targets: unique handles, a live set
//! that catches double and stray destroys, and "the k-th device call fails" injection over
//! every entry of the table (create, destroy, get-id, capability and limit queries, records,
//! waits, event queries and synchronisations, device malloc and free).
//!
//! It also models the device as the memory pool sees it ([`Dev`]): every stream is a queue of
//! positions (kernel launches, records, waits) with a completed prefix; waits make a stream's
//! progress depend on another's; a vector clock per stream says which positions of other
//! streams its tail is ordered after. Tests launch "kernels" that use device memory
//! ([`Fake::launch`]); the fake reports a race (in `errors`) when a launch uses memory another
//! stream may still be using without completion or ordering, and when `aclrtFree` returns
//! memory a queued kernel still uses. Events complete when the device is advanced
//! ([`Fake::run_all`]), synchronised, or, if asked, on every k-th query.
//! The limit and capability queries answer what a test sets ([`Fake::tasks`], [`Fake::unlimited`],
//! [`Fake::limit_fails`]), and a test may script the addresses the device hands out
//! ([`Fake::addresses`]: a real runtime hands a freed address out again).
//! Shared by tests/ (through `#[path]`) and fuzz/ so both check the same model.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};

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
    /// Device memory in bytes; `aclrtMalloc` beyond it fails with
    /// `ACL_ERROR_RT_MEMORY_ALLOCATION`. `u64::MAX`: unlimited.
    pub mem_capacity: AtomicU64,
    /// A query completes the event when the running query count is a multiple of this; 0:
    /// queries never advance the device.
    pub query_completes_every: AtomicU64,
    pub queries: AtomicU64,
    pub syncs: AtomicU64,
    pub dev: Mutex<Dev>,
    /// `(priority, flags)` of the last stream create.
    pub last_create: Mutex<Option<(i32, u32)>>,
    /// Stream destroys with `force` set.
    pub forced: AtomicU64,
    /// Tasks a stream holds, as `max_stream_and_task` answers for normal `[0]` and huge `[1]`
    /// streams (1024 each in [`new_fake`]).
    pub tasks: [AtomicU32; 2],
    /// Runtime code `max_stream_and_task` fails with for normal `[0]` and huge `[1]` streams;
    /// 0: it answers.
    pub limit_fails: [AtomicI32; 2],
    /// The unlimited-depth capability's value.
    pub unlimited: AtomicI64,
    /// Addresses the next stream creates hand out, before the fake's own unique ones.
    pub addresses: Mutex<VecDeque<usize>>,
}

/// A stream of the device model.
#[derive(Default, Debug)]
pub struct Lane {
    pub tail: u64,
    pub done: u64,
    /// Highest position of each stream this stream's tail is ordered after (itself included).
    pub clock: HashMap<usize, u64>,
    /// `(position, stream, position)`: at this position the stream waits for the other's.
    waits: Vec<(u64, usize, u64)>,
}

#[derive(Clone, Debug)]
pub struct Rec {
    pub stream: usize,
    pub pos: u64,
    clock: HashMap<usize, u64>,
    time: u64,
}

/// The device: streams, event records, memory and its uses.
#[derive(Default, Debug)]
pub struct Dev {
    pub lanes: HashMap<usize, Lane>,
    pub events: HashMap<usize, Rec>,
    /// Live allocations: address → size.
    pub mem: BTreeMap<usize, usize>,
    pub mem_bytes: u64,
    /// Allocations whose `aclrtFree` was failed by injection (still live on the device).
    pub free_failed: BTreeSet<usize>,
    /// Per allocation, the last launch position of each `(stream, is_write)` that used it.
    uses: HashMap<usize, HashMap<(usize, bool), u64>>,
    next_addr: usize,
    time: u64,
    /// Races seen: a launch or free while another stream may still use the memory.
    pub races: Vec<String>,
}

impl Dev {
    fn lane(&mut self, s: usize) -> &mut Lane {
        self.lanes.entry(s).or_default()
    }

    fn is_done(&self, s: usize, pos: u64) -> bool {
        self.lanes.get(&s).is_some_and(|l| l.done >= pos)
    }

    /// Runs stream `s` up to `target`, first running what its waits depend on.
    pub fn run(&mut self, s: usize, target: u64) {
        let (done, deps): (u64, Vec<(usize, u64)>) = {
            let l = self.lane(s);
            let target = target.min(l.tail);
            if l.done >= target {
                return;
            }
            let deps = l.waits.iter().filter(|w| w.0 > l.done && w.0 <= target).map(|w| (w.1, w.2)).collect();
            (target, deps)
        };
        for (t, q) in deps {
            self.run(t, q);
        }
        let l = self.lane(s);
        l.done = l.done.max(done);
    }

    pub fn run_all(&mut self) {
        let mut ids: Vec<usize> = self.lanes.keys().copied().collect();
        ids.sort_unstable();
        for s in ids {
            self.run(s, u64::MAX);
        }
    }

    fn rec_done(&self, r: &Rec) -> bool {
        self.is_done(r.stream, r.pos)
    }
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
        let scripted = if kind == STREAM { self.addresses.lock().pop_front() } else { None };
        let h = scripted.unwrap_or_else(|| 0x1000 + 16 * self.next.fetch_add(1, Ordering::SeqCst) + kind);
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
        let dev = self.dev.lock();
        if !dev.races.is_empty() {
            return Err(format!("device saw races: {:?}", dev.races));
        }
        let mem: BTreeSet<usize> = dev.mem.keys().copied().collect();
        if mem != dev.free_failed {
            return Err(format!(
                "device memory still allocated {:x?} ({} bytes) is not exactly the refused frees {:x?}",
                mem, dev.mem_bytes, dev.free_failed
            ));
        }
        Ok(())
    }

    /// How a call on `handles` (each with its kind) ends before it does anything: an injected
    /// failure, or a handle that is not live (the error `what` recorded). `None`: the call goes on.
    fn refuse(
        &self,
        call: &'static str,
        handles: &[(*mut c_void, usize)],
        what: impl FnOnce() -> String,
    ) -> Option<i32> {
        if self.inject(call) {
            return Some(INJECTED);
        }
        if !handles.iter().all(|&(h, kind)| self.is_live(h, kind)) {
            self.errors.lock().push(what());
            return Some(ACL_ERROR_RT_PARAM_INVALID);
        }
        None
    }

    fn is_live(&self, h: *mut c_void, kind: usize) -> bool {
        (h as usize) % 16 == kind && self.live.lock().contains(&(h as usize))
    }

    /// A kernel on `stream` writing device memory at `ptr`: a race is recorded when another
    /// stream's earlier read or write of it is neither completed nor ordered before this
    /// stream's tail.
    pub fn launch(&self, stream: *mut c_void, ptr: *mut c_void) {
        self.access(stream, ptr, true)
    }

    /// A kernel on `stream` reading `ptr`: races only with other streams' writes.
    pub fn launch_read(&self, stream: *mut c_void, ptr: *mut c_void) {
        self.access(stream, ptr, false)
    }

    fn access(&self, stream: *mut c_void, ptr: *mut c_void, write: bool) {
        let (s, p) = (stream as usize, ptr as usize);
        let mut d = self.dev.lock();
        if !d.mem.contains_key(&p) {
            d.races.push(format!("launch on stream {s:#x} uses {p:#x}, which is not allocated"));
            return;
        }
        let clock = d.lane(s).clock.clone();
        let prior: Vec<((usize, bool), u64)> =
            d.uses.get(&p).map(|u| u.iter().map(|(&k, &q)| (k, q)).collect()).unwrap_or_default();
        for ((t, w), q) in prior {
            if t != s && (w || write) && !d.is_done(t, q) && clock.get(&t).copied().unwrap_or(0) < q {
                d.races.push(format!(
                    "launch on stream {s:#x} {} {p:#x} while the {} at position {q} of stream {t:#x} may still run",
                    if write { "writes" } else { "reads" },
                    if w { "write" } else { "read" }
                ));
            }
        }
        let l = d.lane(s);
        l.tail += 1;
        let pos = l.tail;
        l.clock.insert(s, pos);
        d.uses.entry(p).or_default().insert((s, write), pos);
    }

    /// The device runs every queued position.
    pub fn run_all(&self) {
        self.dev.lock().run_all();
    }

    /// Device memory allocated now, in bytes.
    pub fn mem_bytes(&self) -> u64 {
        self.dev.lock().mem_bytes
    }

    fn record(&self, e: *mut c_void, s: *mut c_void) -> i32 {
        if let Some(rc) = self.refuse("event_record", &[(e, EVENT), (s, STREAM)], || {
            format!("event_record of event {e:p} on stream {s:p}: unknown handle")
        }) {
            return rc;
        }
        let mut d = self.dev.lock();
        d.time += 1;
        let time = d.time;
        let l = d.lane(s as usize);
        l.tail += 1;
        let pos = l.tail;
        l.clock.insert(s as usize, pos);
        let rec = Rec { stream: s as usize, pos, clock: l.clock.clone(), time };
        d.events.insert(e as usize, rec);
        0
    }

    fn wait(&self, s: *mut c_void, e: *mut c_void) -> i32 {
        if let Some(rc) = self.refuse("stream_wait_event", &[(e, EVENT), (s, STREAM)], || {
            format!("stream_wait_event of stream {s:p} on event {e:p}: unknown handle")
        }) {
            return rc;
        }
        let mut d = self.dev.lock();
        let Some(rec) = d.events.get(&(e as usize)).cloned() else { return 0 };
        let l = d.lane(s as usize);
        l.tail += 1;
        let at = l.tail;
        l.waits.push((at, rec.stream, rec.pos));
        for (t, q) in rec.clock {
            let c = l.clock.entry(t).or_insert(0);
            *c = (*c).max(q);
        }
        0
    }

    fn query(&self, e: *mut c_void, done: *mut i32) -> i32 {
        if let Some(rc) = self.refuse("event_query", &[(e, EVENT)], || format!("event_query of unknown event {e:p}")) {
            return rc;
        }
        let n = self.queries.fetch_add(1, Ordering::SeqCst) + 1;
        let every = self.query_completes_every.load(Ordering::SeqCst);
        let mut d = self.dev.lock();
        let complete = match d.events.get(&(e as usize)).cloned() {
            None => true,
            Some(r) if d.rec_done(&r) => true,
            Some(r) if every != 0 && n % every == 0 => {
                d.run(r.stream, r.pos);
                true
            }
            Some(_) => false,
        };
        // SAFETY: writable by the seam's contract.
        unsafe { done.write(i32::from(complete)) };
        0
    }

    fn synchronize(&self, e: *mut c_void) -> i32 {
        if let Some(rc) =
            self.refuse("event_synchronize", &[(e, EVENT)], || format!("event_synchronize of unknown event {e:p}"))
        {
            return rc;
        }
        self.syncs.fetch_add(1, Ordering::SeqCst);
        let mut d = self.dev.lock();
        if let Some(r) = d.events.get(&(e as usize)).cloned() {
            d.run(r.stream, r.pos);
        }
        0
    }

    fn elapsed(&self, ms: *mut f32, a: *mut c_void, b: *mut c_void) -> i32 {
        if self.inject("event_elapsed_time") {
            return INJECTED;
        }
        let d = self.dev.lock();
        match (d.events.get(&(a as usize)), d.events.get(&(b as usize))) {
            (Some(ra), Some(rb)) if d.rec_done(ra) && d.rec_done(rb) => {
                // SAFETY: writable by the seam's contract.
                unsafe { ms.write((rb.time as f32 - ra.time as f32) * 0.25) };
                0
            }
            _ => ACL_ERROR_RT_PARAM_INVALID,
        }
    }

    fn malloc(&self, p: *mut *mut c_void, size: usize) -> i32 {
        if self.inject("mem_malloc") {
            return INJECTED;
        }
        let mut d = self.dev.lock();
        if d.mem_bytes.saturating_add(size as u64) > self.mem_capacity.load(Ordering::SeqCst) {
            return ACL_ERROR_RT_MEMORY_ALLOCATION;
        }
        if d.next_addr == 0 {
            d.next_addr = 0x7e00_0000_0000;
        }
        let addr = d.next_addr;
        d.next_addr += size.next_multiple_of(4096).max(4096);
        d.mem.insert(addr, size);
        d.mem_bytes += size as u64;
        // SAFETY: writable by the seam's contract.
        unsafe { p.write(addr as *mut c_void) };
        0
    }

    fn free(&self, p: *mut c_void) -> i32 {
        let addr = p as usize;
        if self.inject("mem_free") {
            self.dev.lock().free_failed.insert(addr);
            return INJECTED;
        }
        let mut d = self.dev.lock();
        let Some(size) = d.mem.remove(&addr) else {
            drop(d);
            self.errors.lock().push(format!("mem_free of unknown or freed pointer {p:p}"));
            return ACL_ERROR_RT_PARAM_INVALID;
        };
        d.free_failed.remove(&addr);
        d.mem_bytes -= size as u64;
        for ((t, _), q) in d.uses.remove(&addr).unwrap_or_default() {
            if !d.is_done(t, q) {
                d.races.push(format!("aclrtFree of {addr:#x} while position {q} of stream {t:#x} may still use it"));
            }
        }
        0
    }
}

fn fake(user: *mut c_void) -> &'static Fake {
    // SAFETY: `user` is the leaked Fake registered with the table.
    unsafe { &*(user as *const Fake) }
}

unsafe extern "C" fn stream_create(u: *mut c_void, s: *mut *mut c_void, p: i32, f: u32) -> i32 {
    *fake(u).last_create.lock() = Some((p, f));
    fake(u).create(STREAM, "stream_create", s)
}
unsafe extern "C" fn stream_destroy(u: *mut c_void, s: *mut c_void, force: i32) -> i32 {
    let rc = fake(u).destroy(STREAM, "stream_destroy", s);
    if rc == 0 && force != 0 {
        fake(u).forced.fetch_add(1, Ordering::SeqCst);
    }
    rc
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
    unsafe { v.write(fake(u).unlimited.load(Ordering::SeqCst)) };
    0
}
unsafe extern "C" fn limits(u: *mut c_void, ty: u32, s: *mut u32, t: *mut u32) -> i32 {
    let f = fake(u);
    if f.inject("max_stream_and_task") {
        return INJECTED;
    }
    let k = usize::from(ty == RT_HUGE_STREAM);
    let rc = f.limit_fails[k].load(Ordering::SeqCst);
    if rc != 0 {
        return rc;
    }
    // SAFETY: writable by the seam's contract.
    unsafe {
        s.write(1024);
        t.write(f.tasks[k].load(Ordering::SeqCst));
    }
    0
}

unsafe extern "C" fn event_record(u: *mut c_void, e: *mut c_void, s: *mut c_void) -> i32 {
    fake(u).record(e, s)
}
unsafe extern "C" fn stream_wait_event(u: *mut c_void, s: *mut c_void, e: *mut c_void) -> i32 {
    fake(u).wait(s, e)
}
unsafe extern "C" fn event_query(u: *mut c_void, e: *mut c_void, done: *mut i32) -> i32 {
    fake(u).query(e, done)
}
unsafe extern "C" fn event_synchronize(u: *mut c_void, e: *mut c_void) -> i32 {
    fake(u).synchronize(e)
}
unsafe extern "C" fn event_elapsed_time(u: *mut c_void, ms: *mut f32, a: *mut c_void, b: *mut c_void) -> i32 {
    fake(u).elapsed(ms, a, b)
}
unsafe extern "C" fn mem_malloc(u: *mut c_void, p: *mut *mut c_void, size: usize, _policy: u32) -> i32 {
    fake(u).malloc(p, size)
}
unsafe extern "C" fn mem_free(u: *mut c_void, p: *mut c_void) -> i32 {
    fake(u).free(p)
}

/// A fresh fake (leaked: the runtime table keeps a raw pointer to it) and its runtime.
pub fn new_fake() -> (Arc<Runtime>, &'static Fake) {
    let f: &'static Fake = Box::leak(Box::default());
    f.stream_budget.store(u64::MAX, Ordering::SeqCst);
    f.mem_capacity.store(u64::MAX, Ordering::SeqCst);
    for t in &f.tasks {
        t.store(1024, Ordering::SeqCst);
    }
    (Runtime::from_ops(&f.ops(), RuntimeSource::Registered).expect("a complete table"), f)
}

impl Fake {
    /// The seam table that calls this fake, for [`Runtime::from_ops`] or [`Runtime::register`].
    pub fn ops(&'static self) -> RuntimeOps {
        let mut ops = RuntimeOps::empty();
        ops.user = self as *const Fake as *mut c_void;
        ops.stream_create = Some(stream_create);
        ops.stream_destroy = Some(stream_destroy);
        ops.stream_get_id = Some(stream_get_id);
        ops.event_create = Some(event_create);
        ops.event_destroy = Some(event_destroy);
        ops.notify_create = Some(notify_create);
        ops.notify_destroy = Some(notify_destroy);
        ops.get_rt_capability = Some(capability);
        ops.max_stream_and_task = Some(limits);
        ops.event_record = Some(event_record);
        ops.stream_wait_event = Some(stream_wait_event);
        ops.event_query = Some(event_query);
        ops.event_synchronize = Some(event_synchronize);
        ops.event_elapsed_time = Some(event_elapsed_time);
        ops.mem_malloc = Some(mem_malloc);
        ops.mem_free = Some(mem_free);
        ops
    }
}
