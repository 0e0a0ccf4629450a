//! The pluggable-allocator entry points: the C signatures through which PyTorch
//! (`torch.cuda.memory.CUDAPluggableAllocator`), torch_npu (`NPUPluggableAllocator`) and
//! MindSpore (`mindspore.runtime.PluggableAllocator`) load a device allocator from a shared
//! library, served by one stream-ordered pool per device ([`crate::runtime::pluggable`]).
//!
//! The signatures are the frameworks', not this ABI's usual `sa_status` ones: PyTorch's
//! `torch/csrc/cuda/CUDAPluggableAllocator.h` (pytorch/pytorch) declares
//! `void*(size_t, int, cudaStream_t)`, `void(void*, size_t, int, cudaStream_t)`, `void(int)`,
//! `void()`, `void(double, int)`, `void*(void*, size_t*)` and `void(void*, cudaStream_t)`;
//! torch_npu's `torch_npu/csrc/npu/NPUPluggableAllocator.h` (Ascend/pytorch) the same with
//! `aclrtStream`; MindSpore's `MallocFuncType` / `FreeFuncType`
//! (`mindspore/ccsrc/include/backend/mem_reuse/dynamic_mem_pool.h`) the first two with
//! `void*` streams. Sizes are `ssize_t`, as the frameworks' documented examples write them
//! (the same register as `size_t`). So a failure cannot be returned as a status: malloc and
//! base_alloc return NULL, the `void` hooks return nothing, and each records its message for
//! the calling thread (`sa_last_error_message`, `sa_last_error_code`). Every entry point is
//! thread-safe.

#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_void};

use libc::ssize_t;

use super::{ApiError, ApiResult, Recorded, ffi_boundary, lossy_cstring, out_ptr, write_out};
use crate::runtime::{PluggableStats, pluggable};

/// The statistics of one device's pool, named after torch's `torch.cuda.memory_stats()` keys
/// (`allocated_bytes.all.current` is `allocated_bytes_all_current`). Bytes are block sizes:
/// requests rounded up to 512.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct sa_pluggable_stats {
    /// `allocated_bytes.all.current`: bytes handed out and not freed.
    pub allocated_bytes_all_current: u64,
    /// `allocated_bytes.all.peak`.
    pub allocated_bytes_all_peak: u64,
    /// `reserved_bytes.all.current`: bytes held from the device (allocated, cached, waiting
    /// for other streams).
    pub reserved_bytes_all_current: u64,
    /// `reserved_bytes.all.peak`.
    pub reserved_bytes_all_peak: u64,
    /// `allocation.all.current`: blocks handed out and not freed.
    pub allocation_all_current: u64,
    /// `allocation.all.allocated`: allocations served.
    pub allocation_all_allocated: u64,
    /// `allocation.all.freed`: frees accepted.
    pub allocation_all_freed: u64,
    /// `num_alloc_retries`: device allocations that failed, emptied the cache and retried.
    pub num_alloc_retries: u64,
    /// `num_ooms`: allocations that failed after the retry (NULL returned).
    pub num_ooms: u64,
    /// `num_device_alloc`: device allocations (`aclrtMalloc`, `cuMemAlloc`).
    pub num_device_alloc: u64,
    /// `num_device_free`: device frees.
    pub num_device_free: u64,
    /// Frees refused because the pool never gave the pointer.
    pub num_foreign_frees: u64,
    /// Frees refused because the pointer was already freed.
    pub num_double_frees: u64,
}

impl From<PluggableStats> for sa_pluggable_stats {
    fn from(s: PluggableStats) -> Self {
        sa_pluggable_stats {
            allocated_bytes_all_current: s.allocated_bytes_current,
            allocated_bytes_all_peak: s.allocated_bytes_peak,
            reserved_bytes_all_current: s.reserved_bytes_current,
            reserved_bytes_all_peak: s.reserved_bytes_peak,
            allocation_all_current: s.allocation_current,
            allocation_all_allocated: s.allocation_allocated,
            allocation_all_freed: s.allocation_freed,
            num_alloc_retries: s.num_alloc_retries,
            num_ooms: s.num_ooms,
            num_device_alloc: s.num_device_alloc,
            num_device_free: s.num_device_free,
            num_foreign_frees: s.num_foreign_frees,
            num_double_frees: s.num_double_frees,
        }
    }
}

/// The frameworks' `alloc_fn`: `size` bytes (rounded up to 512) of `device`'s memory for use
/// on `stream` (NULL: the device's default stream). A block freed on the same stream is reused
/// without a device call; one used on other streams (`sa_pluggable_record_stream`) only once
/// their events have completed, queried here, never waited for. Size 0 returns NULL, which is
/// no error (no memory is taken; freeing NULL is a no-op). A negative size, a device the
/// runtime does not serve, no runtime, or no memory even after emptying the cache and one
/// retry return NULL with the reason in `sa_last_error_message()` (`SA_OUT_OF_MEMORY`, counted
/// in `num_ooms`). Thread-safe.
///
/// Ownership: the memory returned belongs to the pool: give it back with `sa_pluggable_free`.
#[unsafe(no_mangle)]
pub extern "C" fn sa_pluggable_malloc(size: ssize_t, device: c_int, stream: *mut c_void) -> *mut c_void {
    ffi_boundary(|| -> ApiResult<*mut c_void> { Ok(pluggable::malloc(size, device, stream)?) })
}

