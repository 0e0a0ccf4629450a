//! The default mode's exact reduction: keep only the cross-stream pairs of the transitive
//! reduction of (pairs ∪ stream order), the fewest edge-based waits for the given assignment.
//! GE's pairwise optimisations keep a pair even when a path through a third stream already
//! orders its ends (ge-compiler.md §10).
//!
//! One sweep in execution order with a vector clock per stream: a point's clock holds, per
//! stream, how many of that stream's points happen before it. A pair u → v is redundant iff v's
//! clock, built from v's stream predecessor and the pairs into v kept so far, already covers u.
//! Pairs into v are tried latest sender first, so a pair that a later sender's path implies is
//! never kept. Cost O(P + E log E + K·L) for P points, E pairs, K kept pairs and L streams live
//! at once (sparse clocks that forget a stream after its last pair); clock snapshots are kept
//! only while a pair from their point is still pending. Up to [`DENSE_MAX_STREAMS`] streams the
//! clocks are dense rows instead ([`DenseClocks`]): a join is an element-wise maximum the
//! compiler vectorises, not a merge of sorted lists, and a row costs no more memory than a
//! sparse clock of half its streams.

use super::SyncState;
use crate::compile::allocation::SyncEnd;
use crate::graph::NodeId;

const NONE: u32 = u32::MAX;

/// Execution points: a node's main stream and each of its attached streams, in execution
/// order (node order, main first).
#[derive(Clone, Debug)]
pub struct Points {
    /// First point of the node at each execution position (`len = nodes + 1`).
    pub start: Vec<u32>,
    pub stream: Vec<u32>,
    /// Index of the point among the points of its stream.
    pub seq: Vec<u32>,
    pub stream_count: usize,
    /// Point of each node's main stream, by node id (`u32::MAX` without one).
    pub main: Vec<u32>,
}

impl Points {
    pub fn build(st: &SyncState<'_>) -> Self {
        let mut start = Vec::with_capacity(st.order.len() + 1);
        let mut stream = Vec::with_capacity(st.order.len());
        let mut seq = Vec::with_capacity(st.order.len());
        let mut main = vec![NONE; st.model.nodes.len()];
        let mut next_seq = vec![0u32; st.stream_count as usize];
        let mut push = |stream: &mut Vec<u32>, s: u32| {
            stream.push(s);
            seq.push(next_seq[s as usize]);
            next_seq[s as usize] += 1;
        };
        for &n in &st.order {
            start.push(stream.len() as u32);
            if let Some(s) = st.stream[n] {
                main[n.index()] = stream.len() as u32;
                push(&mut stream, s.0);
            }
            if st.has_attached {
                for s in st.attached[n].iter() {
                    push(&mut stream, s.0);
                }
            }
        }
        start.push(stream.len() as u32);
        Points { start, stream, seq, stream_count: st.stream_count as usize, main }
    }

    pub fn len(&self) -> usize {
        self.stream.len()
    }

    pub fn is_empty(&self) -> bool {
        self.stream.is_empty()
    }

    /// The point of a sync end, if the end runs on a stream.
    #[inline]
    pub fn of(&self, st: &SyncState<'_>, end: SyncEnd) -> Option<u32> {
        match end.attached {
            None => {
                let p = self.main[end.node.index()];
                (p != NONE).then_some(p)
            }
            Some(a) => {
                let base = self.start[st.pos[end.node] as usize];
                let has_main = self.main[end.node.index()] != NONE;
                let i = st.attached[end.node].iter().position(|&x| x == a)?;
                Some(base + u32::from(has_main) + i as u32)
            }
        }
    }
}

/// One sparse clock: `(stream, points of that stream covered)`, sorted by stream; a stream
/// absent is a stream none of whose points is covered.
type Clock = Vec<(u32, u32)>;

