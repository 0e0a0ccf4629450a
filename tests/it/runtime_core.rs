//! The runtime allocators, the V1 pool and the RT2 plumbing against a fake device runtime
//! registered from Rust as a seam table.

use std::collections::HashSet;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;
use stream_alloc::runtime::consts::*;
use stream_alloc::runtime::*;

/// A fake device runtime: unique handles, per-kind counters, a live set that catches double and
/// stray destroys, fail-at-the-k-th-create injection, configurable limits.
#[derive(Default)]
struct Fake {
    next: AtomicUsize,
    creates: [AtomicU64; 3],
    destroys: [AtomicU64; 3],
    forced: AtomicU64,
    /// 1-based index of the create call (any kind) that fails; 0 = none.
    fail_at: AtomicU64,
    calls: AtomicU64,
    max_tasks: AtomicU32,
    unlimited: AtomicI64,
    live: Mutex<HashSet<usize>>,
    errors: Mutex<Vec<String>>,
    last_create: Mutex<Option<(i32, u32)>>,
}

const STREAM: usize = 0;
const EVENT: usize = 1;
const NOTIFY: usize = 2;

fn fake(user: *mut c_void) -> &'static Fake {
    unsafe { &*(user as *const Fake) }
}

impl Fake {
    fn create(&self, kind: usize, out: *mut *mut c_void) -> i32 {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.fail_at.load(Ordering::SeqCst) {
            return [ACL_ERROR_RT_NO_STREAM_RESOURCE, ACL_ERROR_RT_NO_EVENT_RESOURCE, ACL_ERROR_RT_NO_NOTIFY_RESOURCE]
                [kind];
        }
        let h = 0x1000 + 16 * self.next.fetch_add(1, Ordering::SeqCst) + kind;
        self.live.lock().insert(h);
        self.creates[kind].fetch_add(1, Ordering::SeqCst);
        unsafe { out.write(h as *mut c_void) };
        0
    }
    fn destroy(&self, kind: usize, h: *mut c_void) -> i32 {
        if !self.live.lock().remove(&(h as usize)) || (h as usize) % 16 != kind {
            self.errors.lock().push(format!("destroy of unknown or dead handle {h:p} (kind {kind})"));
            return ACL_ERROR_RT_PARAM_INVALID;
        }
        self.destroys[kind].fetch_add(1, Ordering::SeqCst);
        0
    }
    fn balanced(&self) {
        assert!(self.errors.lock().is_empty(), "{:?}", self.errors.lock());
        for k in 0..3 {
            assert_eq!(self.creates[k].load(Ordering::SeqCst), self.destroys[k].load(Ordering::SeqCst), "kind {k}");
        }
        assert!(self.live.lock().is_empty());
    }
    fn count(&self, a: &[AtomicU64; 3], k: usize) -> u64 {
        a[k].load(Ordering::SeqCst)
    }
}

