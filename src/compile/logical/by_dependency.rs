//! GE: `AssignByDependencyPass` (ge-compiler.md §4.5), with `UpdateAssignedSubgraphs` and
//! `UpdateReusedSubgraphs`.

use std::collections::BTreeMap;

use super::LogicalState;
use crate::error::Result;
use crate::graph::{EngineId, GraphId, StreamId, SubgraphId};
use crate::{bail, err};

/// Per-graph working state; subgraphs are addressed by their position in the graph's list.
struct Pass<'a, 'm> {
    st: &'a LogicalState<'m>,
    subs: Vec<SubgraphId>,
    /// `Subgraph::stream_id`: engine-local ids while the pass runs, global afterwards.
    stream: Vec<Option<u32>>,
    reused: Vec<Option<usize>>,
    /// CouldReuse has looked at this subgraph once (the `_force_attach_stream` rule).
    visited: Vec<bool>,
    force_attach: Vec<bool>,
    /// Distinct successor subgraphs that run on the subgraph's own engine.
    same_engine_succs: Vec<u32>,
    engine_next: BTreeMap<EngineId, u32>,
    /// `engine_stream_num`, keyed by engine name: global numbering follows name order.
    engine_stream_num: BTreeMap<String, u32>,
    assigned: Vec<usize>,
}

/// Gives every subgraph without a stream either the stream of a predecessor it may reuse
/// (the highest-priority one) or a new engine-local stream (round robin over the engine's
/// `max_parallel_num`), then numbers engine-local streams globally in engine-name order.
///
/// Reuse of predecessor `p` by `s` (GE's `CouldReuse`): same scheduler; `p` not independent
/// and not labelled; the first look at an `s` holding a `_force_attach_stream` node reuses
/// unconditionally; unless `memory_priority`, `p` must have no other successor subgraph of
/// its own engine; then same engine, or `s` attaches, or `p` itself reused a subgraph of
/// `s`'s engine. Among several reusable predecessors the lowest `compute_cost` wins; ties go
/// to the earliest subgraph in pass order (GE breaks them by pointer order, which is not
/// reproducible).
///
/// For a nested graph with a parent stream, `next_stream` is first stepped back by one and
/// the stream that lands on that id becomes the parent's stream (GE's
/// `UpdateAssignedSubgraphs`, including its unconditional decrement).
pub fn run(st: &mut LogicalState<'_>, g: GraphId, default_stream: Option<StreamId>) -> Result<()> {
    let model = st.model;
    let subs = st.partition.by_graph[g].clone();
    // Cut edges join subgraphs of one graph, so a subgraph's position in its graph's list is
    // its local index.
    let pos = &st.subgraph_pos;
    let local = |s: SubgraphId| pos[s] as usize;
    let n = subs.len();
    let mut same_engine_succs = vec![0u32; n];
    let mut force_attach = vec![false; n];
    let mut seen: Vec<usize> = Vec::new();
    for (i, &s) in subs.iter().enumerate() {
        let engine = st.partition.subgraphs[s].engine;
        seen.clear();
        for &e in st.partition.outputs.of(s) {
            if let Some(d) = st.partition.of_node[model.edges[e].dst] {
                seen.push(local(d));
            }
        }
        seen.sort_unstable();
        seen.dedup();
        same_engine_succs[i] =
            seen.iter().filter(|&&d| st.partition.subgraphs[subs[d]].engine == engine).count() as u32;
        force_attach[i] = st.graph_has(g, super::fact::FORCE_ATTACH)
            && st.partition.subgraphs[s].nodes.iter().any(|&n| st.has(n, super::fact::FORCE_ATTACH));
    }
    let mut p = Pass {
        st,
        stream: subs.iter().map(|&s| st.subgraph_stream[s].map(|x| x.0)).collect(),
        subs,
        reused: vec![None; n],
        visited: vec![false; n],
        force_attach,
        same_engine_succs,
        engine_next: BTreeMap::new(),
        engine_stream_num: BTreeMap::new(),
        assigned: Vec::new(),
    };
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for s in 0..n {
        if p.stream[s].is_some() {
            continue;
        }
        let mut best: Option<usize> = None;
        for &e in p.st.partition.inputs.of(p.subs[s]) {
            let Some(pred) = p.st.partition.of_node[model.edges[e].src].map(local) else {
                continue;
            };
            if !p.could_reuse(s, pred) {
                continue;
            }
            let key = |i: usize| (p.engine(i).priority_key(), i);
            if best.is_none_or(|b| key(pred) < key(b)) {
                best = Some(pred);
            }
        }
        match best {
            None => p.assign_new_stream(s),
            Some(mut r) => {
                if p.stream[r].is_none() {
                    p.assign_new_stream(r);
                }
                p.stream[s] = p.stream[r];
                if let Some(owner) = p.reused[r] {
                    r = owner;
                }
                p.reused[s] = Some(r);
                pairs.push((s, r));
            }
        }
    }

    // UpdateAssignedSubgraphs.
    let mut next = p.st.next_stream;
    let mut reuse_id = None;
    if default_stream.is_some() {
        next = next.checked_sub(1).ok_or_else(|| {
            err!(Internal, "graph '{}': no stream id to step back to for the parent's stream", model.graphs[g].name)
        })?;
        reuse_id = Some(next);
    }
    let mut start: BTreeMap<&str, u32> = BTreeMap::new();
    for (engine, &num) in &p.engine_stream_num {
        start.insert(engine.as_str(), next);
        next += num;
    }
    for &s in &p.assigned {
        let Some(local_id) = p.stream[s] else {
            bail!(Internal, "subgraph {} was assigned no engine-local stream", p.sg_name(s));
        };
        let global = local_id + start[p.engine(s).name.as_str()];
        p.stream[s] = if Some(global) == reuse_id { default_stream.map(|d| d.0) } else { Some(global) };
    }
    // UpdateReusedSubgraphs.
    for &(s, r) in &pairs {
        p.stream[s] = p.stream[r];
    }
    let Pass { subs, stream, .. } = p;
    for (i, s) in subs.into_iter().enumerate() {
        st.subgraph_stream[s] = stream[i].map(StreamId);
    }
    st.next_stream = next;
    Ok(())
}

