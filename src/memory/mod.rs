//! Device memory across streams (issue 16, compile time): tensor lifetimes under an
//! allocation's stream order and syncs ([`lifetime`]), a plan that places every tensor in one
//! arena so that only tensors with ordered lifetimes share bytes ([`plan`]), and what the
//! simulated schedule needs at least ([`max_live_bytes`]). docs/memory.md explains the design.

#![forbid(unsafe_code)]

pub mod budget;
pub mod lifetime;
pub mod plan;
pub mod syncs;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

use crate::compile::{Allocation, AllocationJson};
use crate::graph::{Model, NodeId};
use crate::simulate::SimResult;

pub use lifetime::{Clock, Hb, Lifetimes, Tensor, Tensors, has_memory_facts};
pub use plan::{ALIGN, Placement};

/// One placed tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacedTensor {
    pub node: NodeId,
    pub port: u32,
    pub bytes: u64,
    pub offset: u64,
    /// Readers no other reader follows (through views).
    pub last_users: Vec<NodeId>,
    /// A graph output: lives until the end.
    pub until_end: bool,
}

/// The memory plan of an allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryPlan {
    /// Arena bytes.
    pub peak_bytes: u64,
    /// Tensors in execution order of their producer, then by port.
    pub tensors: Vec<PlacedTensor>,
    /// Conflicting pairs (tensors whose lifetimes are not ordered).
    pub conflicts: usize,
}

/// Plans memory for an allocation; `None` when the graph gives no `out_bytes`.
pub fn plan_allocation(model: &Model, alloc: &Allocation) -> Option<MemoryPlan> {
    if !has_memory_facts(model) {
        return None;
    }
    let l = Lifetimes::of(model, alloc);
    let p = plan::place(&l);
    // The last users move into the plan, not copied tensor by tensor.
    let Lifetimes { tensors: all, last_users, .. } = l;
    let tensors = (all.list.iter().zip(&all.until_end).zip(last_users).zip(&p.offsets))
        .map(|(((t, &until_end), last_users), &offset)| PlacedTensor {
            node: t.node,
            port: t.port,
            bytes: t.bytes,
            offset,
            last_users,
            until_end,
        })
        .collect();
    Some(MemoryPlan { peak_bytes: p.peak_bytes, tensors, conflicts: p.conflicts })
}

impl MemoryPlan {
    /// The allocation JSON `memory` section (allocation-json.md).
    pub fn to_json(&self, model: &Model) -> Value {
        serde_json::to_value(MemoryJson::new(self, model)).expect("the memory section always serialises")
    }
}

/// The allocation JSON `memory` section, serialised from the plan with no value tree.
pub struct MemoryJson<'a> {
    plan: &'a MemoryPlan,
    model: &'a Model,
}

impl<'a> MemoryJson<'a> {
    pub fn new(plan: &'a MemoryPlan, model: &'a Model) -> Self {
        MemoryJson { plan, model }
    }
}

impl Serialize for MemoryJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("alignment", &ALIGN)?;
        m.serialize_entry("peak_bytes", &self.plan.peak_bytes)?;
        m.serialize_entry("tensors", &TensorList(self))?;
        m.end()
    }
}

struct TensorList<'a, 'b>(&'b MemoryJson<'a>);

impl Serialize for TensorList<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let model = self.0.model;
        s.collect_seq(self.0.plan.tensors.iter().map(|t| TensorJson { model, t }))
    }
}

struct TensorJson<'a> {
    model: &'a Model,
    t: &'a PlacedTensor,
}

impl Serialize for TensorJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (t, node) = (self.t, &self.model.nodes[self.t.node]);
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("bytes", &t.bytes)?;
        m.serialize_entry("graph", self.model.graph_label(node.graph))?;
        let users: Vec<&str> = t.last_users.iter().map(|&u| self.model.nodes[u].name.as_str()).collect();
        m.serialize_entry("last_users", &users)?;
        m.serialize_entry("node", &node.name)?;
        m.serialize_entry("offset", &t.offset)?;
        m.serialize_entry("port", &t.port)?;
        if t.until_end {
            m.serialize_entry("until_end", &true)?;
        }
        m.end()
    }
}

