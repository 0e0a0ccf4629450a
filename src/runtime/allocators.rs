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

/// What a handle vector holds, with the creation arguments GE fixes per allocator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandleKind {
    /// `gert::StreamAllocator`: priority and RT flags of every stream.
    Stream { priority: i32, flags: u32 },
    /// `gert::EventAllocator`: the ACL event flag.
    Event { flag: u32 },
    /// `gert::NotifyAllocator`.
    Notify,
}

impl HandleKind {
    fn name(self) -> &'static str {
        match self {
            HandleKind::Stream { .. } => "stream",
            HandleKind::Event { .. } => "event",
            HandleKind::Notify => "notify",
        }
    }
    /// GE's `kMaxStreamNum`, `kMaxEventNum`, `kMaxNotifyNum`: the vector's capacity.
    pub fn capacity(self) -> usize {
        match self {
            HandleKind::Stream { .. } => MAX_STREAM_NUM,
            HandleKind::Event { .. } => MAX_EVENT_NUM,
            HandleKind::Notify => MAX_NOTIFY_NUM,
        }
    }
    /// GE's bound, checked before anything else: streams and notifies must stay below the
    /// capacity; events may reach it (GE checks events only after creating the extra one, and
    /// leaks it; we refuse first).
    pub fn check_bound(self, n: usize) -> RtResult<()> {
        let admitted = match self {
            HandleKind::Stream { .. } | HandleKind::Notify => n < self.capacity(),
            HandleKind::Event { .. } => n <= self.capacity(),
        };
        if admitted {
            return Ok(());
        }
        let bound = if matches!(self, HandleKind::Event { .. }) { "at most" } else { "fewer than" };
        Err(RtError::new(
            RtErrorKind::Limit,
            format!("{n} {}s requested; the allocator serves {bound} {}", self.name(), self.capacity()),
        ))
    }
    /// Slot 0 of the stream vector holds the caller's main stream.
    pub fn first_owned(self) -> usize {
        match self {
            HandleKind::Stream { .. } => 1,
            _ => 0,
        }
    }
    /// Bytes of GE's holder: `capacity * sizeof(T) + sizeof(ContinuousVector)` (64), which
    /// leaves room for capacity + 1 slots.
    pub fn holder_bytes(self) -> usize {
        self.capacity() * 8 + 64
    }
}

struct Grow {
    runtime: Option<Arc<Runtime>>,
    /// Handles this allocator created, in slot order from `first_owned`; destroyed from here,
    /// not from the vector, so a caller scribbling over slots cannot make us destroy a stranger.
    created: Vec<usize>,
}

/// A grow-only handle vector in GE's layout. The buffer is either the allocator's own (the
/// C ABI's allocators) or a GE object's holder, which C++ allocated and frees
/// ([`HolderState`]); the header's atomic size is the one source of truth in both cases.
struct HandleVec {
    buf: NonNull<u8>,
    /// `Some`: the buffer was allocated here with this layout and is freed on drop.
    owned: Option<Layout>,
    kind: HandleKind,
    grow: Mutex<Grow>,
}

// SAFETY: the buffer is owned or outlives the vector (by HolderState's contract); growth is
// serialised by `grow`, readers only see published slots.
unsafe impl Send for HandleVec {}
unsafe impl Sync for HandleVec {}

impl HandleVec {
    fn new(kind: HandleKind, runtime: Option<Arc<Runtime>>) -> RtResult<HandleVec> {
        let layout = Layout::from_size_align(kind.holder_bytes(), 8)
            .map_err(|e| RtError::new(RtErrorKind::Invalid, format!("{} vector layout: {e}", kind.name())))?;
        // SAFETY: non-zero size layout.
        let raw = unsafe { alloc_zeroed(layout) };
        let buf = NonNull::new(raw).ok_or_else(|| {
            RtError::new(RtErrorKind::Limit, format!("out of host memory for the {} vector", kind.name()))
        })?;
        // SAFETY: a fresh, zeroed, 8-aligned buffer of `holder_bytes`.
        unsafe { init_holder(buf.as_ptr().cast(), kind) };
        Ok(HandleVec { buf, owned: Some(layout), kind, grow: Mutex::new(Grow { runtime, created: Vec::new() }) })
    }

