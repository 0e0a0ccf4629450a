//! The runtime allocators, the V1 pool and the RT2 plumbing against a fake device runtime
//! registered from Rust as a seam table (`fuzz/src/fake_rt.rs`).

use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::fake_rt::{EVENT, NOTIFY, STREAM, new_fake};
use stream_alloc::runtime::consts::*;
use stream_alloc::runtime::*;

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
    f.check_balanced().unwrap();
}

#[test]
fn stream_allocator_full_capacity_and_partial_failure() {
    let (rt, f) = new_fake();
    {
        let a = StreamAllocator::with_runtime(0, 0, rt).unwrap();
        // The device has three streams left: the fourth create fails.
        f.stream_budget.store(3, Ordering::SeqCst);
        let e = a.acquire(10).unwrap_err();
        assert_eq!((e.kind, e.runtime_code), (RtErrorKind::Device, ACL_ERROR_RT_NO_STREAM_RESOURCE));
        assert_eq!(a.size(), 4, "the three created before the failure stay");
        assert_eq!(a.created(), 3);
        f.stream_budget.store(u64::MAX, Ordering::SeqCst);
        let v = a.acquire(2023).unwrap();
        assert_eq!(unsafe { header(v) }.1, 2023);
    }
    assert_eq!(f.count(&f.creates, STREAM), 2022);
    f.check_balanced().unwrap();
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
    f.check_balanced().unwrap();
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
    f.check_balanced().unwrap();
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
    f.check_balanced().unwrap();
}

#[test]
fn pool_reuse_rules() {
    let (rt, f) = new_fake();
    f.tasks[0].store(200, Ordering::SeqCst);
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
    f.tasks[0].store(10, Ordering::SeqCst);
    f.unlimited.store(1, Ordering::SeqCst);
    let pool = ReusableStreamPool::with_runtime(PoolOptions { reuse: true, task_limit: None }, rt.clone());
    let (a, _) = pool.get_or_create(1, 0, P, 5000).unwrap();
    assert_eq!(pool.get_or_create(2, 0, P, 5000).unwrap(), (a, true), "unlimited depth: no budget");
    let pool2 = ReusableStreamPool::with_runtime(PoolOptions::parse("reuse=on, task_limit=100").unwrap(), rt);
    let (b, _) = pool2.get_or_create(1, 0, P, 73).unwrap();
    assert_eq!(pool2.get_or_create(2, 0, P, 0).unwrap(), (b, true), "73 + 0 + 27 ≤ 100");
    assert!(!pool2.get_or_create(3, 0, P, 1).unwrap().1, "73 + 1 + 27 > 100");
    // A failed create (the device has no stream left) leaves the pool unchanged.
    f.stream_budget.store(0, Ordering::SeqCst);
    let e = pool2.get_or_create(9, 0, 0, 0).unwrap_err();
    assert_eq!(e.runtime_code, ACL_ERROR_RT_NO_STREAM_RESOURCE);
    assert_eq!(pool2.stats().live, 2);
    assert!(PoolOptions::parse("reuse=maybe").is_err());
    assert!(PoolOptions::parse("color=red").unwrap_err().message.contains("color"));
}

/// A device that hands out `addresses` for the next stream creates (a real runtime reuses a
/// freed address): the pool's records, not the handles, tell its streams apart.
fn fake_handing_out(addresses: &[usize]) -> (Arc<Runtime>, &'static crate::fake_rt::Fake) {
    let (rt, f) = new_fake();
    f.addresses.lock().extend(addresses);
    (rt, f)
}

const REUSE: PoolOptions = PoolOptions { reuse: true, task_limit: Some(1 << 20) };

#[test]
fn pool_an_address_handed_out_again_is_a_new_stream() {
    let (rt, f) = fake_handing_out(&[0x100, 0x100]);
    let pool = ReusableStreamPool::with_runtime(PoolOptions::default(), rt);
    let (a, _) = pool.get_or_create(1, 0, P, 5).unwrap();
    pool.destroy(a, false).unwrap();
    let (b, _) = pool.get_or_create(2, 0, P, 7).unwrap();
    assert_eq!((a as usize, b as usize), (0x100, 0x100));
    assert_eq!(pool.models_of(b), vec![2]);
    assert_eq!(pool.task_num_of(b), Some(7));
    pool.destroy(b, false).unwrap(); // the new stream: a device call
    pool.destroy(b, false).unwrap(); // now destroyed: none
    assert_eq!(f.count(&f.destroys, STREAM), 2);
    let st = pool.stats();
    assert_eq!((st.created, st.destroyed, st.live, st.grants), (2, 2, 0, 0));
    assert_eq!(pool.stream_id(b), None);
    f.check_balanced().unwrap();
}

#[test]
fn pool_a_freed_slot_reused_by_a_new_stream_is_shared_correctly() {
    let (rt, f) = fake_handing_out(&[0x100, 0x200, 0x300]);
    let pool = ReusableStreamPool::with_runtime(REUSE, rt);
    let (a, _) = pool.get_or_create(1, 0, P, 5).unwrap();
    pool.destroy(a, false).unwrap();
    let (b, shared) = pool.get_or_create(1, 0, P, 5).unwrap();
    assert_eq!((b as usize, shared), (0x200, false), "a destroyed stream is never granted");
    assert_eq!(pool.get_or_create(2, 0, P, 5).unwrap(), (b, true));
    assert_eq!(pool.models_of(b), vec![1, 2]);
    assert_eq!(pool.task_num_of(b), Some(10));
    pool.destroy(b, false).unwrap();
    pool.destroy(b, false).unwrap();
    let (c, shared) = pool.get_or_create(3, 0, P, 5).unwrap();
    assert_eq!((c as usize, shared), (0x300, false), "the dead stream left the reuse index");
    // 0x100 and 0x200 were destroyed on the device; 0x300 lives.
    assert_eq!(f.count(&f.destroys, STREAM), 2);
    assert_eq!(f.live.lock().iter().copied().collect::<Vec<_>>(), [0x300]);
    pool.destroy(c, false).unwrap();
    f.check_balanced().unwrap();
}

#[test]
fn pool_a_live_address_handed_out_again_retires_the_old_record() {
    let (rt, f) = fake_handing_out(&[0x100, 0x100]);
    let pool = ReusableStreamPool::with_runtime(REUSE, rt);
    let (a, _) = pool.get_or_create(1, 0, P, 5).unwrap();
    // Same model: not shared, so the runtime is asked, and answers the live address.
    let (b, shared) = pool.get_or_create(1, 0, P, 9).unwrap();
    assert_eq!((a as usize, b as usize, shared), (0x100, 0x100, false));
    let st = pool.stats();
    assert_eq!((st.created, st.live, st.grants), (2, 1, 1));
    assert_eq!(pool.task_num_of(b), Some(9), "the newest record answers for the address");
    assert_eq!(pool.get_or_create(2, 0, P, 1).unwrap(), (b, true), "one entry in the reuse index");
    assert_eq!(pool.task_num_of(b), Some(10));
    pool.destroy(b, false).unwrap();
    pool.destroy(b, false).unwrap();
    pool.destroy(b, false).unwrap();
    assert_eq!(f.count(&f.destroys, STREAM), 1, "one device stream at 0x100, destroyed once");
    assert_eq!(pool.stats().live, 0);
    f.check_balanced().unwrap();
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
    f.check_balanced().unwrap();
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
    let ops = f.ops();
    f.tasks[0].store(2013, Ordering::SeqCst);
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
    f.check_balanced().unwrap();
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
    f.check_balanced().unwrap();
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
