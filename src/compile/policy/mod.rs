//! Assignment policies beyond GE's pass chain (`--option policy=NAME`).
//!
//! Every policy starts from GE's own logical result and keeps every user contract GE honours:
//! nodes with a stream label or user label, parallel groups, MDE stream ids, RTS label nodes,
//! forced or requested attached streams, independent engines (HCCL), nodes owning subgraphs,
//! control-flow operators, nested graphs and dynamic-shape graphs keep GE's stream grouping
//! ("pinned"). Nodes on no stream in GE (input data, constants) stay on none. The rest of the
//! root graph ("free" nodes) is reassigned by the policy: free nodes with tasks become policy
//! streams, free nodes without tasks ("followers") join a neighbour's stream, because they
//! cost nothing and a stream of their own would only add syncs.
//!
//! The result is a [`LogicalResult`], so every policy runs the same sync insertion, exact
//! reduction and split as GE's mode. `auto`, which picks among the others by simulation, is
//! a search above this module (`crate::search`).

pub mod budget;
pub mod earliest;
pub mod fifo;
pub mod list;
pub mod min_streams;
pub mod per_operator;
pub mod phases;
pub mod report;
pub mod table;

pub use report::PolicyReport;
pub use table::{Chosen, Entry, Kind, Made, POLICIES};

use std::sync::{Arc, OnceLock};

use crate::compile::logical::LogicalResult;
use crate::compile::schedule;
use crate::compile::summary::ModelCounts;
use crate::compile::sync::ModelFacts;
use crate::compile::sync::bound::{ForcedSyncs, Place, forced_syncs};
use crate::error::Result;
use crate::graph::csr::Csr;
use crate::graph::{GraphId, IdVec, Model, NodeId, Options, Pos, Shape, StreamId};
use report::Budgets;

/// Operator types whose stream placement carries control-flow meaning (activation, labels,
/// loops): always pinned to GE's choice.
fn is_control_type(op_type: &str) -> bool {
    matches!(
        op_type,
        "StreamSwitch"
            | "StreamSwitchN"
            | "StreamActive"
            | "StreamMerge"
            | "Switch"
            | "RefSwitch"
            | "Merge"
            | "RefMerge"
            | "Enter"
            | "RefEnter"
            | "Exit"
            | "RefExit"
            | "NextIteration"
            | "RefNextIteration"
            | "LoopCond"
            | "LabelSet"
            | "LabelGoto"
            | "LabelGotoEx"
            | "LabelSwitchByIndex"
            | "Send"
            | "Recv"
            | "SendNotify"
            | "RecvNotify"
    )
}

/// How a node takes part in a policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// No stream in GE's result (data, constants): stays on none.
    None,
    /// Keeps GE's stream grouping (a user contract or control flow).
    Pinned,
    /// Reassigned by the policy.
    Task,
    /// No tasks: joins a neighbour's stream.
    Follower,
}

/// What every policy reads of a model whatever its streams: GE's logical result, the node
/// roles, the root graph's order and adjacency, and the chain cover once a policy asks for it.
/// A search builds it once and shares it among its candidates ([`Ctx::shared`]).
pub struct PolicyInput {
    pub base: LogicalResult,
    pub role: IdVec<NodeId, Role>,
    /// Root-graph nodes in topological order.
    pub order: IdVec<Pos, NodeId>,
    /// Position of each root node in `order` ([`Pos::invalid`] for nodes of nested graphs).
    pub pos: IdVec<NodeId, Pos>,
    /// The root graph's adjacency by position (edges never leave their graph): each
    /// position's consumer and producer positions, in edge-id order as the model's CSR has
    /// them. Policy loops read these flat lists instead of edge structs.
    pub succ: Csr<Pos, Pos>,
    pub pred: Csr<Pos, Pos>,
    /// The min-streams chain cover, computed on first use ([`Ctx::chain_cover`]).
    cover: OnceLock<min_streams::ChainCover>,
    /// The list schedules' durations, units and bottom levels, computed on first use
    /// ([`Ctx::timing`]).
    timing: OnceLock<Timing>,
    /// The syncs the pinned streams force, computed on first use ([`Ctx::forced_over`]).
    forced: OnceLock<ForcedSyncs>,
    /// [`single`]'s streams in phases, computed on first use ([`Bounded::phase_order`]): every
    /// candidate of a search that the event budget cuts to one stream runs them.
    phased: OnceLock<Vec<Pos>>,
    /// At most the syncs the pinned streams force, computed on first use ([`Ctx::forced_ceiling`]).
    ceiling: OnceLock<u64>,
}

/// What the policies' list schedules (`list`, the budget merges) read of every root node, by
/// position: computed once per input, where each schedule would read every node of the model
/// again (a fifth of a budget merge's time at 100k nodes).
#[derive(Debug)]
pub struct Timing {
    /// [`Ctx::cost`].
    pub cost: IdVec<Pos, f64>,
    /// [`Ctx::units`].
    pub units: IdVec<Pos, u32>,
    /// Bottom levels by `cost`: [`Ctx::bottom_levels`] of [`Ctx::cost`].
    pub level: IdVec<Pos, f64>,
}

