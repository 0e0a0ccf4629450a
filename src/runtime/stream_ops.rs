//! The seed's user-level stream and event operations (MindSpore's `ms.hal.Stream` / `Event`),
//! and the stream-order bookkeeping the memory pool reads.
//!
//! A [`StreamContext`] owns the streams it creates (created once per key and reused, as the seed
//! recommends, rather than per call) and the events it creates; streams made elsewhere (GE's
//! allocators, the caller's main stream) are adopted and never destroyed here. Every record and
//! wait done through the context updates a vector clock per stream, so the context knows, without
//! asking the device, when a stream's current point is ordered after a record on another stream:
//! that is the seed's "back-stream" rule the memory pool frees by ([`super::mem_pool`]).
//!
//! Device calls go through the seam only. Records run under the context's lock so the clock's
//! sequence numbers follow the device's record order.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

use parking_lot::Mutex;

use super::error::{RtError, RtErrorKind, RtResult};
use super::pool::HandleMap;
use super::seam::Runtime;

type Ptr = *mut c_void;

/// The default event flag of the context's events: `ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE`, so
/// every event can be synchronised on and timed.
pub const CONTEXT_EVENT_FLAGS: u32 = 0x01 | 0x08;

/// A record on a stream as the clocks see it: for every stream, the highest record sequence
/// it follows in stream order (its own stream's entry is the record itself).
#[derive(Clone, Debug)]
struct Recorded {
    clock: Vec<u64>,
}

/// An event the context recorded on a stream for the memory pool: the block it guards may be
/// reused once it has completed or a wait orders it (see [`StreamContext::guard_released`]).
#[derive(Debug)]
pub(crate) struct Guard {
    pub event: usize,
    pub stream: usize,
    pub seq: u64,
}

#[derive(Debug)]
struct StreamSlot {
    handle: usize,
    /// Created (and destroyed at the end) by the context; adopted streams are not.
    owned: bool,
    key: Option<(u32, i32, u32)>,
}

#[derive(Debug, Default)]
struct EventState {
    /// Created by a user call (`event_new`), as opposed to the context's internal spares.
    user: bool,
    rec: Option<Recorded>,
}

#[derive(Debug, Default)]
struct Inner {
    streams: Vec<StreamSlot>,
    index: HandleMap<usize>,
    keys: HashMap<u32, usize>,
    /// `clocks[s][t]`: the highest record sequence of stream `t` that stream `s`'s current point
    /// is ordered after (`clocks[s][s]`: records done on `s`). Missing entries are 0.
    clocks: Vec<Vec<u64>>,
    /// `done[t]`: records of stream `t` known to have completed on the device.
    done: Vec<u64>,
    events: HandleMap<EventState>,
    /// Internal events free for the next guard or `wait_stream`.
    spare: Vec<usize>,
}

fn at(v: &[u64], i: usize) -> u64 {
    v.get(i).copied().unwrap_or(0)
}

fn merge(into: &mut Vec<u64>, from: &[u64]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (a, &b) in into.iter_mut().zip(from) {
        *a = (*a).max(b);
    }
}

/// User-level streams and events over one device runtime, and the stream-order knowledge the
/// memory pool frees by. Thread-safe.
#[derive(Debug)]
pub struct StreamContext {
    rt: Arc<Runtime>,
    inner: Mutex<Inner>,
    /// Every stream handed to it is adopted on first sight, NULL (the device's default stream)
    /// included: the pluggable allocator's streams come from the framework, unannounced.
    adopt_all: bool,
}

// Handles are opaque runtime tokens, passed back to the runtime and never dereferenced.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
impl StreamContext {
    /// A context over the runtime in use now (registered table or the Ascend runtime).
    pub fn new() -> RtResult<Arc<StreamContext>> {
        Ok(Self::with_runtime(Runtime::current()?))
    }

    /// A context over a given runtime (tests pass a fake one without registering it).
    pub fn with_runtime(rt: Arc<Runtime>) -> Arc<StreamContext> {
        Arc::new(StreamContext { rt, inner: Mutex::new(Inner::default()), adopt_all: false })
    }

