//! Sync insertion (ge-compiler.md §6.2, §6.4): one pair per cross-stream dependency.

use std::collections::BTreeMap;

use super::{NodeFacts, SyncState};
use crate::compile::allocation::SyncEnd;
use crate::error::Result;
use crate::graph::{EdgeKind, GraphId, Model, NodeId, StreamId, tasks};
use crate::{bail, err};

/// GE's FFTS subgraph attributes: such nodes (and everything nested under them) get no events.
pub fn is_ffts(model: &Model, n: NodeId) -> bool {
    let ga = &model.nodes[n].ge_attrs;
    ga.contains("_ffts_sub_graph") || ga.contains("_ffts_plus_sub_graph")
}

/// Per graph: whether it is nested (at any depth) under an FFTS node.
fn ffts_graphs(model: &Model) -> Vec<bool> {
    let mut out = vec![false; model.graphs.len()];
    if model.graphs.len() == 1 {
        return out;
    }
    for g in model.all_graphs() {
        if let Some(p) = model.graphs[g].parent {
            out[g.index()] = out[model.nodes[p].graph.index()] || is_ffts(model, p);
        }
    }
    out
}

/// Whether a node is an FFTS node or lies under one.
fn under_ffts(st: &SyncState<'_>, ffts: &[bool], n: NodeId) -> bool {
    let model = st.model;
    (ffts.len() > 1 && ffts[model.nodes[n].graph.index()])
        || (st.facts.has(n, NodeFacts::GE_ATTRS) && is_ffts(model, n))
}

/// GE's `SetActiveStreamsByLabel` maps that insertion and `OptimizeByStreamActivate` read.
#[derive(Clone, Debug, Default)]
pub struct ActivationMaps {
    /// `specific_activated_labels`: label → active nodes that activate it.
    pub label_activators: BTreeMap<String, Vec<NodeId>>,
    /// `specific_activated_streams_nodes_map`: stream → active nodes that activate it.
    pub stream_activators: BTreeMap<StreamId, Vec<NodeId>>,
}

impl ActivationMaps {
    pub fn build(st: &SyncState<'_>) -> Self {
        let model = st.model;
        let mut maps = ActivationMaps::default();
        if !st.facts.any(NodeFacts::ACTIVE_LABELS) {
            return maps;
        }
        let mut labeled: BTreeMap<&str, Vec<StreamId>> = BTreeMap::new();
        if st.facts.any(NodeFacts::LABEL) {
            for &n in st.order.iter().filter(|&&n| st.facts.has(n, NodeFacts::LABEL)) {
                if let (Some(l), Some(s)) = (model.nodes[n].attrs.stream_label.as_deref(), st.stream[n]) {
                    let v = labeled.entry(l).or_default();
                    if !v.contains(&s) {
                        v.push(s);
                    }
                }
            }
        }
        for &n in st.order.iter().filter(|&&n| st.facts.has(n, NodeFacts::ACTIVE_LABELS)) {
            for l in &model.nodes[n].attrs.active_label_list {
                maps.label_activators.entry(l.clone()).or_default().push(n);
                for &s in labeled.get(l.as_str()).map(Vec::as_slice).unwrap_or(&[]) {
                    maps.stream_activators.entry(s).or_default().push(n);
                }
            }
        }
        maps
    }
}

/// GE: `InsertOneEventInTwoNodes`. Adds a pair cur → next unless one of GE's rules says the two
/// are already ordered or never synchronised.
#[inline]
fn insert_one(st: &mut SyncState<'_>, act: &ActivationMaps, cur: NodeId, next: NodeId) -> Result<()> {
    let Some(cur_stream) = st.stream[cur] else { return Ok(()) };
    let next_stream = st.stream[next];
    if next_stream == Some(cur_stream) {
        return Ok(());
    }
    if st.facts.has(cur, NodeFacts::ENTER) && !st.facts.has(next, NodeFacts::STREAM_ACTIVE) {
        return Ok(());
    }
    if next_stream.is_none() || st.facts.has(next, NodeFacts::LABEL) {
        return insert_one_slow(st, act, cur, cur_stream, next);
    }
    st.add(SyncEnd::main(cur), SyncEnd::main(next), false);
    Ok(())
}

