//! The scheduling core the list schedules share: the device they assume (units, wait latency),
//! what a node costs on it, bottom levels and the ready-queue key. The execution order
//! ([`super::order`]), the ideal schedule (`simulate::ideal`) and the `list` and `budget:N`
//! policies all schedule on these, so a change to the cost model reaches all of them at once.
//! The checker (`verify`) keeps its own arithmetic on purpose: it must not share a bug with
//! what it checks.

use std::cmp::Ordering;

use crate::graph::{IdVec, Model, NodeId};

/// Compute units of the device the compile-time schedules assume (the simulator's default).
pub const UNITS: u32 = crate::graph::device::DEFAULT_UNITS;
/// Time from a record to the end of the wait on it that the schedules assume, in µs.
pub const WAIT_LATENCY_US: f64 = crate::graph::device::DEFAULT_WAIT_LATENCY_US;

/// Time a node runs: nothing for a node with no device task, whatever its `cost_us` says.
pub fn node_cost(model: &Model, n: NodeId) -> f64 {
    let node = &model.nodes[n];
    if node.tasks > 0 && node.cost_us.is_finite() && node.cost_us > 0.0 { node.cost_us } else { 0.0 }
}

/// Units a node holds while it runs on a device of `units`: none for a node with no device task.
pub fn node_units(model: &Model, n: NodeId, units: u32) -> u32 {
    if model.nodes[n].tasks == 0 { 0 } else { model.nodes[n].cores.min(units) }
}

/// Longest path from each node to an exit by `dur`, its own duration included, over every
/// node of `model` (root and subgraphs): the priority of a list schedule.
pub fn bottom_levels(model: &Model, dur: impl Fn(NodeId) -> f64) -> IdVec<NodeId, f64> {
    let mut level = IdVec::filled(model.nodes.len(), 0.0f64);
    for &n in model.all_nodes().iter().rev() {
        let below = model.out_edges(n).map(|e| level[e.dst]).fold(0.0, f64::max);
        level[n] = dur(n) + below;
    }
    level
}

/// Ready-queue key: higher bottom level first, then the earlier declared node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prio {
    pub level: f64,
    pub node: NodeId,
}

impl Eq for Prio {}
impl Ord for Prio {
    fn cmp(&self, o: &Self) -> Ordering {
        self.level.total_cmp(&o.level).then(o.node.cmp(&self.node))
    }
}
impl PartialOrd for Prio {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
