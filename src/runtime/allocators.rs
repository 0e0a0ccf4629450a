//! `gert::StreamAllocator`, `gert::EventAllocator`, `gert::NotifyAllocator` (ge-runtime-api.md
//! §1): grow-only vectors of device handles in GE's exact `ContinuousVector` layout.
//!
//! The warm path (`n ≤ size`) is a bound check and one atomic load: no lock, no allocation.
//! Growth takes a mutex, so unlike GE the allocators are safe to share between threads; slot 0 of
//! the stream vector still belongs to the caller, who writes it without the allocator knowing.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::consts::*;
use super::error::{RtError, RtErrorKind, RtResult};
use super::seam::Runtime;

/// The `ContinuousVector` header: capacity at 0, size at 8, 40 reserved bytes; elements follow at
/// offset 56. `size` is atomic only so that the warm path may read it while growth publishes.
#[repr(C)]
#[derive(Debug)]
pub struct VecHeader {
    pub capacity: usize,
    pub size: AtomicUsize,
    pub reserved: [u8; 40],
}

/// Offset of element 0 (`ContinuousVector::elements`).
pub const ELEMENTS_OFFSET: usize = 56;
const _: () = assert!(std::mem::size_of::<VecHeader>() == ELEMENTS_OFFSET);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Stream { priority: i32, flags: u32 },
    Event { flag: u32 },
    Notify,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Stream { .. } => "stream",
            Kind::Event { .. } => "event",
            Kind::Notify => "notify",
        }
    }
    fn capacity(self) -> usize {
        match self {
            Kind::Stream { .. } => MAX_STREAM_NUM,
            Kind::Event { .. } => MAX_EVENT_NUM,
            Kind::Notify => MAX_NOTIFY_NUM,
        }
    }
    /// GE's bound: streams and notifies must stay below the capacity; events may reach it
    /// (GE checks events only after creating the extra one, and leaks it; we check first).
    fn admits(self, n: usize) -> bool {
        match self {
            Kind::Stream { .. } | Kind::Notify => n < self.capacity(),
            Kind::Event { .. } => n <= self.capacity(),
        }
    }
    /// Slot 0 of the stream vector holds the caller's main stream.
    fn first_owned(self) -> usize {
        match self {
            Kind::Stream { .. } => 1,
            _ => 0,
        }
    }
}

struct Grow {
    runtime: Option<Arc<Runtime>>,
    /// Handles this allocator created, in slot order from `first_owned`; destroyed from here,
    /// not from the vector, so a caller scribbling over slots cannot make us destroy a stranger.
    created: Vec<usize>,
}

struct HandleVec {
    buf: NonNull<u8>,
    layout: Layout,
    kind: Kind,
    size: AtomicUsize,
    grow: Mutex<Grow>,
}

// SAFETY: the buffer is owned; growth is serialised by `grow`, readers only see published slots.
unsafe impl Send for HandleVec {}
unsafe impl Sync for HandleVec {}

impl HandleVec {
    fn new(kind: Kind, runtime: Option<Arc<Runtime>>) -> RtResult<HandleVec> {
        let cap = kind.capacity();
        // GE allocates capacity*sizeof(T) + sizeof(ContinuousVector) (64): room for cap + 1 slots.
        let layout = Layout::from_size_align(cap * 8 + 64, 8)
            .map_err(|e| RtError::new(RtErrorKind::Invalid, format!("{} vector layout: {e}", kind.name())))?;
        // SAFETY: non-zero size layout.
        let raw = unsafe { alloc_zeroed(layout) };
        let buf = NonNull::new(raw).ok_or_else(|| {
            RtError::new(RtErrorKind::Limit, format!("out of host memory for the {} vector", kind.name()))
        })?;
        let v = HandleVec {
            buf,
            layout,
            kind,
            size: AtomicUsize::new(kind.first_owned()),
            grow: Mutex::new(Grow { runtime, created: Vec::new() }),
        };
        let h = v.header();
        // SAFETY: the buffer is at least 56 bytes, 8-aligned, and not yet shared.
        unsafe { std::ptr::addr_of!(h.capacity).cast_mut().write(cap) };
        h.size.store(kind.first_owned(), Ordering::Release);
        Ok(v)
    }

