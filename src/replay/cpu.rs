//! The host backend: one thread per stream, events as condition variables, kernels as timed
//! spins holding their units of a shared pool.
//!
//! Its timings mean little on a machine with fewer cores than streams (spinning threads share
//! the cores, and a thread woken by an event may wait for a core), but its violation check is
//! real: the streams run concurrently, a wait blocks its thread until the record happened, and
//! a kernel whose producer was not ordered before it by stream order or an event can start
//! while that producer is still spinning.

use std::sync::Barrier;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::{Executor, Op, Program, Run, Violation};
use crate::error::Result;

/// Host threads as the device.
pub struct CpuExecutor {
    /// Kernel time = `cost_us` × this.
    pub time_scale: f64,
    /// Device units shared by the running kernels.
    pub units: u32,
}

/// An event: recorded or not, and the threads waiting for it.
#[derive(Default)]
struct Event {
    recorded: Mutex<bool>,
    cv: Condvar,
}

/// The device's free units.
struct Units {
    free: Mutex<u32>,
    cv: Condvar,
}

impl Units {
    fn acquire(&self, n: u32) {
        let mut g = self.free.lock();
        while *g < n {
            self.cv.wait(&mut g);
        }
        *g -= n;
    }
    fn release(&self, n: u32) {
        *self.free.lock() += n;
        self.cv.notify_all();
    }
}

fn spin(d: Duration) {
    if d.is_zero() {
        return;
    }
    let end = Instant::now() + d;
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

impl Executor for CpuExecutor {
    fn device(&self) -> String {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        format!("host threads ({cores} cores, {} units)", self.units)
    }

    fn run(&mut self, program: &Program, run: u32) -> Result<Run> {
        let events: Vec<Event> = program.arcs.iter().map(|_| Event::default()).collect();
        let flags: Vec<AtomicU32> = program.kernels.iter().map(|_| AtomicU32::new(0)).collect();
        let units = Units { free: Mutex::new(self.units), cv: Condvar::new() };
        let active: Vec<usize> = (0..program.streams.len()).filter(|&s| !program.streams[s].is_empty()).collect();
        let barrier = Barrier::new(active.len() + 1);
        let t0: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        let scale = self.time_scale;
        let cap = self.units;
        type Out = (Vec<(u32, f64, f64)>, Vec<Violation>);
        let outs: Vec<Out> = std::thread::scope(|sc| {
            let handles: Vec<_> = active
                .iter()
                .map(|&s| {
                    let (events, flags, units, barrier, t0) = (&events, &flags, &units, &barrier, &t0);
                    sc.spawn(move || {
                        barrier.wait();
                        let start = *t0.get().expect("set before the barrier opens");
                        let mut spans = Vec::new();
                        let mut violations = Vec::new();
                        for &op in &program.streams[s] {
                            match op {
                                Op::Wait(a) => {
                                    let e = &events[a as usize];
                                    let mut g = e.recorded.lock();
                                    while !*g {
                                        e.cv.wait(&mut g);
                                    }
                                }
                                Op::Record(a) => {
                                    let e = &events[a as usize];
                                    *e.recorded.lock() = true;
                                    e.cv.notify_all();
                                }
                                Op::Kernel(k) => {
                                    let kern = &program.kernels[k as usize];
                                    let need = kern.units.min(cap);
                                    units.acquire(need);
                                    let begin = Instant::now();
                                    for &(d, _) in &kern.deps {
                                        if flags[d as usize].load(Ordering::Acquire) != run {
                                            violations.push(Violation { kernel: k, dep: d });
                                        }
                                    }
                                    spin(Duration::from_secs_f64(kern.cost_us * scale * 1e-6));
                                    let end = Instant::now();
                                    flags[k as usize].store(run, Ordering::Release);
                                    units.release(need);
                                    let us = |t: Instant| t.duration_since(start).as_secs_f64() * 1e6;
                                    spans.push((k, us(begin), us(end)));
                                }
                            }
                        }
                        (spans, violations)
                    })
                })
                .collect();
            t0.set(Instant::now()).expect("set once");
            barrier.wait();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect()
        });
        let mut result = Run { spans: vec![(0.0, 0.0); program.kernels.len()], ..Run::default() };
        let (mut first, mut last) = (f64::INFINITY, 0.0f64);
        for (spans, violations) in outs {
            for (k, b, e) in spans {
                result.spans[k as usize] = (b, e);
                first = first.min(b);
                last = last.max(e);
            }
            result.violations.extend(violations);
        }
        result.makespan_us = if first.is_finite() { last - first } else { 0.0 };
        result.violations.sort_unstable();
        Ok(result)
    }
}
