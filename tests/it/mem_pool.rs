//! MindSpore's stream-ordered memory pool and the user-level stream/event operations, against
//! the fake runtime of `fuzz/src/fake_rt.rs`, which models stream order, event completion and
//! device memory and reports any launch that uses memory another stream may still be using.
//! Nothing here registers a table globally: each test hands its fake to a context.

use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use stream_alloc::graph::synth::Rng;
use stream_alloc::runtime::seam::RUNTIME_OPS_V1_SIZE;
use stream_alloc::runtime::*;

use crate::fake_rt::{self, Fake, INJECTED};

type Ptr = *mut c_void;

fn setup(streams: u32) -> (Arc<StreamContext>, MemPool, &'static Fake, Vec<Ptr>) {
    let (rt, f) = fake_rt::new_fake();
    let ctx = StreamContext::with_runtime(rt);
    let s: Vec<Ptr> = (0..streams).map(|k| ctx.stream(k, 0, 0).unwrap()).collect();
    let pool = MemPool::new(ctx.clone());
    (ctx, pool, f, s)
}

/// Frees everything, then checks that every byte went back and nothing raced.
fn finish(ctx: Arc<StreamContext>, pool: MemPool, f: &Fake) {
    pool.empty_cache().unwrap();
    let st = pool.stats();
    assert_eq!((st.in_use_bytes, st.pending_bytes, st.cached_bytes, st.device_bytes), (0, 0, 0, 0), "{st:?}");
    drop(pool);
    drop(ctx);
    assert_eq!(f.mem_bytes(), 0);
    f.check_balanced().unwrap();
}

#[test]
fn a_block_read_on_another_stream_is_not_reused_until_its_event_completes() {
    let (ctx, pool, f, s) = setup(2);
    let p = pool.alloc(1000, s[0]).unwrap();
    f.launch(s[0], p);
    ctx.wait_stream(s[1], s[0]).unwrap();
    f.launch_read(s[1], p); // read on stream 1
    pool.record_use(p, s[1]).unwrap();
    pool.free(p, s[0]).unwrap();
    assert_eq!(pool.stats().pending_bytes, 1024);

    // The read on stream 1 has not run: the block must not come back on stream 0.
    let q = pool.alloc(1000, s[0]).unwrap();
    assert_ne!(q, p);
    assert!(f.queries.load(Ordering::SeqCst) >= 1, "the pool asked the device");
    f.launch(s[0], q);
    pool.free(q, s[0]).unwrap();
    // Sanity: the fake does see the race the pool avoided.
    f.launch(s[0], p);
    assert_eq!(std::mem::take(&mut f.dev.lock().races).len(), 1);

    f.run_all(); // the device finishes; the next query says so
    let r = pool.alloc(1000, s[0]).unwrap();
    assert_eq!(r, q, "the free list first");
    let again = pool.alloc(1000, s[0]).unwrap();
    assert_eq!(again, p, "then the pending block, its event now complete");
    let st = pool.stats();
    assert_eq!((st.released_by_query, st.device_mallocs), (1, 2), "{st:?}");
    f.launch(s[0], r);
    f.launch(s[0], again);
    pool.free(r, s[0]).unwrap();
    pool.free(again, s[0]).unwrap();
    finish(ctx, pool, f);
}

