//! The pluggable-allocator entry points (`sa_pluggable_malloc` / `sa_pluggable_free`, called
//! through the C ABI as the frameworks call them), against an in-process fake runtime whose
//! device memory is the host heap (`malloc`) and whose events complete when asked (the device
//! keeps pace) or only when synchronised (the device never catches up), selectable per run.
//!
//! 1. **Warm pool**: ns per alloc+free pair on one stream per thread, 1 and 8 threads (wall
//!    clock / total pairs, so at 8 threads the inverse of the aggregate throughput; and the
//!    threads' CPU time per pair, which other jobs on the machine do not inflate; median of the
//!    rounds). Sizes cycle over 16 values from 512 B to 1 MiB, all cached before timing.
//! 2. **Framework-style workload**: the tensors of a corpus graph's plan, replayed in the
//!    plan's execution order the way an eager framework issues them: each node's outputs
//!    allocated on its stream, `record_stream` for every read on another stream, each tensor
//!    freed on its producer's stream after its last reader in that order (tensors that exist
//!    from the start, allocated first on stream 0). Peak device bytes under the pool, against a naive runtime malloc/free
//!    per tensor (the same events, no cache), the compile-time plan's arena, and the smallest
//!    device (as a multiple of the naive peak) on which the pool runs the replay without a
//!    failed allocation, emptying its cache and retrying when the device refuses.
//!
//! Run: `cargo bench --bench pluggable`. `PLUGGABLE_BENCH_PAIRS` (per thread and round,
//! default 200000), `PLUGGABLE_BENCH_ROUNDS` (default 7), `PLUGGABLE_BENCH_GRAPHS`
//! (comma-separated corpus names, default `resnet50_train,bert_base,googlenet`).

use std::ffi::c_void;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

use stream_alloc::capi::pluggable::{sa_pluggable_free, sa_pluggable_malloc, sa_pluggable_record_stream};
use stream_alloc::compile::Stage;
use stream_alloc::memory::{Lifetimes, plan_allocation};
use stream_alloc::runtime::{Runtime, RuntimeOps, pluggable};

#[path = "support/heap_rt.rs"]
mod heap_rt;

type Ptr = *mut c_void;

// ---- the fake runtime: heap memory with byte counters, events as heap flags ----

static DEVICE_BYTES: AtomicU64 = AtomicU64::new(0);
static PEAK_BYTES: AtomicU64 = AtomicU64::new(0);
/// Device memory of the fake: an allocation past it fails as out of memory.
static CAPACITY: AtomicU64 = AtomicU64::new(u64::MAX);
/// Events complete when queried (the device keeps pace); otherwise only when synchronised.
static KEEPS_PACE: AtomicBool = AtomicBool::new(true);

/// Device allocations made.
static MALLOCS: AtomicU64 = AtomicU64::new(0);

fn note_alloc(size: u64) {
    MALLOCS.fetch_add(1, Ordering::Relaxed);
    let now = DEVICE_BYTES.fetch_add(size, Ordering::Relaxed) + size;
    PEAK_BYTES.fetch_max(now, Ordering::Relaxed);
}