    fn header(&self) -> &VecHeader {
        // SAFETY: the buffer starts with a `VecHeader` for the allocator's lifetime.
        unsafe { &*(self.buf.as_ptr() as *const VecHeader) }
    }

    fn slot(&self, i: usize) -> *mut *mut c_void {
        debug_assert!(i <= self.kind.capacity());
        // SAFETY: i ≤ capacity, inside the cap + 1 slots allocated.
        unsafe { self.buf.as_ptr().add(ELEMENTS_OFFSET + 8 * i) as *mut *mut c_void }
    }

    fn ptr(&self) -> *mut VecHeader {
        self.buf.as_ptr() as *mut VecHeader
    }

    fn acquire(&self, n: usize, device_id: i32) -> RtResult<*mut VecHeader> {
        if !self.kind.admits(n) {
            let bound = if matches!(self.kind, Kind::Event { .. }) { "at most" } else { "fewer than" };
            return Err(RtError::new(
                RtErrorKind::Limit,
                format!("{n} {}s requested; the allocator serves {bound} {}", self.kind.name(), self.kind.capacity()),
            ));
        }
        if n <= self.size.load(Ordering::Acquire) {
            return Ok(self.ptr());
        }
        let mut g = self.grow.lock();
        let mut size = self.size.load(Ordering::Acquire);
        if n <= size {
            return Ok(self.ptr());
        }
        let rt = match &g.runtime {
            Some(rt) => rt.clone(),
            None => {
                let rt = Runtime::current()?;
                g.runtime = Some(rt.clone());
                rt
            }
        };
        while size < n {
            // A failure keeps what was created, counted in the size, as GE does.
            let h = match self.kind {
                Kind::Stream { priority, flags } => rt.stream_create(priority, flags)?,
                Kind::Event { flag } => rt.event_create(flag)?,
                Kind::Notify => rt.notify_create(device_id)?,
            };
            // SAFETY: size < n < capacity + 1; slots at or past `size` are not yet published.
            unsafe { self.slot(size).write(h) };
            g.created.push(h as usize);
            size += 1;
            self.header().size.store(size, Ordering::Release);
            self.size.store(size, Ordering::Release);
        }
        Ok(self.ptr())
    }

    fn created(&self) -> usize {
        self.grow.lock().created.len()
    }
}

impl Drop for HandleVec {
    fn drop(&mut self) {
        let g = self.grow.get_mut();
        if let Some(rt) = &g.runtime {
            for &h in &g.created {
                // Results ignored, as GE's destructors do: nothing useful can be done here.
                let _ = match self.kind {
                    Kind::Stream { .. } => rt.stream_destroy(h as *mut c_void, false),
                    Kind::Event { .. } => rt.event_destroy(h as *mut c_void),
                    Kind::Notify => rt.notify_destroy(h as *mut c_void),
                };
            }
        }
        self.header().size.store(0, Ordering::Release);
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.buf.as_ptr(), self.layout) };
    }
}

/// `gert::StreamAllocator`: slot 0 is the caller's; `acquire(n)` creates streams `size..n-1`
/// with the priority and RT flags fixed at construction. Dropping destroys slots `1..size-1`.
pub struct StreamAllocator {
    v: HandleVec,
    priority: i32,
    flags: u32,
}

