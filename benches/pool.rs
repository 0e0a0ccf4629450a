//! GE's V1 stream pool (`ReusableStreamPool`, reuse off as GE runs it by default): one
//! `GetOrCreateRtStream` + `DestroyStream` pair at 1, 2, 4 and 16 threads, called directly and
//! through the C ABI the C++ shim (`ge::ReusableStreamAllocator`) forwards to, against two naive
//! versions of GE's allocator as written: one `std::sync::Mutex` over a `BTreeMap` of
//! `(priority, flags)` → set and a map by handle, a `HashMap` (std hasher) or a `BTreeMap`.
//! All four call the same in-process fake runtime, which heap-allocates each stream (as a real
//! runtime does) and takes no lock of its own, so what differs is the bookkeeping and locking.
//!
//! Figures are wall-clock ns per pair (total time / total pairs, so at N threads it is the
//! inverse of the aggregate throughput), median of the rounds, implementations interleaved in
//! each round so machine load hits them alike. Run: `cargo bench --bench pool`.
//! `POOL_BENCH_PAIRS` (pairs per measurement, default 400000), `POOL_BENCH_ROUNDS` (default 7)
//! and `POOL_BENCH_THREADS` (comma-separated, default `1,2,4,16`) scale it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::c_void;
use std::hint::black_box;
use std::sync::{Arc, Barrier, Mutex};
use std::time::Instant;

use stream_alloc::capi::reusable_pool::{
    sa_reusable_pool, sa_reusable_pool_destroy_stream, sa_reusable_pool_free, sa_reusable_pool_get_or_create,
    sa_reusable_pool_new,
};
use stream_alloc::runtime::consts::RT_STREAM_PERSISTENT;
use stream_alloc::runtime::{PoolOptions, ReusableStreamPool, Runtime};

#[path = "support/heap_rt.rs"]
mod heap_rt;
use heap_rt::{stream_create, stream_destroy, stream_get_id};

// ---- the fake runtime (support/heap_rt.rs: a heap object per stream, ids from a counter, no lock) ----

unsafe extern "C" fn unused_event_create(_: *mut c_void, _: *mut *mut c_void, _: u32) -> i32 {
    1
}
unsafe extern "C" fn unused_event_destroy(_: *mut c_void, _: *mut c_void) -> i32 {
    1
}

fn register_fake() {
    let mut ops = heap_rt::streams_and_notifies();
    ops.event_create = Some(unused_event_create);
    ops.event_destroy = Some(unused_event_destroy);
    Runtime::register(Some(&ops)).expect("the fake table is complete");
}

// ---- the baseline: GE's V1 allocator as written, with a std mutex ----

/// The map by handle: the only thing the two baselines differ in.
trait ByHandle: Default + Send {
    fn put(&mut self, h: usize, s: Status);
    fn take(&mut self, h: usize) -> Option<Status>;
}
impl ByHandle for HashMap<usize, Status> {
    fn put(&mut self, h: usize, s: Status) {
        self.insert(h, s);
    }
    fn take(&mut self, h: usize) -> Option<Status> {
        self.remove(&h)
    }
}
impl ByHandle for BTreeMap<usize, Status> {
    fn put(&mut self, h: usize, s: Status) {
        self.insert(h, s);
    }
    fn take(&mut self, h: usize) -> Option<Status> {
        self.remove(&h)
    }
}

struct Status {
    id: i32,
    key: (i32, u32),
    models: BTreeSet<u32>,
    task_num: u32,
}

#[derive(Default)]
struct NaiveState<M> {
    by_key: BTreeMap<(i32, u32), BTreeSet<(u32, usize)>>,
    by_handle: M,
}

#[derive(Default)]
struct Naive<M> {
    state: Mutex<NaiveState<M>>,
}

impl<M: ByHandle> Naive<M> {
    fn get_or_create(&self, model: u32, priority: i32, flags: u32, task_num: u32) -> *mut c_void {
        let mut st = self.state.lock().expect("not poisoned");
        let mut s = std::ptr::null_mut();
        let mut id = -1;
        // SAFETY: valid out pointers; the same fake the pool calls through the seam.
        unsafe {
            assert_eq!(stream_create(std::ptr::null_mut(), &mut s, priority, flags), 0);
            assert_eq!(stream_get_id(std::ptr::null_mut(), s, &mut id), 0);
        }
        let key = (priority, flags);
        st.by_key.entry(key).or_default().insert((task_num, s as usize));
        st.by_handle.put(s as usize, Status { id, key, models: BTreeSet::from([model]), task_num });
        s
    }
    fn destroy(&self, s: *mut c_void) {
        let mut st = self.state.lock().expect("not poisoned");
        let rec = st.by_handle.take(s as usize).expect("a stream of this allocator");
        black_box((rec.id, &rec.models));
        // SAFETY: created by `stream_create` above, destroyed once.
        unsafe { assert_eq!(stream_destroy(std::ptr::null_mut(), s, 0), 0) };
        if let Some(set) = st.by_key.get_mut(&rec.key) {
            set.remove(&(rec.task_num, s as usize));
        }
    }
}