unsafe extern "C" fn f_stream_create(u: *mut c_void, s: *mut *mut c_void, p: i32, f: u32) -> i32 {
    *fake(u).last_create.lock() = Some((p, f));
    fake(u).create(STREAM, s)
}
unsafe extern "C" fn f_stream_destroy(u: *mut c_void, s: *mut c_void, force: i32) -> i32 {
    let r = fake(u).destroy(STREAM, s);
    if r == 0 && force != 0 {
        fake(u).forced.fetch_add(1, Ordering::SeqCst);
    }
    r
}
unsafe extern "C" fn f_stream_get_id(_u: *mut c_void, s: *mut c_void, id: *mut i32) -> i32 {
    unsafe { id.write(((s as usize) / 16) as i32) };
    0
}
unsafe extern "C" fn f_event_create(u: *mut c_void, e: *mut *mut c_void, _flag: u32) -> i32 {
    fake(u).create(EVENT, e)
}
unsafe extern "C" fn f_event_destroy(u: *mut c_void, e: *mut c_void) -> i32 {
    fake(u).destroy(EVENT, e)
}
unsafe extern "C" fn f_notify_create(u: *mut c_void, n: *mut *mut c_void, _d: i32) -> i32 {
    fake(u).create(NOTIFY, n)
}
unsafe extern "C" fn f_notify_destroy(u: *mut c_void, n: *mut c_void) -> i32 {
    fake(u).destroy(NOTIFY, n)
}
unsafe extern "C" fn f_capability(u: *mut c_void, feat: i32, _i: i32, v: *mut i64) -> i32 {
    if feat != FEATURE_TYPE_PERSISTENT_STREAM_UNLIMITED_DEPTH {
        return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
    }
    unsafe { v.write(fake(u).unlimited.load(Ordering::SeqCst)) };
    0
}
unsafe extern "C" fn f_limits(u: *mut c_void, _ty: u32, s: *mut u32, t: *mut u32) -> i32 {
    unsafe {
        s.write(1024);
        t.write(fake(u).max_tasks.load(Ordering::SeqCst));
    }
    0
}

/// The fake's table: every entry it serves but `stream_get_id`, which only [`new_fake`] adds.
fn fake_ops(f: &'static Fake) -> RuntimeOps {
    let mut ops = RuntimeOps::empty();
    ops.user = f as *const Fake as *mut c_void;
    ops.stream_create = Some(f_stream_create);
    ops.stream_destroy = Some(f_stream_destroy);
    ops.event_create = Some(f_event_create);
    ops.event_destroy = Some(f_event_destroy);
    ops.notify_create = Some(f_notify_create);
    ops.notify_destroy = Some(f_notify_destroy);
    ops.get_rt_capability = Some(f_capability);
    ops.max_stream_and_task = Some(f_limits);
    ops
}

fn new_fake() -> (Arc<Runtime>, &'static Fake) {
    let f: &'static Fake = Box::leak(Box::new(Fake::default()));
    f.max_tasks.store(1024, Ordering::SeqCst);
    let mut ops = fake_ops(f);
    ops.stream_get_id = Some(f_stream_get_id);
    (Runtime::from_ops(&ops, RuntimeSource::Registered).unwrap(), f)
}

unsafe fn header(v: *mut VecHeader) -> (usize, usize, Vec<*mut c_void>) {
    unsafe {
        let cap = (v as *const usize).read();
        let size = (v as *const usize).add(1).read();
        let data = (v as *const u8).add(56) as *const *mut c_void;
        (cap, size, (0..size).map(|i| data.add(i).read()).collect())
    }
}

#[test]
fn stream_allocator_slot0_growth_and_destroy() {
    let (rt, f) = new_fake();
    {
        let a = StreamAllocator::with_runtime(3, RT_STREAM_PERSISTENT, rt).unwrap();
        let v = a.acquire(1).unwrap();
        let (cap, size, data) = unsafe { header(v) };
        assert_eq!((cap, size, data[0]), (2024, 1, std::ptr::null_mut()));
        assert_eq!(f.count(&f.creates, STREAM), 0, "n = 1 needs only the caller's slot");
        a.set_main_stream(0xdead0 as *mut c_void);
        let v2 = a.acquire(5).unwrap();
        assert_eq!(v, v2);
        let (_, size, data) = unsafe { header(v) };
        assert_eq!(size, 5);
        assert_eq!(data[0], 0xdead0 as *mut c_void, "slot 0 is the caller's");
        assert!(data[1..].iter().all(|p| !p.is_null()));
        assert_eq!(*f.last_create.lock(), Some((3, RT_STREAM_PERSISTENT)));
        // Shrink keeps the size; the warm path creates nothing.
        assert_eq!(a.acquire(2).unwrap(), v);
        assert_eq!(unsafe { header(v) }.1, 5);
        assert_eq!(f.count(&f.creates, STREAM), 4);
        // The limit: 2023 is the most, 2024 fails before any device call.
        assert_eq!(a.acquire(2024).unwrap_err().kind, RtErrorKind::Limit);
        assert_eq!(f.count(&f.creates, STREAM), 4);
    }
    assert_eq!(f.count(&f.destroys, STREAM), 4, "slots 1..size-1, never slot 0");
    f.balanced();
}