/// The frameworks' `free_fn`: gives `ptr` back once the work queued on `stream` (the stream it
/// was allocated on, as the frameworks pass it) is done; streams that used it
/// (`sa_pluggable_record_stream`) get an event now, and the block is reused once those events
/// complete. `size` is not needed (the pool knows each block) and not read. NULL is a no-op. A
/// pointer `device`'s pool never gave, or one already freed, is refused and never freed: counted
/// (`num_foreign_frees`, `num_double_frees`) and reported in `sa_last_error_message()`.
/// Thread-safe.
///
/// Ownership: takes `ptr` back; the caller must not use it afterwards.
#[unsafe(no_mangle)]
pub extern "C" fn sa_pluggable_free(ptr: *mut c_void, size: ssize_t, device: c_int, stream: *mut c_void) {
    ffi_boundary(|| {
        let _ = size;
        Recorded(pluggable::free(ptr, device, stream).map_err(ApiError::from))
    })
}

/// The frameworks' `init_fn`, called with the device count: finds the device runtime
/// (`SA_RUNTIME`: the Ascend runtime by default, `cuda` for the CUDA driver), recording why when
/// there is none. Pools are created on first use. Thread-safe.
///
/// Ownership: nothing changes hands.
#[unsafe(no_mangle)]
pub extern "C" fn sa_pluggable_init(device_count: c_int) {
    ffi_boundary(|| Recorded(pluggable::init(device_count).map_err(ApiError::from)))
}

/// The frameworks' `reset_fn` (torch's `empty_cache`): every device's pool waits for the
/// events of its blocks freed after use on other streams, then returns every cached block to
/// the runtime (each stream synchronised first). Blocks still allocated stay. A failure is
/// recorded in `sa_last_error_message()`; what could not be returned stays cached. Thread-safe.
///
/// Ownership: only cached blocks, which no caller holds, go back to the runtime.
#[unsafe(no_mangle)]
pub extern "C" fn sa_pluggable_reset() {
    ffi_boundary(|| Recorded(pluggable::reset().map_err(ApiError::from)))
}

/// The frameworks' `memory_fraction_fn`: `device`'s pool holds at most `fraction` (0 to 1) of
/// the device's total memory, as the runtime reports it (`aclrtGetMemInfo`, `cuMemGetInfo`).
/// An allocation past the cap empties the cache, retries and then fails as out of memory. A
/// fraction outside [0, 1] or an unknown total is recorded in `sa_last_error_message()` and
/// changes nothing. Thread-safe.
///
/// Ownership: nothing changes hands.
#[unsafe(no_mangle)]
pub extern "C" fn sa_pluggable_memory_fraction(fraction: f64, device: c_int) {
    ffi_boundary(|| Recorded(pluggable::memory_fraction(fraction, device).map_err(ApiError::from)))
}

/// The frameworks' `base_alloc_fn`: the start of the block holding `ptr` (its start or any byte
/// inside), with the block's size in `*size`. NULL, with the reason in
/// `sa_last_error_message()`, for a pointer in no allocated block or a NULL `size`.
/// Thread-safe.
///
/// Ownership: borrows `ptr`; the block stays the pool's; `*size` is written.
///
/// # Safety
/// `size` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_pluggable_base_alloc(ptr: *mut c_void, size: *mut usize) -> *mut c_void {
    ffi_boundary(|| -> ApiResult<*mut c_void> {
        let size = out_ptr(size, "size")?;
        let (base, n) = pluggable::base_alloc(ptr)?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(size, n) };
        Ok(base)
    })
}

/// The frameworks' `record_stream_fn`: `stream` uses the allocated block `ptr`, so after its
/// free the block waits for the work queued on `stream` until then (an event recorded at the
/// free and queried at later allocations; the host never waits). A pointer no pool has handed
/// out is recorded in `sa_last_error_message()`. Thread-safe.
///
/// Ownership: borrows `ptr` and `stream`; nothing changes hands.
#[unsafe(no_mangle)]
pub extern "C" fn sa_pluggable_record_stream(ptr: *mut c_void, stream: *mut c_void) {
    ffi_boundary(|| Recorded(pluggable::record_stream(ptr, stream).map_err(ApiError::from)))
}

/// Writes `device`'s statistics to `*stats` (all zero before the device's first allocation).
/// `SA_INVALID_ARGUMENT` for a negative device. Thread-safe (a consistent snapshot).
///
/// Ownership: nothing is allocated; `*stats` is written.
///
/// # Safety
/// `stats` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_pluggable_get_stats(device: c_int, stats: *mut sa_pluggable_stats) -> super::sa_status {
    ffi_boundary(|| -> ApiResult {
        let stats = out_ptr(stats, "stats")?;
        let s = pluggable::stats(device)?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(stats, s.into()) };
        Ok(())
    })
}

/// `device`'s statistics as a JSON object under torch's `memory_stats()` keys
/// (`{"allocated_bytes.all.current": 1024, ...}`, then `num_foreign_frees` and
/// `num_double_frees`), for bindings that hand it to `json.loads`. NULL on a negative device,
/// with the reason in `sa_last_error_message()`. Thread-safe.
///
/// Ownership: the caller frees the returned string with `sa_string_free`.
#[unsafe(no_mangle)]
pub extern "C" fn sa_pluggable_stats_json(device: c_int) -> *mut c_char {
    ffi_boundary(|| -> ApiResult<*mut c_char> {
        let s = pluggable::stats(device)?;
        let body: Vec<String> = s.named().iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
        Ok(lossy_cstring(&format!("{{{}}}", body.join(", "))).into_raw())
    })
}