impl std::fmt::Debug for PolicyInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyInput").field("nodes", &self.role.len()).field("root_nodes", &self.order.len()).finish()
    }
}

/// The input every policy sees: the model and its [`PolicyInput`], read through `Deref`.
pub struct Ctx<'m> {
    pub model: &'m Model,
    input: Arc<PolicyInput>,
}

impl std::ops::Deref for Ctx<'_> {
    type Target = PolicyInput;

    fn deref(&self) -> &PolicyInput {
        &self.input
    }
}

impl<'m> Ctx<'m> {
    /// GE's logical result for the model's GE mode, and the node roles.
    pub fn new(model: &'m Model, options: &Options) -> Result<Self> {
        Ok(Self::with_base(model, options, ge_logical(model, options)?))
    }

    /// [`Self::new`] from GE's logical result computed once elsewhere.
    pub fn with_base(model: &'m Model, options: &Options, base: LogicalResult) -> Self {
        Ctx { model, input: Arc::new(PolicyInput::new(model, options, base)) }
    }

    /// The context of `model` from an input built for it (with the same options other than
    /// the policy) by [`PolicyInput::new`]: a search shares one among all its candidates.
    pub fn shared(model: &'m Model, input: Arc<PolicyInput>) -> Self {
        Ctx { model, input }
    }

    /// The SA2003 error when the syncs the pinned streams force exceed `max_events` with one
    /// id per sync ([`pinned_forced_syncs`]): no assignment or order of the policy's streams
    /// then fits, so neither the policy nor the trials need run. `None` where the bound fits.
    pub fn forced_over(
        &self,
        policy: &str,
        options: &Options,
        facts: &ModelFacts,
        max_events: u32,
    ) -> Option<crate::Error> {
        if self.forced_ceiling() <= u64::from(max_events) {
            return None;
        }
        let forced = self.input.forced.get_or_init(|| pinned_forced_syncs(self, options, facts));
        if forced.ids <= max_events {
            return None;
        }
        let model = self.model;
        let mut streams: Vec<(u32, u32)> = forced.fixed.clone();
        streams.sort_by_key(|&(s, chain)| (std::cmp::Reverse(chain), s));
        let named: Vec<String> = streams
            .iter()
            .take(4)
            .map(|&(s, chain)| format!("{chain} waiting in GE's stream {s} ({})", pinned_by(self, s)))
            .collect();
        let more = streams.len().saturating_sub(named.len());
        let more = if more > 0 { format!(", {more} more pinned streams") } else { String::new() };
        let free = if forced.free > 0 { format!(", {} in the policy's streams", forced.free) } else { String::new() };
        let why = if options.compat_ge { "compat=ge" } else { "event_reuse=never" };
        Some(crate::err!(
            Limit,
            "policy {} on graph '{}': the streams GE pins force at least {} sync ids with one id per sync ({}{more}{free}), \
             over max_events={max_events} whatever the policy's streams and order ({why}: ids are not reused)",
            policy,
            model.name,
            forced.ids,
            named.join(", "),
        ))
    }

    /// At most what [`pinned_forced_syncs`] gives under any options, at the cost of one pass
    /// over the root graph where the bound takes one per class. In `single`'s streams every
    /// requirement joins two streams, so its waiting node is at least one phase
    /// ([`phases::phases`]) past its sender, and phases never fall along an edge: the `k`-th
    /// requirement of a chain waits in phase `k` or later. So no chain is longer than the
    /// highest phase, and the bound, a chain per class (each pinned stream, and the policy's
    /// streams together), is at most the classes times the highest phase. Computed once per
    /// input.
    fn forced_ceiling(&self) -> u64 {
        *self.input.ceiling.get_or_init(|| {
            let logical = finish(self, &single(self));
            let top = phases::phases(self, &logical.node_stream).iter().copied().max().unwrap_or(0);
            (self.pinned_streams().len() as u64 + 1) * u64::from(top)
        })
    }

    /// GE's streams that pinned nodes run on, ascending.
    fn pinned_streams(&self) -> Vec<u32> {
        let mut pinned: Vec<u32> = self
            .model
            .nodes
            .ids()
            .filter(|&n| self.role[n] == Role::Pinned)
            .filter_map(|n| self.base.node_stream[n])
            .map(|s| s.0)
            .collect();
        pinned.sort_unstable();
        pinned.dedup();
        pinned
    }

    /// The input, to share with another context of the same model.
    pub fn input(&self) -> &Arc<PolicyInput> {
        &self.input
    }

    /// The min-streams chain cover of the task nodes, computed once per input.
    pub fn chain_cover(&self) -> &min_streams::ChainCover {
        self.input.cover.get_or_init(|| min_streams::chain_cover(self))
    }

