//! The pools behind the pluggable-allocator entry points: what PyTorch's
//! `CUDAPluggableAllocator`, torch_npu's `NPUPluggableAllocator` and MindSpore's
//! `PluggableAllocator` call when they load a device allocator from a shared library.
//!
//! One stream-ordered [`MemPool`] per device, created on first use over the runtime in use
//! ([`Runtime::current`]: the Ascend runtime, or the CUDA driver with `SA_RUNTIME=cuda`). The
//! framework's streams are adopted as they come ([`StreamContext::adopting`]), NULL (the
//! device's default stream) included. Same-stream reuse, record-stream guards, the queries of
//! pending events at allocation and the empty-cache-and-retry on a failed device allocation are
//! the pool's (docs/mem-pool.md); this module adds the per-device registry, the size rules, the
//! memory fraction, the refusal and counting of frees of pointers the pool does not hold, and
//! the statistics under the names of torch's `memory_stats`.

use std::ffi::c_void;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::RwLock;

use super::error::{RtError, RtErrorKind, RtResult};
use super::mem_pool::MemPool;
use super::seam::{Runtime, RuntimeSource};
use super::stream_ops::StreamContext;

type Ptr = *mut c_void;

/// One device's pool and the counters the pool itself does not keep.
#[derive(Debug)]
struct DevicePool {
    device: i32,
    pool: MemPool,
    ooms: AtomicU64,
    foreign_frees: AtomicU64,
    double_frees: AtomicU64,
}

/// The pools, one per device, in creation order (a handful at most).
static POOLS: RwLock<Vec<Arc<DevicePool>>> = RwLock::new(Vec::new());

/// A device's statistics, named after torch's `torch.cuda.memory_stats()` keys ("all" pools:
/// this allocator has one kind of block). Bytes are block sizes (requests rounded up to 512).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PluggableStats {
    /// `allocated_bytes.all.current`: bytes handed out and not freed.
    pub allocated_bytes_current: u64,
    /// `allocated_bytes.all.peak`.
    pub allocated_bytes_peak: u64,
    /// `reserved_bytes.all.current`: bytes held from the device (allocated, cached, pending).
    pub reserved_bytes_current: u64,
    /// `reserved_bytes.all.peak`.
    pub reserved_bytes_peak: u64,
    /// `allocation.all.current`: blocks handed out and not freed.
    pub allocation_current: u64,
    /// `allocation.all.allocated`: allocations served so far.
    pub allocation_allocated: u64,
    /// `allocation.all.freed`: frees accepted so far.
    pub allocation_freed: u64,
    /// `num_alloc_retries`: device allocations that failed, emptied the cache and retried.
    pub num_alloc_retries: u64,
    /// `num_ooms`: allocations that failed after the retry.
    pub num_ooms: u64,
    /// `num_device_alloc`: device allocations (`aclrtMalloc` / `cuMemAlloc`).
    pub num_device_alloc: u64,
    /// `num_device_free`: device frees.
    pub num_device_free: u64,
    /// Frees refused because the pool never gave the pointer (not a torch key).
    pub num_foreign_frees: u64,
    /// Frees refused because the pointer was already freed (not a torch key).
    pub num_double_frees: u64,
}

