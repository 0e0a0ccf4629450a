//! Stream activation (ge-compiler.md §6.1, §7): which streams each StreamActive / StreamSwitch
//! starts, before the physical split on logical ids ([`assign_logical`]) and after it on
//! physical ids ([`update_after_split`]).
//!
//! Lists live in `Allocation::activations` (model nodes) and `Allocation::inserted_activations`
//! (StreamActive nodes this stage inserts after a StreamSwitch). Before the split they hold
//! logical stream ids; after it, physical ones (the first piece of a split stream keeps the
//! logical id, so only the new pieces are appended).

use std::collections::{BTreeMap, BTreeSet};

use super::allocation::{Allocation, InsertedKind, InsertedNode, Naming};
use crate::bail;
use crate::error::Result;
use crate::graph::{GraphId, InsertedId, Model, NodeId, StreamId};

/// `subgraph_first_active`: the node that starts a subgraph's streams; never a split point.
pub const SUBGRAPH_FIRST_ACTIVE: &str = "subgraph_first_active";
/// `is_loop_active`: the StreamActive of a training loop.
pub const IS_LOOP_ACTIVE: &str = "is_loop_active";

/// One stream id past every stream the allocation uses (main, attached, created).
pub fn stream_space(model: &Model, alloc: &Allocation) -> u32 {
    let mut n = alloc.logical_count + alloc.attached_count;
    for id in model.nodes.ids() {
        if let Some(s) = alloc.logical_stream[id] {
            n = n.max(s.0 + 1);
        }
        for a in &alloc.attached[id] {
            n = n.max(a.0 + 1);
        }
    }
    for ins in &alloc.inserted {
        n = n.max(ins.logical_stream.0 + 1);
    }
    n
}

/// Activation lists on logical streams: `SetActiveStreamsByLabel`, `SetActiveStreamsForSubgraphs`,
/// `UpdateStreamSwitchByLogicStream` (StreamActive nodes inserted after switches whose label
/// maps to several streams, each on a new stream) and `SetActiveStreamsForLoop`.
///
/// Returns the stream id space after the streams created for inserted StreamActive nodes.
/// The loop's events (last node of each activated stream → the loop's StreamSwitch) belong to
/// sync insertion and are not added here.
pub fn assign_logical(model: &Model, alloc: &mut Allocation) -> Result<u32> {
    let mut st = Activation::new(model, alloc, None);
    st.by_label(model, alloc)?;
    st.for_subgraphs(model, alloc);
    st.stream_switch(model, alloc)?;
    st.for_loop(model, alloc);
    Ok(st.store(model, alloc))
}

/// GE's activation maps between the steps of [`assign_logical`], so that each step can also run
/// on its own (`stream-alloc pass`): the lists by node, `specific_activated_streams` and the
/// next free stream id. The lists live in `Allocation::activations` between calls.
#[derive(Clone, Debug, Default)]
pub struct Activation {
    lists: BTreeMap<NodeId, Vec<StreamId>>,
    /// Streams some node activates specifically (the loop active node takes the others).
    activated: BTreeSet<u32>,
    /// The next stream id a created StreamActive node gets.
    pub space: u32,
}

/// `labeled_streams`: label → streams of the nodes carrying it.
fn labeled_streams<'m>(model: &'m Model, alloc: &Allocation, order: &[NodeId]) -> BTreeMap<&'m str, BTreeSet<u32>> {
    let mut labeled: BTreeMap<&str, BTreeSet<u32>> = BTreeMap::new();
    for &n in order {
        if let (Some(l), Some(s)) = (model.nodes[n].attrs.stream_label.as_deref(), alloc.logical_stream[n]) {
            labeled.entry(l).or_default().insert(s.0);
        }
    }
    labeled
}

fn no_label(node: &crate::graph::Node, label: &str) -> crate::Error {
    crate::err!(
        Failed,
        "node \"{}\" ({}): cannot find stream label \"{}\" of its active_label_list",
        node.name,
        node.op_type,
        label
    )
}

impl Activation {
    /// The maps as `alloc` holds them: its activation lists, the streams they (and inserted
    /// StreamActive nodes) activate, and the first free stream id, at least `next_stream`.
    pub fn new(model: &Model, alloc: &Allocation, next_stream: Option<u32>) -> Self {
        let lists: BTreeMap<NodeId, Vec<StreamId>> = alloc.activations.iter().cloned().collect();
        let activated = lists
            .values()
            .flatten()
            .chain(alloc.inserted_activations.iter().flat_map(|(_, l)| l))
            .map(|s| s.0)
            .collect();
        let space = stream_space(model, alloc).max(next_stream.unwrap_or(0));
        Activation { lists, activated, space }
    }

