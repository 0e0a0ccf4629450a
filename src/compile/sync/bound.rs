//! A lower bound on the sync ids a plan needs with one id per sync, from what every plan of a
//! set shares: the streams of some nodes ("fixed": the streams GE pins, which every policy
//! keeps) and that the other task nodes run on streams none of the fixed ones is ("free": the
//! policy's streams). The event budget checks it before any candidate runs (issue 41): where
//! the bound is over `max_events`, no plan of the set fits with one id per sync.
//!
//! **Requirements.** A requirement is a pair `u → v` of task-bearing nodes (neither of them
//! transparent to the task-less contraction, [`super::insert::Contraction`]) joined by an edge
//! or through transparent nodes, whose streams differ in every plan of the set: both fixed on
//! different streams, or one fixed and one free. Insertion adds a sync for every such pair (the
//! model has none of the control-flow facts under which GE's rules skip one: see
//! [`forced_syncs`]), and the reduction keeps a sync only where the others do not order its
//! ends, so in every plan some kept sync `x → w` has its wait `w` on `v`'s stream at or before
//! `v`, and `u` happening before its record `x`.
//!
//! **Chains.** Let π be the plan's execution order. Streams run their nodes in π, and every kept
//! sync runs forward in π (insertion follows edges, through task-less nodes or into nested
//! graphs, and π is topological), so whatever happens before a node precedes it in π. For
//! requirements `u₁ → v₁` and `u₂ → v₂` where `v₁` reaches `u₂` by edges (or is `u₂`), a
//! sync covering the second has its record at or after `u₂`, so its wait `w` comes after `v₁`
//! in π; a sync covering the first waits at or before `v₁`. One sync cannot cover both. So the
//! requirements of a chain `r₁, r₂, …, r_k` (each `v_i` reaching `u_{i+1}`) need `k` distinct
//! syncs, in every order, however syncs are removed transitively through other streams: the
//! argument looks only at the sync that finally covers each requirement, on whatever path.
//!
//! **Classes.** A sync waits on one stream. Syncs waiting on different fixed streams, or on a
//! fixed stream and a free one, are distinct; so the longest chain of requirements waiting in
//! each fixed stream, plus the longest waiting in free streams (the chain argument needs no
//! common stream), is a lower bound on the kept syncs. With one id per sync every kept sync has
//! an id of its own (the multi-dims numbering shares only ids inside nested graphs' branches),
//! so the bound holds for the ids. It does not hold for ids reused by lifetime, where syncs
//! share ids. O(C·(V + E)) for C classes.

use super::{ModelFacts, NodeFacts};
use crate::graph::csr::Csr;
use crate::graph::{IdVec, Model, NodeId, Shape};

/// Where a node runs in every plan the bound covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Not known, or on no stream: the node is no end of a requirement (paths through it
    /// still order its neighbours).
    Unknown,
    /// On a stream that is none of the fixed ones (two free nodes may share one).
    Free,
    /// On this stream in every plan.
    Fixed(u32),
}

/// The bound: the sync ids one id per sync needs at least, and its parts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ForcedSyncs {
    pub ids: u32,
    /// Per fixed stream with requirements waiting in it: (stream, its longest chain), by stream.
    pub fixed: Vec<(u32, u32)>,
    /// The longest chain of requirements waiting in free streams.
    pub free: u32,
    /// Why the model gives no bound (then `ids` is 0), when it gives none.
    pub none: Option<&'static str>,
}

/// Facts under which GE's sync rules skip a sync for an edge (stream activation, loops, stream
/// switches, Enter) or events run backwards (loop events), and event multiplexing shares ids.
const SKIPPING: u16 = NodeFacts::ENTER
    | NodeFacts::STREAM_ACTIVE
    | NodeFacts::STREAM_SWITCH
    | NodeFacts::ACTIVE_LABELS
    | NodeFacts::LOOP_ACTIVE
    | NodeFacts::MULTIPLEXING;