impl PluggableStats {
    /// `(torch's key, value)` pairs, torch's keys first.
    pub fn named(&self) -> [(&'static str, u64); 13] {
        [
            ("allocated_bytes.all.current", self.allocated_bytes_current),
            ("allocated_bytes.all.peak", self.allocated_bytes_peak),
            ("reserved_bytes.all.current", self.reserved_bytes_current),
            ("reserved_bytes.all.peak", self.reserved_bytes_peak),
            ("allocation.all.current", self.allocation_current),
            ("allocation.all.allocated", self.allocation_allocated),
            ("allocation.all.freed", self.allocation_freed),
            ("num_alloc_retries", self.num_alloc_retries),
            ("num_ooms", self.num_ooms),
            ("num_device_alloc", self.num_device_alloc),
            ("num_device_free", self.num_device_free),
            ("num_foreign_frees", self.num_foreign_frees),
            ("num_double_frees", self.num_double_frees),
        ]
    }
}

fn existing(device: i32) -> Option<Arc<DevicePool>> {
    POOLS.read().iter().find(|p| p.device == device).cloned()
}

fn check_device(device: i32) -> RtResult<()> {
    if device < 0 {
        return Err(RtError::new(RtErrorKind::Invalid, format!("device {device} is negative")));
    }
    Ok(())
}

/// The pool of `device`, created on first use over the runtime in use. The runtime must serve
/// that device: where it answers `aclrtGetDevice` (the CUDA backend: `SA_CUDA_DEVICE`), a
/// different device is refused, naming both.
fn pool(device: i32) -> RtResult<Arc<DevicePool>> {
    check_device(device)?;
    if let Some(p) = existing(device) {
        return Ok(p);
    }
    let rt = Runtime::current()?;
    if rt.ops().get_device.is_some() {
        let current = rt.get_device()?;
        if current != device {
            let how = if rt.source() == RuntimeSource::Cuda {
                "set SA_CUDA_DEVICE to it"
            } else {
                "call aclrtSetDevice on this thread first"
            };
            return Err(RtError::new(
                RtErrorKind::Invalid,
                format!("device {device} asked for, but the runtime serves device {current} here ({how})"),
            ));
        }
    }
    let mut pools = POOLS.write();
    if let Some(p) = pools.iter().find(|p| p.device == device) {
        return Ok(p.clone());
    }
    let p = Arc::new(DevicePool {
        device,
        pool: MemPool::new(StreamContext::adopting(rt)),
        ooms: AtomicU64::new(0),
        foreign_frees: AtomicU64::new(0),
        double_frees: AtomicU64::new(0),
    });
    pools.push(p.clone());
    Ok(p)
}

/// `size` bytes on `device` for use on `stream`. Size 0 is `Ok(NULL)`, not an error: no memory
/// is taken, and freeing NULL is a no-op. A failed allocation has emptied the cache and
/// retried once; it is counted in `num_ooms`.
pub fn malloc(size: isize, device: i32, stream: Ptr) -> RtResult<Ptr> {
    let Ok(size) = usize::try_from(size) else {
        return Err(RtError::new(RtErrorKind::Invalid, format!("size {size} is negative")));
    };
    let p = pool(device)?;
    if size == 0 {
        return Ok(std::ptr::null_mut());
    }
    p.pool.alloc(size, stream).map_err(|e| {
        if e.kind == RtErrorKind::OutOfMemory {
            p.ooms.fetch_add(1, Ordering::Relaxed);
        }
        RtError { message: format!("device {device}: {}", e.message), ..e }
    })
}

/// Gives `ptr` back once the work queued on `stream` (the stream it was allocated on, as the
/// frameworks pass it) is done. NULL is a no-op (what size 0 returned). A pointer this device's
/// pool does not hold, or one already freed, is refused, counted and never freed.
pub fn free(ptr: Ptr, device: i32, stream: Ptr) -> RtResult<()> {
    if ptr.is_null() {
        return Ok(());
    }
    let p = pool(device)?;
    match p.pool.free(ptr, stream) {
        Ok(()) => Ok(()),
        Err(e) if e.kind == RtErrorKind::UnknownHandle => {
            p.foreign_frees.fetch_add(1, Ordering::Relaxed);
            let elsewhere = POOLS
                .read()
                .iter()
                .find(|o| o.device != device && o.pool.block_info(ptr).is_ok())
                .map(|o| format!(" (it is device {}'s)", o.device))
                .unwrap_or_default();
            Err(RtError {
                message: format!(
                    "free refused: device {device}'s pool never gave {ptr:p}{elsewhere}, or has already given it back \
                     to the runtime; nothing was freed"
                ),
                ..e
            })
        }
        Err(e) if e.kind == RtErrorKind::State => {
            p.double_frees.fetch_add(1, Ordering::Relaxed);
            Err(RtError { message: format!("free refused on device {device}: {}; nothing was freed", e.message), ..e })
        }
        Err(e) => Err(e),
    }
}

/// PyTorch's `init(device_count)` (torch_npu's too): resolves the runtime, so that a process
/// without one learns it here. Pools are made on first use.
pub fn init(device_count: i32) -> RtResult<()> {
    if device_count < 0 {
        return Err(RtError::new(RtErrorKind::Invalid, format!("device count {device_count} is negative")));
    }
    Runtime::current().map(|_| ())
}

/// torch's `emptyCache`: every pool waits for its pending blocks' events and returns every
/// cached block to the runtime. Blocks still allocated stay. Every pool is tried; the first
/// error is returned.
pub fn reset() -> RtResult<()> {
    let pools: Vec<Arc<DevicePool>> = POOLS.read().clone();
    let mut first = None;
    for p in pools {
        if let Err(e) = p.pool.empty_cache() {
            first.get_or_insert(RtError { message: format!("device {}: {}", p.device, e.message), ..e });
        }
    }
    first.map_or(Ok(()), Err)
}

/// The device's total memory, asked of the runtime in use: `aclrtGetMemInfo(ACL_HBM_MEM)` in
/// the process scope (as torch_npu asks it), or the CUDA driver's `cuMemGetInfo_v2`.
fn total_memory(rt: &Runtime) -> RtResult<u64> {
    if rt.source() == RuntimeSource::Cuda {
        return super::cuda::driver()?.total_memory();
    }
    /// `aclrtMemAttr::ACL_HBM_MEM`.
    const ACL_HBM_MEM: i32 = 1;
    type GetMemInfo = unsafe extern "C" fn(i32, *mut usize, *mut usize) -> i32;
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"aclrtGetMemInfo".as_ptr()) };
    if f.is_null() {
        return Err(RtError::new(
            RtErrorKind::NoRuntime,
            "the device's total memory is unknown: aclrtGetMemInfo is not in the process",
        ));
    }
    // SAFETY: aclrtGetMemInfo(attr, free, total), by the ACL documentation.
    let f: GetMemInfo = unsafe { std::mem::transmute::<*mut c_void, GetMemInfo>(f) };
    let (mut free, mut total) = (0usize, 0usize);
    // SAFETY: two valid out pointers.
    let rc = unsafe { f(ACL_HBM_MEM, &mut free, &mut total) };
    if rc != 0 {
        return Err(RtError::device("aclrtGetMemInfo", rc));
    }
    Ok(total as u64)
}