/// Per-stream vector clocks with reference-counted snapshots for pending senders.
///
/// Clocks are sparse, and with [`Clocks::forget_after`] a stream no later query asks about
/// drops out of every clock rewritten after that: memory and time follow the streams that are
/// live together, not streams² (a dense table needed 111 GB for 1M nodes on 170k streams).
pub(super) struct Clocks {
    cur: Vec<Clock>,
    snaps: Vec<Clock>,
    snap: Snapshots,
    /// Per stream, the last point at which a query may name it (`None`: keep every stream).
    last_query: Option<Vec<u32>>,
    /// The point being processed: streams whose last query lies before it are forgotten.
    now: u32,
    scratch: Clock,
}

impl Clocks {
    pub(super) fn new(streams: usize, points: usize) -> Self {
        Clocks {
            cur: vec![Vec::new(); streams],
            snaps: Vec::new(),
            snap: Snapshots::new(streams, points),
            last_query: None,
            now: 0,
            scratch: Vec::new(),
        }
    }

    /// Lets clocks forget stream `t` once point `last_query[t]` has been processed.
    pub(super) fn forget_after(&mut self, last_query: Vec<u32>) {
        self.last_query = Some(last_query);
    }

    /// Point `p` is being processed (queries from now on are at `p` or later).
    #[inline]
    pub(super) fn at(&mut self, p: u32) {
        self.now = p;
    }

    #[inline]
    fn live(&self, t: u32) -> bool {
        self.last_query.as_ref().is_none_or(|l| l[t as usize] >= self.now)
    }

    #[inline]
    fn get(clock: &Clock, t: u32) -> u32 {
        clock.binary_search_by_key(&t, |&(s, _)| s).map_or(0, |i| clock[i].1)
    }

    /// Sets component `t` of `clock` to at least `v`; whether it grew.
    fn raise(clock: &mut Clock, t: u32, v: u32) -> bool {
        match clock.binary_search_by_key(&t, |&(s, _)| s) {
            Ok(i) if clock[i].1 >= v => false,
            Ok(i) => {
                clock[i].1 = v;
                true
            }
            Err(i) => {
                clock.insert(i, (t, v));
                true
            }
        }
    }

    /// Whether stream `s`'s current clock covers point `seq` of stream `t`.
    #[inline]
    pub(super) fn covers(&self, s: usize, t: usize, seq: u32) -> bool {
        Self::get(&self.cur[s], t as u32) > seq
    }

    /// Joins the clock of sender point `u` (on `t`, index `seq`) into stream `s`.
    pub(super) fn merge(&mut self, s: usize, u: u32, t: usize, seq: u32) {
        let snap = self.snap.of_point(u);
        let mut changed = false;
        if snap != NONE {
            let mut out = std::mem::take(&mut self.scratch);
            out.clear();
            let (a, b) = (&self.cur[s], &self.snaps[snap as usize]);
            let (mut i, mut j) = (0, 0);
            while i < a.len() || j < b.len() {
                let next = match (a.get(i), b.get(j)) {
                    (Some(&x), Some(&y)) if x.0 == y.0 => {
                        i += 1;
                        j += 1;
                        changed |= y.1 > x.1;
                        (x.0, x.1.max(y.1))
                    }
                    (Some(&x), Some(&y)) if x.0 < y.0 => {
                        i += 1;
                        x
                    }
                    (Some(&x), None) => {
                        i += 1;
                        x
                    }
                    (_, Some(&y)) => {
                        j += 1;
                        if !self.live(y.0) {
                            continue;
                        }
                        changed = true;
                        y
                    }
                    (None, None) => unreachable!("the loop stops when both are done"),
                };
                if next.0 as usize == s || self.live(next.0) {
                    out.push(next);
                }
            }
            self.scratch = std::mem::replace(&mut self.cur[s], out);
        }
        changed |= Self::raise(&mut self.cur[s], t as u32, seq + 1);
        if changed {
            self.snap.changed(s);
        }
    }

    /// Point `p` (index `seq` on `s`) runs: it is covered on its own stream from now on.
    #[inline]
    pub(super) fn advance(&mut self, s: usize, seq: u32) {
        Self::raise(&mut self.cur[s], s as u32, seq + 1);
    }