// ---- measurement ----

/// One get-or-create + destroy pair for model `model`.
trait Pair: Sync {
    fn pair(&self, model: u32);
}

impl Pair for ReusableStreamPool {
    fn pair(&self, model: u32) {
        let (s, _) = self.get_or_create(model, 0, RT_STREAM_PERSISTENT, 10).expect("fake create succeeds");
        self.destroy(s, false).expect("fake destroy succeeds");
    }
}

/// The pool through the C ABI, as `ge::ReusableStreamAllocator` calls it.
struct CPool(*mut sa_reusable_pool);
// SAFETY: `sa_reusable_pool` is documented thread-safe for these calls.
unsafe impl Sync for CPool {}

impl Pair for CPool {
    fn pair(&self, model: u32) {
        let mut s = std::ptr::null_mut();
        // SAFETY: a live pool and valid stream pointers.
        unsafe {
            assert_eq!(sa_reusable_pool_get_or_create(self.0, &mut s, model, 0, RT_STREAM_PERSISTENT, 10), 0);
            assert_eq!(sa_reusable_pool_destroy_stream(self.0, &mut s, false), 0);
        }
    }
}

impl<M: ByHandle> Pair for Naive<M> {
    fn pair(&self, model: u32) {
        let s = self.get_or_create(model, 0, RT_STREAM_PERSISTENT, 10);
        self.destroy(s);
    }
}

/// Wall-clock ns per pair with `threads` threads doing `pairs` pairs between them.
fn ns_per_pair(p: &dyn Pair, threads: usize, pairs: usize) -> f64 {
    let per = pairs.div_ceil(threads);
    if threads == 1 {
        let t0 = Instant::now();
        for _ in 0..per {
            p.pair(1);
        }
        return t0.elapsed().as_nanos() as f64 / per as f64;
    }
    let start = Arc::new(Barrier::new(threads + 1));
    std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let start = start.clone();
                sc.spawn(move || {
                    start.wait();
                    for _ in 0..per {
                        p.pair(t as u32);
                    }
                })
            })
            .collect();
        start.wait();
        let t0 = Instant::now();
        for h in handles {
            h.join().expect("bench thread");
        }
        t0.elapsed().as_nanos() as f64 / (per * threads) as f64
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default).max(1)
}

fn main() {
    let pairs = env("POOL_BENCH_PAIRS", 400_000);
    let rounds = env("POOL_BENCH_ROUNDS", 7);
    register_fake();
    let pool = ReusableStreamPool::new(PoolOptions::default());
    let mut raw = std::ptr::null_mut();
    // SAFETY: NULL options (defaults) and a valid out pointer.
    assert_eq!(unsafe { sa_reusable_pool_new(std::ptr::null(), &mut raw) }, 0);
    let cpool = CPool(raw);
    let hash = Naive::<HashMap<usize, Status>>::default();
    let btree = Naive::<BTreeMap<usize, Status>>::default();
    let imps: [(&str, &dyn Pair); 4] =
        [("pool", &pool), ("pool via C ABI", &cpool), ("Mutex+HashMap", &hash), ("Mutex+BTreeMap", &btree)];
    for (_, p) in imps {
        ns_per_pair(p, 1, 10_000); // warm up: runtime resolution, allocator caches
    }
    println!("ns per GetOrCreateRtStream + DestroyStream pair (median of {rounds}, {pairs} pairs each)");
    print!("{:>7}", "threads");
    for (name, _) in imps {
        print!(" {name:>15}");
    }
    println!();
    let threads: Vec<usize> = std::env::var("POOL_BENCH_THREADS")
        .ok()
        .map(|v| v.split(',').filter_map(|t| t.trim().parse().ok()).filter(|&t| t > 0).collect())
        .unwrap_or_else(|| vec![1, 2, 4, 16]);
    for threads in threads {
        let mut samples = vec![Vec::new(); imps.len()];
        for round in 0..rounds {
            for k in 0..imps.len() {
                let i = (k + round) % imps.len();
                samples[i].push(ns_per_pair(imps[i].1, threads, pairs));
            }
        }
        print!("{threads:>7}");
        for s in samples {
            print!(" {:>15.1}", median(s));
        }
        println!();
    }
    // SAFETY: created above, no call in flight.
    unsafe { sa_reusable_pool_free(cpool.0) };
}
