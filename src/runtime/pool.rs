//! `ge::ReusableStreamAllocator` (ge-runtime-api.md §2): the V1 pool of persistent streams.
//!
//! With `reuse` off (the default) it behaves as GE's code does: every request creates a stream,
//! destroy marks it destroyed, a second destroy succeeds without a device call. With `reuse` on it
//! implements GE's documented intent (§2.4): look up the exact `(priority, flags)` key, skip
//! streams the requesting model already uses, take the least-loaded stream whose task budget still
//! fits under the per-stream limit, else create one; destroy is reference-counted.
//!
//! Records carry a monotonically increasing id that orders the reuse index, not the handle, so a
//! runtime that hands a destroyed stream's address out again cannot confuse the bookkeeping
//! (§2.3's hidden hazard). The path GE takes on every model load (reuse off: create, then
//! destroy) costs one lock, one hash insert and one lookup, and no allocation of its own
//! (`cargo bench --bench pool`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::c_void;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, OnceLock};

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

/// Models bound to a stream. Almost every stream has exactly one, so the first is kept inline
/// and the set (which allocates) only holds the others.
#[derive(Debug)]
struct Models {
    first: u32,
    more: BTreeSet<u32>,
}

impl Models {
    fn one(model: u32) -> Self {
        Models { first: model, more: BTreeSet::new() }
    }
    fn contains(&self, model: u32) -> bool {
        self.first == model || self.more.contains(&model)
    }
    fn len(&self) -> usize {
        1 + self.more.len()
    }
    fn insert(&mut self, model: u32) {
        if model != self.first {
            self.more.insert(model);
        }
    }
    fn ascending(&self) -> Vec<u32> {
        let mut v: Vec<u32> = std::iter::once(self.first).chain(self.more.iter().copied()).collect();
        v.sort_unstable();
        v
    }
}

#[derive(Debug)]
struct Record {
    /// Creation order: ties between equally loaded streams go to the oldest, and a runtime that
    /// hands a destroyed stream's address out again never makes two records compare equal.
    id: u64,
    handle: usize,
    stream_id: i32,
    key: (i32, u32),
    /// Models that ever received this stream. `DestroyStream` names no model, so a release cannot
    /// say which model let go; the set (and the task budget) only shrink when the stream dies.
    models: Models,
    task_num: u32,
    refs: u32,
    /// In `by_key` (eligible for reuse).
    shared: bool,
}

/// `by_handle`'s value for a handle this pool destroyed: a second destroy succeeds (GE's
/// contract). A new stream the runtime hands out at the same address replaces it.
const DESTROYED: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Budget {
    Unlimited,
    Tasks(u32),
    /// Neither an override nor a runtime answer: never share.
    Unknown,
}

/// Hashes stream handles: a folded 64×64→128 multiply, so both the low bits (bucket) and the
/// high bits (hashbrown's tag) depend on every bit of the address, including the alignment
/// zeros. Fixed constants: deterministic, and handles come from the runtime, not from an
/// adversary. Several times cheaper than SipHash on this path.
#[derive(Clone, Copy, Default)]
pub(crate) struct HandleHasher(u64);

impl Hasher for HandleHasher {
    fn finish(&self) -> u64 {
        let p = u128::from(self.0 ^ 0x243f_6a88_85a3_08d3).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (p as u64) ^ ((p >> 64) as u64)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = self.0.rotate_left(29) ^ n as u64;
    }
}

/// A reuse-index entry, ordered least-loaded then oldest: `(task_num, record id, slot)`.
type Shareable = (u32, u64, u32);

/// A map keyed by device handles or addresses, hashed by [`HandleHasher`] (the memory pool and
/// the stream context use it too).
pub(crate) type HandleMap<V> = HashMap<usize, V, BuildHasherDefault<HandleHasher>>;

#[derive(Default)]
struct State {
    next_id: u64,
    /// Live records, indexed by slot; freed slots are reused, so the slab is as long as the most
    /// streams ever alive at once.
    records: Vec<Option<Record>>,
    free: Vec<u32>,
    /// Every handle this pool created: its record's slot, or [`DESTROYED`]. A get-or-create and
    /// its destroy cost one hash insert and one lookup, and a destroyed handle keeps 16 bytes.
    by_handle: HandleMap<u32>,
    /// Shareable streams per `(priority, flags)`, least-loaded first.
    by_key: BTreeMap<(i32, u32), BTreeSet<Shareable>>,
    /// Cached budgets for normal and huge streams.
    budgets: [Option<Budget>; 2],
    stats: PoolStats,
}