    /// The streams a policy may make within `max_streams`: what GE's pinned streams (labels,
    /// parallel groups, HCCL, control flow, nested graphs) leave, at least one.
    pub fn policy_cap(&self, max_streams: u32) -> u32 {
        if max_streams == u32::MAX {
            return u32::MAX;
        }
        max_streams.saturating_sub(self.pinned_streams().len() as u32).max(1)
    }

    /// Each root position's duration, units and bottom level, computed once per input.
    pub fn timing(&self) -> &Timing {
        self.input.timing.get_or_init(|| {
            let cost: IdVec<Pos, f64> = self.order.iter().map(|&n| self.cost(n)).collect();
            let units = self.order.iter().map(|&n| self.units(n)).collect();
            let level = self.bottom_levels_by(|p| cost[p]);
            Timing { cost, units, level }
        })
    }
}

impl PolicyInput {
    /// GE's logical result `base` for `model` under `options`, with the node roles and the root
    /// graph's order and adjacency.
    pub fn new(model: &Model, options: &Options, base: LogicalResult) -> Self {
        // A dynamic-shape root runs on one stream unless the host enables multi-stream for
        // it (GE's `ENABLE_DYNAMIC_SHAPE_MULTI_STREAM`); then the executor runs whatever streams
        // the nodes carry, and outside `compat=ge` the policy chooses them as for a static root.
        let dynamic_root = model.root().shape == Shape::Dynamic && (options.compat_ge || !options.dynamic_multi_stream);
        let role = IdVec::from_vec(
            model
                .nodes
                .enumerate()
                .map(|(n, node)| {
                    if base.node_stream[n].is_none() {
                        return Role::None;
                    }
                    let a = &node.attrs;
                    let engine = model.engine(n);
                    let pinned = dynamic_root
                        || node.graph != GraphId::ROOT
                        || a.stream_label.is_some()
                        || a.user_stream_label.is_some()
                        || a.new_stream_id.is_some()
                        || a.parallel_group.is_some()
                        || a.rts_label_node
                        || !a.attached_streams.is_empty()
                        || !base.attached[n].is_empty()
                        || (!node.ge_attrs.is_empty() && node.ge_attrs.flag("_force_attach_stream"))
                        || engine.independent
                        || !node.subgraphs.is_empty()
                        || is_control_type(&node.op_type);
                    if pinned {
                        Role::Pinned
                    } else if node.tasks == 0 || engine.skip_assign_stream {
                        Role::Follower
                    } else {
                        Role::Task
                    }
                })
                .collect(),
        );
        let order: IdVec<Pos, NodeId> = IdVec::from_vec(model.root().order.clone());
        let mut pos = IdVec::filled(model.nodes.len(), Pos::invalid());
        for (i, &n) in order.enumerate() {
            pos[n] = i;
        }
        // Edge ids ascending: each list comes out in the CSR's edge-id order.
        let edges = model.root().edges.iter().map(|&e| {
            let e = &model.edges[e];
            (pos[e.src], pos[e.dst])
        });
        debug_assert!(model.root().edges.is_sorted());
        let succ = Csr::group(order.len(), edges.clone());
        let pred = Csr::group(order.len(), edges.map(|(s, d)| (d, s)));
        PolicyInput {
            base,
            role,
            order,
            pos,
            succ,
            pred,
            cover: OnceLock::new(),
            timing: OnceLock::new(),
            forced: OnceLock::new(),
            phased: OnceLock::new(),
            ceiling: OnceLock::new(),
        }
    }
}

impl Ctx<'_> {
    /// Time node `n` runs in a policy's list schedule: [`schedule::node_cost`] for a node on a
    /// stream, nothing for the others (they run, in no time, when ready).
    pub fn cost(&self, n: NodeId) -> f64 {
        if self.role[n] != Role::None { schedule::node_cost(self.model, n) } else { 0.0 }
    }

    /// Units node `n` holds in a policy's list schedule: a task node's [`schedule::node_units`]
    /// on the device the schedules assume; nodes the policy does not place hold none.
    pub fn units(&self, n: NodeId) -> u32 {
        if self.role[n] == Role::Task { schedule::node_units(self.model, n, schedule::UNITS) } else { 0 }
    }

    /// Runs `hooks` on the scheduling engine over the root order, each position counting down
    /// its predecessors ([`Self::pred`]); the count of positions placed.
    pub fn schedule<H: schedule::Hooks<Pos>>(&self, hooks: &mut H) -> usize {
        let preds = self.order.ids().map(|p| (p, self.pred.of(p).len() as u32));
        schedule::Engine::new(schedule::UNITS).run(preds, |p| self.succ.of(p).iter().copied(), hooks)
    }

    /// Bottom levels of the root graph by `dur`, by position: [`schedule::fill_bottom_levels`]
    /// over the order backwards and [`Self::succ`], the priority of the policies' list
    /// schedules.
    pub fn bottom_levels(&self, dur: impl Fn(NodeId) -> f64) -> IdVec<Pos, f64> {
        self.bottom_levels_by(|p| dur(self.order[p]))
    }

    /// [`Self::bottom_levels`] by a duration per position.
    fn bottom_levels_by(&self, dur: impl Fn(Pos) -> f64) -> IdVec<Pos, f64> {
        let mut level = IdVec::filled(self.order.len(), 0.0f64);
        let succ = |p: Pos| self.succ.of(p).iter().copied();
        schedule::fill_bottom_levels(&mut level, self.order.ids().rev(), dur, succ);
        level
    }

    /// Free nodes with tasks, in topological order.
    pub fn task_nodes(&self) -> Vec<NodeId> {
        self.order.iter().copied().filter(|&n| self.role[n] == Role::Task).collect()
    }

    /// Distinct consumers of root position `p`, as positions in topological order.
    pub fn consumers_into(&self, p: Pos, out: &mut Vec<Pos>) {
        out.clear();
        out.extend_from_slice(self.succ.of(p));
        out.sort_unstable();
        out.dedup();
    }
}