    /// Remembers `p`'s clock for `pending` pairs that will read it.
    pub(super) fn record(&mut self, s: usize, p: u32, pending: u32) {
        if pending == 0 {
            return;
        }
        if let Some(snap) = self.snap.record(s, p, pending) {
            if snap as usize == self.snaps.len() {
                self.snaps.push(Vec::new());
            }
            let dst = &mut self.snaps[snap as usize];
            dst.clear();
            dst.extend_from_slice(&self.cur[s]);
        }
    }

    /// One pending pair from `u` has been handled.
    pub(super) fn release(&mut self, u: u32) {
        self.snap.release(u);
    }
}

/// Which snapshot of a clock each point's pending pairs read, shared by [`Clocks`] and
/// [`DenseClocks`] (each keeps the snapshots' contents its own way): a stream's clock is copied
/// once for every point recorded while it stays unchanged, and a snapshot is reused once no
/// pair reads it and its stream has moved on.
struct Snapshots {
    refs: Vec<u32>,
    owner: Vec<u32>,
    free: Vec<u32>,
    /// Per stream, the snapshot of its current clock (`NONE`: none taken since it changed).
    current: Vec<u32>,
    /// Per point, the snapshot its pending pairs read.
    point: Vec<u32>,
}

impl Snapshots {
    fn new(streams: usize, points: usize) -> Self {
        Snapshots {
            refs: Vec::new(),
            owner: Vec::new(),
            free: Vec::new(),
            current: vec![NONE; streams],
            point: vec![NONE; points],
        }
    }

    /// The snapshot point `u`'s pairs read (`NONE`: none).
    #[inline]
    fn of_point(&self, u: u32) -> u32 {
        self.point[u as usize]
    }

    /// Stream `s`'s clock changed: its snapshot no longer matches it.
    #[inline]
    fn changed(&mut self, s: usize) {
        let old = self.current[s];
        if old != NONE {
            self.current[s] = NONE;
            if self.refs[old as usize] == 0 {
                self.free.push(old);
            }
        }
    }

    /// Point `p` on `s` has `pending` pairs to read its clock: the snapshot that must be
    /// written now with `s`'s clock, when the stream has none current (a reused one, or the
    /// next index past the last, which the caller's storage grows to hold).
    fn record(&mut self, s: usize, p: u32, pending: u32) -> Option<u32> {
        let mut snap = self.current[s];
        let fresh = snap == NONE;
        if fresh {
            snap = match self.free.pop() {
                Some(f) => f,
                None => {
                    self.refs.push(0);
                    self.owner.push(0);
                    (self.refs.len() - 1) as u32
                }
            };
            self.owner[snap as usize] = s as u32;
            self.current[s] = snap;
        }
        self.refs[snap as usize] += pending;
        self.point[p as usize] = snap;
        fresh.then_some(snap)
    }

    /// One pending pair from `u` has been handled.
    fn release(&mut self, u: u32) {
        let snap = self.point[u as usize];
        if snap == NONE {
            return;
        }
        let r = &mut self.refs[snap as usize];
        *r -= 1;
        if *r == 0 && self.current[self.owner[snap as usize] as usize] != snap {
            self.free.push(snap);
        }
    }
}

/// The vector clocks the reduction sweep reads and writes, sparse ([`Clocks`]) or dense
/// ([`DenseClocks`]); both answer every query the sweep asks alike.
pub(super) trait ClockTable {
    /// Point `p` is being processed.
    fn at(&mut self, p: u32);
    /// Whether stream `s`'s current clock covers point `seq` of stream `t`.
    fn covers(&self, s: usize, t: usize, seq: u32) -> bool;
    /// Joins the clock of sender point `u` (on `t`, index `seq`) into stream `s`.
    fn merge(&mut self, s: usize, u: u32, t: usize, seq: u32);
    /// Point index `seq` on `s` runs.
    fn advance(&mut self, s: usize, seq: u32);
    /// Remembers `p`'s clock for `pending` pairs that will read it.
    fn record(&mut self, s: usize, p: u32, pending: u32);
    /// One pending pair from `u` has been handled.
    fn release(&mut self, u: u32);
}

