//! Runtime half: the RT2 stream/event/notify allocators (`gert::StreamAllocator` and siblings),
//! the V1 stream pool (`ge::ReusableStreamAllocator`), the RT2 resource counts, the user-level
//! streams and events with MindSpore's stream-ordered memory pool ([`stream_ops`],
//! [`mem_pool`]) and the pluggable-allocator pools over it ([`pluggable`]), and the
//! device-runtime seam they all call through.
//!
//! Nothing here links a vendor library: the device runtime is a registered C function table or
//! the Ascend runtime's own symbols, found at run time ([`seam`]), or, when selected, the CUDA
//! driver ([`cuda`]). No device call happens from a static destructor or at process exit.

#![allow(unsafe_code)]

pub mod allocators;
pub mod backend;
pub mod consts;
pub mod cuda;
pub mod error;
pub mod mem_pool;
pub mod pluggable;
pub mod pool;
pub mod rt2;
pub mod seam;
pub mod stream_ops;

pub use allocators::{EventAllocator, HandleKind, HolderState, NotifyAllocator, StreamAllocator, VecHeader};
pub use backend::Backend;
pub use error::{RtError, RtErrorKind, RtResult};
pub use mem_pool::{MemPool, MemPoolStats};
pub use pluggable::PluggableStats;
pub use pool::{PoolOptions, PoolStats, ReusableStreamPool};
pub use rt2::{ExternalAllocators, Occupied, ResourceCounts, StaticCounts, occupy};
pub use seam::{Runtime, RuntimeOps, RuntimeSource};
pub use stream_ops::StreamContext;

/// GE's split-time device queries (`SplitStreamAndRefreshTaskDef`): tasks per normal and huge
/// stream (`rtGetMaxStreamAndTask`) and the unlimited-depth capability (`rtGetRtCapability`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    pub max_tasks: u32,
    /// `None`: the huge query failed or answered 0 (no huge streams; GE only warns).
    pub max_huge_tasks: Option<u32>,
    /// A failed capability query counts as "not supported", as in GE.
    pub unlimited_depth: bool,
}

/// The device's answers to the split's queries through the seam, for the compile side.
/// `Ok(None)`: the process has no runtime and none was asked for (`SA_RUNTIME_LIB` unset), so
/// compiling works without a device; or the runtime is CUDA's, which has no task limit. `Err`: a runtime is there but the normal-stream query
/// fails or answers 0 tasks (GE's `GetMaxStreamAndTask` fails the build), or `SA_RUNTIME_LIB`
/// names an unusable library.
pub fn device_limits() -> RtResult<Option<DeviceLimits>> {
    let rt = match Runtime::current() {
        Ok(rt) => rt,
        Err(e) if e.kind == RtErrorKind::NoRuntime && std::env::var_os("SA_RUNTIME_LIB").is_none() => return Ok(None),
        Err(e) => return Err(e),
    };
    // CUDA streams have no task limit: the options' limits apply, as without a device.
    if rt.source() == RuntimeSource::Cuda {
        return Ok(None);
    }
    let (_, max_tasks) = rt.max_stream_and_task(consts::RT_NORMAL_STREAM)?;
    if max_tasks == 0 {
        return Err(RtError::new(RtErrorKind::Device, "rtGetMaxStreamAndTask answered 0 tasks per normal stream"));
    }
    let max_huge_tasks = rt.max_stream_and_task(consts::RT_HUGE_STREAM).ok().map(|(_, t)| t).filter(|&t| t > 0);
    let unlimited_depth = rt.unlimited_depth().unwrap_or(false);
    Ok(Some(DeviceLimits { max_tasks, max_huge_tasks, unlimited_depth }))
}

/// `(max streams, max tasks per stream)` of a normal stream, from `rtGetMaxStreamAndTask`
/// through the seam; `None` when no runtime answers. The compile-side splitter reads this.
pub fn task_limits() -> Option<(u32, u32)> {
    Runtime::current().ok()?.max_stream_and_task(consts::RT_NORMAL_STREAM).ok()
}

/// Whether the device reports `FEATURE_TYPE_PERSISTENT_STREAM_UNLIMITED_DEPTH` (GE then skips
/// splitting); `None` when no runtime answers.
pub fn unlimited_depth() -> Option<bool> {
    Runtime::current().ok()?.unlimited_depth().ok()
}