    /// GE: `SetActiveStreamsByLabel`. Every node with an `_active_label_list` activates the
    /// streams of those labels.
    pub fn by_label(&mut self, model: &Model, alloc: &Allocation) -> Result<()> {
        let order = model.all_nodes();
        let labeled = labeled_streams(model, alloc, &order);
        for &n in &order {
            let node = &model.nodes[n];
            if node.attrs.active_label_list.is_empty() {
                continue;
            }
            let mut set = BTreeSet::new();
            for l in &node.attrs.active_label_list {
                let Some(streams) = labeled.get(l.as_str()) else { return Err(no_label(node, l)) };
                set.extend(streams.iter().copied());
            }
            self.activated.extend(set.iter().copied());
            self.lists.insert(n, set.into_iter().map(StreamId).collect());
        }
        Ok(())
    }

    /// GE: `SetActiveStreamsForSubgraphs`. A subgraph's first active node activates every
    /// stream of the subgraph's unlabelled nodes but its own.
    pub fn for_subgraphs(&mut self, model: &Model, alloc: &Allocation) {
        for g in model.all_graphs().into_iter().filter(|&g| g != GraphId::ROOT) {
            let graph = &model.graphs[g];
            for &a in graph.order.iter().filter(|&&a| model.nodes[a].ge_attrs.flag(SUBGRAPH_FIRST_ACTIVE)) {
                let own = alloc.logical_stream[a];
                let mut set = BTreeSet::new();
                for &n in &graph.order {
                    if model.nodes[n].attrs.stream_label.is_some() {
                        continue;
                    }
                    set.extend(alloc.logical_stream[n].map(|s| s.0));
                    set.extend(alloc.attached[n].iter().map(|s| s.0));
                }
                if let Some(own) = own {
                    set.remove(&own.0);
                }
                let list = self.lists.entry(a).or_default();
                for s in set {
                    if !list.contains(&StreamId(s)) {
                        list.push(StreamId(s));
                    }
                    self.activated.insert(s);
                }
            }
        }
    }

    /// GE: `UpdateStreamSwitchByLogicStream` / `AddActiveNodes`. A StreamSwitch whose label maps
    /// to several streams starts them through a StreamActive node inserted after it, on a new
    /// stream; the switch then activates the new streams.
    pub fn stream_switch(&mut self, model: &Model, alloc: &mut Allocation) -> Result<()> {
        let order = model.all_nodes();
        let labeled = labeled_streams(model, alloc, &order);
        for &n in &order {
            let node = &model.nodes[n];
            if node.op_type != "StreamSwitch" {
                continue;
            }
            let mut created = Vec::new();
            for l in &node.attrs.active_label_list {
                let Some(streams) = labeled.get(l.as_str()) else { return Err(no_label(node, l)) };
                if streams.len() <= 1 {
                    continue;
                }
                let stream = StreamId(self.space);
                self.space += 1;
                self.activated.insert(stream.0);
                alloc.inserted.push(InsertedNode {
                    naming: Naming::Given(format!("{}_StreamActive_{}", node.name, created.len())),
                    kind: InsertedKind::StreamActive,
                    graph: node.graph,
                    stream,
                    logical_stream: stream,
                    anchor: n,
                    before: false,
                    sync_id: None,
                });
                let id = InsertedId::new(alloc.inserted.len() - 1);
                alloc.inserted_activations.push((id, streams.iter().copied().map(StreamId).collect()));
                created.push(stream);
            }
            if !created.is_empty() {
                self.lists.insert(n, created);
            }
        }
        Ok(())
    }

    /// GE: `SetActiveStreamsForLoop`, the lists. The `is_loop_active` node activates every
    /// stream nobody activates specifically, its own excepted.
    pub fn for_loop(&mut self, model: &Model, alloc: &Allocation) {
        for n in model.all_nodes() {
            if !model.nodes[n].ge_attrs.flag(IS_LOOP_ACTIVE) {
                continue;
            }
            let own = alloc.logical_stream[n].map(|s| s.0);
            let list = self.lists.entry(n).or_default();
            for s in (0..self.space).filter(|s| !self.activated.contains(s) && Some(*s) != own) {
                if !list.contains(&StreamId(s)) {
                    list.push(StreamId(s));
                }
            }
        }
    }