/// The rare cases of [`insert_one`]: a receiver without a stream or with a stream label.
#[cold]
fn insert_one_slow(
    st: &mut SyncState<'_>,
    act: &ActivationMaps,
    cur: NodeId,
    cur_stream: StreamId,
    next: NodeId,
) -> Result<()> {
    let model = st.model;
    if st.stream[next].is_none() {
        if model.nodes[next].ge_attrs.contains("_thread_scope_id") {
            return Ok(());
        }
        bail!(
            Failed,
            "stream id of next node '{}' (graph '{}') is invalid (-1) but it depends on '{}' on stream {cur_stream}; \
             every node fed by a node with a stream needs a stream",
            model.nodes[next].name,
            model.graph_label(model.nodes[next].graph),
            model.nodes[cur].name
        );
    }
    if let Some(label) = model.nodes[next].attrs.stream_label.as_deref() {
        let next_graph = model.nodes[next].graph;
        let activated = act.label_activators.get(label).is_some_and(|actives| {
            actives.iter().any(|&a| {
                model.nodes[a].graph == next_graph && st.stream[a] == Some(cur_stream) && st.pos[cur] <= st.pos[a]
            })
        });
        if activated {
            return Ok(());
        }
    }
    st.add(SyncEnd::main(cur), SyncEnd::main(next), false);
    Ok(())
}

/// Outside `compat=ge`, the task-less contraction: a node with no device task (`tasks: 0`:
/// Data, Const, views such as Reshape or Permute, NetOutput) runs nothing, so a dependency
/// `a -> view -> b` needs `a` before `b` and nothing else (allocation-json.md, rules 1 and 8).
/// Such a node is transparent: it sends no sync, and an edge into it stands for edges into its
/// nearest task-bearing consumers. GE (`compat=ge`) syncs every cross-stream edge instead.
///
/// Nodes GE's control-flow rules look at are never transparent, whatever their tasks, so those
/// rules see the same nodes as in GE: Enter/RefEnter (no sync into a loop, activation orders
/// it), StreamActive, StreamSwitch, stream labels and activation lists, loop activation,
/// subgraph owners and `_subgraph_end_node`. Nor is a node that runs tasks all the same: on an
/// attached stream, or by `_node_sqe_num` / `_hccl_task_num` (the split's counts). Syncs GE places for reasons other than an edge
/// stay as they are: `CoverAllStreamByNetoutput` (the model's end waits for every attached
/// stream, so the NetOutput keeps them), attached value dependencies and the loop's events.
pub struct Contraction {
    transparent: Vec<bool>,
    /// Nearest task-bearing consumers (forward) and producers (backward) of transparent nodes,
    /// in execution order, filled on demand: where each closure lies in `arena` (`UNFILLED`:
    /// not yet; producers sized on first use, only nested graphs ask for them).
    consumers: Vec<(u32, u32)>,
    producers: Vec<(u32, u32)>,
    arena: Vec<NodeId>,
    /// Scratch lists of [`Contraction::fill`], kept between calls.
    stack: Vec<(NodeId, bool)>,
    ys: Vec<NodeId>,
    closure: Vec<NodeId>,
}

const UNFILLED: (u32, u32) = (u32::MAX, 0);

impl Contraction {
    /// Facts that keep a node out of the contraction (see [`Contraction`]).
    const OPAQUE: u16 = NodeFacts::ENTER
        | NodeFacts::STREAM_ACTIVE
        | NodeFacts::STREAM_SWITCH
        | NodeFacts::LABEL
        | NodeFacts::ACTIVE_LABELS
        | NodeFacts::LOOP_ACTIVE;

    /// Whether node `n`, whose other [`NodeFacts`] are `facts`, is transparent whenever it has
    /// no attached stream: the model's half of the rule ([`NodeFacts::CONTRACTIBLE`]).
    pub(super) fn contractible(model: &Model, n: NodeId, facts: u16) -> bool {
        let node = &model.nodes[n];
        node.tasks == 0
            && node.subgraphs.is_empty()
            && facts & Self::OPAQUE == 0
            && !(facts & NodeFacts::GE_ATTRS != 0
                && (node.ge_attrs.flag("_subgraph_end_node")
                    || tasks::main_task_count(model, n).map_or(true, |t| t > 0)))
    }