#[test]
fn the_back_stream_rule_frees_without_a_device_query() {
    let (ctx, pool, f, s) = setup(3);
    for via_wait_stream in [false, true] {
        let p = pool.alloc(4096, s[0]).unwrap();
        f.launch(s[0], p);
        ctx.wait_stream(s[1], s[0]).unwrap();
        ctx.wait_stream(s[2], s[0]).unwrap();
        f.launch_read(s[1], p);
        f.launch_read(s[2], p);
        // What the compile plan knows: the tensor is read on streams 1 and 2.
        pool.free_after(p, &[s[1], s[2]]).unwrap();
        assert_eq!(pool.stats().guards % 2, 0);
        // Back-stream: stream 0 waits for streams 1 and 2 after their reads.
        if via_wait_stream {
            ctx.wait_stream(s[0], s[1]).unwrap();
            ctx.wait_stream(s[0], s[2]).unwrap();
        } else {
            let e1 = ctx.event_new(0).unwrap();
            let e2 = ctx.event_new(0).unwrap();
            ctx.record(e1, s[1]).unwrap();
            ctx.record(e2, s[2]).unwrap();
            ctx.wait(s[0], e1).unwrap();
            ctx.wait(s[0], e2).unwrap();
        }
        let queries = f.queries.load(Ordering::SeqCst);
        let before = pool.stats();
        let q = pool.alloc(4096, s[0]).unwrap();
        let after = pool.stats();
        assert_eq!(q, p, "reused at once");
        assert_eq!(f.queries.load(Ordering::SeqCst), queries, "no device query");
        assert_eq!(after.queries, before.queries);
        assert_eq!(after.released_without_query - before.released_without_query, 2);
        f.launch(s[0], q); // ordered after both reads: no race
        pool.free(q, s[0]).unwrap();
    }
    // A wait in the other direction does not order the read: the block stays pending.
    let p = pool.alloc(512, s[0]).unwrap();
    f.launch(s[0], p);
    ctx.wait_stream(s[1], s[0]).unwrap();
    f.launch_read(s[1], p);
    pool.free_after(p, &[s[1]]).unwrap();
    ctx.wait_stream(s[1], s[0]).unwrap();
    let q = pool.alloc(512, s[0]).unwrap();
    assert_ne!(q, p);
    f.launch(s[0], q);
    pool.free(q, s[0]).unwrap();
    finish(ctx, pool, f);
}

#[test]
fn allocation_failure_synchronises_pending_events_and_retries_once() {
    let (ctx, pool, f, s) = setup(2);
    f.mem_capacity.store(8192, Ordering::SeqCst);
    // Own stream: the synchronised block comes back from stream 0's free list.
    let p = pool.alloc(8192, s[0]).unwrap();
    f.launch(s[0], p);
    ctx.wait_stream(s[1], s[0]).unwrap();
    f.launch_read(s[1], p);
    pool.record_use(p, s[1]).unwrap();
    pool.free(p, s[0]).unwrap();
    let q = pool.alloc(8000, s[0]).unwrap();
    assert_eq!(q, p);
    let st = pool.stats();
    assert_eq!((st.retries, st.released_by_sync), (1, 1), "{st:?}");
    assert_eq!(f.syncs.load(Ordering::SeqCst), 1);
    f.launch(s[0], q);

    // Another stream's block: synchronised, returned to the device, then the retry succeeds.
    ctx.wait_stream(s[1], s[0]).unwrap();
    f.launch_read(s[1], q);
    pool.free_after(q, &[s[1]]).unwrap();
    let r = pool.alloc(8192, s[1]).unwrap();
    let st = pool.stats();
    assert_eq!((st.retries, st.device_frees, st.device_mallocs), (2, 1, 2), "{st:?}");
    f.launch(s[1], r);

    // Nothing to release: a clear error naming size, stream and the steps tried.
    let e = pool.alloc(100, s[0]).unwrap_err();
    assert_eq!(e.kind, RtErrorKind::OutOfMemory);
    assert_eq!(e.runtime_code, ACL_ERROR_RT_MEMORY_ALLOCATION_CODE);
    for needle in ["100 bytes", &format!("{:p}", s[0]), "aclrtMalloc", "pending", "retry", "8192 bytes remain in use"] {
        assert!(e.message.contains(needle), "{needle:?} missing from: {}", e.message);
    }
    assert_eq!(pool.stats().retries, 3);
    pool.free(r, s[1]).unwrap();
    finish(ctx, pool, f);
}

const ACL_ERROR_RT_MEMORY_ALLOCATION_CODE: i32 = consts::ACL_ERROR_RT_MEMORY_ALLOCATION;

