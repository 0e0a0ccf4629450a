//! MindSpore's stream-ordered device memory pool (the seed's "automatic extension of cross-stream
//! lifetimes"), through the runtime seam.
//!
//! Every block belongs to the stream it was allocated on (its owner) and is reused only on that
//! stream, where stream order alone makes reuse safe. A block that other streams read — told
//! by [`MemPool::record_use`], by the reader list of [`MemPool::free_after`] (what the compile
//! plan knows per tensor), or by freeing it on another stream — gets, when freed, an event
//! recorded on each of those streams and waits in a pending list. It goes back to its owner's
//! free list when, for every event:
//! - the owner has since waited on a later record of that stream through the
//!   [`StreamContext`] (the back-stream rule: no device call), or a completed record already
//!   covered it; or
//! - the device answers that the event has completed (`aclrtQueryEventStatus`).
//!
//! When `aclrtMalloc` fails, the pool synchronises every pending event, releases those blocks,
//! looks at the owner's free list again, returns its cached blocks to the device (after
//! synchronising their streams) and retries once; then it fails with `OutOfMemory`, naming the
//! size, the stream and each step.
//!
//! Blocks are whole `aclrtMalloc` allocations (sizes rounded to 512 bytes), reused best-fit up to
//! twice the request; they are not split. One lock guards the pool; device calls run under it,
//! as in GE's pools.

use std::collections::BTreeSet;
use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use super::error::{RtError, RtErrorKind, RtResult};
use super::pool::HandleMap;
use super::stream_ops::{Guard, Release, StreamContext};

type Ptr = *mut c_void;

/// Granularity of block sizes (MindSpore's and GE's device memory alignment).
pub const MEM_POOL_ALIGN: usize = 512;

/// Counters and byte totals of a [`MemPool`]; a consistent snapshot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemPoolStats {
    /// Bytes held by callers (allocated, not yet freed).
    pub in_use_bytes: u64,
    /// Bytes freed and waiting for their events.
    pub pending_bytes: u64,
    /// Bytes in the free lists, ready for their owner streams.
    pub cached_bytes: u64,
    /// Bytes the pool holds from the device (`in_use + pending + cached`).
    pub device_bytes: u64,
    /// Highest `device_bytes` seen.
    pub peak_device_bytes: u64,
    /// Highest `in_use_bytes` seen.
    pub peak_in_use_bytes: u64,
    pub allocs: u64,
    pub frees: u64,
    /// Allocations served from a free list.
    pub reuses: u64,
    pub device_mallocs: u64,
    pub device_frees: u64,
    /// Events recorded to guard blocks read on other streams.
    pub guards: u64,
    /// Guards found done by the back-stream rule or an already completed record: no device call.
    pub released_without_query: u64,
    /// Guards found done by a device query.
    pub released_by_query: u64,
    /// Guards synchronised after an allocation failure (or by `empty_cache`).
    pub released_by_sync: u64,
    /// Device queries made.
    pub queries: u64,
    /// Allocations that failed once, synchronised and retried.
    pub retries: u64,
}

#[derive(Debug)]
enum State {
    InUse,
    Pending(Vec<Guard>),
    Free,
}

#[derive(Debug)]
struct Block {
    size: usize,
    owner: usize,
    /// Streams other than the owner that read the block (record_use), sorted, distinct.
    readers: Vec<usize>,
    state: State,
}

#[derive(Debug, Default)]
struct Inner {
    blocks: HandleMap<Block>,
    /// Per owner stream: `(size, address)` of its free blocks.
    free: HandleMap<BTreeSet<(usize, usize)>>,
    /// Pending blocks in the order they were freed.
    pending: Vec<usize>,
    stats: MemPoolStats,
}

/// A stream-ordered device memory pool. Thread-safe.
#[derive(Debug)]
pub struct MemPool {
    ctx: Arc<StreamContext>,
    inner: Mutex<Inner>,
    /// Most bytes the pool may hold from the device (`u64::MAX`: no limit): a device allocation
    /// past it fails as the device would, and so goes through the synchronise-release-retry path.
    limit: AtomicU64,
}

