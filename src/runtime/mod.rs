//! Runtime half: the RT2 stream/event/notify allocators (`gert::StreamAllocator` and siblings),
//! the V1 stream pool (`ge::ReusableStreamAllocator`), the RT2 resource counts, and the
//! device-runtime seam they all call through.
//!
//! Nothing here links a vendor library: the device runtime is a registered C function table or
//! the Ascend runtime's own symbols, found at run time ([`seam`]). No device call happens from a
//! static destructor or at process exit.

#![allow(unsafe_code)]

pub mod allocators;
pub mod consts;
pub mod error;
pub mod pool;
pub mod rt2;
pub mod seam;

pub use allocators::{EventAllocator, NotifyAllocator, StreamAllocator, VecHeader};
pub use error::{RtError, RtErrorKind, RtResult};
pub use pool::{PoolOptions, PoolStats, ReusableStreamPool};
pub use rt2::{ExternalAllocators, Occupied, ResourceCounts, StaticCounts, occupy};
pub use seam::{Runtime, RuntimeOps, RuntimeSource};

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
