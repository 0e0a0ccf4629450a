//! Tensor lifetimes of an allocation (allocation-json.md rule 8).
//!
//! A tensor is one output port of a node with `out_bytes` > 0 that is not a view. It lives
//! from its producer until every reader is done; a view (`alias_input`) owns nothing and
//! hands its own readers to the tensor it aliases, transitively. Readers are the nodes that
//! run a device task on a stream ("bearing" nodes): nodes with `tasks: 0` or no stream are
//! transparent, and a tensor whose producer is transparent (Data, Const) exists from the
//! start. A tensor read by `NetOutput` is a graph output and lives until the end.
//!
//! Two tensors may share bytes only when one is *ordered before* the other: its producer and
//! every reader happen strictly before the other's producer, under stream order plus syncs
//! ([`Hb`], the checker's happens-before, taken conservatively: only syncs whose two ends are
//! main streams, only forward in execution order).

use crate::compile::Allocation;
use crate::graph::csr::Csr;
use crate::graph::{IdVec, Model, NodeId, ViewWalk};

/// One output tensor that owns memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tensor {
    pub node: NodeId,
    pub port: u32,
    pub bytes: u64,
}

/// Whether any node of the model sizes its outputs: only then is there a memory plan.
pub fn has_memory_facts(model: &Model) -> bool {
    model.nodes.iter().any(|n| n.out_bytes.is_some())
}

/// The graph-level half of lifetimes: which tensors own memory and who reads them. Needs only
/// which nodes run on a stream, so the simulator's trace can use it too.
#[derive(Clone, Debug)]
pub struct Tensors {
    /// Tensors in execution order of their producer, then by port.
    pub list: Vec<Tensor>,
    /// Bearing readers of each tensor through views, in execution order, without repeats.
    pub readers: Vec<Vec<NodeId>>,
    /// A `NetOutput` reads the tensor (through views): it lives until the end.
    pub until_end: Vec<bool>,
    /// The producer is bearing; otherwise the tensor exists from the start.
    pub produced: Vec<bool>,
    /// Position of every node in execution order.
    pub pos: IdVec<NodeId, u32>,
}

impl Tensors {
    /// Tensors of `model` in execution order `order`, with `on_stream` telling which nodes
    /// run on a stream.
    pub fn of(model: &Model, order: &[NodeId], on_stream: impl Fn(NodeId) -> bool) -> Tensors {
        let mut pos = IdVec::filled(model.nodes.len(), 0u32);
        for (i, &n) in order.iter().enumerate() {
            pos[n] = i as u32;
        }
        let bearing = |n: NodeId| model.nodes[n].tasks > 0 && on_stream(n);
        let mut t = Tensors { list: Vec::new(), readers: Vec::new(), until_end: Vec::new(), produced: Vec::new(), pos };
        let mut walk = ViewWalk::default();
        for (n, port, bytes) in model.own_outputs(order) {
            let mut readers = Vec::new();
            let until_end = walk.readers(model, n, port, |d| {
                if bearing(d) {
                    readers.push(d);
                }
            });
            readers.sort_by_key(|&r| (t.pos[r], r));
            readers.dedup();
            t.list.push(Tensor { node: n, port, bytes });
            t.readers.push(readers);
            t.until_end.push(until_end);
            t.produced.push(bearing(n));
        }
        t
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// Happens-before of an allocation's nodes: stream order (execution order on each physical
/// stream) plus syncs, as vector clocks. A node's clock is the one of the last node on its
/// stream that a sync reaches (all zeros before the first), its own stream's entry its own
/// count; so only the nodes a sync reaches keep a row. Memory: one row of `streams` counters per
/// node that waits on a sync, not per node (a 200,000-node chain that the task limit splits
/// into 202 streams keeps 202 rows, not 200,000).
#[derive(Clone, Debug)]
pub struct Hb {
    pub streams: usize,
    /// `(stream, seq)` of each node on a stream; `seq` counts from 1 in stream order.
    pub at: IdVec<NodeId, Option<(u32, u32)>>,
    /// Clock row of each node on a stream.
    row: IdVec<NodeId, u32>,
    /// `clocks[row * streams + s]`: how many nodes of stream `s` happen before or at the node
    /// (at the last node of its stream that a sync reached); row 0 is all zeros. A row's entry
    /// for the node's own stream is not read: [`Clock`] holds it.
    clocks: Vec<u32>,
}

/// A node's vector clock: how many nodes of each stream happen before or at it.
#[derive(Clone, Copy, Debug)]
pub struct Clock<'a> {
    row: &'a [u32],
    own: usize,
    seq: u32,
}

impl Clock<'_> {
    /// The entry of stream `s`.
    #[inline]
    pub fn get(&self, s: usize) -> u32 {
        if s == self.own { self.seq } else { self.row[s] }
    }

    /// Every entry, by stream.
    pub fn entries(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.row.len()).map(|s| self.get(s))
    }
}