/// GE's logical allocation for the mode `policy=ge` would pick: every policy starts from it.
pub fn ge_logical(model: &Model, options: &Options) -> Result<LogicalResult> {
    match (model.root().shape, options.enable_single_stream) {
        (Shape::Static, true) => crate::compile::passes::assign_single_stream(model, options),
        (Shape::Static, false) => crate::compile::passes::assign_multi_stream(model, options),
        (Shape::Dynamic, _) => crate::compile::dynamic::assign(model, options),
    }
}

/// A policy's decision for its task nodes: a stream per task node (`0..count`), and the order
/// the streams run their nodes in when the policy fixes one.
pub struct Assignment {
    pub stream: IdVec<NodeId, Option<u32>>,
    pub count: u32,
    /// Every root position once, a topological order, that the streams run their nodes in
    /// (`fifo:N`'s placement order); empty: the pipeline chooses ([`crate::compile::choose_order`]).
    pub order: Vec<Pos>,
}

impl Assignment {
    pub fn new(model: &Model) -> Self {
        Assignment { stream: IdVec::filled(model.nodes.len(), None), count: 0, order: Vec::new() }
    }

    /// The assignment's order as root-graph nodes; `None` when the pipeline chooses.
    pub fn root_order(&self, ctx: &Ctx<'_>) -> Option<Vec<NodeId>> {
        (!self.order.is_empty()).then(|| self.order.iter().map(|&p| ctx.order[p]).collect())
    }
}

/// Merges a policy's task-node streams with GE's pinned streams into one logical result:
/// policy streams take ids `0..count`, pinned GE streams follow in GE's order, attached
/// streams after them; followers join the stream of their first assigned producer, else of
/// their first assigned consumer.
pub fn finish(ctx: &Ctx<'_>, a: &Assignment) -> LogicalResult {
    let model = ctx.model;
    let base = &ctx.base;
    let pinned_streams = ctx.pinned_streams();
    let mut count = a.count;
    let followers = model.nodes.ids().any(|n| ctx.role[n] == Role::Follower);
    // Followers with no neighbour on a stream need a stream of their own.
    let mut spare: Option<u32> = None;
    let mut stream: IdVec<NodeId, Option<StreamId>> = IdVec::filled(model.nodes.len(), None);
    let pinned_id = |s: StreamId, count: u32| {
        StreamId(count + pinned_streams.binary_search(&s.0).expect("pinned stream listed") as u32)
    };
    if followers && a.count == 0 && pinned_streams.is_empty() {
        spare = Some(0);
        count = 1;
    }
    for n in model.nodes.ids() {
        stream[n] = match ctx.role[n] {
            Role::None | Role::Follower => None,
            Role::Pinned => base.node_stream[n].map(|s| pinned_id(s, count)),
            Role::Task => a.stream[n].map(StreamId),
        };
    }
    if followers {
        place_followers(ctx, &mut stream, spare.unwrap_or(0));
    }
    let main = count + pinned_streams.len() as u32;
    let attached = IdVec::from_vec(
        base.attached
            .iter()
            .map(|v| v.iter().map(|s| StreamId(main + (s.0 - base.main_stream_count))).collect())
            .collect(),
    );
    LogicalResult { node_stream: stream, main_stream_count: main, attached, attached_count: base.attached_count }
}

/// Places every follower (a free node without tasks; its entry in `stream` is overwritten):
/// on the stream of its first producer that has one, else of its first consumer that has one,
/// else on `spare`. Producers come first in topological order, so a chain of followers takes
/// the stream of the task node it hangs from.
pub fn place_followers(ctx: &Ctx<'_>, stream: &mut IdVec<NodeId, Option<StreamId>>, spare: u32) {
    let order = &ctx.order;
    for (p, &n) in order.enumerate() {
        if ctx.role[n] == Role::Follower {
            stream[n] = ctx.pred.of(p).iter().find_map(|&q| stream[order[q]]);
        }
    }
    for (p, &n) in order.enumerate().rev() {
        if ctx.role[n] == Role::Follower && stream[n].is_none() {
            stream[n] = ctx.succ.of(p).iter().find_map(|&q| stream[order[q]]);
        }
    }
    for &n in order {
        if ctx.role[n] == Role::Follower && stream[n].is_none() {
            stream[n] = Some(StreamId(spare));
        }
    }
}