/// torch's `setMemoryFraction(fraction, device)`: the device's pool holds at most `fraction`
/// of the device's total memory (allocations past it empty the cache, retry, then fail as
/// out of memory). `fraction` is in [0, 1].
pub fn memory_fraction(fraction: f64, device: i32) -> RtResult<()> {
    if !(0.0..=1.0).contains(&fraction) {
        return Err(RtError::new(
            RtErrorKind::Invalid,
            format!("memory fraction {fraction} of device {device} is not between 0 and 1"),
        ));
    }
    let p = pool(device)?;
    let total = total_memory(p.pool.context().runtime())?;
    p.pool.set_limit(Some((total as f64 * fraction) as u64));
    Ok(())
}

/// torch's `getBaseAllocation(ptr, &size)`: the start and size of the block holding `ptr`
/// (its start or any byte inside), on any device.
pub fn base_alloc(ptr: Ptr) -> RtResult<(Ptr, usize)> {
    if ptr.is_null() {
        return Err(RtError::new(RtErrorKind::Null, "ptr is NULL"));
    }
    POOLS.read().iter().find_map(|p| p.pool.base_of(ptr)).ok_or_else(|| {
        RtError::new(RtErrorKind::UnknownHandle, format!("{ptr:p} is inside no block the pools have handed out"))
    })
}

/// torch's `recordStream(ptr, stream)`: `stream` uses the block, so its free waits for the
/// work queued on `stream` until then (an event, never a host wait).
pub fn record_stream(ptr: Ptr, stream: Ptr) -> RtResult<()> {
    if ptr.is_null() {
        return Err(RtError::new(RtErrorKind::Null, "ptr is NULL"));
    }
    let pools: Vec<Arc<DevicePool>> = POOLS.read().clone();
    for p in pools {
        match p.pool.record_use(ptr, stream) {
            Err(e) if e.kind == RtErrorKind::UnknownHandle => continue,
            r => return r,
        }
    }
    Err(RtError::new(RtErrorKind::UnknownHandle, format!("record_stream: {ptr:p} is not allocated by any pool")))
}

/// The statistics of `device` (all zero before its pool's first use).
pub fn stats(device: i32) -> RtResult<PluggableStats> {
    check_device(device)?;
    let Some(p) = existing(device) else { return Ok(PluggableStats::default()) };
    let s = p.pool.stats();
    Ok(PluggableStats {
        allocated_bytes_current: s.in_use_bytes,
        allocated_bytes_peak: s.peak_in_use_bytes,
        reserved_bytes_current: s.device_bytes,
        reserved_bytes_peak: s.peak_device_bytes,
        allocation_current: s.allocs - s.frees,
        allocation_allocated: s.allocs,
        allocation_freed: s.frees,
        num_alloc_retries: s.retries,
        num_ooms: p.ooms.load(Ordering::Relaxed),
        num_device_alloc: s.device_mallocs,
        num_device_free: s.device_frees,
        num_foreign_frees: p.foreign_frees.load(Ordering::Relaxed),
        num_double_frees: p.double_frees.load(Ordering::Relaxed),
    })
}