    fn header(&self) -> &VecHeader {
        // SAFETY: the buffer starts with a `VecHeader` for the vector's lifetime.
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

    fn size(&self) -> usize {
        self.header().size.load(Ordering::Acquire)
    }

    fn acquire(&self, n: usize, device_id: i32) -> RtResult<*mut VecHeader> {
        self.kind.check_bound(n)?;
        if n <= self.size() {
            return Ok(self.ptr());
        }
        let mut g = self.grow.lock();
        let mut size = self.size();
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
                HandleKind::Stream { priority, flags } => rt.stream_create(priority, flags)?,
                HandleKind::Event { flag } => rt.event_create(flag)?,
                HandleKind::Notify => rt.notify_create(device_id)?,
            };
            // SAFETY: size < n ≤ capacity; slots at or past `size` are not yet published.
            unsafe { self.slot(size).write(h) };
            g.created.push(h as usize);
            size += 1;
            self.header().size.store(size, Ordering::Release);
        }
        Ok(self.ptr())
    }

    fn created(&self) -> usize {
        self.grow.lock().created.len()
    }

    /// Destroys every handle created here (results ignored, as GE's destructors do: nothing
    /// useful can be done with them) and forgets them. Touches the device, not the buffer.
    fn destroy_created(&self) {
        let mut g = self.grow.lock();
        let created = std::mem::take(&mut g.created);
        if let Some(rt) = &g.runtime {
            for h in created {
                let _ = match self.kind {
                    HandleKind::Stream { .. } => rt.stream_destroy(h as *mut c_void, false),
                    HandleKind::Event { .. } => rt.event_destroy(h as *mut c_void),
                    HandleKind::Notify => rt.notify_destroy(h as *mut c_void),
                };
            }
        }
    }
}

impl Drop for HandleVec {
    fn drop(&mut self) {
        self.destroy_created();
        if let Some(layout) = self.owned {
            self.header().size.store(0, Ordering::Release);
            // SAFETY: allocated in `new` with this layout.
            unsafe { dealloc(self.buf.as_ptr(), layout) };
        }
    }
}

/// Writes GE's initial header into a fresh holder: the capacity, the size (1 for streams, whose
/// slot 0 is the caller's and starts NULL; 0 otherwise) and zeroed reserved bytes.
///
/// # Safety
/// `holder` is writable for `kind.holder_bytes()` bytes, 8-aligned, and not yet shared.
pub unsafe fn init_holder(holder: *mut VecHeader, kind: HandleKind) {
    // SAFETY: by the contract; the header fields and slot 0 lie in the first 64 bytes.
    unsafe {
        std::ptr::addr_of_mut!((*holder).capacity).write(kind.capacity());
        std::ptr::addr_of_mut!((*holder).size).write(AtomicUsize::new(kind.first_owned()));
        std::ptr::addr_of_mut!((*holder).reserved).write([0; 40]);
        holder.cast::<u8>().add(ELEMENTS_OFFSET).cast::<*mut c_void>().write(std::ptr::null_mut());
    }
}

/// The growth state of a GE object's holder (`gert::StreamAllocator::streams_holder_` and its
/// siblings): the vector lives in a block C++ allocated with `new[]` (GE's inline constructors,
/// or the library's own for the stream allocator) and C++ frees; this side creates and destroys
/// the handles in it.
pub struct HolderState(HandleVec);