/// `single`: every task node on one stream (DALI's `Single`).
pub fn single(ctx: &Ctx<'_>) -> Assignment {
    let mut a = Assignment::new(ctx.model);
    for n in ctx.task_nodes() {
        a.stream[n] = Some(0);
        a.count = 1;
    }
    a
}

/// `per-backend`: one stream per engine, numbered in engine-name order (DALI's `PerBackend`,
/// with GE's engines as the backends).
pub fn per_backend(ctx: &Ctx<'_>) -> Assignment {
    let mut a = Assignment::new(ctx.model);
    let tasks = ctx.task_nodes();
    let mut engines: Vec<&str> = tasks.iter().map(|&n| ctx.model.engine(n).name.as_str()).collect();
    engines.sort_unstable();
    engines.dedup();
    for n in tasks {
        let e = ctx.model.engine(n).name.as_str();
        a.stream[n] = Some(engines.binary_search(&e).expect("engine listed") as u32);
    }
    a.count = engines.len() as u32;
    a
}

/// What a trial of the sync stage needed on one assignment when its ids exceeded
/// `max_events`: the first run's ids and counts (one id per sync, unless `event_reuse=lifetime`
/// is set), and the ids of the same streams run again with ids reused by lifetime, when the
/// driver retried them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverBudget {
    pub ids: u32,
    pub counts: ModelCounts,
    pub reused: Option<u32>,
    /// Set when the sync stage fit and the physical split's own events took the ids over:
    /// `ids` and `counts` are then the split's.
    pub split: Option<SplitOver>,
}

/// The physical split's share of an [`OverBudget`]: its events (one per cut of a stream over
/// the task limit), and the ids the sync stage needed one per sync when it reused them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitOver {
    pub events: u32,
    pub exact: Option<u32>,
}

impl OverBudget {
    /// The ids the streams need at best: the retry's when there was one.
    pub fn needed(&self) -> u32 {
        self.reused.unwrap_or(self.ids)
    }
}

/// A policy's assignment within `max_streams`, which the driver narrows further until the
/// sync ids the sync stage inserts for it fit `max_events`: the driver runs that stage, so
/// it also runs the loop ([`crate::driver`]). Streams GE pins count against `max_streams`
/// first. Over `max_events` the driver first runs the same streams again with ids reused by
/// lifetime (GE's own way out when it runs out of events, `_event_multiplexing`), and cuts
/// streams only when those still do not fit. When a budget binds, the report's `budgets`
/// object says so: how many streams the policy made (`unbudgeted_streams`), how far the sync
/// ids cut them (`event_budget_streams`), whether the ids are reused (`event_reuse`,
/// `exact_event_ids`).
pub struct Bounded<'m> {
    ctx: Ctx<'m>,
    policy: Chosen,
    assign: table::AssignFn,
    report: PolicyReport,
    assignment: Assignment,
    budgets: Budgets,
    /// The cap and `max_streams` of a first run that left its unbounded count to the report
    /// ([`Made::Uncounted`]): a candidate of `auto` that ends in an error never asks.
    uncounted: Option<(u32, u32)>,
    /// `event_reuse=lifetime` is set: every trial's ids are reused already.
    lifetime: bool,
    /// A trial's physical split took its ids over `max_events`: every later cut halves.
    split_over: bool,
    /// The one-stream trial in the pipeline's own order, over `max_events`, once the streams
    /// run in phases instead ([`Self::phase_order`]).
    unphased: Option<OverBudget>,
}

impl<'m> Bounded<'m> {
    /// The policy's assignment within `max_streams`, from the model's policy `input` (built
    /// here, GE's pass chain included, when not given). GE's own policy keeps GE's rules and `auto` is a search: neither
    /// is bounded here.
    pub fn new(model: &'m Model, options: &Options, policy: Chosen, input: Option<Arc<PolicyInput>>) -> Result<Self> {
        let Kind::Assign(assign) = policy.entry.kind else {
            crate::bail!(Internal, "policy {} has no assignment of its own to bound", policy.name());
        };
        let ctx = match input {
            Some(input) => Ctx::shared(model, input),
            None => Ctx::new(model, options)?,
        };
        let mut report = PolicyReport::named(policy.name());
        let max_streams = options.stream_budget();
        let cap = ctx.policy_cap(max_streams);
        let (assignment, made) = assign(&ctx, policy.arg, cap, &mut report)?;
        let mut budgets = Budgets::default();
        let uncounted = match made {
            Made::Streams(made) => {
                if made > cap {
                    budgets.max_streams = Some(max_streams);
                    budgets.unbudgeted_streams = Some(made);
                }
                None
            }
            Made::Uncounted => Some((cap, max_streams)),
        };
        let lifetime = options.event_reuse_lifetime;
        Ok(Bounded {
            ctx,
            policy,
            assign,
            report,
            assignment,
            budgets,
            uncounted,
            lifetime,
            split_over: false,
            unphased: None,
        })
    }

