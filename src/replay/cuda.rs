//! The CUDA backend: one CUDA stream per plan stream, a spin kernel per node, CUDA events for
//! the plan's records and waits, all through the runtime seam's CUDA table
//! ([`crate::runtime::cuda`]) except what the seam has no entry for (module, launch, copies).
//!
//! A node's kernel runs on `max(1, round(units_k / units × SMs))` blocks, where `units_k` is
//! `min(cores, units)` and the SM count comes from the device. Each block asks for the most
//! dynamic shared memory a block may have, so no two such blocks share an SM: a node holds its
//! share of the SMs as the simulator's node holds its units (a node with no units runs one
//! block without that reservation). The kernels are `kernels/replay.ptx`, embedded in the
//! library and JIT-compiled by the driver when the backend starts.
//!
//! A run is captured, in [`Program::issue_order`] (every record before its waits), into a CUDA
//! graph and launched with one call, so host issue speed does not stretch the measured run.
//! A capture has no limit of pending work: issuing a plan straight to the streams while a
//! kernel held them back did, and a plan of a thousand kernels on many streams stalled the
//! host with the GPU waiting for it. Kernels stamp `%globaltimer` when they start and end; the
//! makespan is the first start to the last end.

use std::ffi::c_void;
use std::sync::Arc;

use super::{Executor, Op, Program, Run, Violation};
use crate::error::{Error, ErrorKind, Result};
use crate::runtime::cuda::{self, Cuda, DevPtr, Function, Module};
use crate::runtime::{RtError, Runtime};

/// The device code (see `kernels/replay.ll`).
pub const PTX: &str = concat!(include_str!("kernels/replay.ptx"), "\0");

/// Threads per block: one warp; thread 0 does the work.
const BLOCK: u32 = 32;
/// `ACL_EVENT_SYNC` without `ACL_EVENT_TIME_LINE`: the seam makes it a timing-free CUDA event,
/// the cheapest kind (the kernels time themselves).
const TIMING_FREE: u32 = 0x01;

fn rt_err(e: RtError) -> Error {
    Error::new(ErrorKind::Failed, format!("replay on CUDA: {}", e.message))
}

/// Device memory through the seam, freed on drop.
struct Buffer {
    rt: Arc<Runtime>,
    ptr: *mut c_void,
    bytes: usize,
}

impl Buffer {
    fn new(rt: &Arc<Runtime>, bytes: usize) -> Result<Buffer> {
        let ptr = rt.mem_malloc(bytes.max(4)).map_err(rt_err)?;
        Ok(Buffer { rt: rt.clone(), ptr, bytes: bytes.max(4) })
    }
    fn dev(&self) -> DevPtr {
        self.ptr as usize as DevPtr
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // Nothing to report to in a destructor; a failed free leaves the block to the context.
        let _ = self.rt.mem_free(self.ptr);
    }
}

/// Streams and events of the seam, destroyed on drop.
struct Handles {
    rt: Arc<Runtime>,
    streams: Vec<*mut c_void>,
    events: Vec<*mut c_void>,
}

impl Drop for Handles {
    fn drop(&mut self) {
        for &e in &self.events {
            let _ = self.rt.event_destroy(e);
        }
        for &s in &self.streams {
            let _ = self.rt.stream_destroy(s, false);
        }
    }
}

/// What a program needs on the device, made at its first run.
struct Prepared {
    /// Plan stream → seam stream (null for an empty one).
    streams: Vec<*mut c_void>,
    /// The capture's origin: every plan stream forks from it and joins back into it.
    origin: *mut c_void,
    /// One per arc.
    events: Vec<*mut c_void>,
    /// Recorded on `origin` at the start; every plan stream waits on it.
    fork: *mut c_void,
    /// Per plan stream (null for an empty one): recorded at its end, waited on by `origin`.
    joins: Vec<*mut c_void>,
    flags: Buffer,
    deps: Buffer,
    violations: Buffer,
    times: Buffer,
    arrivals: Buffer,
    /// Per kernel: first dependency index, count, blocks.
    layout: Vec<(u32, u32, u32)>,
    _handles: Handles,
}