    /// A context that adopts every stream it is handed on first use, NULL (the device's default
    /// stream, as `aclrtRecordEvent` and `cuEventRecord` take it) included, and never destroys
    /// them: the pluggable allocator's (`super::pluggable`), whose streams belong to the framework.
    pub fn adopting(rt: Arc<Runtime>) -> Arc<StreamContext> {
        Arc::new(StreamContext { rt, inner: Mutex::new(Inner::default()), adopt_all: true })
    }

    pub(crate) fn runtime(&self) -> &Runtime {
        &self.rt
    }

    /// The stream for `key`: created with `priority` and `rt_flags` on the first call, the same
    /// stream on every later one (asking again with other settings is a `State` error). The
    /// stream lives as long as the context.
    pub fn stream(&self, key: u32, priority: i32, rt_flags: u32) -> RtResult<Ptr> {
        let mut g = self.inner.lock();
        if let Some(&i) = g.keys.get(&key) {
            let slot = &g.streams[i];
            if slot.key != Some((key, priority, rt_flags)) {
                let (_, p, f) = slot.key.unwrap_or((key, 0, 0));
                return Err(RtError::new(
                    RtErrorKind::State,
                    format!(
                        "stream key {key} was created with priority {p} and flags {f:#x}; asked again with \
                         priority {priority} and flags {rt_flags:#x}"
                    ),
                ));
            }
            return Ok(slot.handle as Ptr);
        }
        let h = self.rt.stream_create(priority, rt_flags)?;
        let i = Self::add_stream(&mut g, h as usize, true, Some((key, priority, rt_flags)));
        g.keys.insert(key, i);
        Ok(h)
    }

    /// Makes a stream created elsewhere known to the context (and so usable with its events and
    /// memory pools); the context never destroys it. Adopting a known stream is a no-op.
    pub fn adopt(&self, stream: Ptr) -> RtResult<()> {
        if stream.is_null() {
            return Err(RtError::new(RtErrorKind::Null, "stream is NULL"));
        }
        let mut g = self.inner.lock();
        if !g.index.contains_key(&(stream as usize)) {
            Self::add_stream(&mut g, stream as usize, false, None);
        }
        Ok(())
    }

    fn add_stream(g: &mut Inner, handle: usize, owned: bool, key: Option<(u32, i32, u32)>) -> usize {
        let i = g.streams.len();
        g.streams.push(StreamSlot { handle, owned, key });
        g.index.insert(handle, i);
        g.clocks.push(Vec::new());
        g.done.push(0);
        i
    }

    /// The context's index of `stream`: `Null` for NULL, `UnknownHandle` when it was neither
    /// created nor adopted here.
    pub(crate) fn index_of(&self, stream: Ptr) -> RtResult<usize> {
        let mut g = self.inner.lock();
        if self.adopt_all {
            if let Some(&i) = g.index.get(&(stream as usize)) {
                return Ok(i);
            }
            return Ok(Self::add_stream(&mut g, stream as usize, false, None));
        }
        Self::index_in(&g, stream)
    }

    fn index_in(g: &Inner, stream: Ptr) -> RtResult<usize> {
        if stream.is_null() {
            return Err(RtError::new(RtErrorKind::Null, "stream is NULL"));
        }
        g.index.get(&(stream as usize)).copied().ok_or_else(|| {
            RtError::new(
                RtErrorKind::UnknownHandle,
                format!("stream {stream:p} is not a stream of this context (create it with a key or adopt it first)"),
            )
        })
    }

    pub(crate) fn handle_of(&self, index: usize) -> Ptr {
        self.inner.lock().streams.get(index).map_or(std::ptr::null_mut(), |s| s.handle as Ptr)
    }

    /// A new event for the caller (`ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE` unless `acl_flags` is
    /// non-zero), destroyed by [`Self::event_destroy`] or with the context.
    pub fn event_new(&self, acl_flags: u32) -> RtResult<Ptr> {
        let flags = if acl_flags == 0 { CONTEXT_EVENT_FLAGS } else { acl_flags };
        let e = self.rt.event_create(flags)?;
        self.inner.lock().events.insert(e as usize, EventState { user: true, rec: None });
        Ok(e)
    }