#[test]
fn bad_inputs_get_clear_errors() {
    let (ctx, pool, f, s) = setup(2);
    let stranger = 0x5a5a0 as Ptr;
    assert_eq!(pool.alloc(0, s[0]).unwrap_err().kind, RtErrorKind::Invalid);
    assert_eq!(pool.alloc(usize::MAX, s[0]).unwrap_err().kind, RtErrorKind::Invalid);
    let e = pool.alloc(8, stranger).unwrap_err();
    assert_eq!(e.kind, RtErrorKind::UnknownHandle);
    assert!(e.message.contains("not a stream of this context"), "{e}");
    assert_eq!(pool.alloc(8, std::ptr::null_mut()).unwrap_err().kind, RtErrorKind::Null);
    let p = pool.alloc(8, s[0]).unwrap();
    assert_eq!(pool.free(stranger, s[0]).unwrap_err().kind, RtErrorKind::UnknownHandle);
    assert_eq!(pool.free(std::ptr::null_mut(), s[0]).unwrap_err().kind, RtErrorKind::Null);
    assert_eq!(pool.free_after(p, &[s[1], stranger]).unwrap_err().kind, RtErrorKind::UnknownHandle);
    assert_eq!(pool.stats().guards, 0, "a rejected free_after changes nothing");
    pool.free(p, s[0]).unwrap();
    let e = pool.free(p, s[0]).unwrap_err();
    assert_eq!(e.kind, RtErrorKind::State);
    assert!(e.message.contains("double free"), "{e}");
    assert_eq!(pool.record_use(p, s[1]).unwrap_err().kind, RtErrorKind::State);
    // Stream keys: created once, reused; other settings are refused.
    assert_eq!(ctx.stream(1, 0, 0).unwrap(), s[1]);
    assert_eq!(f.count(&f.creates, fake_rt::STREAM), 2);
    assert_eq!(ctx.stream(1, 3, 0).unwrap_err().kind, RtErrorKind::State);
    // Events: only the context's own.
    assert_eq!(ctx.record(stranger, s[0]).unwrap_err().kind, RtErrorKind::UnknownHandle);
    assert_eq!(ctx.wait_stream(s[0], stranger).unwrap_err().kind, RtErrorKind::UnknownHandle);
    ctx.adopt(s[1]).unwrap();
    assert_eq!(ctx.adopt(std::ptr::null_mut()).unwrap_err().kind, RtErrorKind::Null);
    finish(ctx, pool, f);
}

#[test]
fn adopted_streams_serve_the_pool_and_stay_with_their_owner() {
    let (rt, f) = fake_rt::new_fake();
    let main = rt.stream_create(0, 0).unwrap(); // the caller's, e.g. GE's main stream
    let ctx = StreamContext::with_runtime(rt.clone());
    let pool = MemPool::new(ctx.clone());
    assert_eq!(pool.alloc(8, main).unwrap_err().kind, RtErrorKind::UnknownHandle);
    ctx.adopt(main).unwrap();
    let side = ctx.stream(7, 0, 0).unwrap();
    let p = pool.alloc(8, main).unwrap();
    f.launch(main, p);
    ctx.wait_stream(side, main).unwrap();
    f.launch_read(side, p);
    pool.free_after(p, &[side]).unwrap();
    ctx.wait_stream(main, side).unwrap();
    assert_eq!(pool.alloc(8, main).unwrap(), p);
    pool.free(p, main).unwrap();
    drop(pool);
    drop(ctx);
    assert_eq!(f.count(&f.destroys, fake_rt::STREAM), 1, "only the context's own stream");
    rt.stream_destroy(main, false).unwrap();
    f.check_balanced().unwrap();
}

#[test]
fn user_level_events_record_wait_query_synchronize_and_time() {
    let (ctx, pool, f, s) = setup(2);
    let a = ctx.event_new(0).unwrap();
    let b = ctx.event_new(0).unwrap();
    assert!(ctx.query(a).unwrap(), "never recorded counts as complete");
    ctx.record(a, s[0]).unwrap();
    ctx.record(b, s[0]).unwrap();
    assert!(!ctx.query(b).unwrap());
    assert!(ctx.elapsed_ms(a, b).is_err(), "not complete yet");
    ctx.synchronize(b).unwrap();
    assert!(ctx.query(a).unwrap(), "stream order: b done means a done");
    assert_eq!(ctx.elapsed_ms(a, b).unwrap(), 0.25);
    ctx.wait(s[1], b).unwrap();
    ctx.synchronize_stream(s[1]).unwrap();
    ctx.event_destroy(a).unwrap();
    assert_eq!(ctx.event_destroy(a).unwrap_err().kind, RtErrorKind::UnknownHandle);
    finish(ctx, pool, f);
}