    pub fn new(st: &SyncState<'_>) -> Self {
        let transparent: Vec<bool> =
            st.attached.enumerate().map(|(n, a)| a.is_empty() && st.facts.has(n, NodeFacts::CONTRACTIBLE)).collect();
        let n = transparent.len();
        Contraction {
            transparent,
            consumers: vec![UNFILLED; n],
            producers: Vec::new(),
            arena: Vec::new(),
            stack: Vec::new(),
            ys: Vec::new(),
            closure: Vec::new(),
        }
    }

    #[inline]
    pub fn is_transparent(&self, n: NodeId) -> bool {
        self.transparent[n.index()]
    }

    /// `n` itself, or the nearest task-bearing nodes it feeds (`forward`) or is fed by.
    fn expand(&mut self, st: &SyncState<'_>, n: NodeId, forward: bool, out: &mut Vec<NodeId>) {
        if !self.is_transparent(n) {
            out.push(n);
            return;
        }
        self.fill(st, n, forward);
        let (at, len) = if forward { self.consumers[n.index()] } else { self.producers[n.index()] };
        out.extend_from_slice(&self.arena[at as usize..(at + len) as usize]);
    }

    /// The nodes `x` feeds (`forward`) or is fed by, into `out`.
    fn neighbours(st: &SyncState<'_>, x: NodeId, forward: bool, out: &mut Vec<NodeId>) {
        out.clear();
        if forward {
            out.extend_from_slice(st.succ.of(x));
        } else {
            out.extend(st.model.in_edges(x).map(|e| e.src));
        }
    }

    /// Memoises the closure of transparent node `t`: a post-order walk through transparent
    /// nodes (iterative: chains of views may be long). A closure is a set, sorted by execution
    /// position, so the order neighbours come in does not matter.
    fn fill(&mut self, st: &SyncState<'_>, t: NodeId, forward: bool) {
        if !forward && self.producers.is_empty() {
            self.producers = vec![UNFILLED; self.transparent.len()];
        }
        let mut stack = std::mem::take(&mut self.stack);
        let mut ys = std::mem::take(&mut self.ys);
        let mut v = std::mem::take(&mut self.closure);
        stack.clear();
        stack.push((t, false));
        while let Some((x, expanded)) = stack.pop() {
            let memo = if forward { &self.consumers } else { &self.producers };
            if memo[x.index()] != UNFILLED {
                continue;
            }
            Self::neighbours(st, x, forward, &mut ys);
            if !expanded {
                stack.push((x, true));
                stack.extend(ys.iter().filter(|&&y| self.transparent[y.index()]).map(|&y| (y, false)));
                continue;
            }
            v.clear();
            for &y in &ys {
                if self.transparent[y.index()] {
                    let (at, len) = memo[y.index()];
                    if at != u32::MAX {
                        v.extend_from_slice(&self.arena[at as usize..(at + len) as usize]);
                    }
                } else if y != x {
                    v.push(y);
                }
            }
            v.sort_unstable_by_key(|&y| (st.pos[y], y));
            v.dedup();
            let at = self.arena.len() as u32;
            self.arena.extend_from_slice(&v);
            let memo = if forward { &mut self.consumers } else { &mut self.producers };
            memo[x.index()] = (at, v.len() as u32);
        }
        (self.stack, self.ys, self.closure) = (stack, ys, v);
    }
}