impl ClockTable for Clocks {
    #[inline]
    fn at(&mut self, p: u32) {
        Clocks::at(self, p)
    }
    #[inline]
    fn covers(&self, s: usize, t: usize, seq: u32) -> bool {
        Clocks::covers(self, s, t, seq)
    }
    #[inline]
    fn merge(&mut self, s: usize, u: u32, t: usize, seq: u32) {
        Clocks::merge(self, s, u, t, seq)
    }
    #[inline]
    fn advance(&mut self, s: usize, seq: u32) {
        Clocks::advance(self, s, seq)
    }
    #[inline]
    fn record(&mut self, s: usize, p: u32, pending: u32) {
        Clocks::record(self, s, p, pending)
    }
    #[inline]
    fn release(&mut self, u: u32) {
        Clocks::release(self, u)
    }
}

/// The most streams for which the reduction keeps dense clocks ([`DenseClocks`]).
pub const DENSE_MAX_STREAMS: usize = 64;

/// [`Clocks`] as dense rows of one `u32` per stream: the current clock of every stream in one
/// table, snapshots in an arena of rows. Component `t` of a row counts the points of stream `t`
/// covered, as in [`Clocks`]; no stream is forgotten, so a join only grows what a sparse clock
/// would hold on the streams still asked about, and every query answers the same. Snapshots
/// are shared and released exactly as [`Clocks`] does (a join that changes nothing keeps the
/// stream's snapshot).
pub(super) struct DenseClocks {
    streams: usize,
    cur: Vec<u32>,
    snaps: Vec<u32>,
    snap: Snapshots,
}

impl DenseClocks {
    pub(super) fn new(streams: usize, points: usize) -> Self {
        DenseClocks {
            streams,
            cur: vec![0; streams * streams],
            snaps: Vec::new(),
            snap: Snapshots::new(streams, points),
        }
    }

    #[inline]
    fn row(&self, s: usize) -> std::ops::Range<usize> {
        s * self.streams..(s + 1) * self.streams
    }
}

impl ClockTable for DenseClocks {
    #[inline]
    fn at(&mut self, _p: u32) {}

    #[inline]
    fn covers(&self, s: usize, t: usize, seq: u32) -> bool {
        self.cur[s * self.streams + t] > seq
    }

    fn merge(&mut self, s: usize, u: u32, t: usize, seq: u32) {
        let snap = self.snap.of_point(u);
        let row = self.row(s);
        let cur = &mut self.cur[row];
        let mut changed = false;
        if snap != NONE {
            let n = self.streams;
            let src = &self.snaps[snap as usize * n..(snap as usize + 1) * n];
            for (a, &b) in cur.iter_mut().zip(src) {
                changed |= b > *a;
                *a = (*a).max(b);
            }
        }
        if cur[t] <= seq {
            cur[t] = seq + 1;
            changed = true;
        }
        if changed {
            self.snap.changed(s);
        }
    }

    #[inline]
    fn advance(&mut self, s: usize, seq: u32) {
        let c = &mut self.cur[s * self.streams + s];
        *c = (*c).max(seq + 1);
    }

    fn record(&mut self, s: usize, p: u32, pending: u32) {
        if pending == 0 {
            return;
        }
        let n = self.streams;
        if let Some(snap) = self.snap.record(s, p, pending) {
            let at = snap as usize * n;
            if at == self.snaps.len() {
                self.snaps.resize(at + n, 0);
            }
            self.snaps[at..at + n].copy_from_slice(&self.cur[s * n..(s + 1) * n]);
        }
    }

    fn release(&mut self, u: u32) {
        self.snap.release(u);
    }
}

/// Kept pairs grouped by receiving point (CSR), each group latest sender first, plus the
/// number of pairs leaving each point.
pub(super) struct PairIndex {
    pub from: Vec<u32>,
    pub to: Vec<u32>,
    pub in_start: Vec<u32>,
    /// Raw sync ids, grouped by receiving point.
    pub in_list: Vec<u32>,
    /// The sender point of each `in_list` entry.
    pub in_from: Vec<u32>,
    pub out_count: Vec<u32>,
}