#[test]
fn version_1_tables_register_without_the_memory_entries() {
    let mut ops = RuntimeOps::empty();
    // A table as a version-1 host builds it: its size, its version, entries up to get_device.
    ops.abi_version = 1;
    ops.struct_size = RUNTIME_OPS_V1_SIZE;
    assert!(Runtime::from_ops(&ops, RuntimeSource::Registered).unwrap_err().message.contains("stream_create"));
    ops.struct_size = RUNTIME_OPS_V1_SIZE - 8;
    assert!(Runtime::from_ops(&ops, RuntimeSource::Registered).unwrap_err().message.contains("struct_size"));
}

#[test]
fn a_version_1_runtime_gives_a_clear_error_for_memory() {
    let (rt, _) = fake_rt::new_fake();
    // Rebuild the fake's table as version 1: the memory and query entries disappear.
    let ctx = StreamContext::with_runtime(v1_copy(&rt));
    let s = ctx.stream(0, 0, 0).unwrap();
    let pool = MemPool::new(ctx.clone());
    let e = pool.alloc(64, s).unwrap_err();
    assert_eq!(e.kind, RtErrorKind::NoRuntime);
    assert!(e.message.contains("mem_malloc"), "{e}");
}

fn v1_copy(rt: &Runtime) -> Arc<Runtime> {
    let mut ops = rt.ops();
    ops.abi_version = 1;
    ops.struct_size = RUNTIME_OPS_V1_SIZE;
    Runtime::from_ops(&ops, RuntimeSource::Registered).unwrap()
}

#[test]
fn sixteen_threads_never_reuse_a_guarded_block_and_return_every_byte() {
    const THREADS: u64 = 16;
    const OPS: u64 = 1500;
    let (ctx, pool, f, s) = setup(4);
    // Tight memory so the synchronise-and-retry path runs too; queries complete now and then.
    f.mem_capacity.store(2 << 20, Ordering::SeqCst);
    f.query_completes_every.store(3, Ordering::SeqCst);
    let pool = Arc::new(pool);
    let s: Arc<Vec<usize>> = Arc::new(s.iter().map(|&p| p as usize).collect());
    let start = Instant::now();
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let (ctx, pool, s) = (ctx.clone(), pool.clone(), s.clone());
            std::thread::spawn(move || {
                let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15 ^ (t + 1));
                let stream = |i: u64| s[i as usize] as Ptr;
                let mut held: Vec<(Ptr, u64)> = Vec::new();
                let mut oom = 0u64;
                for _ in 0..OPS {
                    let op = rng.below(10);
                    // At most three blocks held per thread, so memory runs short only now and then.
                    let op = if op <= 3 && held.len() >= 3 { 6 } else { op };
                    match op {
                        0..=3 => {
                            let owner = rng.below(s.len() as u64);
                            let size = 1 + rng.below(64 << 10) as usize;
                            match pool.alloc(size, stream(owner)) {
                                Ok(p) => {
                                    f.launch(stream(owner), p);
                                    held.push((p, owner));
                                }
                                Err(e) if e.kind == RtErrorKind::OutOfMemory => oom += 1,
                                Err(e) => panic!("alloc: {e}"),
                            }
                        }
                        4..=5 if !held.is_empty() => {
                            let (p, owner) = held[rng.below(held.len() as u64) as usize];
                            let reader = rng.below(s.len() as u64);
                            ctx.wait_stream(stream(reader), stream(owner)).unwrap();
                            f.launch_read(stream(reader), p);
                            pool.record_use(p, stream(reader)).unwrap();
                        }
                        6..=7 if !held.is_empty() => {
                            let (p, owner) = held.swap_remove(rng.below(held.len() as u64) as usize);
                            if rng.below(2) == 0 {
                                pool.free(p, stream(owner)).unwrap();
                            } else {
                                let reader = rng.below(s.len() as u64);
                                ctx.wait_stream(stream(reader), stream(owner)).unwrap();
                                f.launch_read(stream(reader), p);
                                pool.free_after(p, &[stream(reader)]).unwrap();
                            }
                        }
                        8 => {
                            // A back-stream wait, as a model's join point would do.
                            let a = rng.below(s.len() as u64);
                            let b = rng.below(s.len() as u64);
                            ctx.wait_stream(stream(a), stream(b)).unwrap();
                        }
                        _ => {
                            if rng.below(8) == 0 {
                                f.run_all();
                            }
                        }
                    }
                }
                for (p, owner) in held {
                    pool.free(p, stream(owner)).unwrap();
                }
                oom
            })
        })
        .collect();
    let oom: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let took = start.elapsed();
    let st = pool.stats();
    println!(
        "mem_pool stress: {THREADS} threads x {OPS} ops in {:.1} ms ({:.0} ns/op); {st:?}; {oom} out-of-memory",
        took.as_secs_f64() * 1e3,
        took.as_nanos() as f64 / (THREADS * OPS) as f64
    );
    assert!(st.reuses > 0 && st.guards > 0 && st.released_by_query > 0 && st.released_without_query > 0, "{st:?}");
    assert!(f.dev.lock().races.is_empty(), "{:?}", f.dev.lock().races);
    let pool = Arc::try_unwrap(pool).expect("threads are done");
    finish(ctx, pool, f);
}

