//! RT2's resource counts and `OccupyStreamResource` over the three allocators
//! (`sa_stream_allocator`, `sa_event_allocator`, `sa_notify_allocator`). No handle of its own.

use std::ffi::c_void;

use super::event_allocator::sa_event_allocator;
use super::notify_allocator::sa_notify_allocator;
use super::stream_allocator::sa_stream_allocator;
use super::{ApiResult, ffi_boundary, handle, out_ptr, sa_status, write_out};
use crate::runtime::rt2::{self, ExternalAllocators, ResourceCounts, StaticCounts};

/// `gert::ModelDesc`'s reusable stream/event/notify counts and attached stream count.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct sa_resource_counts {
    /// Streams the model acquires besides the attached ones (its streams minus static sub-model
    /// streams and attached streams), the caller's main stream in slot 0 included.
    pub reusable_stream_num: usize,
    /// Events the model acquires.
    pub reusable_event_num: usize,
    /// Notifies the model acquires.
    pub reusable_notify_num: usize,
    /// Attached streams (acquired after the reusable ones).
    pub attached_stream_num: usize,
}

impl From<ResourceCounts> for sa_resource_counts {
    fn from(c: ResourceCounts) -> Self {
        sa_resource_counts {
            reusable_stream_num: c.reusable_stream_num,
            reusable_event_num: c.reusable_event_num,
            reusable_notify_num: c.reusable_notify_num,
            attached_stream_num: c.attached_stream_num,
        }
    }
}

impl From<&sa_resource_counts> for ResourceCounts {
    fn from(c: &sa_resource_counts) -> Self {
        ResourceCounts {
            reusable_stream_num: c.reusable_stream_num,
            reusable_event_num: c.reusable_event_num,
            reusable_notify_num: c.reusable_notify_num,
            attached_stream_num: c.attached_stream_num,
        }
    }
}

/// What static (known-shape) sub-models create themselves through V1; subtracted from the
/// model totals by `sa_rt2_resource_counts`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct sa_static_counts {
    /// Streams of static sub-models.
    pub streams: usize,
    /// Events of static sub-models.
    pub events: usize,
    /// Notifies of static sub-models.
    pub notifies: usize,
}

impl From<&sa_static_counts> for StaticCounts {
    fn from(c: &sa_static_counts) -> Self {
        StaticCounts { streams: c.streams, events: c.events, notifies: c.notifies }
    }
}

/// The four `ModelDesc` counts from model totals (`stream_num` = main + attached,
/// `_attached_stream_num`, `event_num`, `notify_num`), minus what static sub-models create
/// themselves (`sub`, may be NULL), as `GetReusableStreamResourceNum` computes them. Fails with
/// `SA_INVALID_ARGUMENT` when `sub` asks for more than the totals. Thread-safe.
///
/// Ownership: nothing is allocated; `sub` is only read, `*counts` is written.
///
/// # Safety
/// `sub` is NULL or readable; `counts` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_rt2_resource_counts(
    total_streams: usize,
    attached_streams: usize,
    events: usize,
    notifies: usize,
    sub: *const sa_static_counts,
    counts: *mut sa_resource_counts,
) -> sa_status {
    ffi_boundary(|| -> ApiResult {
        let counts = out_ptr(counts, "counts")?;
        // SAFETY: NULL or readable, by the contract.
        let sub = unsafe { sub.as_ref() }.map(StaticCounts::from).unwrap_or_default();
        let c = ResourceCounts::from_totals(total_streams, attached_streams, events, notifies, sub)?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe { write_out(counts, c.into()) };
        Ok(())
    })
}

/// `OccupyStreamResource`: acquires what `counts` asks from the external allocator trio if all
/// three are given, from the (required) built-in trio if none is, and fails with
/// `SA_INVALID_ARGUMENT` for any other mix. On success writes the three vectors (owned by the
/// allocators they came from, valid until those are freed), with `main_stream` in stream
/// slot 0. Thread-safe as the allocators are.
///
/// Ownership: borrows the allocators and `counts`; the vectors in `*out_streams`, `*out_events` and
/// `*out_notifies` are owned by the allocators they came from and valid until those are freed;
/// `main_stream` stays the caller's.
///
/// # Safety
/// Every non-NULL pointer is live, readable or writable as its type says.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_rt2_occupy(
    counts: *const sa_resource_counts,
    main_stream: *mut c_void,
    device_id: i32,
    ext_stream: *const sa_stream_allocator,
    ext_event: *const sa_event_allocator,
    ext_notify: *const sa_notify_allocator,
    builtin_stream: *const sa_stream_allocator,
    builtin_event: *const sa_event_allocator,
    builtin_notify: *const sa_notify_allocator,
    out_streams: *mut *mut c_void,
    out_events: *mut *mut c_void,
    out_notifies: *mut *mut c_void,
) -> sa_status {
    ffi_boundary(|| -> ApiResult {
        // SAFETY (all handle derefs below): NULL or live, by the contract.
        let counts = ResourceCounts::from(unsafe { handle(counts, "counts") }?);
        let out_streams = out_ptr(out_streams, "out_streams")?;
        let out_events = out_ptr(out_events, "out_events")?;
        let out_notifies = out_ptr(out_notifies, "out_notifies")?;
        let ext = unsafe {
            ExternalAllocators {
                stream: ext_stream.as_ref().map(|a| &a.0),
                event: ext_event.as_ref().map(|a| &a.0),
                notify: ext_notify.as_ref().map(|a| &a.0),
            }
        };
        let builtin = unsafe {
            (
                &handle(builtin_stream, "builtin_stream")?.0,
                &handle(builtin_event, "builtin_event")?.0,
                &handle(builtin_notify, "builtin_notify")?.0,
            )
        };
        let o = rt2::occupy(&counts, main_stream, device_id, &ext, builtin)?;
        // SAFETY: checked by out_ptr, writable by the contract.
        unsafe {
            write_out(out_streams, o.streams.cast());
            write_out(out_events, o.events.cast());
            write_out(out_notifies, o.notifies.cast());
        }
        Ok(())
    })
}