impl State {
    /// Puts a record in a free slot.
    fn place(&mut self, rec: Record) -> RtResult<u32> {
        if let Some(slot) = self.free.pop()
            && let Some(cell) = self.records.get_mut(slot as usize)
        {
            *cell = Some(rec);
            return Ok(slot);
        }
        let slot = u32::try_from(self.records.len()).ok().filter(|&s| s != DESTROYED).ok_or_else(|| {
            RtError::new(RtErrorKind::Limit, "GetOrCreateRtStream: the pool holds 2^32 - 1 live streams")
        })?;
        self.records.push(Some(rec));
        Ok(slot)
    }

    /// Drops a record in its slot and, if shared, takes it out of the reuse index; its grant
    /// count. In place: the record is never copied out.
    fn retire(&mut self, slot: u32) -> Option<u32> {
        let cell = self.records.get_mut(slot as usize)?;
        let rec = cell.as_ref()?;
        let (refs, shared, key, entry) = (rec.refs, rec.shared, rec.key, (rec.task_num, rec.id, slot));
        *cell = None;
        self.free.push(slot);
        if shared && let Some(set) = self.by_key.get_mut(&key) {
            set.remove(&entry);
            if set.is_empty() {
                self.by_key.remove(&key);
            }
        }
        Some(refs)
    }

    fn live(&self, handle: usize) -> Option<&Record> {
        let &slot = self.by_handle.get(&handle)?;
        self.records.get(slot as usize)?.as_ref()
    }
}

pub struct ReusableStreamPool {
    options: PoolOptions,
    /// Resolved on the first request (under the lock) and kept: every handle is destroyed
    /// through the table that created it. Outside the lock's state so the hot path borrows it
    /// instead of cloning the `Arc` (two atomic operations per call).
    runtime: OnceLock<Arc<Runtime>>,
    state: Mutex<State>,
}

/// Only model-bound persistent streams are shared; run streams and FORBIDDEN_DEFAULT sync
/// streams never are (§2.4).
fn shareable(flags: u32) -> bool {
    flags & RT_STREAM_PERSISTENT != 0 && flags & RT_STREAM_FORBIDDEN_DEFAULT == 0
}

impl ReusableStreamPool {
    pub fn new(options: PoolOptions) -> Self {
        ReusableStreamPool { options, runtime: OnceLock::new(), state: Mutex::new(State::default()) }
    }
    pub fn with_runtime(options: PoolOptions, runtime: Arc<Runtime>) -> Self {
        ReusableStreamPool { options, runtime: OnceLock::from(runtime), state: Mutex::new(State::default()) }
    }
    pub fn options(&self) -> PoolOptions {
        self.options
    }
    pub fn stats(&self) -> PoolStats {
        self.state.lock().stats
    }