    fn user_event(g: &Inner, event: Ptr) -> RtResult<()> {
        if event.is_null() {
            return Err(RtError::new(RtErrorKind::Null, "event is NULL"));
        }
        match g.events.get(&(event as usize)) {
            Some(st) if st.user => Ok(()),
            _ => Err(RtError::new(
                RtErrorKind::UnknownHandle,
                format!("event {event:p} was not created by this context's event_new (or was destroyed)"),
            )),
        }
    }

    /// Destroys a user event. On a device error the event stays usable and known.
    pub fn event_destroy(&self, event: Ptr) -> RtResult<()> {
        let mut g = self.inner.lock();
        Self::user_event(&g, event)?;
        self.rt.event_destroy(event)?;
        g.events.remove(&(event as usize));
        Ok(())
    }

    /// Records `event` on `stream` (both known to the context).
    pub fn record(&self, event: Ptr, stream: Ptr) -> RtResult<()> {
        let mut g = self.inner.lock();
        Self::user_event(&g, event)?;
        let s = Self::index_in(&g, stream)?;
        self.record_locked(&mut g, event as usize, s)?;
        Ok(())
    }

    /// The device record and its clock update, as one step under the lock.
    fn record_locked(&self, g: &mut Inner, event: usize, s: usize) -> RtResult<u64> {
        self.rt.event_record(event as Ptr, g.streams[s].handle as Ptr)?;
        let clock = &mut g.clocks[s];
        if clock.len() <= s {
            clock.resize(s + 1, 0);
        }
        clock[s] += 1;
        let seq = clock[s];
        let rec = Recorded { clock: clock.clone() };
        g.events.entry(event).or_default().rec = Some(rec);
        Ok(seq)
    }

    /// Makes `stream` wait for `event`'s last record (`aclrtStreamWaitEvent`); the stream's
    /// clock then includes everything that record followed.
    pub fn wait(&self, stream: Ptr, event: Ptr) -> RtResult<()> {
        let mut g = self.inner.lock();
        Self::user_event(&g, event)?;
        let s = Self::index_in(&g, stream)?;
        self.wait_locked(&mut g, s, event as usize)
    }

    fn wait_locked(&self, g: &mut Inner, s: usize, event: usize) -> RtResult<()> {
        self.rt.stream_wait_event(g.streams[s].handle as Ptr, event as Ptr)?;
        if let Some(rec) = g.events.get(&event).and_then(|e| e.rec.clone()) {
            merge(&mut g.clocks[s], &rec.clock);
        }
        Ok(())
    }

    /// `waiter.wait_stream(other)`: `waiter`'s later work runs after everything queued on
    /// `other` so far (an internal event recorded on `other`, waited on by `waiter`).
    pub fn wait_stream(&self, waiter: Ptr, other: Ptr) -> RtResult<()> {
        let mut g = self.inner.lock();
        let w = Self::index_in(&g, waiter)?;
        let o = Self::index_in(&g, other)?;
        if w == o {
            return Ok(());
        }
        let e = self.take_spare(&mut g)?;
        let r = self.record_locked(&mut g, e, o).and_then(|_| self.wait_locked(&mut g, w, e));
        // The wait has captured the record; the event may be recorded again at once.
        g.spare.push(e);
        r
    }

    /// Whether the work before `event`'s last record has completed (`aclrtQueryEventStatus`).
    pub fn query(&self, event: Ptr) -> RtResult<bool> {
        let rec = self.user_record(event)?;
        let done = self.rt.event_query(event)?;
        if done {
            self.note_complete(rec);
        }
        Ok(done)
    }

    /// Blocks until `event` has completed (`aclrtSynchronizeEvent`).
    pub fn synchronize(&self, event: Ptr) -> RtResult<()> {
        let rec = self.user_record(event)?;
        self.rt.event_synchronize(event)?;
        self.note_complete(rec);
        Ok(())
    }