impl<'a, 'm> Pass<'a, 'm> {
    fn engine(&self, i: usize) -> &'m crate::graph::EngineConf {
        let st: &'a LogicalState<'m> = self.st;
        &st.model.engines[st.partition.subgraphs[self.subs[i]].engine]
    }

    fn sg_name(&self, i: usize) -> &str {
        &self.st.partition.subgraphs[self.subs[i]].name
    }

    /// GE's `CouldReuse` (with `SubGraphCouldReuse`).
    fn could_reuse(&mut self, s: usize, pred: usize) -> bool {
        let (se, pe) = (self.engine(s), self.engine(pred));
        if se.scheduler != pe.scheduler {
            return false;
        }
        if pe.independent || self.st.subgraph_label(self.subs[pred]).is_some() {
            return false;
        }
        let first_look = !std::mem::replace(&mut self.visited[s], true);
        if first_look && self.force_attach[s] {
            return true;
        }
        let same_engine = se.name == pe.name;
        let others = self.same_engine_succs[pred].saturating_sub(u32::from(same_engine));
        if !self.st.options.memory_priority && others > 0 {
            return false;
        }
        if same_engine || se.attach {
            return true;
        }
        self.reused[pred].is_some_and(|r| self.engine(r).name == se.name)
    }

    /// GE's `AssignNewStream`: engine-local round robin.
    fn assign_new_stream(&mut self, s: usize) {
        let engine = self.st.partition.subgraphs[self.subs[s]].engine;
        let name = self.engine(s).name.clone();
        let max_parallel = self.st.options.max_parallel(&name);
        let mut id = self.engine_next.get(&engine).copied().unwrap_or(0);
        if id >= max_parallel {
            id = 0;
        }
        self.stream[s] = Some(id);
        self.engine_next.insert(engine, id + 1);
        let num = self.engine_stream_num.entry(name).or_insert(0);
        *num = (*num).max(id + 1);
        self.assigned.push(s);
    }
}
