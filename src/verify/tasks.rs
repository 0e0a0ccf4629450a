//! Rule 7 of allocation-json.md: with a task limit N (the graph's `max_task_count` option, and
//! `max_huge_task_count` for the document's huge streams, or the limits a compile split with),
//! no physical stream holds more than N − 27 tasks unless one node alone is bigger.
//!
//! Counted from the document and the graph alone, as the device runs them: a node's own tasks
//! (`_node_sqe_num`, else `_hccl_task_num` for HCCL nodes, else `tasks`) on its stream and its
//! attached tasks on each attached stream; every inserted Recv/RecvNotify 2 (GE's wait plus
//! reset), every other inserted node (Send, SendNotify, StreamActive) 1, on whatever stream
//! it sits.

use std::collections::BTreeMap;

use super::Violation;
use super::doc::Doc;
use crate::graph::{Model, NodeId, Options};

/// The limits rule 7 is checked with: per normal and per huge stream (`None`: not checked),
/// nothing at all for streams of unlimited depth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub normal: Option<u32>,
    pub huge: Option<u32>,
    pub unlimited_depth: bool,
}

impl Limits {
    /// The limits a graph's options give: `max_task_count`, `max_huge_task_count`,
    /// `unlimited_depth`; a limit the options do not give is not checked.
    pub fn of(o: &Options) -> Self {
        Limits {
            normal: o.max_task_count,
            huge: o.max_huge_task_count,
            unlimited_depth: o.unlimited_depth == Some(true),
        }
    }
}

/// `kReservedTaskNum`: DFX tasks plus spare room GE keeps free on every stream.
const RESERVED: u64 = 27;

fn count_attr(model: &Model, n: NodeId, name: &str) -> Option<u64> {
    model.nodes[n].ge_attrs.int(name).and_then(|v| u64::try_from(v).ok())
}

fn hccl(model: &Model, n: NodeId) -> bool {
    model.engine(n).name == crate::graph::engines::names::HCCL
}

fn own_tasks(model: &Model, n: NodeId) -> u64 {
    count_attr(model, n, "_node_sqe_num")
        .or_else(|| if hccl(model, n) { count_attr(model, n, "_hccl_task_num") } else { None })
        .unwrap_or(u64::from(model.nodes[n].tasks))
}

fn attached_tasks(model: &Model, n: NodeId, i: usize) -> u64 {
    if hccl(model, n) {
        if let Some(t) = count_attr(model, n, "_hccl_attached_task_num") {
            return t;
        }
    }
    model.nodes[n].attached_tasks.get(i).map_or(0, |&t| u64::from(t))
}

/// Per physical stream: all its tasks, and its graph nodes with tasks (how many, the biggest).
#[derive(Default)]
struct Load {
    tasks: u64,
    graph_nodes: u32,
    biggest: u64,
}

/// Checks rule 7 where `limits` give a limit; returns the fullest stream (stream id, tasks)
/// whatever the limits.
pub fn check_task_limits(model: &Model, doc: &Doc, limits: Limits, out: &mut Vec<Violation>) -> Option<(u32, u64)> {
    let mut load: BTreeMap<u32, Load> = BTreeMap::new();
    for d in &doc.nodes {
        match d.model {
            Some(n) => {
                let places = d.stream.map(|s| (s, own_tasks(model, n)));
                let attached = d.attached.iter().enumerate().map(|(i, &s)| (s, attached_tasks(model, n, i)));
                for (s, t) in places.into_iter().chain(attached) {
                    let l = load.entry(s).or_default();
                    l.tasks += t;
                    if t > 0 {
                        l.graph_nodes += 1;
                        l.biggest = l.biggest.max(t);
                    }
                }
            }
            None => {
                let Some(s) = d.stream else { continue };
                let t = if matches!(d.op_type.as_str(), "Recv" | "RecvNotify") { 2 } else { 1 };
                load.entry(s).or_default().tasks += t;
            }
        }
    }
    let fullest = load.iter().max_by_key(|(s, l)| (l.tasks, std::cmp::Reverse(**s))).map(|(s, l)| (*s, l.tasks));
    if limits.unlimited_depth {
        return fullest;
    }
    for (s, l) in &load {
        let limit = if doc.huge.contains(s) { limits.huge } else { limits.normal };
        let Some(limit) = limit else { continue };
        let cap = u64::from(limit).saturating_sub(RESERVED);
        // GE's rule: a node bigger than the room alone gets a stream of its own (with the
        // split's wait before it and its own syncs around it).
        let alone = l.graph_nodes == 1 && l.biggest > cap;
        if l.tasks > cap && !alone {
            out.push(Violation {
                rule: 7,
                message: format!(
                    "physical stream {s} holds {} tasks, more than {limit} - {RESERVED} = {cap} (max_task_count{})",
                    l.tasks,
                    if doc.huge.contains(s) { " of a huge stream: max_huge_task_count" } else { "" }
                ),
            });
        }
    }
    fullest
}