impl Hb {
    pub fn of(model: &Model, alloc: &Allocation) -> Hb {
        let nn = model.nodes.len();
        let streams = alloc.stream().iter().flatten().map(|s| s.index() + 1).max().unwrap_or(0);
        let order = alloc.order(model);
        let mut pos = IdVec::filled(nn, u32::MAX);
        for (i, &n) in order.iter().enumerate() {
            pos[n] = i as u32;
        }
        // Syncs between main streams that go forward in execution order; a sync with an
        // attached end, or a loop-carried one, orders nothing here (fewer facts: safe).
        let arcs = alloc
            .syncs()
            .iter()
            .enumerate()
            // An end the split put on a Send/Recv node away from its node (`end_via`) is left
            // out with its sync: fewer facts, still safe.
            .filter(|&(k, p)| {
                p.from.attached.is_none()
                    && p.to.attached.is_none()
                    && alloc.end_via(k, false).is_none()
                    && alloc.end_via(k, true).is_none()
            })
            .map(|(_, p)| p)
            .map(|p| (p.to.node, p.from.node))
            .filter(|&(t, f)| {
                pos[f] < pos[t] && matches!((alloc.stream()[f], alloc.stream()[t]), (Some(a), Some(b)) if a != b)
            });
        let incoming: Csr<NodeId, NodeId> = Csr::group(nn, arcs);
        let mut at: IdVec<NodeId, Option<(u32, u32)>> = IdVec::filled(nn, None);
        let mut row = IdVec::filled(nn, u32::MAX);
        let mut clocks: Vec<u32> = vec![0; streams];
        // The row each stream's next node starts from.
        let mut last = vec![0u32; streams];
        let mut seq = vec![0u32; streams];
        let mut rows = 1u32;
        for &n in order.iter() {
            let Some(s) = alloc.stream()[n] else { continue };
            let s = s.index();
            seq[s] += 1;
            at[n] = Some((s as u32, seq[s]));
            let from = incoming.of(n);
            if from.is_empty() {
                row[n] = last[s];
                continue;
            }
            let base = clocks.len();
            let r = last[s] as usize * streams;
            clocks.extend_from_within(r..r + streams);
            for &f in from {
                let (fs, fq) = at[f].expect("a sync's source runs on a stream");
                let fr = row[f] as usize * streams;
                for k in 0..streams {
                    let v = if k == fs as usize { fq } else { clocks[fr + k] };
                    if v > clocks[base + k] {
                        clocks[base + k] = v;
                    }
                }
            }
            row[n] = rows;
            last[s] = rows;
            rows += 1;
        }
        Hb { streams, at, row, clocks }
    }

    /// The clock of a node on a stream.
    pub fn clock(&self, n: NodeId) -> Option<Clock<'_>> {
        let (s, seq) = self.at[n]?;
        let r = self.row[n] as usize * self.streams;
        Some(Clock { row: &self.clocks[r..r + self.streams], own: s as usize, seq })
    }

    /// `x` happens strictly before `y` (both on streams, `x != y`).
    pub fn before(&self, x: NodeId, y: NodeId) -> bool {
        if x == y {
            return false;
        }
        match (self.at[x], self.clock(y)) {
            (Some((s, q)), Some(c)) => c.get(s as usize) >= q,
            _ => false,
        }
    }
}

/// Lifetimes of an allocation's tensors under its happens-before.
#[derive(Clone, Debug)]
pub struct Lifetimes {
    pub tensors: Tensors,
    pub hb: Hb,
    /// Per tensor, `(stream, seq)` of its last use on every stream its producer or a reader
    /// runs on, by stream: the tensor is dead for a node whose clock covers all of them.
    pub footprint: Vec<Vec<(u32, u32)>>,
    /// Readers that no other reader follows in happens-before (the "last users").
    pub last_users: Vec<Vec<NodeId>>,
}

impl Lifetimes {
    pub fn of(model: &Model, alloc: &Allocation) -> Lifetimes {
        let tensors = Tensors::of(model, &alloc.order(model), |n| alloc.stream()[n].is_some());
        let hb = Hb::of(model, alloc);
        let mut footprint = Vec::with_capacity(tensors.len());
        let mut last_users = Vec::with_capacity(tensors.len());
        for (i, t) in tensors.list.iter().enumerate() {
            let mut f: Vec<(u32, u32)> = Vec::new();
            let users = tensors.readers[i].iter().copied();
            for n in users.chain(tensors.produced[i].then_some(t.node)) {
                if let Some((s, q)) = hb.at[n] {
                    match f.iter_mut().find(|(x, _)| *x == s) {
                        Some(e) => e.1 = e.1.max(q),
                        None => f.push((s, q)),
                    }
                }
            }
            f.sort_unstable();
            footprint.push(f);
            let rs = &tensors.readers[i];
            last_users.push(rs.iter().copied().filter(|&r| !rs.iter().any(|&r2| hb.before(r, r2))).collect());
        }
        Lifetimes { tensors, hb, footprint, last_users }
    }

    /// The clock just before tensor `b`'s producer runs (its own stream one step back), or
    /// `None` when `b` exists from the start.
    pub fn start_clock(&self, b: usize) -> Option<Clock<'_>> {
        if !self.tensors.produced[b] {
            return None;
        }
        let mut c = self.hb.clock(self.tensors.list[b].node)?;
        c.seq -= 1;
        Some(c)
    }

    /// Tensor `a` is dead before tensor `b` is produced: `a`'s producer and readers all
    /// happen strictly before `b`'s producer.
    pub fn ordered(&self, a: usize, b: usize) -> bool {
        if self.tensors.until_end[a] {
            return false;
        }
        let Some(c) = self.start_clock(b) else { return false };
        self.footprint[a].iter().all(|&(s, q)| q <= c.get(s as usize))
    }

    /// The two tensors may share bytes.
    pub fn disjoint(&self, a: usize, b: usize) -> bool {
        self.ordered(a, b) || self.ordered(b, a)
    }
}