    /// A user event's last record, read before a device query: a record racing in after it can
    /// only make the answer cover more than the clock claims, never less.
    fn user_record(&self, event: Ptr) -> RtResult<Option<Recorded>> {
        let g = self.inner.lock();
        Self::user_event(&g, event)?;
        Ok(g.events.get(&(event as usize)).and_then(|e| e.rec.clone()))
    }

    /// Blocks until everything queued on `stream` so far has run (an internal event recorded
    /// on it, then synchronised).
    pub fn synchronize_stream(&self, stream: Ptr) -> RtResult<()> {
        let g = self.guard(self.index_of(stream)?)?;
        let r = self.guard_sync(&g);
        self.release_guard(g);
        r
    }

    /// Milliseconds between two completed records (`aclrtEventElapsedTime`).
    pub fn elapsed_ms(&self, start: Ptr, end: Ptr) -> RtResult<f32> {
        {
            let g = self.inner.lock();
            Self::user_event(&g, start)?;
            Self::user_event(&g, end)?;
        }
        self.rt.event_elapsed_time(start, end)
    }

    /// A completed record completes everything its clock covers.
    fn note_complete(&self, rec: Option<Recorded>) {
        if let Some(rec) = rec {
            merge(&mut self.inner.lock().done, &rec.clock);
        }
    }

    /// A guard's record (guards are not recorded again while held).
    fn guard_record(&self, guard: &Guard) -> Option<Recorded> {
        self.inner.lock().events.get(&guard.event).and_then(|e| e.rec.clone())
    }

    fn take_spare(&self, g: &mut Inner) -> RtResult<usize> {
        if let Some(e) = g.spare.pop() {
            return Ok(e);
        }
        let e = self.rt.event_create(CONTEXT_EVENT_FLAGS)? as usize;
        g.events.insert(e, EventState::default());
        Ok(e)
    }

    /// Records an internal event on stream `s` for the memory pool.
    pub(crate) fn guard(&self, s: usize) -> RtResult<Guard> {
        let mut g = self.inner.lock();
        let e = self.take_spare(&mut g)?;
        match self.record_locked(&mut g, e, s) {
            Ok(seq) => Ok(Guard { event: e, stream: s, seq }),
            Err(err) => {
                g.spare.push(e);
                Err(err)
            }
        }
    }

    /// True when `guard`'s record is known, without a device call, to be done for `owner`:
    /// it was on `owner` itself, `owner` has since waited on a later record of that stream (the
    /// back-stream rule), or a completed record already covered it.
    pub(crate) fn guard_released(&self, guard: &Guard, owner: usize) -> Release {
        let g = self.inner.lock();
        if guard.stream == owner || at(&g.clocks[owner], guard.stream) >= guard.seq {
            Release::BackStream
        } else if at(&g.done, guard.stream) >= guard.seq {
            Release::KnownComplete
        } else {
            Release::No
        }
    }

    /// Asks the device whether `guard`'s record has completed.
    pub(crate) fn guard_query(&self, guard: &Guard) -> RtResult<bool> {
        let done = self.rt.event_query(guard.event as Ptr)?;
        if done {
            self.note_complete(self.guard_record(guard));
        }
        Ok(done)
    }

    pub(crate) fn guard_sync(&self, guard: &Guard) -> RtResult<()> {
        self.rt.event_synchronize(guard.event as Ptr)?;
        self.note_complete(self.guard_record(guard));
        Ok(())
    }

    /// Returns a guard's event to the spares.
    pub(crate) fn release_guard(&self, guard: Guard) {
        self.inner.lock().spare.push(guard.event);
    }
}

/// How a guard was found done without waiting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Release {
    No,
    BackStream,
    KnownComplete,
}

impl Drop for StreamContext {
    /// Destroys every event and every owned stream, in creation-independent sorted order;
    /// device errors cannot be reported from here and leave the handle to the device.
    fn drop(&mut self) {
        let g = self.inner.get_mut();
        let mut events: Vec<usize> = g.events.keys().copied().collect();
        events.sort_unstable();
        for e in events {
            let _ = self.rt.event_destroy(e as Ptr);
        }
        for s in g.streams.iter().filter(|s| s.owned) {
            let _ = self.rt.stream_destroy(s.handle as Ptr, false);
        }
    }
}