    /// Writes the lists into `alloc.activations`, in execution order; returns the stream id space.
    pub fn store(&self, model: &Model, alloc: &mut Allocation) -> u32 {
        let mut lists = self.lists.clone();
        alloc.activations = alloc.order(model).iter().filter_map(|n| lists.remove(n).map(|l| (*n, l))).collect();
        self.space
    }
}

/// The pieces a split added to one logical stream: physical id and the piece's first node.
pub type SplitPieces = Vec<Vec<(StreamId, NodeId)>>;

/// `UpdateActiveStreams` after the split: every list that holds a logical stream gets that
/// stream's new pieces whose first node lives in the activating node's graph; subgraph
/// first-active nodes get the not yet activated pieces of their graph; the loop active node is
/// recomputed over physical streams; then `CheckStreamActived`.
///
/// `pieces[s]` lists the pieces of logical stream `s` beyond the first (which keeps id `s`).
pub fn update_after_split(model: &Model, alloc: &mut Allocation, pieces: &SplitPieces) -> Result<()> {
    let extend = |list: &mut Vec<StreamId>, graph: GraphId| {
        let origin = list.clone();
        for s in origin {
            for &(p, first) in pieces.get(s.index()).map_or(&[][..], Vec::as_slice) {
                if model.nodes[first].graph == graph && !list.contains(&p) {
                    list.push(p);
                }
            }
        }
    };
    for (n, list) in &mut alloc.activations {
        extend(list, model.nodes[*n].graph);
    }
    let inserted = &alloc.inserted;
    for (i, list) in &mut alloc.inserted_activations {
        extend(list, inserted[*i].graph);
    }

    let mut activated: BTreeSet<StreamId> = alloc
        .activations
        .iter()
        .map(|(_, l)| l)
        .chain(alloc.inserted_activations.iter().map(|(_, l)| l))
        .flatten()
        .copied()
        .collect();
    for (n, list) in &mut alloc.activations {
        let node = &model.nodes[*n];
        if !node.ge_attrs.flag(SUBGRAPH_FIRST_ACTIVE) || node.graph == GraphId::ROOT {
            continue;
        }
        let own = alloc.stream[*n];
        for &(p, first) in pieces.iter().flatten() {
            if model.nodes[first].graph == node.graph && !activated.contains(&p) && Some(p) != own {
                list.push(p);
                activated.insert(p);
            }
        }
    }

    loop_after_split(model, alloc);
    check_stream_actived(model, alloc)
}

/// `SetActiveStreamsForLoop` again after the split: the loop active node activates every
/// physical stream no other list holds, its own excepted.
pub fn loop_after_split(model: &Model, alloc: &mut Allocation) {
    let loop_nodes: Vec<usize> = (0..alloc.activations.len())
        .filter(|&i| model.nodes[alloc.activations[i].0].ge_attrs.flag(IS_LOOP_ACTIVE))
        .collect();
    for i in loop_nodes {
        let n = alloc.activations[i].0;
        let others: BTreeSet<StreamId> = alloc
            .activations
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, (_, l))| l)
            .chain(alloc.inserted_activations.iter().map(|(_, l)| l))
            .flatten()
            .copied()
            .collect();
        let own = alloc.stream[n];
        alloc.activations[i].1 =
            (0..alloc.physical_count()).map(StreamId).filter(|s| !others.contains(s) && Some(*s) != own).collect();
    }
}

/// `CheckStreamActived`: a node may not activate the stream it runs on.
pub fn check_stream_actived(model: &Model, alloc: &Allocation) -> Result<()> {
    for (n, list) in &alloc.activations {
        if let Some(own) = alloc.stream[*n].filter(|s| list.contains(s)) {
            bail!(Failed, "node \"{}\" activates its own stream {}", model.nodes[*n].name, own);
        }
    }
    for (i, list) in &alloc.inserted_activations {
        let ins = &alloc.inserted[*i];
        if list.contains(&ins.stream) {
            bail!(Failed, "node \"{}\" activates its own stream {}", ins.name(model), ins.stream);
        }
    }
    Ok(())
}