/// Each block is preceded by its size, so a free can count it.
unsafe extern "C" fn mem_malloc(_: Ptr, out: *mut Ptr, size: usize, _: u32) -> i32 {
    if DEVICE_BYTES.load(Ordering::Relaxed).saturating_add(size as u64) > CAPACITY.load(Ordering::Relaxed) {
        return 207001;
    }
    // SAFETY: plain heap memory of the asked size plus a header; written only in the header.
    let p = unsafe { libc::malloc(size + 16) }.cast::<u64>();
    if p.is_null() {
        return 207001;
    }
    // SAFETY: at least 16 bytes.
    unsafe { p.write(size as u64) };
    note_alloc(size as u64);
    // SAFETY: the seam's out pointer.
    unsafe { out.write(p.add(2).cast()) };
    0
}
unsafe extern "C" fn mem_free(_: Ptr, p: Ptr) -> i32 {
    // SAFETY: `p` came from `mem_malloc`: its header is 16 bytes before it.
    let base = unsafe { p.cast::<u64>().sub(2) };
    // SAFETY: the header written at allocation.
    DEVICE_BYTES.fetch_sub(unsafe { base.read() }, Ordering::Relaxed);
    // SAFETY: from libc::malloc, freed once.
    unsafe { libc::free(base.cast()) };
    0
}
unsafe extern "C" fn event_create(_: Ptr, out: *mut Ptr, _: u32) -> i32 {
    // SAFETY: the seam's out pointer; the flag lives until event_destroy.
    unsafe { out.write(Box::into_raw(Box::new(AtomicBool::new(true))).cast()) };
    0
}
unsafe extern "C" fn event_destroy(_: Ptr, e: Ptr) -> i32 {
    // SAFETY: from event_create, destroyed once.
    drop(unsafe { Box::from_raw(e.cast::<AtomicBool>()) });
    0
}
unsafe extern "C" fn event_record(_: Ptr, e: Ptr, _: Ptr) -> i32 {
    // SAFETY: a live event.
    unsafe { &*e.cast::<AtomicBool>() }.store(false, Ordering::Relaxed);
    0
}
unsafe extern "C" fn event_query(_: Ptr, e: Ptr, done: *mut i32) -> i32 {
    // SAFETY: a live event.
    let flag = unsafe { &*e.cast::<AtomicBool>() };
    if KEEPS_PACE.load(Ordering::Relaxed) {
        flag.store(true, Ordering::Relaxed);
    }
    // SAFETY: the seam's out pointer.
    unsafe { done.write(flag.load(Ordering::Relaxed) as i32) };
    0
}
unsafe extern "C" fn event_synchronize(_: Ptr, e: Ptr) -> i32 {
    // SAFETY: a live event.
    unsafe { &*e.cast::<AtomicBool>() }.store(true, Ordering::Relaxed);
    0
}
unsafe extern "C" fn stream_wait_event(_: Ptr, _: Ptr, _: Ptr) -> i32 {
    0
}
unsafe extern "C" fn get_device(_: Ptr, d: *mut i32) -> i32 {
    // SAFETY: the seam's out pointer.
    unsafe { d.write(0) };
    0
}

fn register_fake() {
    let ops = RuntimeOps {
        mem_malloc: Some(mem_malloc),
        mem_free: Some(mem_free),
        event_create: Some(event_create),
        event_destroy: Some(event_destroy),
        event_record: Some(event_record),
        event_query: Some(event_query),
        event_synchronize: Some(event_synchronize),
        stream_wait_event: Some(stream_wait_event),
        get_device: Some(get_device),
        // Streams and notifies: required by the seam, unused by the pool.
        ..heap_rt::streams_and_notifies()
    };
    Runtime::register(Some(&ops)).expect("the fake table registers");
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

// ---- 1. warm pool ----

const SIZES: [isize; 16] = [
    512,
    1000,
    4096,
    6000,
    16384,
    30000,
    65536,
    100_000,
    131072,
    200_000,
    262144,
    400_000,
    524288,
    700_000,
    1 << 20,
    3000,
];

/// This thread's CPU time in ns (`CLOCK_THREAD_CPUTIME_ID`): what the calls cost, whatever
/// else the machine runs.
fn thread_cpu_ns() -> u64 {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid clock id and out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Wall ns per pair and CPU ns per pair for `threads` threads doing `pairs` pairs each, each on
/// its own stream.
fn warm_ns(threads: usize, pairs: usize) -> (f64, f64) {
    let barrier = Arc::new(Barrier::new(threads + 1));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let stream = (0x1000 * (t + 1)) as Ptr;
                // Warm: every size cached on this stream.
                let held: Vec<Ptr> = SIZES.iter().map(|&s| sa_pluggable_malloc(s, 0, stream)).collect();
                for (&p, &s) in held.iter().zip(&SIZES) {
                    assert!(!p.is_null(), "warm-up allocation failed");
                    sa_pluggable_free(p, s, 0, stream);
                }
                barrier.wait();
                let cpu = thread_cpu_ns();
                for i in 0..pairs {
                    let s = SIZES[i % SIZES.len()];
                    let p = black_box(sa_pluggable_malloc(s, 0, stream));
                    sa_pluggable_free(p, s, 0, stream);
                }
                let cpu = thread_cpu_ns() - cpu;
                barrier.wait();
                cpu
            })
        })
        .collect();
    barrier.wait();
    let start = Instant::now();
    barrier.wait();
    let total = (threads * pairs) as f64;
    let wall = start.elapsed().as_nanos() as f64 / total;
    let cpu: u64 = handles.into_iter().map(|h| h.join().expect("bench thread")).sum();
    (wall, cpu as f64 / total)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

// ---- 2. framework-style workload ----

/// One step of the replay.
enum Step {
    Alloc { tensor: usize, stream: usize },
    Record { tensor: usize, stream: usize },
    Free { tensor: usize, stream: usize },
}