impl HolderState {
    /// State for `holder`. Fails when the holder's capacity is not GE's for `kind` (a caller
    /// built against other headers), before anything is written.
    ///
    /// # Safety
    /// `holder` points to a GE holder of `kind.holder_bytes()` bytes at least, initialised by
    /// `ContinuousVector::Init` (or [`init_holder`]), that stays allocated while this state or
    /// any vector pointer it returned is used.
    pub unsafe fn new(kind: HandleKind, holder: NonNull<VecHeader>) -> RtResult<HolderState> {
        // SAFETY: initialised header, by the contract.
        let capacity = unsafe { holder.as_ref().capacity };
        if capacity != kind.capacity() {
            return Err(RtError::new(
                RtErrorKind::Invalid,
                format!(
                    "the {} holder has capacity {capacity}, GE's is {}: the caller was built against other headers",
                    kind.name(),
                    kind.capacity()
                ),
            ));
        }
        Ok(HolderState(HandleVec {
            buf: holder.cast(),
            owned: None,
            kind,
            grow: Mutex::new(Grow { runtime: None, created: Vec::new() }),
        }))
    }
    /// The holder this state grows.
    pub fn holder(&self) -> *mut VecHeader {
        self.0.ptr()
    }
    pub fn kind(&self) -> HandleKind {
        self.0.kind
    }
    /// GE's `Acquire*`: the bound, then growth to at least `n` with the fixed arguments.
    pub fn acquire(&self, n: usize, device_id: i32) -> RtResult<*mut VecHeader> {
        self.0.acquire(n, device_id)
    }
    /// Handles created (and to be destroyed) by this state.
    pub fn created(&self) -> usize {
        self.0.created()
    }
    /// GE's destructor body: destroys every handle this state created (never slot 0 of a stream
    /// vector, which it never created) and sets the size to 0. The holder itself is C++'s to free,
    /// afterwards.
    pub fn release(&self) {
        self.0.destroy_created();
        self.0.header().size.store(0, Ordering::Release);
    }
}

/// The warm path of GE's `Acquire*` on a holder: the vector when it already holds `n` handles.
///
/// # Safety
/// `holder` points to an initialised GE holder.
pub unsafe fn holder_has(holder: NonNull<VecHeader>, n: usize) -> bool {
    // SAFETY: initialised header, by the contract.
    n <= unsafe { holder.as_ref() }.size.load(Ordering::Acquire)
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
            v: HandleVec::new(HandleKind::Stream { priority, flags: rt_flags }, None)?,
            priority,
            flags: rt_flags,
        })
    }
    /// Uses `runtime` instead of resolving one (tests, hosts with several runtimes).
    pub fn with_runtime(priority: i32, rt_flags: u32, runtime: Arc<Runtime>) -> RtResult<Self> {
        let v = HandleVec::new(HandleKind::Stream { priority, flags: rt_flags }, Some(runtime))?;
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
        self.v.size()
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
        Ok(EventAllocator { v: HandleVec::new(HandleKind::Event { flag: acl_flag }, None)?, flag: acl_flag })
    }
    pub fn with_runtime(acl_flag: u32, runtime: Arc<Runtime>) -> RtResult<Self> {
        Ok(EventAllocator { v: HandleVec::new(HandleKind::Event { flag: acl_flag }, Some(runtime))?, flag: acl_flag })
    }
    /// `AcquireEvents(n)`; `n > 4096` fails before any device call (GE leaks one event there).
    pub fn acquire(&self, n: usize) -> RtResult<*mut VecHeader> {
        self.v.acquire(n, 0)
    }
    pub fn flag(&self) -> u32 {
        self.flag
    }
    pub fn size(&self) -> usize {
        self.v.size()
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
        Ok(NotifyAllocator { v: HandleVec::new(HandleKind::Notify, None)? })
    }
    pub fn with_runtime(runtime: Arc<Runtime>) -> RtResult<Self> {
        Ok(NotifyAllocator { v: HandleVec::new(HandleKind::Notify, Some(runtime))? })
    }
    /// `AcquireNotifies(device_id, n)`. GE ignores the device id (the current context decides);
    /// it is passed to the seam's `notify_create` for runtimes that want it.
    pub fn acquire(&self, device_id: i32, n: usize) -> RtResult<*mut VecHeader> {
        self.v.acquire(n, device_id)
    }
    pub fn size(&self) -> usize {
        self.v.size()
    }
    pub fn created(&self) -> usize {
        self.v.created()
    }
}