/// One fixed scenario touching every device call the pool and the context make. Returns the
/// errors it met, each with the step that failed.
fn scenario(f: &'static Fake, rt: Arc<Runtime>) -> Vec<(String, RtError)> {
    let mut errors = Vec::new();
    let mut note = |step: &str, r: RtResult<()>| {
        if let Err(e) = r {
            errors.push((step.to_string(), e));
        }
    };
    let ctx = StreamContext::with_runtime(rt);
    let pool = MemPool::new(ctx.clone());
    let s0 = ctx.stream(0, 0, 0);
    let s1 = ctx.stream(1, 0, 0);
    let (s0, s1) = match (s0, s1) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            note("stream", Err(e));
            drop(pool);
            drop(ctx);
            return errors;
        }
    };
    f.mem_capacity.store(16 << 10, Ordering::SeqCst);
    let mut held = Vec::new();
    // A block read on stream 1, freed: guarded; a second alloc queries and mallocs.
    match pool.alloc(4096, s0) {
        Ok(p) => {
            f.launch(s0, p);
            let ordered = ctx.wait_stream(s1, s0);
            if ordered.is_ok() {
                f.launch_read(s1, p);
                note("record_use", pool.record_use(p, s1));
            }
            note("wait_stream", ordered);
            if let Err(e) = pool.free(p, s0) {
                note("free", Err(e));
                held.push((p, s0));
            }
        }
        Err(e) => note("alloc", Err(e)),
    }
    match pool.alloc(4096, s0) {
        Ok(q) => held.push((q, s0)),
        Err(e) => note("alloc 2", Err(e)),
    }
    // User events: record, wait (back-stream), query, synchronize, elapsed time.
    match (ctx.event_new(0), ctx.event_new(0)) {
        (Ok(a), Ok(b)) => {
            let r = ctx
                .record(a, s1)
                .and_then(|_| ctx.wait(s0, a))
                .and_then(|_| ctx.record(b, s1))
                .and_then(|_| ctx.query(b).map(drop))
                .and_then(|_| ctx.synchronize(b))
                .and_then(|_| ctx.elapsed_ms(a, b).map(drop));
            note("events", r);
            note("event destroy", ctx.event_destroy(a));
        }
        (Err(e), _) | (_, Err(e)) => note("event_new", Err(e)),
    }
    // Fill the device, then an allocation that needs the synchronise-release-retry path.
    for size in [4096, 4096] {
        match pool.alloc(size, s1) {
            Ok(p) => {
                f.launch(s1, p);
                if let Err(e) = pool.free_after(p, &[s0]) {
                    note("free_after", Err(e));
                    held.push((p, s1));
                }
            }
            Err(e) => note("alloc 3", Err(e)),
        }
    }
    match pool.alloc(12 << 10, s0) {
        Ok(p) => held.push((p, s0)),
        Err(e) => note("alloc big", Err(e)),
    }
    // Nothing already allocated is lost: every held block frees, the cache empties.
    for (p, s) in held {
        let r = pool.free(p, s);
        assert!(r.is_ok(), "a held block must stay freeable: {r:?}");
    }
    note("empty_cache", pool.empty_cache());
    drop(pool);
    drop(ctx);
    errors
}

