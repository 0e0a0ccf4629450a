//! `ge::ReusableStreamAllocator` (ge-runtime-api.md §2): the V1 pool of persistent streams.
//!
//! With `reuse` off (the default) it behaves as GE's code does: every request creates a stream,
//! destroy marks it destroyed, a second destroy succeeds without a device call. With `reuse` on it
//! implements GE's documented intent (§2.4): look up the exact `(priority, flags)` key, skip
//! streams the requesting model already uses, take the least-loaded stream whose task budget still
//! fits under the per-stream limit, else create one; destroy is reference-counted.
//!
//! Records are keyed by a monotonically increasing id, not by handle, so a runtime that hands a
//! destroyed stream's address out again cannot confuse the bookkeeping (§2.3's hidden hazard).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::c_void;
use std::sync::Arc;

use parking_lot::Mutex;

use super::consts::*;
use super::error::{RtError, RtErrorKind, RtResult};
use super::seam::Runtime;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolOptions {
    /// Share persistent streams between models (off: GE's never-reuse behaviour).
    pub reuse: bool,
    /// Tasks per stream to budget against instead of asking the runtime.
    pub task_limit: Option<u32>,
}

impl PoolOptions {
    /// Parses `reuse=on|off` and `task_limit=N`, comma-separated (empty: defaults).
    pub fn parse(text: &str) -> RtResult<PoolOptions> {
        let mut o = PoolOptions::default();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| RtError::new(RtErrorKind::Invalid, format!("pool option `{item}` is not KEY=VALUE")))?;
            match (k.trim(), v.trim()) {
                ("reuse", "on" | "1" | "true") => o.reuse = true,
                ("reuse", "off" | "0" | "false") => o.reuse = false,
                ("task_limit", n) => {
                    o.task_limit = Some(n.parse().map_err(|_| {
                        RtError::new(RtErrorKind::Invalid, format!("pool option task_limit=`{n}` is not a u32"))
                    })?)
                }
                (k, v) => {
                    return Err(RtError::new(
                        RtErrorKind::Invalid,
                        format!("unknown pool option `{k}={v}` (expected reuse=on|off or task_limit=N)"),
                    ));
                }
            }
        }
        Ok(o)
    }
}

/// Counters for tests and diagnostics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct PoolStats {
    /// Device streams alive (created and not yet destroyed).
    pub live: u64,
    pub created: u64,
    pub destroyed: u64,
    /// Grants served by an existing stream.
    pub reused: u64,
    /// Outstanding grants (sum of reference counts).
    pub grants: u64,
}

#[derive(Debug)]
struct Record {
    handle: usize,
    stream_id: i32,
    key: (i32, u32),
    /// Models that ever received this stream. `DestroyStream` names no model, so a release cannot
    /// say which model let go; the set (and the task budget) only shrink when the stream dies.
    models: BTreeSet<u32>,
    task_num: u32,
    refs: u32,
    /// In `by_key` (eligible for reuse).
    shared: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Budget {
    Unlimited,
    Tasks(u32),
    /// Neither an override nor a runtime answer: never share.
    Unknown,
}

/// Marks a handle whose record was destroyed, so a second destroy succeeds (GE's contract).
const DESTROYED: u64 = u64::MAX;

#[derive(Default)]
struct State {
    runtime: Option<Arc<Runtime>>,
    next_id: u64,
    records: HashMap<u64, Record>,
    by_handle: HashMap<usize, u64>,
    /// Shareable streams per `(priority, flags)`, least-loaded first: `(task_num, record id)`.
    by_key: BTreeMap<(i32, u32), BTreeSet<(u32, u64)>>,
    /// Cached budgets for normal and huge streams.
    budgets: [Option<Budget>; 2],
    stats: PoolStats,
}

pub struct ReusableStreamPool {
    options: PoolOptions,
    state: Mutex<State>,
}

/// Only model-bound persistent streams are shared; run streams and FORBIDDEN_DEFAULT sync
/// streams never are (§2.4).
fn shareable(flags: u32) -> bool {
    flags & RT_STREAM_PERSISTENT != 0 && flags & RT_STREAM_FORBIDDEN_DEFAULT == 0
}

impl ReusableStreamPool {
    pub fn new(options: PoolOptions) -> Self {
        ReusableStreamPool { options, state: Mutex::new(State::default()) }
    }
    pub fn with_runtime(options: PoolOptions, runtime: Arc<Runtime>) -> Self {
        let state = State { runtime: Some(runtime), ..State::default() };
        ReusableStreamPool { options, state: Mutex::new(state) }
    }
    pub fn options(&self) -> PoolOptions {
        self.options
    }
    pub fn stats(&self) -> PoolStats {
        self.state.lock().stats
    }

    fn runtime(st: &mut State) -> RtResult<Arc<Runtime>> {
        if let Some(rt) = &st.runtime {
            return Ok(rt.clone());
        }
        let rt = Runtime::current()?;
        st.runtime = Some(rt.clone());
        Ok(rt)
    }

    fn budget(&self, st: &mut State, rt: &Runtime, flags: u32) -> Budget {
        let huge = flags & RT_STREAM_HUGE != 0;
        if let Some(b) = st.budgets[huge as usize] {
            return b;
        }
        let b = if let Some(t) = self.options.task_limit {
            Budget::Tasks(t)
        } else if rt.unlimited_depth().unwrap_or(false) {
            Budget::Unlimited
        } else {
            match rt.max_stream_and_task(if huge { RT_HUGE_STREAM } else { RT_NORMAL_STREAM }) {
                Ok((_, t)) => Budget::Tasks(t),
                Err(_) => Budget::Unknown,
            }
        };
        st.budgets[huge as usize] = Some(b);
        b
    }