/// [`ForcedSyncs`] of the plans that put each node where `place` says, with the task-less
/// contraction when `contract` (every mode but `compat=ge`, which syncs every edge). No bound
/// (0, with the reason) on a dynamic root, with attached streams (their syncs are not edges),
/// or with the facts under which GE skips a sync for an edge ([`SKIPPING`]).
pub fn forced_syncs(model: &Model, facts: &ModelFacts, place: &IdVec<NodeId, Place>, contract: bool) -> ForcedSyncs {
    let none = |why| ForcedSyncs { none: Some(why), ..ForcedSyncs::default() };
    if model.root().shape == Shape::Dynamic {
        return none("a dynamic-shape root");
    }
    if facts.nodes.any(SKIPPING) {
        return none("control flow, Enter or event multiplexing");
    }
    if model.nodes.iter().any(|n| !n.attrs.attached_streams.is_empty()) {
        return none("attached streams");
    }
    let root = &model.root().order;
    let opaque = |n: NodeId| !(contract && facts.nodes.has(n, NodeFacts::CONTRACTIBLE));
    // A node sends no requirement under FFTS (GE inserts no events there).
    let ends = |n: NodeId| {
        let ffts = !model.nodes[n].ge_attrs.is_empty() && super::insert::is_ffts(model, n);
        if ffts || !opaque(n) { Place::Unknown } else { place[n] }
    };
    let pred: Csr<NodeId, NodeId> =
        Csr::group(model.nodes.len(), model.root().edges.iter().map(|&e| (model.edges[e].dst, model.edges[e].src)));
    let mut classes: Vec<Place> = root.iter().map(|&n| ends(n)).filter(|p| *p != Place::Unknown).collect();
    classes.sort_unstable_by_key(|p| match p {
        Place::Fixed(s) => u64::from(*s),
        _ => u64::MAX,
    });
    classes.dedup();
    let mut out = ForcedSyncs::default();
    let mut g = IdVec::filled(model.nodes.len(), 0u32);
    let mut carried = IdVec::filled(model.nodes.len(), -1i64);
    for class in classes {
        let chain = longest_chain(root, &pred, class, &ends, &opaque, &mut g, &mut carried);
        if chain == 0 {
            continue;
        }
        out.ids += chain;
        match class {
            Place::Fixed(s) => out.fixed.push((s, chain)),
            _ => out.free = chain,
        }
    }
    out
}

/// The longest chain of requirements waiting in `class` over the root graph in topological
/// `order`: per node, the longest chain whose last wait reaches it (`g`), and per transparent
/// node the longest chain reaching one of its senders (`carried`, -1: none).
fn longest_chain(
    order: &[NodeId],
    pred: &Csr<NodeId, NodeId>,
    class: Place,
    ends: &impl Fn(NodeId) -> Place,
    opaque: &impl Fn(NodeId) -> bool,
    g: &mut IdVec<NodeId, u32>,
    carried: &mut IdVec<NodeId, i64>,
) -> u32 {
    // A sender for `class`: an end whose stream differs from every stream of the class in
    // every plan (free to free may share a stream).
    let sends = |p: Place| match (p, class) {
        (Place::Unknown, _) | (Place::Free, Place::Free) => false,
        (Place::Fixed(a), Place::Fixed(b)) => a != b,
        _ => true,
    };
    let mut best = 0;
    for &x in order {
        let (mut reach, mut sender) = (0u32, -1i64);
        for &p in pred.of(x) {
            reach = reach.max(g[p]);
            let s = if !opaque(p) {
                carried[p]
            } else if sends(ends(p)) {
                i64::from(g[p])
            } else {
                -1
            };
            sender = sender.max(s);
        }
        if !opaque(x) {
            carried[x] = sender;
        } else if sender >= 0 && ends(x) == class {
            reach = reach.max(sender as u32 + 1);
        }
        g[x] = reach;
        best = best.max(reach);
    }
    best
}