/// The replay of `graph`'s default allocation, and the plan's arena bytes.
fn workload(graph: &str) -> (Vec<Step>, Vec<isize>, u64, usize) {
    let path = format!("{}/corpus/{graph}.json", env!("CARGO_MANIFEST_DIR"));
    let model = stream_alloc::graph::json::load_file(&path).expect("a corpus graph");
    let alloc = stream_alloc::allocate(&model, Stage::All).expect("allocates");
    let arena = plan_allocation(&model, &alloc).map_or(0, |p| p.peak_bytes);
    let l = Lifetimes::of(&model, &alloc);
    let t = &l.tensors;
    let stream_of = |n| alloc.stream()[n].map_or(0, |s: stream_alloc::graph::StreamId| s.index());
    let streams = alloc.stream().iter().flatten().map(|s| s.index() + 1).max().unwrap_or(1);
    let order = alloc.order(&model);
    let sizes: Vec<isize> = t.list.iter().map(|x| x.bytes as isize).collect();
    let owner: Vec<usize> =
        (0..t.list.len()).map(|i| if t.produced[i] { stream_of(t.list[i].node) } else { 0 }).collect();
    // The last reader of each tensor in execution order: it is freed after that node.
    let mut free_after: Vec<Vec<usize>> = vec![Vec::new(); model.nodes.len()];
    let mut steps = Vec::new();
    for i in 0..t.list.len() {
        if !t.produced[i] {
            steps.push(Step::Alloc { tensor: i, stream: 0 });
        }
        let last = t.readers[i].iter().copied().max_by_key(|&r| t.pos[r]);
        match last {
            Some(r) if !t.until_end[i] => free_after[r.index()].push(i),
            None if !t.until_end[i] && t.produced[i] => free_after[t.list[i].node.index()].push(i),
            _ => {}
        }
    }
    let mut produced_by: Vec<Vec<usize>> = vec![Vec::new(); model.nodes.len()];
    let mut read_by: Vec<Vec<usize>> = vec![Vec::new(); model.nodes.len()];
    for i in 0..t.list.len() {
        if t.produced[i] {
            produced_by[t.list[i].node.index()].push(i);
        }
        for r in &t.readers[i] {
            read_by[r.index()].push(i);
        }
    }
    for &n in order.iter() {
        let s = stream_of(n);
        for &i in &produced_by[n.index()] {
            steps.push(Step::Alloc { tensor: i, stream: s });
        }
        for &i in &read_by[n.index()] {
            if owner[i] != s {
                steps.push(Step::Record { tensor: i, stream: s });
            }
        }
        for &i in &free_after[n.index()] {
            steps.push(Step::Free { tensor: i, stream: owner[i] });
        }
    }
    for (i, &stream) in owner.iter().enumerate() {
        if t.until_end[i] || (t.readers[i].is_empty() && !t.produced[i]) {
            steps.push(Step::Free { tensor: i, stream });
        }
    }
    (steps, sizes, arena, streams)
}

fn handle(stream: usize) -> Ptr {
    (0x10_0000 + 0x100 * stream) as Ptr
}

/// Peak device bytes of the replay and the allocations that failed: through the pool, or with
/// each tensor its own device allocation freed at once (naive).
fn replay(steps: &[Step], sizes: &[isize], pool: bool) -> (u64, usize) {
    pluggable::reset().expect("reset");
    assert_eq!(DEVICE_BYTES.load(Ordering::Relaxed), 0, "bytes left from the previous run");
    PEAK_BYTES.store(0, Ordering::Relaxed);
    let failed = run(steps, sizes, pool);
    let peak = PEAK_BYTES.load(Ordering::Relaxed);
    pluggable::reset().expect("reset");
    (peak, failed)
}

/// Device allocations of the pool in a first replay and in a second one right after it (a
/// training loop's next iteration, the cache warm).
fn iterations(steps: &[Step], sizes: &[isize]) -> (u64, u64) {
    pluggable::reset().expect("reset");
    let before = MALLOCS.load(Ordering::Relaxed);
    run(steps, sizes, true);
    let first = MALLOCS.load(Ordering::Relaxed);
    run(steps, sizes, true);
    let second = MALLOCS.load(Ordering::Relaxed);
    pluggable::reset().expect("reset");
    (first - before, second - first)
}