    /// `GetOrCreateRtStream(stream, rt_model_id, priority, stream_flag, task_num)`: the stream
    /// granted and whether it was shared. The device call happens under the pool lock, as in GE.
    pub fn get_or_create(
        &self,
        rt_model_id: u32,
        priority: i32,
        rt_flags: u32,
        task_num: u32,
    ) -> RtResult<(*mut c_void, bool)> {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        let rt = Self::runtime(st)?;
        let key = (priority, rt_flags);
        let share = self.options.reuse && shareable(rt_flags);
        if share {
            let budget = self.budget(st, &rt, rt_flags);
            let mut pick = None;
            if let Some(set) = st.by_key.get(&key) {
                for &(load, id) in set {
                    let fits = match budget {
                        Budget::Unlimited => true,
                        Budget::Tasks(max) => {
                            u64::from(load) + u64::from(task_num) + u64::from(RESERVED_TASK_NUM) <= u64::from(max)
                        }
                        Budget::Unknown => false,
                    };
                    if !fits {
                        break; // ascending load: no later stream fits either
                    }
                    let rec = &st.records[&id];
                    if !rec.models.contains(&rt_model_id) && rec.models.len() < MAX_MODELS_IN_ONE_STREAM {
                        pick = Some((load, id));
                        break;
                    }
                }
            }
            if let Some((load, id)) = pick {
                let rec = st.records.get_mut(&id).expect("by_key names live records");
                rec.models.insert(rt_model_id);
                rec.task_num = load.saturating_add(task_num);
                rec.refs += 1;
                let handle = rec.handle;
                let new_load = rec.task_num;
                let set = st.by_key.get_mut(&key).expect("key present");
                set.remove(&(load, id));
                set.insert((new_load, id));
                st.stats.reused += 1;
                st.stats.grants += 1;
                return Ok((handle as *mut c_void, true));
            }
        }
        let handle = rt.stream_create(priority, rt_flags)?;
        let stream_id = match rt.stream_get_id(handle) {
            Ok(id) => id,
            Err(e) if e.kind == RtErrorKind::NoRuntime => -1,
            Err(e) => {
                // GE leaks the stream here; we give it back before reporting.
                let _ = rt.stream_destroy(handle, false);
                return Err(e);
            }
        };
        let id = st.next_id;
        st.next_id += 1;
        st.records.insert(
            id,
            Record {
                handle: handle as usize,
                stream_id,
                key,
                models: BTreeSet::from([rt_model_id]),
                task_num,
                refs: 1,
                shared: share,
            },
        );
        st.by_handle.insert(handle as usize, id);
        if share {
            st.by_key.entry(key).or_default().insert((task_num, id));
        }
        st.stats.created += 1;
        st.stats.live += 1;
        st.stats.grants += 1;
        Ok((handle, false))
    }

    /// `DestroyStream(stream, is_force_destroy)`: drops one grant; the device stream is destroyed
    /// (forced if this last call asks) when no grant is left. Destroying an already destroyed
    /// stream succeeds; a stream this pool never created is an error. On a device failure the
    /// grant is kept, so the caller may retry.
    pub fn destroy(&self, stream: *mut c_void, force: bool) -> RtResult<()> {
        if stream.is_null() {
            return Err(RtError::new(RtErrorKind::Null, "DestroyStream: stream is null"));
        }
        let mut guard = self.state.lock();
        let st = &mut *guard;
        let Some(&id) = st.by_handle.get(&(stream as usize)) else {
            return Err(RtError::new(
                RtErrorKind::UnknownHandle,
                format!("DestroyStream: stream {stream:p} was not created by this pool"),
            ));
        };
        if id == DESTROYED {
            return Ok(());
        }
        let rec = st.records.get_mut(&id).expect("by_handle names live records");
        if rec.refs > 1 {
            rec.refs -= 1;
            st.stats.grants -= 1;
            return Ok(());
        }
        let rt = st.runtime.clone().expect("a pool with records has a runtime");
        rt.stream_destroy(stream, force)?;
        let rec = st.records.remove(&id).expect("present");
        if rec.shared
            && let Some(set) = st.by_key.get_mut(&rec.key)
        {
            set.remove(&(rec.task_num, id));
            if set.is_empty() {
                st.by_key.remove(&rec.key);
            }
        }
        st.by_handle.insert(rec.handle, DESTROYED);
        st.stats.destroyed += 1;
        st.stats.live -= 1;
        st.stats.grants -= 1;
        Ok(())
    }

    /// The runtime stream id recorded at creation (`aclrtStreamGetId`), -1 if unknown.
    pub fn stream_id(&self, stream: *mut c_void) -> Option<i32> {
        let st = self.state.lock();
        let id = *st.by_handle.get(&(stream as usize))?;
        st.records.get(&id).map(|r| r.stream_id)
    }

    /// Models recorded on a live stream, ascending.
    pub fn models_of(&self, stream: *mut c_void) -> Vec<u32> {
        let st = self.state.lock();
        st.by_handle
            .get(&(stream as usize))
            .and_then(|id| st.records.get(id))
            .map(|r| r.models.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Tasks budgeted on a live stream.
    pub fn task_num_of(&self, stream: *mut c_void) -> Option<u32> {
        let st = self.state.lock();
        let id = st.by_handle.get(&(stream as usize))?;
        st.records.get(id).map(|r| r.task_num)
    }
}