/// The whole allocation JSON document of an allocation: the compile layer's sections and,
/// when the graph gives `out_bytes`, the `memory` section of its plan.
///
/// The plan is the one the run made: a `driver::Session` plans once per stage and hands its
/// plan on to `driver::Compiled`, and every writer of a session's result takes it from there
/// (`Session::memory_plan`, `Compiled::document`), the C handles included. The `*_new_plan`
/// writers are for an allocation that no session holds and so has no plan yet: a pass list's
/// result (`stream-alloc pass`), the host's view before stage 4 (no Send/Recv nodes: another
/// allocation than the session's, with its own plan), one a test built. They plan here, every
/// time they are called, and say so in their names.
pub trait AllocationDocument {
    /// The document writer with the memory section of `plan` (made by [`plan_allocation`]).
    fn document<'a>(&'a self, model: &'a Model, plan: Option<&'a MemoryPlan>) -> AllocationJson<'a, MemoryJson<'a>>;
    /// The document as a value, for readers that walk it (the checker), with a memory plan
    /// made here for an allocation no session planned.
    fn to_json_new_plan(&self, model: &Model) -> Value;
    /// Pretty document text, newline-terminated, with a memory plan made here for an
    /// allocation no session planned. Byte-identical for identical results.
    fn to_json_string_new_plan(&self, model: &Model) -> String;
}

impl AllocationDocument for Allocation {
    fn document<'a>(&'a self, model: &'a Model, plan: Option<&'a MemoryPlan>) -> AllocationJson<'a, MemoryJson<'a>> {
        self.json(model).with_memory(plan.map(|p| MemoryJson::new(p, model)))
    }

    fn to_json_new_plan(&self, model: &Model) -> Value {
        let plan = plan_allocation(model, self);
        self.document(model, plan.as_ref()).to_value()
    }

    fn to_json_string_new_plan(&self, model: &Model) -> String {
        let plan = plan_allocation(model, self);
        self.document(model, plan.as_ref()).to_string_pretty()
    }
}

/// The Chrome trace of a simulation ([`crate::simulate::trace`]) with a `memory` counter track of
/// the live bytes when the graph gives `out_bytes`.
pub fn trace_json(model: &Model, sim: &SimResult) -> Value {
    let live = if has_memory_facts(model) { live_profile(model, sim) } else { Vec::new() };
    crate::simulate::trace::trace_json(model, sim, &live)
}

/// Live bytes over the simulated schedule, as `(time µs, bytes)` at every change. A tensor
/// is live from its producer's start (0 when it exists from the start) until its last
/// producer or reader finishes (the makespan for graph outputs); half-open, so a tensor
/// freed at `t` and one allocated at `t` do not overlap.
pub fn live_profile(model: &Model, sim: &SimResult) -> Vec<(f64, u64)> {
    let t = Tensors::of(model, &model.all_nodes(), |n| sim.stream[n].is_some());
    let makespan = sim.makespan_us;
    // (time, +1 start / -1 end, bytes): ends sort before starts at equal times.
    let mut events: Vec<(f64, i8, u64)> = Vec::with_capacity(2 * t.len());
    for (i, x) in t.list.iter().enumerate() {
        let start = if t.produced[i] { sim.span[x.node].map_or(0.0, |s| s.0) } else { 0.0 };
        let mut end = if t.produced[i] { sim.span[x.node].map_or(start, |s| s.1) } else { start };
        for &r in &t.readers[i] {
            if let Some((_, f)) = sim.span[r] {
                end = end.max(f);
            }
        }
        if t.until_end[i] {
            end = end.max(makespan);
            events.push((start, 1, x.bytes));
            continue;
        }
        if end > start {
            events.push((start, 1, x.bytes));
            events.push((end, -1, x.bytes));
        }
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut out: Vec<(f64, u64)> = Vec::new();
    let mut live = 0u64;
    for (time, kind, bytes) in events {
        if kind > 0 {
            live += bytes
        } else {
            live -= bytes
        }
        match out.last_mut() {
            Some(last) if last.0 == time => last.1 = live,
            _ => out.push((time, live)),
        }
    }
    out
}

/// The most bytes live at any instant of the simulated schedule: a lower bound for the arena
/// of any plan of this allocation (tensors live together conflict).
pub fn max_live_bytes(model: &Model, sim: &SimResult) -> u64 {
    live_profile(model, sim).iter().map(|p| p.1).max().unwrap_or(0)
}