#[test]
fn stream_allocator_full_capacity_and_partial_failure() {
    let (rt, f) = new_fake();
    {
        let a = StreamAllocator::with_runtime(0, 0, rt).unwrap();
        f.fail_at.store(4, Ordering::SeqCst);
        let e = a.acquire(10).unwrap_err();
        assert_eq!((e.kind, e.runtime_code), (RtErrorKind::Device, ACL_ERROR_RT_NO_STREAM_RESOURCE));
        assert_eq!(a.size(), 4, "the three created before the failure stay");
        assert_eq!(a.created(), 3);
        let v = a.acquire(2023).unwrap();
        assert_eq!(unsafe { header(v) }.1, 2023);
    }
    assert_eq!(f.count(&f.creates, STREAM), 2022);
    f.balanced();
}

#[test]
fn event_and_notify_allocators() {
    let (rt, f) = new_fake();
    {
        let e = EventAllocator::with_runtime(ACL_EVENT_SYNC, rt.clone()).unwrap();
        let n = NotifyAllocator::with_runtime(rt).unwrap();
        assert_eq!(e.acquire(0).map(|v| unsafe { header(v) }.1).unwrap(), 0);
        let v = e.acquire(3).unwrap();
        let (cap, size, data) = unsafe { header(v) };
        assert_eq!((cap, size), (4096, 3));
        assert!(data.iter().all(|p| !p.is_null()), "event slot 0 is not reserved");
        assert_eq!(e.acquire(4097).unwrap_err().kind, RtErrorKind::Limit);
        assert_eq!(f.count(&f.creates, EVENT), 3, "rejected before creating anything");
        let v = n.acquire(0, 2).unwrap();
        assert_eq!(unsafe { header(v) }.0, 1024);
        assert_eq!(n.acquire(0, 1024).unwrap_err().kind, RtErrorKind::Limit);
        assert!(n.acquire(0, 1023).is_ok());
        assert!(e.acquire(4096).is_ok());
    }
    assert_eq!(f.count(&f.destroys, EVENT), 4096);
    assert_eq!(f.count(&f.destroys, NOTIFY), 1023);
    f.balanced();
}

#[test]
fn warm_acquire_from_many_threads() {
    let (rt, f) = new_fake();
    {
        let a = Arc::new(StreamAllocator::with_runtime(0, 0, rt).unwrap());
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let a = a.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        let v = a.acquire(1 + (i * 7 + t) % 64).unwrap();
                        assert!(unsafe { header(v) }.1 > (i * 7 + t) % 64);
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(a.size(), 64);
    }
    assert_eq!(f.count(&f.creates, STREAM), 63);
    f.balanced();
}

const P: u32 = RT_STREAM_PERSISTENT;

#[test]
fn pool_without_reuse_is_ge_exact() {
    let (rt, f) = new_fake();
    let pool = ReusableStreamPool::with_runtime(PoolOptions::default(), rt);
    let (a, ra) = pool.get_or_create(1, 0, P, 10).unwrap();
    let (b, rb) = pool.get_or_create(2, 0, P, 10).unwrap();
    assert!(!ra && !rb && a != b, "never reuse by default");
    assert_eq!(pool.stream_id(a), Some((a as usize / 16) as i32));
    pool.destroy(a, false).unwrap();
    pool.destroy(a, false).unwrap(); // double destroy: success, no device call
    pool.destroy(b, true).unwrap();
    assert_eq!(f.forced.load(Ordering::SeqCst), 1);
    assert_eq!(pool.destroy(0x77 as *mut c_void, false).unwrap_err().kind, RtErrorKind::UnknownHandle);
    assert_eq!(pool.destroy(std::ptr::null_mut(), false).unwrap_err().kind, RtErrorKind::Null);
    assert_eq!(pool.stats().live, 0);
    f.balanced();
}