/// A CUDA GPU as the device.
pub struct CudaExecutor {
    cuda: Arc<Cuda>,
    rt: Arc<Runtime>,
    kernel: Function,
    /// Dynamic shared memory of a unit-holding block (0: no SM reservation).
    shared: u32,
    time_scale: f64,
    prepared: Option<Prepared>,
    // Declared last: dropped after the functions that point into it.
    _module: Module,
}

impl CudaExecutor {
    /// Loads the driver (an error naming what was searched when there is none) and JIT-compiles
    /// the kernels.
    pub fn new(time_scale: f64) -> Result<CudaExecutor> {
        let cuda = cuda::driver().map_err(rt_err)?;
        let rt = cuda::runtime().map_err(rt_err)?;
        let ptx = std::ffi::CStr::from_bytes_with_nul(PTX.as_bytes()).expect("one NUL, at the end");
        let module = cuda.load_ptx(ptx).map_err(rt_err)?;
        let kernel = module.function(c"sa_replay_kernel").map_err(rt_err)?;
        let shared = match cuda.shared_optin() {
            0 => 0,
            bytes => cuda.set_max_dynamic_shared(&kernel, bytes).map_or(0, |()| bytes),
        };
        Ok(CudaExecutor { cuda, rt, kernel, shared, time_scale, prepared: None, _module: module })
    }

    fn prepare(&self, program: &Program) -> Result<Prepared> {
        let rt = &self.rt;
        let mut handles = Handles { rt: rt.clone(), streams: Vec::new(), events: Vec::new() };
        let mut stream = || -> Result<*mut c_void> {
            let s = rt.stream_create(0, 0).map_err(rt_err)?;
            handles.streams.push(s);
            Ok(s)
        };
        let mut streams = Vec::with_capacity(program.streams.len());
        for ops in &program.streams {
            streams.push(if ops.is_empty() { std::ptr::null_mut() } else { stream()? });
        }
        let origin = stream()?;
        let mut event = || -> Result<*mut c_void> {
            let e = rt.event_create(TIMING_FREE).map_err(rt_err)?;
            handles.events.push(e);
            Ok(e)
        };
        let events = (0..program.arcs.len()).map(|_| event()).collect::<Result<Vec<_>>>()?;
        let fork = event()?;
        let joins = streams
            .iter()
            .map(|s| if s.is_null() { Ok(std::ptr::null_mut()) } else { event() })
            .collect::<Result<Vec<_>>>()?;
        let nk = program.kernels.len();
        let sms = self.cuda.sm_count();
        let mut deps: Vec<u32> = Vec::new();
        let mut layout = Vec::with_capacity(nk);
        for k in &program.kernels {
            let begin = deps.len() as u32;
            deps.extend(k.deps.iter().map(|(d, _)| *d));
            let share = f64::from(k.units) / f64::from(program.units.max(1)) * f64::from(sms);
            let blocks = (share.round() as u32).clamp(1, sms.max(1));
            layout.push((begin, k.deps.len() as u32, blocks));
        }
        let p = Prepared {
            streams,
            origin,
            events,
            fork,
            joins,
            flags: Buffer::new(rt, 4 * nk)?,
            deps: Buffer::new(rt, 4 * deps.len())?,
            violations: Buffer::new(rt, 4 * nk)?,
            times: Buffer::new(rt, 16 * nk)?,
            arrivals: Buffer::new(rt, 4 * nk)?,
            layout,
            _handles: handles,
        };
        let c = &self.cuda;
        c.fill_u32(p.flags.dev(), 0, p.flags.bytes / 4).map_err(rt_err)?;
        c.fill_u32(p.arrivals.dev(), 0, p.arrivals.bytes / 4).map_err(rt_err)?;
        let bytes: Vec<u8> = deps.iter().flat_map(|d| d.to_le_bytes()).collect();
        if !bytes.is_empty() {
            c.copy_to_device(p.deps.dev(), &bytes).map_err(rt_err)?;
        }
        Ok(p)
    }
}

fn ptr<T>(v: &mut T) -> *mut c_void {
    (v as *mut T).cast()
}

impl Executor for CudaExecutor {
    fn device(&self) -> String {
        format!("{} ({} SMs, CUDA driver {})", self.cuda.device_name(), self.cuda.sm_count(), self.cuda.library())
    }

