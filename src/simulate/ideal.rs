//! The reference to beat: a dynamic list schedule with unlimited streams and free syncs on
//! the same device model as [`super::simulate`] (issue 15). Every ready node starts as soon as
//! enough units are free, highest bottom level (longest path to an exit, its own duration
//! included) first, ties by declaration order; a lower-priority node that fits starts while a
//! higher one waits for units (backfilling). Nodes with no device task take no time and no
//! units. As in the device model, time moves in rounds: a node that finishes at an instant,
//! even one that takes no time, makes its successors ready for the next round of that
//! instant, after the nodes already ready have had their turn.
//!
//! No static assignment is expected to beat it by much, so a policy's makespan over *ideal* is
//! what it leaves on the table; the lower bound max(critical path, work / units) is often
//! unreachable. The start order is a priority a list-scheduling policy can follow.

use std::collections::BinaryHeap;

use serde_json::Value;

use super::{SimConfig, cost_of, units_of};
use crate::bail;
use crate::compile::schedule::{Engine, Hooks, Prio, bottom_levels};
use crate::error::Result;
use crate::graph::{IdVec, Model, NodeId};

/// The ideal schedule of a model.
#[derive(Clone, Debug, PartialEq)]
pub struct Ideal {
    pub makespan_us: f64,
    /// Longest path by duration.
    pub critical_path_us: f64,
    /// Σ duration × units held / device units.
    pub work_bound_us: f64,
    /// max(critical path, work bound).
    pub lower_bound_us: f64,
    /// Longest path from each node to an exit, its own duration included: the priority.
    pub bottom_level: IdVec<NodeId, f64>,
    /// When each node starts.
    pub start: IdVec<NodeId, f64>,
    /// Every node in the order the schedule starts it.
    pub order: Vec<NodeId>,
}

impl Ideal {
    /// makespan / lower bound (1 when the graph has no work).
    pub fn ratio(&self) -> f64 {
        super::ratio(self.makespan_us, self.lower_bound_us)
    }

    pub fn to_json(&self) -> Value {
        super::times_json(self.makespan_us, self.lower_bound_us, self.critical_path_us, self.work_bound_us)
    }
}

/// The ideal schedule of every node of `model` (root and subgraphs) on `cfg.units` units.
pub fn ideal(model: &Model, cfg: &SimConfig) -> Result<Ideal> {
    if cfg.units == 0 {
        bail!(InvalidOption, "ideal schedule: units must be at least 1, got 0");
    }
    let nn = model.nodes.len();
    let dur = |n: NodeId| cost_of(model, n);
    let need = |n: NodeId| units_of(model, n, cfg);
    let bottom_level = bottom_levels(model, dur);
    let critical_path = bottom_level.iter().copied().fold(0.0, f64::max);
    let work: f64 = model.nodes.ids().map(|n| dur(n) * need(n) as f64).sum();
    let work_bound = work / cfg.units as f64;

    let mut preds: IdVec<NodeId, u32> = IdVec::filled(nn, 0);
    for e in model.edges.iter() {
        preds[e.dst] += 1;
    }
    let mut hooks = Ready {
        by_units: vec![BinaryHeap::new(); cfg.units as usize + 1],
        level: &bottom_level,
        need,
        dur,
        start: IdVec::filled(nn, 0.0f64),
        order: Vec::with_capacity(nn),
    };
    let mut engine = Engine::new(cfg.units);
    engine.run(preds.enumerate().map(|(n, &c)| (n, c)), |n| model.out_edges(n).map(|e| e.dst), &mut hooks);
    let (t, start, order) = (engine.now(), hooks.start, hooks.order);
    if order.len() < nn {
        bail!(Failed, "ideal schedule of '{}': {} of {nn} nodes never became ready (a cycle)", model.name, order.len());
    }
    Ok(Ideal {
        makespan_us: t,
        critical_path_us: critical_path,
        work_bound_us: work_bound,
        lower_bound_us: critical_path.max(work_bound),
        bottom_level,
        start,
        order,
    })
}

/// The ideal schedule's hooks: nothing but the ready nodes, by the units they need, each list
/// in priority order; every ready node that fits starts, highest priority first.
struct Ready<'a, N, D> {
    by_units: Vec<BinaryHeap<Prio>>,
    level: &'a IdVec<NodeId, f64>,
    need: N,
    dur: D,
    start: IdVec<NodeId, f64>,
    order: Vec<NodeId>,
}

impl<N: Fn(NodeId) -> u32, D: Fn(NodeId) -> f64> Hooks<NodeId> for Ready<'_, N, D> {
    fn ready(&mut self, n: NodeId, _: &mut Engine<NodeId>) {
        self.by_units[(self.need)(n) as usize].push(Prio { level: self.level[n], tie: n });
    }

    /// One round: the highest-priority ready node that fits, again and again, which starts
    /// what walking the ready list in priority order and starting every node that fits does.
    fn dispatch(&mut self, eng: &mut Engine<NodeId>) {
        let t = eng.now();
        while let Some((p, u)) = (0..=eng.free() as usize)
            .filter_map(|u| self.by_units[u].peek().map(|p| (*p, u)))
            .max_by(|a, b| a.0.cmp(&b.0))
        {
            self.by_units[u].pop();
            self.start[p.tie] = t;
            self.order.push(p.tie);
            eng.start(p.tie, t + (self.dur)(p.tie), u as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::schedule::trace::{check, traced};

    /// The ideal schedule is the engine's, and keeps its invariants on every node of the
    /// synthetic families and of corpus graphs (subgraphs among them), on the default device
    /// and on one of 4 units, where wide nodes must wait; its start times are the engine's.
    #[test]
    fn the_ideal_keeps_the_engine_invariants() {
        let models = crate::graph::synth::test_models(1000, Some(6), &["bert_base", "resnet50_train", "googlenet"]);
        for model in &models {
            let all: Vec<usize> = (0..model.nodes.len()).collect();
            let preds = |q: usize| model.in_edges(NodeId::new(q)).map(|e| e.src.index()).collect();
            for units in [SimConfig::default().units, 4] {
                let cfg = SimConfig { units, ..SimConfig::default() };
                let (ideal, runs) = traced(|| ideal(model, &cfg).expect("a DAG"));
                assert_eq!(runs.len(), 1, "{}: one run", model.name);
                check(&runs[0], model.nodes.len(), &all, preds, &format!("{} on {units} units", model.name));
                let order: Vec<NodeId> = runs[0].placed.iter().map(|p| NodeId::new(p.node)).collect();
                assert_eq!(order, ideal.order, "{}: the start order is the engine's", model.name);
                for p in &runs[0].placed {
                    assert_eq!(ideal.start[NodeId::new(p.node)], p.at, "{}: a start time", model.name);
                }
                let last = runs[0].placed.iter().map(|p| p.end).fold(0.0, f64::max);
                assert_eq!(ideal.makespan_us, last, "{}: the makespan is the last finish", model.name);
                assert!(ideal.makespan_us + 1e-9 >= ideal.lower_bound_us, "{}: below the lower bound", model.name);
            }
        }
    }
}