impl PairIndex {
    pub(super) fn build(st: &SyncState<'_>, pts: &Points) -> Self {
        let mut from = vec![NONE; st.syncs.len()];
        let mut to = vec![NONE; st.syncs.len()];
        let mut in_start = vec![0u32; pts.len() + 1];
        let mut out_count = vec![0u32; pts.len()];
        let mut total = 0usize;
        for (r, s) in st.alive() {
            let (Some(f), Some(t)) = (pts.of(st, s.from), pts.of(st, s.to)) else { continue };
            from[r as usize] = f;
            to[r as usize] = t;
            in_start[t as usize] += 1;
            out_count[f as usize] += 1;
            total += 1;
        }
        // Each group's end, then filled backwards (latest insertion first) down to its start.
        // Insertion walks senders in execution order, so a group usually comes out latest
        // sender first already.
        let mut sum = 0u32;
        for c in in_start.iter_mut() {
            sum += *c;
            *c = sum;
        }
        let mut in_list = vec![0u32; total];
        let mut in_from = vec![0u32; total];
        for (r, &t) in to.iter().enumerate().rev() {
            if t != NONE {
                let slot = &mut in_start[t as usize];
                *slot -= 1;
                in_list[*slot as usize] = r as u32;
                in_from[*slot as usize] = from[r];
            }
        }
        for p in 0..pts.len() {
            let (b, e) = (in_start[p] as usize, in_start[p + 1] as usize);
            // Latest sender first, ties in insertion order: `in_list` is filled in ascending
            // insertion order within a group, so a strictly decreasing sender run is in order.
            if e - b > 1 && !in_from[b..e].windows(2).all(|w| w[0] > w[1]) {
                let seg = &mut in_list[b..e];
                seg.sort_unstable_by_key(|&r| (std::cmp::Reverse(from[r as usize]), r));
                for (i, &r) in seg.iter().enumerate() {
                    in_from[b + i] = from[r as usize];
                }
            }
        }
        PairIndex { from, to, in_start, in_list, in_from, out_count }
    }
}

/// Control-flow parents whose subgraphs may not run (a branch not taken, a loop body run zero
/// times). A pair that ends in such a graph may be skipped at run time, so it never serves to
/// imply another pair; pairs inside are still dropped when unconditional order implies them.
pub const CONDITIONAL_PARENTS: &[&str] =
    &["If", "StatelessIf", "_If", "Case", "StatelessCase", "_Case", "While", "StatelessWhile", "_While", "For"];

/// Per point: whether its node lies under a conditional parent; `None` when no point does.
pub(super) fn conditional_points(st: &SyncState<'_>, pts: &Points) -> Option<Vec<bool>> {
    let model = st.model;
    let is_cond = |p: NodeId| CONDITIONAL_PARENTS.contains(&model.nodes[p].op_type.as_str());
    if !model.graphs.iter().any(|g| g.parent.is_some_and(is_cond)) {
        return None;
    }
    let mut cond_graph = vec![false; model.graphs.len()];
    for g in model.all_graphs() {
        if let Some(p) = model.graphs[g].parent {
            cond_graph[g.index()] = cond_graph[model.nodes[p].graph.index()] || is_cond(p);
        }
    }
    let mut out = vec![false; pts.len()];
    for (i, &n) in st.order.iter().enumerate() {
        let c = cond_graph[model.nodes[n].graph.index()];
        for o in &mut out[pts.start[i] as usize..pts.start[i + 1] as usize] {
            *o = c;
        }
    }
    Some(out)
}

/// Whether either end of a pair lies under a conditional parent.
#[inline]
pub(super) fn either_conditional(cond: &Option<Vec<bool>>, u: usize, p: usize) -> bool {
    cond.as_ref().is_some_and(|c| c[u] || c[p])
}

/// Drops every pair implied by stream order and the other kept pairs. Returns the number dropped.
pub fn reduce_exact(st: &mut SyncState<'_>) -> usize {
    reduce_exact_with(st, st.stream_count as usize <= DENSE_MAX_STREAMS)
}