/// One replay; returns the failed allocations.
fn run(steps: &[Step], sizes: &[isize], pool: bool) -> usize {
    let mut failed = 0;
    let mut ptrs: Vec<Ptr> = vec![std::ptr::null_mut(); sizes.len()];
    for step in steps {
        match *step {
            Step::Alloc { tensor, stream } if pool => {
                ptrs[tensor] = sa_pluggable_malloc(sizes[tensor], 0, handle(stream));
                failed += ptrs[tensor].is_null() as usize;
            }
            Step::Alloc { tensor, .. } => {
                let mut p = std::ptr::null_mut();
                // SAFETY: the fake's own entry, a valid out pointer.
                assert_eq!(unsafe { mem_malloc(std::ptr::null_mut(), &mut p, sizes[tensor].max(1) as usize, 0) }, 0);
                ptrs[tensor] = p;
            }
            Step::Record { tensor, .. } if ptrs[tensor].is_null() => {}
            Step::Free { tensor, .. } if ptrs[tensor].is_null() => {}
            Step::Record { tensor, stream } if pool => sa_pluggable_record_stream(ptrs[tensor], handle(stream)),
            Step::Record { .. } => {}
            Step::Free { tensor, stream } if pool => sa_pluggable_free(ptrs[tensor], sizes[tensor], 0, handle(stream)),
            Step::Free { tensor, .. } => {
                // SAFETY: allocated above, freed once.
                unsafe { mem_free(std::ptr::null_mut(), ptrs[tensor]) };
            }
        }
    }
    failed
}

/// The smallest device, as a multiple of the naive peak (in steps of 1%, up to 3x), on which
/// the pool runs the replay with no failed allocation: its cache is emptied and the allocation
/// retried whenever the device refuses.
fn smallest_device(steps: &[Step], sizes: &[isize], naive: u64) -> Option<f64> {
    let fits = |pct: u64| {
        CAPACITY.store(naive / 100 * pct, Ordering::Relaxed);
        let (_, failed) = replay(steps, sizes, true);
        CAPACITY.store(u64::MAX, Ordering::Relaxed);
        failed == 0
    };
    let (mut lo, mut hi) = (100u64, 300u64);
    if !fits(hi) {
        return None;
    }
    while lo < hi {
        let mid = (lo + hi) / 2;
        if fits(mid) { hi = mid } else { lo = mid + 1 }
    }
    Some(lo as f64 / 100.0)
}

fn main() {
    register_fake();
    let pairs = env("PLUGGABLE_BENCH_PAIRS", 200_000);
    let rounds = env("PLUGGABLE_BENCH_ROUNDS", 7);
    println!(
        "warm pool, alloc+free through the C ABI, ns per pair (median of {rounds} rounds of {pairs} pairs per thread)"
    );
    for threads in [1, 8] {
        let runs: Vec<(f64, f64)> = (0..rounds).map(|_| warm_ns(threads, pairs)).collect();
        let wall = median(runs.iter().map(|r| r.0).collect());
        let cpu = median(runs.iter().map(|r| r.1).collect());
        println!("  {threads} thread(s): {wall:.0} ns wall (total time / pairs), {cpu:.0} ns CPU per pair");
    }
    let graphs =
        std::env::var("PLUGGABLE_BENCH_GRAPHS").unwrap_or_else(|_| "resnet50_train,bert_base,googlenet".into());
    println!("\nframework-style replay, peak device bytes (MiB)");
    println!(
        "  {:<16} {:>7} {:>7} {:>8} {:>15} {:>15} {:>9} {:>10} {:>12}",
        "graph", "tensors", "streams", "naive", "pool (pace)", "pool (no pace)", "plan", "fits in", "mallocs 1/2"
    );
    for g in graphs.split(',') {
        let (steps, sizes, arena, streams) = workload(g);
        let (naive, _) = replay(&steps, &sizes, false);
        KEEPS_PACE.store(true, Ordering::Relaxed);
        let (paced, _) = replay(&steps, &sizes, true);
        let smallest = smallest_device(&steps, &sizes, naive);
        let (first, second) = iterations(&steps, &sizes);
        KEEPS_PACE.store(false, Ordering::Relaxed);
        let (unpaced, _) = replay(&steps, &sizes, true);
        KEEPS_PACE.store(true, Ordering::Relaxed);
        let mib = |b: u64| b as f64 / (1 << 20) as f64;
        let pct = |b: u64| 100.0 * (b as f64 / naive as f64 - 1.0);
        let fits = smallest.map_or_else(|| "> 3x".to_string(), |f| format!("{f:.2}x"));
        println!(
            "  {g:<16} {:>7} {:>7} {:>8.1} {:>7.1} ({:+4.0}%) {:>7.1} ({:+4.0}%) {:>9.1} {fits:>10} {:>12}",
            sizes.len(),
            streams,
            mib(naive),
            mib(paced),
            pct(paced),
            mib(unpaced),
            pct(unpaced),
            mib(arena),
            format!("{first}/{second}")
        );
    }
}