#[test]
fn pool_reuse_rules() {
    let (rt, f) = new_fake();
    f.max_tasks.store(200, Ordering::SeqCst);
    let pool = ReusableStreamPool::with_runtime(PoolOptions { reuse: true, task_limit: None }, rt);
    let (a, _) = pool.get_or_create(1, 0, P, 100).unwrap();
    let (b, _) = pool.get_or_create(1, 0, P, 20).unwrap();
    assert_ne!(a, b, "a model never gets its own stream back");
    // Model 2 gets the least-loaded stream of model 1.
    let (c, reused) = pool.get_or_create(2, 0, P, 30).unwrap();
    assert!(reused);
    assert_eq!(c, b);
    assert_eq!(pool.models_of(b), vec![1, 2]);
    assert_eq!(pool.task_num_of(b), Some(50));
    // Budget: 50 + 130 + 27 > 200 on b; a has 100 + 130 + 27 > 200 too: new stream.
    let (d, reused) = pool.get_or_create(3, 0, P, 130).unwrap();
    assert!(!reused && d != a && d != b);
    // Budget: 50 + 100 + 27 ≤ 200 fits b (least loaded).
    assert_eq!(pool.get_or_create(4, 0, P, 100).unwrap(), (b, true));
    // Other key, non-persistent and FORBIDDEN_DEFAULT streams are never shared.
    assert!(!pool.get_or_create(5, 1, P, 0).unwrap().1);
    let (r1, _) = pool.get_or_create(5, 0, 0, 0).unwrap();
    let (r2, s2) = pool.get_or_create(6, 0, 0, 0).unwrap();
    assert!(!s2 && r1 != r2);
    assert!(!pool.get_or_create(7, 0, P | RT_STREAM_FORBIDDEN_DEFAULT, 0).unwrap().1);
    let created = f.count(&f.creates, STREAM);
    assert_eq!(created, 7);
    // Reference counting: b has three grants; the device stream dies with the last.
    pool.destroy(b, false).unwrap();
    pool.destroy(b, false).unwrap();
    assert_eq!(f.count(&f.destroys, STREAM), 0);
    pool.destroy(b, true).unwrap();
    assert_eq!((f.count(&f.destroys, STREAM), f.forced.load(Ordering::SeqCst)), (1, 1));
    pool.destroy(b, false).unwrap(); // already destroyed: success
    let st = pool.stats();
    assert_eq!((st.created, st.reused, st.live), (7, 2, 6));
    for h in [a, d, r1, r2] {
        pool.destroy(h, false).unwrap();
    }
    assert_eq!(pool.stats().live, 2);
}

#[test]
fn pool_unlimited_depth_and_override_and_failures() {
    let (rt, f) = new_fake();
    f.max_tasks.store(10, Ordering::SeqCst);
    f.unlimited.store(1, Ordering::SeqCst);
    let pool = ReusableStreamPool::with_runtime(PoolOptions { reuse: true, task_limit: None }, rt.clone());
    let (a, _) = pool.get_or_create(1, 0, P, 5000).unwrap();
    assert_eq!(pool.get_or_create(2, 0, P, 5000).unwrap(), (a, true), "unlimited depth: no budget");
    let pool2 = ReusableStreamPool::with_runtime(PoolOptions::parse("reuse=on, task_limit=100").unwrap(), rt);
    let (b, _) = pool2.get_or_create(1, 0, P, 73).unwrap();
    assert_eq!(pool2.get_or_create(2, 0, P, 0).unwrap(), (b, true), "73 + 0 + 27 ≤ 100");
    assert!(!pool2.get_or_create(3, 0, P, 1).unwrap().1, "73 + 1 + 27 > 100");
    // A failed create leaves the pool unchanged.
    f.fail_at.store(f.calls.load(Ordering::SeqCst) + 1, Ordering::SeqCst);
    let e = pool2.get_or_create(9, 0, 0, 0).unwrap_err();
    assert_eq!(e.runtime_code, ACL_ERROR_RT_NO_STREAM_RESOURCE);
    assert_eq!(pool2.stats().live, 2);
    assert!(PoolOptions::parse("reuse=maybe").is_err());
    assert!(PoolOptions::parse("color=red").unwrap_err().message.contains("color"));
}