    /// The logical result of the current assignment.
    pub fn logical(&self) -> LogicalResult {
        finish(&self.ctx, &self.assignment)
    }

    /// The order the current assignment's streams run the root graph's nodes in when the
    /// policy fixes one ([`Assignment::root_order`]).
    pub fn order(&self) -> Option<Vec<NodeId>> {
        self.assignment.root_order(&self.ctx)
    }

    /// Fewer policy streams after a trial was `over` `max_events`: in proportion to the excess
    /// of the ids the streams need at best, at least one fewer. A `Limit` error when one policy
    /// stream is already all there is (the streams GE pins need the syncs), naming what the
    /// trial and its retry with reused ids reached.
    pub fn fewer(&mut self, over: &OverBudget, max_events: u32) -> Result<()> {
        let count = self.assignment.count;
        if count <= 1 {
            let phased = self
                .unphased
                .map_or(String::new(), |_| format!(", and {} in an execution order by phases", over.needed()));
            let OverBudget { ids, counts, reused, split } = *self.unphased.as_ref().unwrap_or(over);
            let given = if self.lifetime { ", reused by lifetime (event_reuse=lifetime)" } else { "" };
            let retried = reused.map_or(String::new(), |r| format!(", and {r} with ids reused by lifetime"));
            let split = split.map_or(String::new(), |s| {
                let exact = s.exact.map_or(String::new(), |e| format!("; ids reused by lifetime, {e} one per sync"));
                format!(" after the physical split ({} of them its events{exact})", s.events)
            });
            crate::bail!(
                Limit,
                "policy {} on graph '{}': {ids} sync ids ({} events, {} notifies{given}){split} exceed \
                 max_events={max_events} even with one policy stream{retried}{phased} (the streams GE pins need them)",
                self.policy.name(),
                self.ctx.model.name,
                counts.event_num,
                counts.notify_num
            );
        }
        // The split's events follow the task count, not the streams, and the streams GE pins
        // hold most ids: a proportional cut would walk down a stream or two at a time. Once a
        // split took the ids over, every later cut halves too: fewer streams keep the split's
        // events, so a trial whose reused ids are over by a little is over by more after it.
        self.split_over |= over.split.is_some();
        self.narrow(over.needed(), max_events, self.split_over)?;
        self.budgets.max_events = Some(max_events);
        self.budgets.event_budget_streams = Some(self.assignment.count);
        Ok(())
    }

    /// The last resort before [`Self::fewer`] gives up: where one policy stream (or none) was
    /// `over` `max_events` in the pipeline's own order, the same streams run in the order of
    /// [`phases::phase_order`], which groups the syncs the streams GE pins need. False (nothing
    /// changed) where the streams run so already, where more policy streams are left to cut,
    /// or where the options fix the order (`compat=ge`, `execution_order=memory`). The report's
    /// `budgets` says so when the trial fits: `event_budget_order` and the ids the pipeline's
    /// order needed (`pipeline_order_event_ids`).
    pub fn phase_order(&mut self, over: &OverBudget, options: &Options, max_events: u32) -> bool {
        let fixed = options.compat_ge || options.execution_order == crate::graph::ExecutionOrder::Memory;
        if self.assignment.count > 1 || self.unphased.is_some() || fixed {
            return false;
        }
        let logical = self.logical();
        if logical.main_stream_count + logical.attached_count <= 1 {
            return false;
        }
        // Within one stream every policy's assignment is `single`'s (the policies' tests hold
        // them to it), so the order is the input's, shared by a search's candidates.
        debug_assert!(single(&self.ctx).stream == self.assignment.stream, "one stream is single's");
        let phased = self.ctx.input.phased.get_or_init(|| phases::phase_order(&self.ctx, &logical.node_stream));
        self.assignment.order = phased.clone();
        self.unphased = Some(*over);
        self.budgets.max_events = Some(max_events);
        self.budgets.event_budget_order = Some("phases");
        self.budgets.pipeline_order_event_ids = Some(over.needed());
        true
    }

    /// Fewer policy streams where the streams that ids reused by lifetime kept within
    /// `max_events` split into more physical streams than the device creates: cut as one id per
    /// sync (`exact` ids) would cut them. The report's `budgets` records the cut as the device's
    /// (`device_limit_streams`), not the event budget's. Only with more than one policy stream.
    pub fn fewer_for_device(&mut self, exact: u32, max_events: u32) -> Result<()> {
        self.narrow(exact, max_events, false)?;
        self.budgets.max_events = Some(max_events);
        self.budgets.device_limit_streams = Some(self.assignment.count);
        Ok(())
    }