#[test]
fn fault_injection_on_every_device_call() {
    let (rt, f) = fake_rt::new_fake();
    assert!(scenario(f, rt).is_empty());
    f.check_balanced().unwrap();
    let total = f.calls.load(Ordering::SeqCst);
    assert!(total > 30, "the scenario makes {total} device calls");
    let mut seen = std::collections::BTreeSet::new();
    for k in 1..=total {
        let (rt, f) = fake_rt::new_fake();
        f.fail_at.store(k, Ordering::SeqCst);
        let errors = scenario(f, rt);
        let failed = f.failed_call.lock().expect("the k-th call happened");
        seen.insert(failed);
        let name = match failed {
            "stream_create" => "stream create",
            "event_create" => "event create",
            "event_record" => "event record",
            "stream_wait_event" => "stream wait event",
            "event_query" => "aclrtQueryEventStatus",
            "event_synchronize" => "aclrtSynchronizeEvent",
            "event_elapsed_time" => "aclrtEventElapsedTime",
            "mem_malloc" => "aclrtMalloc",
            "mem_free" => "aclrtFree",
            "event_destroy" => "event destroy",
            "stream_destroy" => "stream destroy",
            other => panic!("unexpected call {other}"),
        };
        // The first error is the injected one, named; later ones may only be its consequence
        // (memory still held because a free failed runs out).
        if let Some((step, e)) = errors.first() {
            assert_eq!(e.runtime_code, INJECTED, "call {k} ({failed}) at {step}: {e}");
            assert!(e.message.contains(name), "call {k} ({failed}) at {step}: {e}");
        }
        for (step, e) in errors.iter().skip(1) {
            assert_eq!(e.kind, RtErrorKind::OutOfMemory, "call {k} ({failed}) at {step}: {e}");
        }
        // Errors surface except where the library recovers (a malloc retried) or cannot report
        // (destroys at the end, which the fake lists as refused).
        let silent_ok = matches!(failed, "mem_malloc" | "event_destroy" | "stream_destroy");
        assert!(!errors.is_empty() || silent_ok, "call {k} ({failed}) failed silently");
        assert_eq!(f.mem_bytes(), 0, "call {k} ({failed}): device memory leaked");
        f.check_balanced().unwrap_or_else(|e| panic!("call {k} ({failed}): {e}"));
    }
    for call in [
        "event_record",
        "stream_wait_event",
        "event_query",
        "event_synchronize",
        "event_elapsed_time",
        "mem_malloc",
        "mem_free",
    ] {
        assert!(seen.contains(call), "{call} was never failed: {seen:?}");
    }
}

/// Timings printed, not asserted: one thread, a reused block on one stream, and a block read on
/// a second stream and released by the back-stream rule.
#[test]
fn single_thread_timings() {
    const N: u32 = 20_000;
    let (ctx, pool, f, s) = setup(2);
    let start = Instant::now();
    for _ in 0..N {
        let p = pool.alloc(4096, s[0]).unwrap();
        pool.free(p, s[0]).unwrap();
    }
    let same = start.elapsed().as_nanos() as f64 / f64::from(N);
    let start = Instant::now();
    for _ in 0..N {
        let p = pool.alloc(4096, s[0]).unwrap();
        pool.free_after(p, &[s[1]]).unwrap();
        ctx.wait_stream(s[0], s[1]).unwrap();
    }
    let cross = start.elapsed().as_nanos() as f64 / f64::from(N);
    let st = pool.stats();
    println!(
        "mem_pool single thread: alloc+free {same:.0} ns; alloc+free_after(1 reader)+wait_stream {cross:.0} ns; \
         device mallocs {}",
        st.device_mallocs
    );
    assert_eq!(st.device_mallocs, 1, "one block serves every iteration");
    finish(ctx, pool, f);
}
