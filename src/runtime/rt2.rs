//! The RT2 side that consumes allocation results (ge-runtime-api.md §6; rt2 seed §3.4, §5.4.4):
//! the four `gert::ModelDesc` counts, and `OccupyStreamResource`'s all-or-none allocator rule.

use std::ffi::c_void;

use super::allocators::{EventAllocator, NotifyAllocator, StreamAllocator, VecHeader};
use super::error::{RtError, RtErrorKind, RtResult};
use crate::compile::Allocation;
use crate::compile::summary::ModelCounts;

/// `ModelDesc`'s reusable stream/event/notify counts and attached stream count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct ResourceCounts {
    pub reusable_stream_num: usize,
    pub reusable_event_num: usize,
    pub reusable_notify_num: usize,
    pub attached_stream_num: usize,
}

/// What static (known-shape) sub-models create themselves through V1, subtracted from the totals
/// (`GetReusableStreamResourceNum`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct StaticCounts {
    pub streams: usize,
    pub events: usize,
    pub notifies: usize,
}

impl ResourceCounts {
    /// From the model totals (`stream_num` = main + attached, `_attached_stream_num`,
    /// `event_num`, `notify_num`), as `GetReusableStreamResourceNum` computes them.
    pub fn from_totals(
        total_streams: usize,
        attached: usize,
        events: usize,
        notifies: usize,
        sub: StaticCounts,
    ) -> RtResult<ResourceCounts> {
        if total_streams <= 1 {
            return Ok(ResourceCounts { reusable_stream_num: 1, ..Default::default() });
        }
        let reusable = total_streams.checked_sub(sub.streams).and_then(|r| r.checked_sub(attached)).unwrap_or(0);
        if reusable == 0 {
            return Err(RtError::new(
                RtErrorKind::Invalid,
                format!(
                    "reusable stream count must stay above 0: total {total_streams} − static sub-model streams {} \
                     − attached {attached}",
                    sub.streams
                ),
            ));
        }
        let sub_of = |total: usize, part: usize, what: &str| {
            total.checked_sub(part).ok_or_else(|| {
                RtError::new(
                    RtErrorKind::Invalid,
                    format!("static sub-models use {part} {what}s, the model has {total}"),
                )
            })
        };
        Ok(ResourceCounts {
            reusable_stream_num: reusable,
            reusable_event_num: sub_of(events, sub.events, "event")?,
            reusable_notify_num: sub_of(notifies, sub.notifies, "notify")?,
            attached_stream_num: attached,
        })
    }

    /// From a compile result: physical streams plus attached streams in total; the sync ids are
    /// events or notifies according to the allocation's sync kind. The split's syncs are always
    /// events: counted in `sync_count` in event mode, apart (`split_event_count`) in notify mode.
    pub fn from_allocation(a: &Allocation, sub: StaticCounts) -> RtResult<ResourceCounts> {
        Self::from_model_counts(&ModelCounts::of(a), sub)
    }

    /// From the counts GE writes on the model (`stream_num`, `event_num`, ...). In notify mode
    /// the split's syncs are still events, numbered on their own.
    pub fn from_model_counts(c: &ModelCounts, sub: StaticCounts) -> RtResult<ResourceCounts> {
        let attached = c.attached_stream_num as usize;
        let streams = c.stream_num as usize + attached;
        Self::from_totals(streams, attached, c.event_num as usize, c.notify_num as usize, sub)
    }

    /// `AcquireStreams` argument: reusable plus attached streams (slot 0 included).
    pub fn stream_num(&self) -> usize {
        self.reusable_stream_num + self.attached_stream_num
    }
}

/// `ModelExecuteArg::external_{stream,event,notify}_allocator`.
#[derive(Clone, Copy, Default)]
pub struct ExternalAllocators<'a> {
    pub stream: Option<&'a StreamAllocator>,
    pub event: Option<&'a EventAllocator>,
    pub notify: Option<&'a NotifyAllocator>,
}

/// The vectors `OccupyStreamResource` hands to the execute graphs.
#[derive(Clone, Copy, Debug)]
pub struct Occupied {
    pub streams: *mut VecHeader,
    pub events: *mut VecHeader,
    pub notifies: *mut VecHeader,
}

impl<'a> ExternalAllocators<'a> {
    /// All three set: use them; none set: `None` (use the built-in ones); anything else is the
    /// parameter error GE reports.
    pub fn select(&self) -> RtResult<Option<(&'a StreamAllocator, &'a EventAllocator, &'a NotifyAllocator)>> {
        match (self.stream, self.event, self.notify) {
            (Some(s), Some(e), Some(n)) => Ok(Some((s, e, n))),
            (None, None, None) => Ok(None),
            (s, e, n) => {
                let name = |set: bool| if set { "set" } else { "null" };
                Err(RtError::new(
                    RtErrorKind::Invalid,
                    format!(
                        "external stream, event and notify allocators must be passed all together or not at all \
                         (stream {}, event {}, notify {})",
                        name(s.is_some()),
                        name(e.is_some()),
                        name(n.is_some())
                    ),
                ))
            }
        }
    }
}

/// `OccupyStreamResource` for one execution: pick the allocators, acquire what `counts` asks,
/// then write the caller's main stream into slot 0.
pub fn occupy(
    counts: &ResourceCounts,
    main_stream: *mut c_void,
    device_id: i32,
    external: &ExternalAllocators<'_>,
    builtin: (&StreamAllocator, &EventAllocator, &NotifyAllocator),
) -> RtResult<Occupied> {
    let (s, e, n) = external.select()?.unwrap_or(builtin);
    let streams = s.acquire(counts.stream_num())?;
    if s.size() == 0 {
        return Err(RtError::new(RtErrorKind::Invalid, "stream vector is empty after AcquireStreams"));
    }
    s.set_main_stream(main_stream);
    let events = e.acquire(counts.reusable_event_num)?;
    let notifies = n.acquire(device_id, counts.reusable_notify_num)?;
    Ok(Occupied { streams, events, notifies })
}