    /// The policy's assignment again with fewer streams: in proportion to `needed` ids over
    /// `max_events`, at least one fewer (at least half fewer when `halve`), at least one.
    fn narrow(&mut self, needed: u32, max_events: u32, halve: bool) -> Result<()> {
        let count = self.assignment.count;
        let mut fewer = (u64::from(count) * u64::from(max_events) / u64::from(needed)) as u32;
        if halve {
            fewer = fewer.min(count / 2);
        }
        let cap = fewer.min(count - 1).max(1);
        // Within one stream every policy puts every task node on it, which is `single`'s
        // assignment (a test holds every policy to it): the policy's own run, list's
        // unbounded one for the report among them, would compute the same at full cost.
        self.assignment = if cap == 1 {
            single(&self.ctx)
        } else {
            (self.assign)(&self.ctx, self.policy.arg, cap, &mut PolicyReport::default())?.0
        };
        Ok(())
    }

    /// The policy streams of the current assignment.
    pub fn streams(&self) -> u32 {
        self.assignment.count
    }

    /// The current streams fit `max_events` only with ids reused by lifetime: they needed
    /// `exact` ids with one per sync. The report's `budgets` says so.
    pub fn reused(&mut self, exact: u32, max_events: u32) {
        self.budgets.max_events = Some(max_events);
        self.budgets.event_reuse = Some("lifetime");
        self.budgets.exact_event_ids = Some(exact);
    }

    /// The policy's report, with the `budgets` object when a budget bound.
    pub fn into_report(mut self) -> Result<PolicyReport> {
        if let Some((cap, max_streams)) = self.uncounted {
            let made = (self.assign)(&self.ctx, self.policy.arg, u32::MAX, &mut PolicyReport::default())?.0.count;
            if made > cap {
                self.budgets.max_streams = Some(max_streams);
                self.budgets.unbudgeted_streams = Some(made);
            }
        }
        let mut report = self.report;
        if !self.budgets.is_empty() {
            report.budgets = Some(self.budgets);
        }
        Ok(report)
    }
}

/// The syncs every plan of `ctx`'s model under `options` needs with one id per sync
/// ([`forced_syncs`]): pinned nodes keep their GE streams, task nodes run on the policy's
/// streams (none of them pinned), followers and nodes on no stream may run anywhere.
pub fn pinned_forced_syncs(ctx: &Ctx<'_>, options: &Options, facts: &ModelFacts) -> ForcedSyncs {
    // GE's assignment may attach streams the graph does not ask for (`_force_attach_stream`).
    if ctx.base.attached_count > 0 {
        return ForcedSyncs { none: Some("attached streams"), ..ForcedSyncs::default() };
    }
    let place = ctx
        .model
        .nodes
        .ids()
        .map(|n| match (ctx.role[n], ctx.base.node_stream[n]) {
            (Role::Pinned, Some(s)) => Place::Fixed(s.0),
            (Role::Task, _) => Place::Free,
            _ => Place::Unknown,
        })
        .collect();
    forced_syncs(ctx.model, facts, &place, !options.compat_ge)
}

/// What pins GE's stream `s`, from its first pinned node: the label, group or engine.
fn pinned_by(ctx: &Ctx<'_>, s: u32) -> String {
    let model = ctx.model;
    let Some(n) =
        model.nodes.ids().find(|&n| ctx.role[n] == Role::Pinned && ctx.base.node_stream[n].is_some_and(|t| t.0 == s))
    else {
        return "pinned".into();
    };
    let (node, a) = (&model.nodes[n], &model.nodes[n].attrs);
    let why = if let Some(l) = &a.stream_label {
        format!("stream label '{l}'")
    } else if let Some(l) = &a.user_stream_label {
        format!("user stream label '{l}'")
    } else if let Some(g) = &a.parallel_group {
        format!("parallel group '{g}'")
    } else if model.engine(n).independent {
        format!("engine {}", model.engine(n).name)
    } else {
        format!("{} '{}'", node.op_type, node.name)
    };
    format!("{why}, first node '{}'", node.name)
}

/// The policies' unit-test inputs.
#[cfg(test)]
pub(crate) mod testing {
    use super::Ctx;
    use crate::graph::synth::{Family, generate};

    /// `a`, a schedule's assignment under `cap` on `ctx` (of graph `name`), is within the cap
    /// and gives every task node a stream and no other node one.
    pub fn assert_streams_within(name: &str, ctx: &Ctx<'_>, a: &super::Assignment, cap: u32) {
        assert!(a.count <= cap, "{name}: {} streams over cap {cap}", a.count);
        for &n in &ctx.order {
            match ctx.role[n] {
                super::Role::Task => {
                    assert!(a.stream[n].is_some_and(|s| s < a.count), "{name}: task node without a stream")
                }
                _ => assert!(a.stream[n].is_none(), "{name}: a node the policy does not place got a stream"),
            }
        }
    }