    /// The pool's runtime, resolving it on first use. Called under the state lock, so two
    /// first requests cannot resolve different runtimes; a failed resolution is not kept.
    fn runtime(&self) -> RtResult<&Runtime> {
        if let Some(rt) = self.runtime.get() {
            return Ok(rt);
        }
        let rt = Runtime::current()?;
        Ok(self.runtime.get_or_init(|| rt))
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
        let rt = self.runtime()?;
        let key = (priority, rt_flags);
        let share = self.options.reuse && shareable(rt_flags);
        if share && let Some(handle) = self.try_share(st, rt, key, rt_model_id, task_num) {
            return Ok((handle as *mut c_void, true));
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
        let rec = Record {
            id,
            handle: handle as usize,
            stream_id,
            key,
            models: Models::one(rt_model_id),
            task_num,
            refs: 1,
            shared: share,
        };
        let slot = match st.place(rec) {
            Ok(slot) => slot,
            Err(e) => {
                let _ = rt.stream_destroy(handle, false);
                return Err(e);
            }
        };
        st.next_id += 1;
        if share {
            st.by_key.entry(key).or_default().insert((task_num, id, slot));
        }
        if let Some(old) = st.by_handle.insert(handle as usize, slot)
            && old != DESTROYED
            && let Some(refs) = st.retire(old)
        {
            // The runtime handed out a stream this pool still holds, so that stream is gone
            // on the device: retire its record rather than leave it reachable for reuse.
            st.stats.live -= 1;
            st.stats.grants -= u64::from(refs);
        }
        st.stats.created += 1;
        st.stats.live += 1;
        st.stats.grants += 1;
        Ok((handle, false))
    }

    /// Grants an existing shareable stream of `key`, if one fits (§2.4): the least-loaded whose
    /// budget still takes `task_num` and that `rt_model_id` does not already use.
    fn try_share(
        &self,
        st: &mut State,
        rt: &Runtime,
        key: (i32, u32),
        rt_model_id: u32,
        task_num: u32,
    ) -> Option<usize> {
        let budget = self.budget(st, rt, key.1);
        let set = st.by_key.get(&key)?;
        let mut pick = None;
        for &(load, id, slot) in set {
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
            let Some(Some(rec)) = st.records.get(slot as usize) else { continue };
            if !rec.models.contains(rt_model_id) && rec.models.len() < MAX_MODELS_IN_ONE_STREAM {
                pick = Some((load, id, slot));
                break;
            }
        }
        let (load, id, slot) = pick?;
        let Some(Some(rec)) = st.records.get_mut(slot as usize) else { return None };
        rec.models.insert(rt_model_id);
        rec.task_num = load.saturating_add(task_num);
        rec.refs += 1;
        let (new_load, handle) = (rec.task_num, rec.handle);
        if let Some(set) = st.by_key.get_mut(&key) {
            set.remove(&(load, id, slot));
            set.insert((new_load, id, slot));
        }
        st.stats.reused += 1;
        st.stats.grants += 1;
        Some(handle)
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
        let Some(entry) = st.by_handle.get_mut(&(stream as usize)) else {
            return Err(RtError::new(
                RtErrorKind::UnknownHandle,
                format!("DestroyStream: stream {stream:p} was not created by this pool"),
            ));
        };
        let slot = *entry;
        let Some(Some(rec)) = st.records.get_mut(slot as usize) else {
            return Ok(()); // DESTROYED
        };
        if rec.refs > 1 {
            rec.refs -= 1;
            st.stats.grants -= 1;
            return Ok(());
        }
        // A live record means a create succeeded, which resolved the runtime.
        let rt = self
            .runtime
            .get()
            .ok_or_else(|| RtError::new(RtErrorKind::NoRuntime, "DestroyStream: the pool has no runtime"))?;
        rt.stream_destroy(stream, force)?;
        *entry = DESTROYED;
        st.retire(slot);
        st.stats.destroyed += 1;
        st.stats.live -= 1;
        st.stats.grants -= 1;
        Ok(())
    }

    fn with_record<T>(&self, stream: *mut c_void, f: impl FnOnce(&Record) -> T) -> Option<T> {
        self.state.lock().live(stream as usize).map(f)
    }

    /// The runtime stream id recorded at creation (`aclrtStreamGetId`), -1 if unknown.
    pub fn stream_id(&self, stream: *mut c_void) -> Option<i32> {
        self.with_record(stream, |r| r.stream_id)
    }

    /// Models recorded on a live stream, ascending.
    pub fn models_of(&self, stream: *mut c_void) -> Vec<u32> {
        self.with_record(stream, |r| r.models.ascending()).unwrap_or_default()
    }

    /// Tasks budgeted on a live stream.
    pub fn task_num_of(&self, stream: *mut c_void) -> Option<u32> {
        self.with_record(stream, |r| r.task_num)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handle_hash_spreads_aligned_addresses() {
        // 16-byte-aligned handles must land in different buckets and tags.
        let hash = |x: usize| {
            let mut hs = HandleHasher::default();
            hs.write_usize(x);
            hs.finish()
        };
        let low: BTreeSet<u64> = (0..256usize).map(|i| hash(0x7f00_0000_1000 + 16 * i) & 255).collect();
        let high: BTreeSet<u64> = (0..256usize).map(|i| hash(0x7f00_0000_1000 + 16 * i) >> 57).collect();
        assert!(low.len() > 128, "{} distinct low bytes", low.len());
        assert!(high.len() > 64, "{} distinct tags", high.len());
    }
}