#[test]
fn pool_stress_sixteen_threads() {
    let (rt, f) = new_fake();
    for reuse in [false, true] {
        let pool =
            Arc::new(ReusableStreamPool::with_runtime(PoolOptions { reuse, task_limit: Some(1 << 20) }, rt.clone()));
        let threads: Vec<_> = (0..16u32)
            .map(|t| {
                let pool = pool.clone();
                std::thread::spawn(move || {
                    let mut held = Vec::new();
                    for i in 0..400u32 {
                        let (s, _) = pool.get_or_create(t * 1000 + i % 7, 0, P, 1).unwrap();
                        held.push(s);
                        if i % 3 == 2 {
                            for s in held.drain(..) {
                                pool.destroy(s, i % 2 == 0).unwrap();
                            }
                        }
                    }
                    for s in held {
                        pool.destroy(s, false).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let st = pool.stats();
        assert_eq!((st.live, st.grants), (0, 0));
        assert_eq!(st.created, st.destroyed);
    }
    f.balanced();
}

#[test]
fn registered_table_validation() {
    let _guard = crate::common::RUNTIME_LOCK.lock();
    let mut ops = RuntimeOps::empty();
    assert!(Runtime::from_ops(&ops, RuntimeSource::Registered).unwrap_err().message.contains("stream_create"));
    ops.struct_size = 8;
    assert!(Runtime::from_ops(&ops, RuntimeSource::Registered).unwrap_err().message.contains("struct_size"));
    ops.struct_size = std::mem::size_of::<RuntimeOps>() as u32;
    ops.abi_version = 3;
    assert!(Runtime::from_ops(&ops, RuntimeSource::Registered).unwrap_err().message.contains("abi_version"));
}

#[test]
fn global_registration_and_queries() {
    // The only test touching the process-wide registration.
    let (_, f) = new_fake();
    let ops = fake_ops(f);
    f.max_tasks.store(2013, Ordering::SeqCst);
    Runtime::register(Some(&ops)).unwrap();
    assert_eq!(Runtime::current().unwrap().source(), RuntimeSource::Registered);
    assert_eq!(task_limits(), Some((1024, 2013)));
    assert_eq!(unlimited_depth(), Some(false));
    {
        let a = StreamAllocator::new(0, 0).unwrap();
        a.acquire(3).unwrap();
        Runtime::register(None).unwrap();
        // The allocator keeps the table it created its streams with.
    }
    f.balanced();
    assert_eq!(f.count(&f.destroys, STREAM), 2);
}

#[test]
fn resource_counts_and_all_or_none() {
    let c = ResourceCounts::from_totals(6, 2, 9, 0, StaticCounts::default()).unwrap();
    assert_eq!(
        (c.reusable_stream_num, c.reusable_event_num, c.reusable_notify_num, c.attached_stream_num, c.stream_num()),
        (4, 9, 0, 2, 6)
    );
    assert_eq!(ResourceCounts::from_totals(1, 0, 5, 5, StaticCounts::default()).unwrap().stream_num(), 1);
    let sub = StaticCounts { streams: 3, events: 4, notifies: 0 };
    let c = ResourceCounts::from_totals(6, 2, 9, 0, sub).unwrap();
    assert_eq!((c.reusable_stream_num, c.reusable_event_num), (1, 5));
    assert!(ResourceCounts::from_totals(6, 2, 9, 0, StaticCounts { streams: 4, ..sub }).is_err());

    let (rt, f) = new_fake();
    {
        let s = StreamAllocator::with_runtime(0, 0, rt.clone()).unwrap();
        let e = EventAllocator::with_runtime(ACL_EVENT_SYNC, rt.clone()).unwrap();
        let n = NotifyAllocator::with_runtime(rt.clone()).unwrap();
        let (bs, be, bn) = (
            StreamAllocator::with_runtime(0, 0, rt.clone()).unwrap(),
            EventAllocator::with_runtime(ACL_EVENT_SYNC, rt.clone()).unwrap(),
            NotifyAllocator::with_runtime(rt).unwrap(),
        );
        let counts = ResourceCounts {
            reusable_stream_num: 3,
            reusable_event_num: 2,
            reusable_notify_num: 1,
            attached_stream_num: 1,
        };
        let mixed = ExternalAllocators { stream: Some(&s), event: Some(&e), notify: None };
        let err = occupy(&counts, 0x5 as *mut c_void, 0, &mixed, (&bs, &be, &bn)).unwrap_err();
        assert_eq!(err.kind, RtErrorKind::Invalid);
        assert!(err.message.contains("notify null"));
        let all = ExternalAllocators { stream: Some(&s), event: Some(&e), notify: Some(&n) };
        let o = occupy(&counts, 0x5 as *mut c_void, 0, &all, (&bs, &be, &bn)).unwrap();
        let (_, size, data) = unsafe { header(o.streams) };
        assert_eq!((size, data[0]), (4, 0x5 as *mut c_void));
        assert_eq!(unsafe { header(o.events) }.1, 2);
        assert_eq!(bs.size(), 1, "built-ins untouched");
        occupy(&counts, 0x6 as *mut c_void, 0, &ExternalAllocators::default(), (&bs, &be, &bn)).unwrap();
        assert_eq!(bs.handles()[0], 0x6 as *mut c_void);
    }
    f.balanced();
}

#[test]
fn resource_counts_from_allocation() {
    use stream_alloc::compile::summary::ModelCounts;
    use stream_alloc::graph::SyncKind;
    // Physical and attached streams, the sync kind, sync ids and the split's events.
    let alloc = |physical: u32, attached: u32, kind: SyncKind, syncs: u32, split_events: u32| {
        let (event_num, notify_num) = if kind == SyncKind::Event { (syncs, 0) } else { (split_events, syncs) };
        ModelCounts {
            logical_stream_num: physical,
            stream_num: physical,
            attached_stream_num: attached,
            event_num,
            notify_num,
        }
    };
    let c = ResourceCounts::from_model_counts(&alloc(5, 2, SyncKind::Event, 9, 2), StaticCounts::default()).unwrap();
    assert_eq!(
        (c.reusable_stream_num, c.attached_stream_num, c.reusable_event_num, c.reusable_notify_num),
        (5, 2, 9, 0)
    );
    let c = ResourceCounts::from_model_counts(&alloc(3, 0, SyncKind::Notify, 4, 0), StaticCounts::default()).unwrap();
    assert_eq!((c.reusable_stream_num, c.reusable_event_num, c.reusable_notify_num), (3, 0, 4));
    // Notify mode: the split's syncs are events of their own.
    let c = ResourceCounts::from_model_counts(&alloc(4, 0, SyncKind::Notify, 4, 3), StaticCounts::default()).unwrap();
    assert_eq!((c.reusable_stream_num, c.reusable_event_num, c.reusable_notify_num), (4, 3, 4));
    let c = ResourceCounts::from_model_counts(&alloc(1, 0, SyncKind::Event, 0, 0), StaticCounts::default()).unwrap();
    assert_eq!((c.reusable_stream_num, c.stream_num()), (1, 1));
}