    /// Runs `check` on the context of a 3000-node graph of each of three synthetic families
    /// (layered, Inception-like, random; seed 7), with the family's name.
    pub fn each_synth_ctx(mut check: impl FnMut(&str, &Ctx<'_>)) {
        for family in [Family::Layered { width: 8 }, Family::Inception, Family::Random { window: None }] {
            let model = generate(family, 3000, 7).expect("valid");
            check(&family.name(), &Ctx::new(&model, &model.options).expect("GE's pass chain runs"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::synth::{Family, generate};

    /// The policies' bottom levels, walked by topological position over `Ctx::succ`, are the
    /// scheduling core's, walked by node over the model's edges.
    #[test]
    fn bottom_levels_by_position_are_the_core_bottom_levels() {
        for family in
            [Family::Layered { width: 8 }, Family::Random { window: None }, Family::Dense { density: 8, mixed: true }]
        {
            let model = generate(family, 600, 3).expect("valid");
            let ctx = Ctx::new(&model, &model.options).expect("GE's pass chain runs");
            let core = schedule::bottom_levels(&model, |n| ctx.cost(n));
            let by_pos = ctx.bottom_levels(|n| ctx.cost(n));
            let timing = ctx.timing();
            for (p, &n) in ctx.order.enumerate() {
                assert_eq!(timing.level[p].to_bits(), by_pos[p].to_bits(), "{}: shared level", family.name());
                assert_eq!(timing.cost[p].to_bits(), ctx.cost(n).to_bits(), "{}: shared cost", family.name());
                assert_eq!(timing.units[p], ctx.units(n), "{}: shared units", family.name());
            }
            assert!(by_pos.iter().any(|&l| l > 0.0), "{}: some node has a cost", family.name());
            for (p, &n) in ctx.order.enumerate() {
                assert_eq!(by_pos[p].to_bits(), core[n].to_bits(), "{}: node {}", family.name(), model.nodes[n].name);
            }
        }
    }

    /// The ceiling the event budget checks first is never under the syncs the pinned streams
    /// force, with the contraction and without (compat=ge), on the random families (which have
    /// pins); it is tight enough to spare the bound where the budget is far.
    #[test]
    fn the_forced_ceiling_is_at_least_the_bound() {
        let mut positive = 0;
        for family in [Family::Random { window: None }, Family::Random { window: Some(32) }] {
            for (n, seed) in [(600, 3), (3000, 7), (3000, 8)] {
                let model = generate(family, n, seed).expect("valid");
                let facts = ModelFacts::build(&model);
                for compat in [false, true] {
                    let options = Options { compat_ge: compat, ..model.options.clone() };
                    let ctx = Ctx::new(&model, &options).expect("GE's pass chain runs");
                    let (forced, ceiling) = (pinned_forced_syncs(&ctx, &options, &facts).ids, ctx.forced_ceiling());
                    assert!(u64::from(forced) <= ceiling, "{} compat={compat}: {forced} over {ceiling}", model.name);
                    positive += usize::from(forced > 0);
                    if family == (Family::Random { window: None }) && n == 3000 {
                        assert!(ceiling < 1024, "{}: ceiling {ceiling}", model.name);
                    }
                }
            }
        }
        assert!(positive >= 8, "{positive} positive bounds");
    }

    /// Every policy schedule on the engine keeps the engine's invariants
    /// ([`schedule::trace::check`]; the ideal's and the execution order's tests are beside
    /// them): `list`, `earliest:N` and `fifo:N`
    /// under caps that bind and one that does not, the budget merges of chains and of
    /// per-operator's streams.
    #[test]
    fn every_policy_schedule_keeps_the_engine_invariants() {
        use crate::compile::schedule::trace::{Run, check, traced};
        let models =
            crate::graph::synth::test_models(800, Some(6), &["bert_base", "googlenet", "resnet50_train", "vit_b_16"]);
        let mut runs = 0;
        for model in &models {
            let ctx = Ctx::new(model, &model.options).expect("GE's pass chain runs");
            let n = ctx.order.len();
            let all: Vec<usize> = (0..n).collect();
            let preds = |p: usize| ctx.pred.of(Pos::new(p)).iter().map(|q| q.index()).collect();
            let mut checked = |what: String, traced: Vec<Run>| {
                for r in &traced {
                    check(r, n, &all, preds, &format!("{} {what}", model.name));
                }
                runs += traced.len();
            };
            for cap in [2, 8, 64] {
                checked(format!("list {cap}"), traced(|| list::assign(&ctx, cap)).1);
                checked(format!("earliest {cap}"), traced(|| earliest::assign(&ctx, cap)).1);
                checked(format!("fifo {cap}"), traced(|| fifo::assign(&ctx, cap)).1);
            }
            let chains = min_streams::chain_cover(&ctx).chains;
            for budget in [2, 4] {
                checked(format!("budget {budget}"), traced(|| budget::merge_groups(&ctx, &chains, budget)).1);
            }
            let per_op = per_operator::assign(&ctx);
            checked("per-operator in 3".into(), traced(|| budget::merge_assignment(&ctx, &per_op, 3)).1);
        }
        assert!(runs > 60, "{runs} runs checked");
    }
}