/// [`reduce_exact`] with dense clocks or sparse ones.
pub(super) fn reduce_exact_with(st: &mut SyncState<'_>, dense: bool) -> usize {
    let pts = Points::build(st);
    let idx = PairIndex::build(st, &pts);
    let cond = conditional_points(st, &pts);
    let drop = if dense {
        let mut clocks = DenseClocks::new(pts.stream_count, pts.len());
        redundant(&pts, &idx, &cond, &mut clocks)
    } else {
        let mut clocks = Clocks::new(pts.stream_count, pts.len());
        // A stream is asked about only for pairs it sends, up to their latest receiving point.
        let mut last_query = vec![0u32; pts.stream_count];
        for (&f, &t) in idx.from.iter().zip(&idx.to) {
            if f != NONE && t != NONE {
                let q = &mut last_query[pts.stream[f as usize] as usize];
                *q = (*q).max(t);
            }
        }
        clocks.forget_after(last_query);
        redundant(&pts, &idx, &cond, &mut clocks)
    };
    for &r in &drop {
        st.remove(r);
    }
    drop.len()
}

/// The sweep: the raw ids of the pairs that stream order and the pairs kept before imply.
fn redundant(pts: &Points, idx: &PairIndex, cond: &Option<Vec<bool>>, clocks: &mut impl ClockTable) -> Vec<u32> {
    let mut drop = Vec::new();
    for p in 0..pts.len() {
        clocks.at(p as u32);
        let s = pts.stream[p] as usize;
        let (b, e) = (idx.in_start[p] as usize, idx.in_start[p + 1] as usize);
        for (&r, &u) in idx.in_list[b..e].iter().zip(&idx.in_from[b..e]) {
            if u as usize >= p {
                // Not forward in execution order: cannot be implied; the checker reports it.
                continue;
            }
            let (t, seq) = (pts.stream[u as usize] as usize, pts.seq[u as usize]);
            if clocks.covers(s, t, seq) {
                drop.push(r);
            } else if !either_conditional(cond, u as usize, p) {
                clocks.merge(s, u, t, seq);
            }
            clocks.release(u);
        }
        clocks.advance(s, pts.seq[p]);
        clocks.record(s, p as u32, idx.out_count[p]);
    }
    drop
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::synth::{Family, Rng, generate};
    use crate::graph::{IdVec, StreamId, SyncKind};

    /// Dense and sparse clocks drop the same pairs, on the synthetic families with random
    /// streams (below and at the dense limit, where some streams send nothing for long
    /// stretches and the sparse clocks forget them) and on each family's `min-streams` result.
    #[test]
    fn dense_clocks_drop_what_sparse_clocks_drop() {
        let families = [
            Family::Layered { width: 8 },
            Family::Inception,
            Family::Random { window: None },
            Family::Random { window: Some(32) },
            Family::Transformer,
        ];
        let mut checked = 0;
        for family in families {
            let model = generate(family, 3000, 7).expect("valid");
            for streams in [2u64, 7, 64] {
                let mut rng = Rng::new(streams);
                let stream: IdVec<NodeId, Option<StreamId>> =
                    (0..model.nodes.len()).map(|_| Some(StreamId(rng.below(streams) as u32))).collect();
                let attached = IdVec::filled(model.nodes.len(), Vec::new());
                let mut st = SyncState::new(&model, stream, attached, SyncKind::Event);
                st.contract = true;
                super::super::insert::insert_sync_events(&mut st).expect("insertion succeeds");
                let (mut dense, mut sparse) = (st.clone(), st.clone());
                let dropped = reduce_exact_with(&mut dense, true);
                assert_eq!(dropped, reduce_exact_with(&mut sparse, false), "{} on {streams}", family.name());
                assert!(dropped > 0, "{} on {streams}: the reduction drops pairs", family.name());
                assert_eq!(dense.syncs, sparse.syncs, "{} on {streams}", family.name());
                checked += 1;
            }
        }
        assert_eq!(checked, 15);
    }
}