fn round(size: usize) -> RtResult<usize> {
    if size == 0 {
        return Err(RtError::new(RtErrorKind::Invalid, "size is 0"));
    }
    size.checked_next_multiple_of(MEM_POOL_ALIGN)
        .ok_or_else(|| RtError::new(RtErrorKind::Invalid, format!("size {size} overflows when rounded to 512 bytes")))
}

// Device pointers and streams are opaque tokens: passed back to the runtime, never dereferenced.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
impl MemPool {
    /// An empty pool over `ctx`'s runtime and streams. No device call.
    pub fn new(ctx: Arc<StreamContext>) -> MemPool {
        MemPool { ctx, inner: Mutex::new(Inner::default()), limit: AtomicU64::new(u64::MAX) }
    }

    /// Caps the bytes the pool holds from the device (`None`: no cap). Blocks already held are
    /// kept; the cap applies to the next device allocation.
    pub fn set_limit(&self, bytes: Option<u64>) {
        self.limit.store(bytes.unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// `aclrtMalloc` within the pool's limit.
    fn device_malloc(&self, g: &Inner, need: usize) -> RtResult<Ptr> {
        let limit = self.limit.load(Ordering::Relaxed);
        if g.stats.device_bytes.saturating_add(need as u64) > limit {
            return Err(RtError::new(
                RtErrorKind::Device,
                format!("the pool's limit of {limit} bytes would be exceeded ({} bytes held)", g.stats.device_bytes),
            ));
        }
        self.ctx.runtime().mem_malloc(need)
    }

    pub fn context(&self) -> &Arc<StreamContext> {
        &self.ctx
    }

    pub fn stats(&self) -> MemPoolStats {
        self.inner.lock().stats
    }

    /// `size` bytes (rounded up to 512) for use on `stream`, a stream of the pool's context.
    /// Order of tries: the stream's free list; its pending blocks whose events are done (no
    /// device call when a wait already orders them, else `aclrtQueryEventStatus`); a new
    /// `aclrtMalloc`; on failure the synchronise-release-retry path of the module docs.
    pub fn alloc(&self, size: usize, stream: Ptr) -> RtResult<Ptr> {
        let owner = self.ctx.index_of(stream)?;
        let need = round(size)?;
        let mut g = self.inner.lock();
        if let Some(p) = self.take_free(&mut g, owner, need) {
            return Ok(p);
        }
        self.release_ready(&mut g, Some(owner))?;
        if let Some(p) = self.take_free(&mut g, owner, need) {
            return Ok(p);
        }
        let first = match self.device_malloc(&g, need) {
            Ok(p) => return Ok(self.add_block(&mut g, p, need, owner)),
            // Only a device answer is worth a retry; a missing entry will not change.
            Err(e) if e.kind != RtErrorKind::Device => return Err(e),
            Err(e) => e,
        };
        // Out of device memory (or a failed call): synchronise, release, retry once.
        g.stats.retries += 1;
        let pending_before = g.pending.len();
        let what = |steps: &str, e: &RtError| {
            format!(
                "cannot allocate {size} bytes ({need} rounded) on stream {stream:p}: aclrtMalloc failed ({}); \
                 {steps}: {e}",
                first.message
            )
        };
        self.sync_pending(&mut g)
            .map_err(|e| RtError { message: what("synchronising the pending events failed", &e), ..e })?;
        if let Some(p) = self.take_free(&mut g, owner, need) {
            return Ok(p);
        }
        let (blocks, bytes) =
            self.trim(&mut g).map_err(|e| RtError { message: what("returning cached blocks failed", &e), ..e })?;
        match self.device_malloc(&g, need) {
            Ok(p) => Ok(self.add_block(&mut g, p, need, owner)),
            Err(e) => Err(RtError {
                kind: RtErrorKind::OutOfMemory,
                runtime_code: e.runtime_code,
                message: format!(
                    "cannot allocate {size} bytes ({need} rounded) on stream {stream:p}: aclrtMalloc failed ({}); \
                     synchronised the events of {pending_before} pending blocks and released them, returned \
                     {blocks} cached blocks ({bytes} bytes) to the device, and the one retry failed too ({}); \
                     {} bytes remain in use",
                    first.message, e.message, g.stats.in_use_bytes
                ),
            }),
        }
    }

    fn add_block(&self, g: &mut Inner, p: Ptr, size: usize, owner: usize) -> Ptr {
        g.blocks.insert(p as usize, Block { size, owner, readers: Vec::new(), state: State::InUse });
        let st = &mut g.stats;
        st.device_mallocs += 1;
        st.allocs += 1;
        st.in_use_bytes += size as u64;
        st.peak_in_use_bytes = st.peak_in_use_bytes.max(st.in_use_bytes);
        st.device_bytes += size as u64;
        st.peak_device_bytes = st.peak_device_bytes.max(st.device_bytes);
        p
    }

    /// Best fit from `owner`'s free list, at most twice the request.
    fn take_free(&self, g: &mut Inner, owner: usize, need: usize) -> Option<Ptr> {
        let list = g.free.get_mut(&owner)?;
        let &(size, addr) = list.range((need, 0)..).next()?;
        if size > need.saturating_mul(2) {
            return None;
        }
        list.remove(&(size, addr));
        let b = g.blocks.get_mut(&addr)?;
        b.state = State::InUse;
        let st = &mut g.stats;
        st.allocs += 1;
        st.reuses += 1;
        st.cached_bytes -= size as u64;
        st.in_use_bytes += size as u64;
        st.peak_in_use_bytes = st.peak_in_use_bytes.max(st.in_use_bytes);
        Some(addr as Ptr)
    }

    /// Moves pending blocks (of `owner`, or all) whose guards are all done to their free lists.
    /// A failed query leaves that block pending and is returned after the scan.
    fn release_ready(&self, g: &mut Inner, owner: Option<usize>) -> RtResult<()> {
        self.settle_pending(g, owner, |guards, block_owner, stats| {
            let mut i = 0;
            while i < guards.len() {
                let done = match self.ctx.guard_released(&guards[i], block_owner) {
                    Release::BackStream | Release::KnownComplete => {
                        stats.released_without_query += 1;
                        true
                    }
                    Release::No => {
                        stats.queries += 1;
                        if !self.ctx.guard_query(&guards[i])? {
                            break;
                        }
                        stats.released_by_query += 1;
                        true
                    }
                };
                if done {
                    self.ctx.release_guard(guards.swap_remove(i));
                } else {
                    i += 1;
                }
            }
            Ok(())
        })
    }

    /// Synchronises every pending guard not already known done and releases the blocks. A failed
    /// synchronisation leaves that block pending.
    fn sync_pending(&self, g: &mut Inner) -> RtResult<()> {
        self.settle_pending(g, None, |guards, block_owner, stats| {
            while let Some(guard) = guards.last() {
                if self.ctx.guard_released(guard, block_owner) != Release::No {
                    stats.released_without_query += 1;
                } else {
                    self.ctx.guard_sync(guard)?;
                    stats.released_by_sync += 1;
                }
                if let Some(guard) = guards.pop() {
                    self.ctx.release_guard(guard);
                }
            }
            Ok(())
        })
    }

    /// The walk of [`Self::release_ready`] and [`Self::sync_pending`]: `settle` releases what
    /// it can of each pending block's guards (of blocks of `owner`, or all), and a block left
    /// without guards moves to its free list. After the first error the blocks not yet visited
    /// stay pending, and the error is returned after the walk.
    fn settle_pending(
        &self,
        g: &mut Inner,
        owner: Option<usize>,
        mut settle: impl FnMut(&mut Vec<Guard>, usize, &mut MemPoolStats) -> RtResult<()>,
    ) -> RtResult<()> {
        let mut first_err = None;
        let mut still = Vec::with_capacity(g.pending.len());
        for addr in std::mem::take(&mut g.pending) {
            let Some(b) = g.blocks.get_mut(&addr) else { continue };
            if owner.is_some_and(|o| o != b.owner) || first_err.is_some() {
                still.push(addr);
                continue;
            }
            let State::Pending(guards) = &mut b.state else { continue };
            if let Err(e) = settle(guards, b.owner, &mut g.stats) {
                first_err = Some(e);
            }
            if guards.is_empty() {
                Self::to_free(g, addr);
            } else {
                still.push(addr);
            }
        }
        g.pending = still;
        first_err.map_or(Ok(()), Err)
    }

    fn to_free(g: &mut Inner, addr: usize) {
        let Some(b) = g.blocks.get_mut(&addr) else { return };
        b.state = State::Free;
        b.readers.clear();
        let (size, owner) = (b.size, b.owner);
        g.free.entry(owner).or_default().insert((size, addr));
        g.stats.pending_bytes -= size as u64;
        g.stats.cached_bytes += size as u64;
    }

    /// Returns every cached block to the device (`aclrtFree`), each stream synchronised first so
    /// no queued work still uses them. Returns the blocks and bytes freed; on an error the
    /// blocks not yet freed stay cached.
    fn trim(&self, g: &mut Inner) -> RtResult<(u64, u64)> {
        let mut owners: Vec<usize> = g.free.iter().filter(|(_, l)| !l.is_empty()).map(|(&o, _)| o).collect();
        owners.sort_unstable();
        let (mut blocks, mut bytes) = (0, 0);
        for owner in owners {
            self.ctx.synchronize_stream(self.ctx.handle_of(owner))?;
            let list: Vec<(usize, usize)> = g.free.get(&owner).map(|l| l.iter().copied().collect()).unwrap_or_default();
            for (size, addr) in list {
                self.ctx.runtime().mem_free(addr as Ptr)?;
                if let Some(l) = g.free.get_mut(&owner) {
                    l.remove(&(size, addr));
                }
                g.blocks.remove(&addr);
                let st = &mut g.stats;
                st.cached_bytes -= size as u64;
                st.device_bytes -= size as u64;
                st.device_frees += 1;
                blocks += 1;
                bytes += size as u64;
            }
        }
        Ok((blocks, bytes))
    }

    fn in_use(g: &mut Inner, ptr: Ptr) -> RtResult<&mut Block> {
        if ptr.is_null() {
            return Err(RtError::new(RtErrorKind::Null, "ptr is NULL"));
        }
        match g.blocks.get_mut(&(ptr as usize)) {
            None => Err(RtError::new(
                RtErrorKind::UnknownHandle,
                format!("pointer {ptr:p} was not allocated by this pool (or was returned to the device)"),
            )),
            Some(b) => match b.state {
                State::InUse => Ok(b),
                State::Pending(_) => Err(RtError::new(
                    RtErrorKind::State,
                    format!("double free: pointer {ptr:p} was already freed and waits for other streams' events"),
                )),
                State::Free => Err(RtError::new(
                    RtErrorKind::State,
                    format!("double free: pointer {ptr:p} was already freed and is in its stream's free list"),
                )),
            },
        }
    }

    /// Notes that `stream` reads or writes the allocated block `ptr`; its free then waits for
    /// that stream's work queued before the free. The owner stream is a no-op.
    pub fn record_use(&self, ptr: Ptr, stream: Ptr) -> RtResult<()> {
        let s = self.ctx.index_of(stream)?;
        let mut g = self.inner.lock();
        let b = Self::in_use(&mut g, ptr)?;
        if s != b.owner {
            if let Err(i) = b.readers.binary_search(&s) {
                b.readers.insert(i, s);
            }
        }
        Ok(())
    }

    /// Frees `ptr` once the work queued on `stream` so far is done (normally its owner). Other
    /// streams that used it (record_use, or `stream` itself when it is not the owner) each get a
    /// guard event now; without any the block is at once reusable on its owner stream. On a
    /// device error no guard is kept and the block stays allocated, so the free can be retried.
    pub fn free(&self, ptr: Ptr, stream: Ptr) -> RtResult<()> {
        let s = self.ctx.index_of(stream)?;
        self.free_with(ptr, &[s])
    }

    /// Frees `ptr` after its owner's queued work and after the work queued so far on each of
    /// `readers` (the compile plan's reader streams of the tensor): `record_use` of each reader,
    /// then `free` on the owner, as one step. Every stream is checked before anything changes.
    pub fn free_after(&self, ptr: Ptr, readers: &[Ptr]) -> RtResult<()> {
        let idx = readers.iter().map(|&r| self.ctx.index_of(r)).collect::<RtResult<Vec<usize>>>()?;
        self.free_with(ptr, &idx)
    }

    fn free_with(&self, ptr: Ptr, extra: &[usize]) -> RtResult<()> {
        let mut g = self.inner.lock();
        let b = Self::in_use(&mut g, ptr)?;
        let owner = b.owner;
        let mut streams: Vec<usize> = b.readers.iter().chain(extra).copied().filter(|&s| s != owner).collect();
        streams.sort_unstable();
        streams.dedup();
        let mut guards = Vec::with_capacity(streams.len());
        for &s in &streams {
            match self.ctx.guard(s) {
                Ok(guard) => guards.push(guard),
                Err(e) => {
                    for guard in guards {
                        self.ctx.release_guard(guard);
                    }
                    return Err(RtError {
                        message: format!(
                            "free of {ptr:p} needs an event on stream {:p}: {}; the block stays allocated",
                            self.ctx.handle_of(s),
                            e.message
                        ),
                        ..e
                    });
                }
            }
        }
        let size = b.size as u64;
        let st = &mut g.stats;
        st.frees += 1;
        st.in_use_bytes -= size;
        st.pending_bytes += size;
        if guards.is_empty() {
            Self::to_free(&mut g, ptr as usize);
        } else {
            g.stats.guards += guards.len() as u64;
            if let Some(b) = g.blocks.get_mut(&(ptr as usize)) {
                b.state = State::Pending(guards);
            }
            g.pending.push(ptr as usize);
        }
        Ok(())
    }

    /// Waits for every pending block's events, then returns every cached block to the device.
    /// Blocks still allocated are kept. Stops at the first device error (what is left stays in
    /// the pool and a later call tries again).
    pub fn empty_cache(&self) -> RtResult<()> {
        let mut g = self.inner.lock();
        self.sync_pending(&mut g)?;
        self.trim(&mut g).map(|_| ())
    }

    /// The block holding `ptr` (its start or any byte inside), allocated or not yet returned:
    /// its start and size (rounded). A scan of the pool's blocks, for the rare caller (IPC).
    pub fn base_of(&self, ptr: Ptr) -> Option<(Ptr, usize)> {
        let g = self.inner.lock();
        let a = ptr as usize;
        if let Some(b) = g.blocks.get(&a).filter(|b| matches!(b.state, State::InUse)) {
            return Some((ptr, b.size));
        }
        g.blocks
            .iter()
            .find(|&(&base, b)| matches!(b.state, State::InUse) && base <= a && a < base + b.size)
            .map(|(&base, b)| (base as Ptr, b.size))
    }

    /// The size (rounded) and owner stream of an allocated block.
    pub fn block_info(&self, ptr: Ptr) -> RtResult<(usize, Ptr)> {
        let mut g = self.inner.lock();
        let b = Self::in_use(&mut g, ptr)?;
        let (size, owner) = (b.size, b.owner);
        drop(g);
        Ok((size, self.ctx.handle_of(owner)))
    }
}

impl Drop for MemPool {
    /// Gives all device memory back: pending events synchronised, every stream that owns or
    /// reads a block synchronised, then `aclrtFree` on every block, allocated ones included (the
    /// pool owns them). A block whose event or stream cannot be synchronised is left to the
    /// device rather than freed under running work.
    fn drop(&mut self) {
        let g = self.inner.get_mut();
        let mut unsafe_to_free = BTreeSet::new();
        for &addr in &g.pending {
            if let Some(Block { state: State::Pending(guards), .. }) = g.blocks.get_mut(&addr) {
                for guard in std::mem::take(guards) {
                    if self.ctx.guard_sync(&guard).is_err() {
                        unsafe_to_free.insert(addr);
                    }
                    self.ctx.release_guard(guard);
                }
            }
        }
        let streams: BTreeSet<usize> =
            g.blocks.values().flat_map(|b| b.readers.iter().chain([&b.owner])).copied().collect();
        let failed: BTreeSet<usize> =
            streams.into_iter().filter(|&s| self.ctx.synchronize_stream(self.ctx.handle_of(s)).is_err()).collect();
        let mut addrs: Vec<usize> = g.blocks.keys().copied().collect();
        addrs.sort_unstable();
        for addr in addrs {
            let b = &g.blocks[&addr];
            let blocked = failed.contains(&b.owner) || b.readers.iter().any(|r| failed.contains(r));
            if !blocked && !unsafe_to_free.contains(&addr) {
                let _ = self.ctx.runtime().mem_free(addr as Ptr);
            }
        }
    }
}