/// The default mode's insertion on the contracted graph: for every task-bearing node with a
/// stream, one pair per task-bearing node it reaches by an edge or through transparent nodes
/// (data edges first, then control, as GE walks them), under the same rules as GE's.
fn insert_contracted(
    st: &mut SyncState<'_>,
    act: &ActivationMaps,
    ffts: &[bool],
    c: &mut Contraction,
    order: &[NodeId],
) -> Result<()> {
    let model = st.model;
    let mut stamp = vec![u32::MAX; model.nodes.len()];
    let mut targets: Vec<NodeId> = Vec::new();
    for (i, &cur) in order.iter().enumerate() {
        let Some(cur_stream) = st.stream[cur] else { continue };
        if c.is_transparent(cur) || under_ffts(st, ffts, cur) {
            continue;
        }
        targets.clear();
        for &next in st.succ.of(cur) {
            c.expand(st, next, true, &mut targets);
        }
        // `insert_one`, its common case inlined: a receiver on another stream, with no stream
        // label, from a sender that is no Enter.
        let enter = st.facts.has(cur, NodeFacts::ENTER);
        for &next in &targets {
            if stamp[next.index()] == i as u32 {
                continue;
            }
            stamp[next.index()] = i as u32;
            let next_stream = st.stream[next];
            if next_stream == Some(cur_stream) {
                continue;
            }
            if enter || next_stream.is_none() || st.facts.has(next, NodeFacts::LABEL) {
                insert_one(st, act, cur, next)?;
                continue;
            }
            st.add(SyncEnd::main(cur), SyncEnd::main(next), false);
        }
    }
    Ok(())
}

/// GE: `InsertSyncEvents` then `InsertEventsForSubgraph`. Every data and control edge between two
/// streams gets one pair; nested graphs' input-less nodes wait on their parent's producers and
/// their `_subgraph_end_node` signals the parent's consumers. With [`SyncState::contract`],
/// on the contracted graph ([`Contraction`]).
pub fn insert_sync_events(st: &mut SyncState<'_>) -> Result<()> {
    let act = ActivationMaps::build(st);
    let ffts = ffts_graphs(st.model);
    if st.contract {
        let mut c = Contraction::new(st);
        let order = std::mem::take(&mut st.order);
        let result = insert_contracted(st, &act, &ffts, &mut c, &order);
        st.order = order;
        result?;
        return insert_events_for_subgraph(st, &act, &ffts, Some(&mut c));
    }
    insert_edge_events_with(st, &act, &ffts)?;
    insert_events_for_subgraph(st, &act, &ffts, None)
}

/// GE: `InsertOneEventInTwoNodes` for every out data edge, then every out control edge, of
/// every node in execution order: the edge walk of `InsertSyncEvents` without the subgraph
/// events.
pub fn insert_edge_events(st: &mut SyncState<'_>) -> Result<()> {
    let act = ActivationMaps::build(st);
    let ffts = ffts_graphs(st.model);
    insert_edge_events_with(st, &act, &ffts)
}

/// GE: `InsertEventsForSubgraph` on its own.
pub fn insert_subgraph_events(st: &mut SyncState<'_>) -> Result<()> {
    let act = ActivationMaps::build(st);
    let ffts = ffts_graphs(st.model);
    insert_events_for_subgraph(st, &act, &ffts, None)
}

fn insert_edge_events_with(st: &mut SyncState<'_>, act: &ActivationMaps, ffts: &[bool]) -> Result<()> {
    let model = st.model;
    let order = std::mem::take(&mut st.order);
    let result = (|| -> Result<()> {
        for &cur in &order {
            if st.stream[cur].is_none() || under_ffts(st, ffts, cur) {
                continue;
            }
            // GE walks out data anchors before out control anchors.
            let out = model.adjacency.out_edges(cur);
            let mut has_control = false;
            // `insert_one` for data edges, its common case inlined: a receiver with a stream
            // and no stream label.
            let cur_stream = st.stream[cur];
            let enter = st.facts.has(cur, NodeFacts::ENTER);
            for &e in out {
                let edge = &model.edges[e];
                if edge.kind != EdgeKind::Data {
                    has_control = true;
                    continue;
                }
                let next = edge.dst;
                let next_stream = st.stream[next];
                if next_stream == cur_stream || enter {
                    if next_stream != cur_stream {
                        insert_one(st, act, cur, next)?;
                    }
                    continue;
                }
                if next_stream.is_none() || st.facts.has(next, NodeFacts::LABEL) {
                    insert_one(st, act, cur, next)?;
                    continue;
                }
                st.add(SyncEnd::main(cur), SyncEnd::main(next), false);
            }
            if has_control {
                for &e in out {
                    let edge = &model.edges[e];
                    if edge.kind == EdgeKind::Control {
                        insert_one(st, act, cur, edge.dst)?;
                    }
                }
            }
        }
        Ok(())
    })();
    st.order = order;
    result
}