    fn run(&mut self, program: &Program, run: u32) -> Result<Run> {
        if self.prepared.is_none() {
            self.prepared = Some(self.prepare(program)?);
        }
        let p = self.prepared.as_ref().expect("prepared above");
        let (c, rt) = (&self.cuda, &self.rt);
        let order = program.issue_order()?;
        c.fill_u32(p.violations.dev(), 0, p.violations.bytes / 4).map_err(rt_err)?;
        // The fork, the plan in issue order, the joins: one graph, launched with one call.
        let capture = c.begin_capture(p.origin).map_err(rt_err)?;
        rt.event_record(p.fork, p.origin).map_err(rt_err)?;
        for &s in p.streams.iter().filter(|s| !s.is_null()) {
            rt.stream_wait_event(s, p.fork).map_err(rt_err)?;
        }
        let scale_ns = self.time_scale * 1000.0;
        for (s, i) in order {
            let stream = p.streams[s as usize];
            match program.streams[s as usize][i as usize] {
                Op::Wait(a) => rt.stream_wait_event(stream, p.events[a as usize]).map_err(rt_err)?,
                Op::Record(a) => rt.event_record(p.events[a as usize], stream).map_err(rt_err)?,
                Op::Kernel(k) => {
                    let kern = &program.kernels[k as usize];
                    let (begin, count, blocks) = p.layout[k as usize];
                    let (mut flags, mut deps, mut viol, mut times, mut arr) =
                        (p.flags.dev(), p.deps.dev(), p.violations.dev(), p.times.dev(), p.arrivals.dev());
                    let (mut kk, mut b, mut n, mut r) = (k, begin, count, run);
                    let mut dur = (kern.cost_us * scale_ns).round() as u64;
                    let mut params = [
                        ptr(&mut flags),
                        ptr(&mut deps),
                        ptr(&mut viol),
                        ptr(&mut times),
                        ptr(&mut arr),
                        ptr(&mut kk),
                        ptr(&mut b),
                        ptr(&mut n),
                        ptr(&mut r),
                        ptr(&mut dur),
                    ];
                    let shared = if kern.units > 0 { self.shared } else { 0 };
                    c.launch(&self.kernel, blocks, BLOCK, shared, stream, &mut params).map_err(rt_err)?;
                }
            }
        }
        for (&s, &join) in p.streams.iter().zip(&p.joins).filter(|(s, _)| !s.is_null()) {
            rt.event_record(join, s).map_err(rt_err)?;
            rt.stream_wait_event(p.origin, join).map_err(rt_err)?;
        }
        let graph = capture.finish().map_err(rt_err)?;
        graph.launch(p.origin).map_err(rt_err)?;
        c.stream_synchronize(p.origin).map_err(rt_err)?;
        drop(graph);
        let read = |b: &Buffer| -> Result<Vec<u8>> {
            let mut v = vec![0u8; b.bytes];
            c.copy_to_host(&mut v, b.dev()).map_err(rt_err)?;
            Ok(v)
        };
        let word = |v: &[u8], i: usize| u64::from_le_bytes(v[8 * i..8 * i + 8].try_into().expect("8 bytes"));
        let times = read(&p.times)?;
        let violations = read(&p.violations)?;
        let nk = program.kernels.len();
        let mut result = Run { spans: vec![(0.0, 0.0); nk], ..Run::default() };
        // Spans count from the first kernel's start.
        let first = (0..nk).map(|k| word(&times, 2 * k)).min().unwrap_or(0);
        let mut last = 0u64;
        for k in 0..nk {
            let (b, e) = (word(&times, 2 * k), word(&times, 2 * k + 1));
            last = last.max(e);
            let us = |t: u64| t.saturating_sub(first) as f64 / 1000.0;
            result.spans[k] = (us(b), us(e));
            let v = u32::from_le_bytes(violations[4 * k..4 * k + 4].try_into().expect("4 bytes"));
            if v != 0 {
                result.violations.push(Violation { kernel: k as u32, dep: v - 1 });
            }
        }
        result.makespan_us = if nk > 0 { last.saturating_sub(first) as f64 / 1000.0 } else { 0.0 };
        Ok(result)
    }
}