impl StreamAllocator {
    /// No device call happens here; the runtime is resolved on first growth.
    pub fn new(priority: i32, rt_flags: u32) -> RtResult<Self> {
        Ok(StreamAllocator {
            v: HandleVec::new(Kind::Stream { priority, flags: rt_flags }, None)?,
            priority,
            flags: rt_flags,
        })
    }
    /// Uses `runtime` instead of resolving one (tests, hosts with several runtimes).
    pub fn with_runtime(priority: i32, rt_flags: u32, runtime: Arc<Runtime>) -> RtResult<Self> {
        let v = HandleVec::new(Kind::Stream { priority, flags: rt_flags }, Some(runtime))?;
        Ok(StreamAllocator { v, priority, flags: rt_flags })
    }
    /// `AcquireStreams(n)`: the vector, grown to at least `n` (never shrunk). `n ≥ 2024` fails
    /// before any device call; a device failure keeps the streams already created.
    pub fn acquire(&self, n: usize) -> RtResult<*mut VecHeader> {
        self.v.acquire(n, 0)
    }
    pub fn priority(&self) -> i32 {
        self.priority
    }
    pub fn flags(&self) -> u32 {
        self.flags
    }
    /// Current vector size (slot 0 included).
    pub fn size(&self) -> usize {
        self.v.size.load(Ordering::Acquire)
    }
    /// Streams this allocator created (and will destroy).
    pub fn created(&self) -> usize {
        self.v.created()
    }
    /// The handles as the vector holds them (slot 0 is whatever the caller wrote).
    pub fn handles(&self) -> Vec<*mut c_void> {
        // SAFETY: slots below the published size are initialised.
        (0..self.size()).map(|i| unsafe { self.v.slot(i).read() }).collect()
    }
    /// Writes the caller's main stream into slot 0 (`OccupyStreamResource`). The handle is stored,
    /// never dereferenced.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn set_main_stream(&self, stream: *mut c_void) {
        // SAFETY: slot 0 always exists and is never written by the allocator after construction.
        unsafe { self.v.slot(0).write(stream) };
    }
}

/// `gert::EventAllocator`: all slots are created and destroyed here; default flag `ACL_EVENT_SYNC`.
pub struct EventAllocator {
    v: HandleVec,
    flag: u32,
}

impl EventAllocator {
    pub fn new(acl_flag: u32) -> RtResult<Self> {
        Ok(EventAllocator { v: HandleVec::new(Kind::Event { flag: acl_flag }, None)?, flag: acl_flag })
    }
    pub fn with_runtime(acl_flag: u32, runtime: Arc<Runtime>) -> RtResult<Self> {
        Ok(EventAllocator { v: HandleVec::new(Kind::Event { flag: acl_flag }, Some(runtime))?, flag: acl_flag })
    }
    /// `AcquireEvents(n)`; `n > 4096` fails before any device call (GE leaks one event there).
    pub fn acquire(&self, n: usize) -> RtResult<*mut VecHeader> {
        self.v.acquire(n, 0)
    }
    pub fn flag(&self) -> u32 {
        self.flag
    }
    pub fn size(&self) -> usize {
        self.v.size.load(Ordering::Acquire)
    }
    pub fn created(&self) -> usize {
        self.v.created()
    }
}

/// `gert::NotifyAllocator`: `acquire(device, n)` with `n < 1024`.
pub struct NotifyAllocator {
    v: HandleVec,
}

impl NotifyAllocator {
    pub fn new() -> RtResult<Self> {
        Ok(NotifyAllocator { v: HandleVec::new(Kind::Notify, None)? })
    }
    pub fn with_runtime(runtime: Arc<Runtime>) -> RtResult<Self> {
        Ok(NotifyAllocator { v: HandleVec::new(Kind::Notify, Some(runtime))? })
    }
    /// `AcquireNotifies(device_id, n)`. GE ignores the device id (the current context decides);
    /// it is passed to the seam's `notify_create` for runtimes that want it.
    pub fn acquire(&self, device_id: i32, n: usize) -> RtResult<*mut VecHeader> {
        self.v.acquire(n, device_id)
    }
    pub fn size(&self) -> usize {
        self.v.size.load(Ordering::Acquire)
    }
    pub fn created(&self) -> usize {
        self.v.created()
    }
}