/// GE: `InsertEventsForSubgraph`. With a contraction, a transparent end stands for the
/// task-bearing nodes beyond it: the parent's producers through task-less nodes, the
/// subgraph's first task-bearing nodes, the parent's task-bearing consumers.
fn insert_events_for_subgraph(
    st: &mut SyncState<'_>,
    act: &ActivationMaps,
    ffts: &[bool],
    mut contraction: Option<&mut Contraction>,
) -> Result<()> {
    let model = st.model;
    if model.graphs.len() == 1 {
        return Ok(());
    }
    let mut expand = |st: &SyncState<'_>, n: NodeId, forward: bool| -> Vec<NodeId> {
        let mut v = Vec::new();
        match contraction.as_deref_mut() {
            Some(c) => c.expand(st, n, forward, &mut v),
            None => v.push(n),
        }
        v
    };
    for g in model.all_graphs() {
        let Some(parent) = model.graphs[g].parent else { continue };
        if under_ffts(st, ffts, parent) {
            continue;
        }
        let nodes = model.graphs[g].order.clone();
        for n in nodes {
            if st.stream[n].is_some() && model.adjacency.in_edges(n).is_empty() {
                let ins: Vec<NodeId> = model.in_edges(parent).map(|e| e.src).collect();
                let firsts = expand(st, n, true);
                for i in ins {
                    for src in expand(st, i, false) {
                        for &t in &firsts {
                            insert_one(st, act, src, t)?;
                        }
                    }
                }
            }
            if st.facts.has(n, NodeFacts::GE_ATTRS) && model.nodes[n].ge_attrs.flag("_subgraph_end_node") {
                let outs: Vec<NodeId> = model.out_edges(parent).map(|e| e.dst).collect();
                for o in outs {
                    for t in expand(st, o, true) {
                        insert_one(st, act, n, t)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// The single attached stream of a node, if any; GE refuses more than one in event insertion.
fn single_attached(st: &SyncState<'_>, n: NodeId) -> Result<Option<StreamId>> {
    match st.attached[n].as_slice() {
        [] => Ok(None),
        [s] => Ok(Some(*s)),
        more => Err(err!(
            Failed,
            "node '{}' has {} attached streams; attached-stream event insertion supports one",
            st.model.nodes[n].name,
            more.len()
        )),
    }
}

/// GE: `InsertSyncEventsWithAttachedStream`. A node whose attached-stream request declares
/// value-dependent inputs waits, on its attached stream, for the producers of those inputs.
pub fn insert_attached_value_events(st: &mut SyncState<'_>) -> Result<()> {
    let model = st.model;
    if !st.facts.any(NodeFacts::ATTACHED_DEPS) {
        return Ok(());
    }
    let order: Vec<NodeId> = st.order.iter().copied().filter(|&n| st.facts.has(n, NodeFacts::ATTACHED_DEPS)).collect();
    for &n in &order {
        let node = &model.nodes[n];
        if node.ge_attrs.flag("_disable_attached_resource") {
            continue;
        }
        let deps: Vec<u32> =
            node.attrs.attached_streams.iter().flat_map(|a| a.depend_value_inputs.iter().copied()).collect();
        if deps.is_empty() {
            continue;
        }
        let to_att = single_attached(st, n)?;
        for input in deps {
            let producers: Vec<NodeId> =
                model.in_edges(n).filter(|e| e.kind == EdgeKind::Data && e.dst_port == input).map(|e| e.src).collect();
            for p in producers {
                if model.nodes[p].is_data_like() {
                    continue;
                }
                let from_att = single_attached(st, p)?;
                if from_att.is_some() && from_att == to_att {
                    continue;
                }
                let from = SyncEnd { node: p, attached: from_att };
                let to = SyncEnd { node: n, attached: to_att };
                match (st.end_stream(from), st.end_stream(to)) {
                    (Some(a), Some(b)) if a != b => {
                        st.add(from, to, true);
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

/// GE: `CoverAllStreamByNetoutput`. The last node of every attached stream signals its graph's
/// NetOutput, so the model's end waits for every attached stream.
pub fn cover_all_stream_by_netoutput(st: &mut SyncState<'_>) {
    let model = st.model;
    if !st.has_attached {
        return;
    }
    let mut last: BTreeMap<StreamId, NodeId> = BTreeMap::new();
    for &n in &st.order {
        for &a in &st.attached[n] {
            last.insert(a, n);
        }
    }
    let mut netoutput: BTreeMap<GraphId, NodeId> = BTreeMap::new();
    for &n in &st.order {
        if st.facts.has(n, NodeFacts::NET_OUTPUT) {
            netoutput.entry(model.nodes[n].graph).or_insert(n);
        }
    }
    for (a, n) in last {
        let Some(&out) = netoutput.get(&model.nodes[n].graph) else { continue };
        let Some(out_stream) = st.stream[out] else { continue };
        if out_stream == a || st.pos[n] >= st.pos[out] {
            continue;
        }
        st.add(SyncEnd { node: n, attached: Some(a) }, SyncEnd::main(out), true);
    }
}

/// GE: `FindSwitchNodeBeforeLoopActiveNode`. The StreamSwitch among the loop active node's
/// control inputs, or among their control inputs (two hops at most).
pub fn switch_before_loop_active(model: &Model, active: NodeId) -> Option<NodeId> {
    let control_in = |n: NodeId| model.in_edges(n).filter(|e| e.kind == EdgeKind::Control).map(|e| e.src);
    for i in control_in(active) {
        if model.nodes[i].op_type == "StreamSwitch" {
            return Some(i);
        }
        if let Some(p) = control_in(i).find(|&p| model.nodes[p].op_type == "StreamSwitch") {
            return Some(p);
        }
    }
    None
}

/// GE: the events of `SetActiveStreamsForLoop`. `loops` holds each `is_loop_active` node with
/// the streams it activates (every stream nobody activates specifically), in execution order.
/// The first loop active node without an `_active_label_list` gets them: the last node of each
/// of its streams signals the StreamSwitch before it, so the next iteration's switch waits for
/// this iteration to drain. Streams that contain a StreamSwitch (their last node may not run)
/// and streams whose last node lies in a subgraph are skipped. The pairs run backwards in
/// execution order: they order iteration i's record before iteration i + 1's wait, and no
/// optimisation or id reuse may touch them. Returns the raw ids added.
pub fn insert_loop_events(st: &mut SyncState<'_>, loops: &[(NodeId, Vec<StreamId>)]) -> Result<Vec<u32>> {
    let model = st.model;
    let mut added = Vec::new();
    for (active, streams) in loops {
        let node = &model.nodes[*active];
        let Some(switch) = switch_before_loop_active(model, *active) else {
            bail!(
                Failed,
                "cannot find the StreamSwitch before loop active node '{}' (graph '{}'): an is_loop_active \
                 StreamActive needs a StreamSwitch among its control inputs, at most two hops up",
                node.name,
                model.graph_label(node.graph)
            );
        };
        if !node.attrs.active_label_list.is_empty() {
            continue;
        }
        if st.stream[switch].is_none() {
            break;
        }
        let mut wanted = vec![false; st.stream_count as usize];
        for s in streams {
            if let Some(w) = wanted.get_mut(s.index()) {
                *w = true;
            }
        }
        let mut last: BTreeMap<StreamId, NodeId> = BTreeMap::new();
        let mut has_switch = vec![false; st.stream_count as usize];
        for &n in &st.order {
            let Some(s) = st.stream[n].filter(|s| wanted[s.index()]) else { continue };
            last.insert(s, n);
            if model.nodes[n].op_type == "StreamSwitch" {
                has_switch[s.index()] = true;
            }
        }
        for (s, n) in last {
            if has_switch[s.index()] || model.nodes[n].graph != GraphId::ROOT || st.stream[switch] == Some(s) {
                continue;
            }
            added.push(st.add(SyncEnd::main(n), SyncEnd::main(switch), false));
        }
        break;
    }
    Ok(added)
}
