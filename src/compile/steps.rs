//! GE's steps after logical allocation, one at a time: what `stream-alloc pass` runs when it
//! is given a sync, activation or split step (ge-compiler.md §6–§8).
//!
//! GE's own unit tests of these steps build a graph whose logical streams are already assigned,
//! sometimes with events already in the allocator's maps, and call one step (or a few) on it.
//! [`StepContext`] is that allocator: the logical allocation (given or computed by the logical
//! passes named before), the raw event table with GE's running event counter
//! (`event_num_`, `notify_num_` under `event=notify`), the activation maps and, once
//! `SplitStreams` ran, the pieces of each split stream.
//!
//! Each step runs GE's own algorithm, whatever `compat` says: `OptimizeSyncEvents` is GE's
//! pairwise family, `SplitStreams` GE's greedy cut (with the project's one deviation, the
//! split's own events counted: see [`crate::compile::split`]). The project's replacements (the
//! exact sync reduction, the split plan) run in the whole pipeline (`allocate`, `allocate
//! --from`). A step adds nothing GE's step does not add: `SplitStreams` alone inserts no
//! events but its own, and only the Send/Recv nodes `GenerateSyncEventNodes` made are counted
//! as tasks.
//!
//! After every step the context records GE's counts ([`StepCounts`]): streams, events,
//! notifies and pairs, written as allocation JSON's `steps` object.

use serde_json::{Value, json};

use super::activate::{self, Activation, SplitPieces};
use super::allocation::{Allocation, Stage, SyncEnd};
use super::split::{self, SplitIds, SplitSteps, TaskCounts, TaskLimits};
use super::summary::ModelCounts;
use super::sync::{self, ModelFacts, NodeFacts, SyncState, continuous, ge_opt, insert, materialise, reduce, reuse};
use crate::bail;
use crate::error::Result;
use crate::graph::{IdVec, InsertedId, Model, NodeId, Options, StreamId, SyncKind};

/// GE's counts after a step: `stream_num_`, `event_num_`, `notify_num_` and the pairs kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StepCounts {
    /// Streams in use: logical, attached and created ones before the split, physical after.
    pub streams: u32,
    /// GE's event counter (one past the largest event id handed out; the number of distinct
    /// ids once refreshed).
    pub events: u32,
    /// GE's notify counter, likewise (`event=notify`).
    pub notifies: u32,
    /// Record/wait pairs kept, the split's included.
    pub pairs: usize,
}

impl StepCounts {
    /// The counts of an allocation: before the split its streams are the logical, attached and
    /// created ones; after it the physical ones.
    pub fn of(model: &Model, alloc: &Allocation) -> Self {
        let c = ModelCounts::of(alloc);
        let streams =
            if alloc.stage >= Stage::Split { alloc.physical_count() } else { activate::stream_space(model, alloc) };
        StepCounts {
            streams,
            events: c.event_num,
            notifies: c.notify_num,
            pairs: alloc.syncs.len() + alloc.split_events.len(),
        }
    }

    fn json(&self) -> Value {
        json!({"streams": self.streams, "events": self.events, "notifies": self.notifies, "pairs": self.pairs})
    }
}

/// The counts before the first step and after each one, by GE's step name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StepTrace {
    pub input: StepCounts,
    pub after: Vec<(&'static str, StepCounts)>,
}

impl StepTrace {
    /// Allocation JSON's `steps` object.
    pub fn to_json(&self) -> Value {
        let after: Vec<Value> = self
            .after
            .iter()
            .map(|(name, c)| {
                let mut v = c.json();
                v["step"] = json!(name);
                v
            })
            .collect();
        json!({"input": self.input.json(), "after": after})
    }
}

/// How a [`StepContext`] numbers the pairs a step adds: the id allocator, chosen by the caller.
/// Both rules give every pair of one id class the same id and distinct classes distinct ids,
/// and the continuity refresh numbers classes by the send-list walk alone, so from the first
/// refresh on the two rules give the same ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdRule {
    /// GE's running counter (`event_num_`, `notify_num_` under `event=notify`), as `stream-alloc
    /// pass` reports it: events given with the graph keep their ids, and each pair a step adds
    /// takes the counter's next value, so the counts after every step are GE's.
    Counter,
    /// The pipeline's: a pair's raw id is its place in the event table (given pairs that share
    /// an id share the first one's place), set as the pair is added, and the counter moves only
    /// when a step renumbers. No per-step pass over the added pairs.
    Position,
}

/// A step after logical allocation, as the registry holds it.
pub type StepFn = fn(&mut StepContext<'_>) -> Result<()>;

/// What the steps did to the event table, for reports and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Pairs in the table: given, then inserted by any step, before any was dropped.
    pub inserted: usize,
    /// Pairs kept.
    pub kept: usize,
    /// The counter at the end: the ids in use (after a refresh, their number).
    pub ids: u32,
    /// Ids saved by multi-dims or lifetime reuse.
    pub reused: usize,
    /// The steps run, by GE name, in order.
    pub steps: Vec<&'static str>,
}

/// GE's `StreamAllocator` between its steps: the allocation it works on, the event table and
/// its counter, the activation maps and, after `SplitStreams`, the pieces of each split stream.
/// `stream-alloc pass` ([`StepContext::new`]) and the pipeline's sync stage
/// ([`StepContext::for_stage`]) run their steps through the same context; they differ in the
/// id rule and in whether counts are recorded after every step.
pub struct StepContext<'m> {
    model: &'m Model,
    options: &'m Options,
    cfg: sync::SyncConfig,
    limits: TaskLimits,
    tasks: TaskCounts,
    alloc: &'m mut Allocation,
    sync: SyncState<'m>,
    ids: IdRule,
    /// GE's `event_num_` (`notify_num_` under `event=notify`) for the logical syncs.
    counter: u32,
    /// The counter when a step first added an attached-stream pair: where the main ids end
    /// for `RefreshContinuousAttachedEvents`. A full refresh forgets it.
    attached_base: Option<u32>,
    /// Ids saved by reuse steps.
    reused: usize,
    /// The event table changed since it was last written into the allocation.
    dirty: bool,
    /// `GenerateSyncEventNodes` ran: the logical syncs have Send/Recv nodes.
    generated: bool,
    /// GE's activation maps, built on first use (the pipeline's sequences never use them).
    activation: Option<Activation>,
    /// The pieces `SplitStreams` added to each logical stream; `None` before it.
    pieces: Option<SplitPieces>,
    /// The counts before the first step and after each (`pass` only: each costs a walk over
    /// the allocation).
    trace: Option<StepTrace>,
    ran: Vec<&'static str>,
}

/// The streams of the node's `active_stream_list` (GE's attribute, given with the graph).
fn given_active_list(model: &Model, n: NodeId) -> Result<Option<Vec<StreamId>>> {
    let node = &model.nodes[n];
    let Some(list) = node.ge_attrs.get("active_stream_list").and_then(Value::as_array) else { return Ok(None) };
    let mut out = Vec::with_capacity(list.len());
    for v in list {
        match v.as_u64() {
            Some(s) if s < 1 << 20 => out.push(StreamId(s as u32)),
            _ => bail!(
                Attribute,
                "node '{}': ge_attrs.active_stream_list holds {v}; a stream id is an integer in [0, 1048575]",
                node.name
            ),
        }
    }
    Ok(Some(out))
}

impl<'m> StepContext<'m> {
    /// `stream-alloc pass`'s allocator over a logical allocation, with GE's counter: its syncs
    /// (the events given with the graph) seed the event table with their own ids, the nodes'
    /// `active_stream_list` attributes seed the activation lists, and the counts are recorded
    /// after every step.
    pub fn new(
        model: &'m Model,
        options: &'m Options,
        limits: TaskLimits,
        tasks: TaskCounts,
        alloc: &'m mut Allocation,
    ) -> Result<Self> {
        let mut lists = Vec::new();
        for n in model.all_nodes() {
            if let Some(list) = given_active_list(model, n)? {
                lists.push((n, list));
            }
        }
        if !lists.is_empty() {
            alloc.activations = lists;
        }
        // The logical passes named before the steps may have moved a given event's end.
        let end_stream = |end: SyncEnd| end.attached.or(alloc.logical_stream[end.node]);
        for p in &alloc.syncs {
            let (from, to) = (end_stream(p.from), end_stream(p.to));
            if from.is_none() || to.is_none() || from == to {
                bail!(
                    Field,
                    "event {} from '{}' to '{}': after the logical passes its ends are on streams {} and {}; an \
                     event joins two different streams",
                    p.id,
                    model.nodes[p.from.node].name,
                    model.nodes[p.to.node].name,
                    from.map_or(-1, |s| i64::from(s.0)),
                    to.map_or(-1, |s| i64::from(s.0))
                );
            }
        }
        let cfg = sync::SyncConfig::new(model, options);
        let mut ctx = Self::for_stage(model, options, cfg, alloc, IdRule::Counter);
        ctx.limits = limits;
        ctx.tasks = tasks;
        ctx.activation = Some(Activation::new(model, ctx.alloc, options.next_stream));
        ctx.trace = Some(StepTrace { input: ctx.counts(), after: Vec::new() });
        Ok(ctx)
    }

    /// The pipeline's sync stage over a logical allocation (`cfg` as the options give it, or
    /// with Send/Recv nodes turned off): syncs the allocation holds are kept ahead of the
    /// inserted ones, numbered by `ids`; no counts are recorded.
    pub fn for_stage(
        model: &'m Model,
        options: &'m Options,
        cfg: sync::SyncConfig,
        alloc: &'m mut Allocation,
        ids: IdRule,
    ) -> Self {
        Self::for_stage_with(model, options, cfg, alloc, ids, None)
    }

    /// [`StepContext::for_stage`] from the model's [`ModelFacts`] when the caller keeps them.
    pub fn for_stage_with(
        model: &'m Model,
        options: &'m Options,
        cfg: sync::SyncConfig,
        alloc: &'m mut Allocation,
        ids: IdRule,
        facts: Option<&'m ModelFacts>,
    ) -> Self {
        let order = (!alloc.has_ge_order()).then(|| alloc.order.clone());
        let (stream, attached) = (alloc.logical_stream.clone(), alloc.attached.clone());
        let mut st = SyncState::in_order_with(model, stream, attached, cfg.kind, order, facts);
        st.seed(&alloc.syncs, ids == IdRule::Counter);
        let counter = match ids {
            IdRule::Counter => alloc.sync_count(),
            IdRule::Position => st.syncs.len() as u32,
        };
        alloc.sync_kind = cfg.kind;
        StepContext {
            model,
            options,
            cfg,
            limits: TaskLimits::from_options(options),
            tasks: TaskCounts::default(),
            alloc,
            sync: st,
            ids,
            counter,
            attached_base: None,
            reused: 0,
            dirty: false,
            generated: false,
            activation: None,
            pieces: None,
            trace: None,
            ran: Vec::new(),
        }
    }

    /// A context that goes on from this one's state under other `options` and `cfg`, on
    /// `alloc`, which becomes a copy of this context's allocation: two sequences that share
    /// their first steps run those once (the event budget's trial, one id per sync and then
    /// reused by lifetime). The steps to come must read `options` and `cfg` only where the
    /// sequences differ.
    pub fn fork<'n>(&self, options: &'n Options, cfg: sync::SyncConfig, alloc: &'n mut Allocation) -> StepContext<'n>
    where
        'm: 'n,
    {
        alloc.clone_from(self.alloc);
        StepContext {
            model: self.model,
            options,
            cfg,
            limits: self.limits,
            tasks: self.tasks.clone(),
            alloc,
            sync: self.sync.clone(),
            ids: self.ids,
            counter: self.counter,
            attached_base: self.attached_base,
            reused: self.reused,
            dirty: self.dirty,
            generated: self.generated,
            activation: self.activation.clone(),
            pieces: self.pieces.clone(),
            trace: self.trace.clone(),
            ran: self.ran.clone(),
        }
    }

    /// The allocation as the steps left it so far.
    pub fn allocation(&mut self) -> &Allocation {
        self.flush();
        self.alloc
    }

    /// Writes what is left into the allocation; the counts after each step (`pass`) and what
    /// the steps did to the event table.
    pub fn finish(mut self) -> (Option<StepTrace>, SyncReport) {
        self.flush();
        let report = self.report();
        (self.trace.take(), report)
    }

    /// What the steps did to the event table so far, written into the allocation or not.
    pub fn report(&self) -> SyncReport {
        SyncReport {
            inserted: self.sync.syncs.len(),
            kept: self.sync.alive_count(),
            ids: self.counter,
            reused: self.reused,
            steps: self.ran.clone(),
        }
    }

    /// The allocation's [`ModelCounts`] once the steps' event table is written into it, without
    /// writing it: a caller that only needs the sync ids (an event-budget trial over budget)
    /// drops the context instead and never builds the pairs or their Send/Recv nodes.
    pub fn pending_counts(&self) -> ModelCounts {
        let mut c = ModelCounts::of(self.alloc);
        if self.dirty {
            // What `flush` would write: the kept pairs, so the count is their largest id + 1
            // (`Allocation::sync_count`), and the split's events after them (none before it).
            let kept = self.sync.alive();
            let (count, pairs) = kept.fold((0u32, 0usize), |(m, k), (_, s)| (m.max(s.id + 1), k + 1));
            let split = match self.cfg.kind {
                SyncKind::Notify => self.alloc.split_event_id_count(),
                SyncKind::Event => self.alloc.split_syncs_from.map_or(0, |from| pairs.saturating_sub(from)) as u32,
            };
            (c.event_num, c.notify_num) = match self.cfg.kind {
                SyncKind::Event => (count, 0),
                SyncKind::Notify => (split, count),
            };
        }
        c
    }

    /// GE's counts now.
    pub fn counts(&self) -> StepCounts {
        let mut c = StepCounts::of(self.model, self.alloc);
        match self.cfg.kind {
            SyncKind::Event => c.events = self.counter,
            SyncKind::Notify => c.notifies = self.counter,
        }
        c
    }

    /// Runs one registered step, and records the counts after it when the caller asked for them.
    pub fn run(&mut self, name: &'static str, step: StepFn) -> Result<()> {
        step(self)?;
        self.ran.push(name);
        if self.trace.is_some() {
            self.flush();
            let c = self.counts();
            self.trace.as_mut().expect("checked above").after.push((name, c));
        }
        Ok(())
    }

    /// Refuses a step on logical streams once the split has run.
    fn before_split(&self, step: &str) -> Result<()> {
        if self.pieces.is_some() {
            bail!(Stage, "{step} works on logical streams and runs before SplitStreams; name it earlier in the list");
        }
        Ok(())
    }

    /// Marks the event table changed; with counts recorded it is written at once, otherwise
    /// when a step reads the allocation or the run ends.
    fn commit(&mut self) {
        self.dirty = true;
        if self.trace.is_some() {
            self.flush();
        }
    }

    /// Writes the event table into the allocation (and the Send/Recv nodes, once generated).
    fn flush(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        self.alloc.syncs = self.sync.pairs();
        self.alloc.sync_kind = self.cfg.kind;
        if self.alloc.stage < Stage::Sync {
            self.alloc.stage = Stage::Sync;
        }
        if self.generated {
            self.generate_nodes();
        }
    }

    /// Gives the pairs `added` (raw ids) the counter's next ids, in order.
    fn take_ids(&mut self, added: impl IntoIterator<Item = u32>) {
        for r in added {
            self.sync.syncs[r as usize].id = self.counter;
            self.counter += 1;
        }
    }

    /// A step that adds pairs: under GE's counter each takes the next id.
    fn adding(&mut self, step: &str, f: impl FnOnce(&mut SyncState<'m>) -> Result<()>) -> Result<()> {
        self.before_split(step)?;
        let before = self.sync.syncs.len();
        f(&mut self.sync)?;
        if self.attached_base.is_none() && self.sync.syncs[before..].iter().any(|s| s.attached_phase) {
            self.attached_base = Some(self.counter);
        }
        if self.ids == IdRule::Counter {
            let end = self.sync.syncs.len() as u32;
            self.take_ids(before as u32..end);
        }
        self.commit();
        Ok(())
    }

    /// A step that drops or renumbers pairs: `f` gets the counter and gives the new one and
    /// the ids it saved by reuse.
    fn renumbering(
        &mut self,
        step: &str,
        f: impl FnOnce(&mut SyncState<'m>, u32) -> Result<(u32, usize)>,
    ) -> Result<()> {
        self.before_split(step)?;
        let (counter, saved) = f(&mut self.sync, self.counter)?;
        self.counter = counter;
        self.reused += saved;
        self.commit();
        Ok(())
    }

    /// [`Self::renumbering`] for a step that cannot fail and reuses nothing.
    fn changing(&mut self, step: &str, f: impl FnOnce(&mut SyncState<'m>, u32) -> u32) -> Result<()> {
        self.renumbering(step, |st, n| Ok((f(st, n), 0)))
    }

    /// The Send/Recv (SendNotify/RecvNotify) nodes of the logical syncs, replacing earlier ones
    /// and ahead of the StreamActive nodes, where the pipeline has them.
    fn generate_nodes(&mut self) {
        let old = std::mem::replace(&mut self.alloc.inserted, IdVec::new());
        let mut nodes = materialise::generate_sync_event_nodes(&self.sync);
        let mut moved = vec![InsertedId(u32::MAX); old.len()];
        for (i, node) in old.iter().enumerate() {
            if !node.kind.is_sync() {
                moved[i] = InsertedId::new(nodes.len());
                nodes.push(node.clone());
            }
        }
        for (i, _) in &mut self.alloc.inserted_activations {
            *i = moved[i.index()];
        }
        self.alloc.inserted = IdVec::from_vec(nodes);
    }

    /// Runs an activation step on GE's activation maps (built from the allocation on first
    /// use) and stores the lists in the allocation.
    fn activate(&mut self, f: impl FnOnce(&mut Activation, &Model, &mut Allocation) -> Result<()>) -> Result<()> {
        self.flush();
        let (model, next) = (self.model, self.options.next_stream);
        let alloc = &mut *self.alloc;
        let act = self.activation.get_or_insert_with(|| Activation::new(model, alloc, next));
        f(act, model, alloc)?;
        act.store(model, alloc);
        Ok(())
    }

    /// The split-stage steps, with GE's cut (`compat=ge`) and GE's stream counter.
    fn split(&mut self, steps: SplitSteps) -> Result<SplitPieces> {
        self.flush();
        let options = Options { compat_ge: true, ..self.options.clone() };
        let steps = SplitSteps {
            activate: false,
            ids: SplitIds {
                next_stream: self.options.next_stream,
                event_base: Some(self.counter).filter(|_| self.cfg.kind == SyncKind::Event),
                ..steps.ids
            },
            ..steps
        };
        split::split_steps(self.model, &options, self.alloc, &self.limits, &self.tasks, steps)
    }
}

/// The `is_loop_active` nodes with the logical streams `SetActiveStreamsForLoop` gives them, in
/// execution order. The lists come from the activation stage itself, run on a copy, so the
/// loop's events and its activation list always name the same streams.
fn loop_activations(model: &Model, alloc: &Allocation, facts: &NodeFacts) -> Result<Vec<(NodeId, Vec<StreamId>)>> {
    let is_loop = |n: NodeId| facts.has(n, NodeFacts::LOOP_ACTIVE);
    let mut copy = alloc.clone();
    activate::assign_logical(model, &mut copy)?;
    Ok(copy.activations.into_iter().filter(|(n, _)| is_loop(*n)).collect())
}

/// Ids made dense (0..n) in their order, for a step that wants continuous ids.
fn densify(st: &mut SyncState<'_>) -> u32 {
    let mut ids: Vec<u32> = st.alive().map(|(_, s)| s.id).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.last().is_none_or(|&m| m as usize + 1 == ids.len()) {
        return ids.len() as u32;
    }
    for s in st.syncs.iter_mut().filter(|s| s.alive) {
        s.id = ids.binary_search(&s.id).expect("every alive id was collected") as u32;
    }
    ids.len() as u32
}

// The steps, by GE's name. Each is `fn(&mut StepContext) -> Result<()>` for the registry.

/// GE: `InsertSyncEvents` (with `InsertEventsForSubgraph`).
pub fn insert_sync_events(c: &mut StepContext<'_>) -> Result<()> {
    c.adding("InsertSyncEvents", insert::insert_sync_events)
}

/// GE: `InsertOneEventInTwoNodes` on every edge.
pub fn insert_one_event_in_two_nodes(c: &mut StepContext<'_>) -> Result<()> {
    c.adding("InsertOneEventInTwoNodes", insert::insert_edge_events)
}

/// GE: `InsertEventsForSubgraph`.
pub fn insert_events_for_subgraph(c: &mut StepContext<'_>) -> Result<()> {
    c.adding("InsertEventsForSubgraph", insert::insert_subgraph_events)
}

/// GE: `InsertSyncEventsWithAttachedStream`.
pub fn insert_sync_events_with_attached_stream(c: &mut StepContext<'_>) -> Result<()> {
    c.adding("InsertSyncEventsWithAttachedStream", insert::insert_attached_value_events)
}

/// GE: `CoverAllStreamByNetoutput`.
pub fn cover_all_stream_by_netoutput(c: &mut StepContext<'_>) -> Result<()> {
    c.adding("CoverAllStreamByNetoutput", |st| {
        insert::cover_all_stream_by_netoutput(st);
        Ok(())
    })
}

/// GE: `OptimizeSyncEvents`: by send events, by recv events, by stream activation, then every
/// send of a StreamSwitch dropped.
pub fn optimize_sync_events(c: &mut StepContext<'_>) -> Result<()> {
    c.changing("OptimizeSyncEvents", |st, n| {
        ge_opt::optimize_by_send_events(st);
        ge_opt::optimize_by_recv_events(st);
        ge_opt::optimize_by_stream_activate(st);
        ge_opt::remove_stream_switch_sends(st);
        n
    })
}

/// GE: `OptimizeBySendEvents`.
pub fn optimize_by_send_events(c: &mut StepContext<'_>) -> Result<()> {
    c.changing("OptimizeBySendEvents", |st, n| {
        ge_opt::optimize_by_send_events(st);
        n
    })
}

/// GE: `OptimizeByRecvEvents`.
pub fn optimize_by_recv_events(c: &mut StepContext<'_>) -> Result<()> {
    c.changing("OptimizeByRecvEvents", |st, n| {
        ge_opt::optimize_by_recv_events(st);
        n
    })
}

/// GE: `OptimizeByStreamActivate`.
pub fn optimize_by_stream_activate(c: &mut StepContext<'_>) -> Result<()> {
    c.changing("OptimizeByStreamActivate", |st, n| {
        ge_opt::optimize_by_stream_activate(st);
        n
    })
}

/// GE: `RefreshContinuousEvents` (`RefreshContinuousNotifies` under `event=notify`).
pub fn refresh_continuous_events(c: &mut StepContext<'_>) -> Result<()> {
    c.changing("RefreshContinuousEvents", |st, _| continuous::refresh_continuous_events(st))?;
    c.attached_base = None;
    Ok(())
}

/// GE: the attached-map half of `RefreshContinuousEvents`: only the attached-stream pairs are
/// renumbered, after the main ids (which end where the first attached-stream pair was added),
/// so the main ids a multi-dims reuse gave stay as they are.
pub fn refresh_continuous_attached_events(c: &mut StepContext<'_>) -> Result<()> {
    let base = c.attached_base.unwrap_or(c.counter);
    c.changing("RefreshContinuousAttachedEvents", |st, _| continuous::refresh_continuous_events_keep_main(st, base))
}

/// GE: `_event_multiplexing` (events only, and only above 65 500 ids): declared pairs share the
/// declared ids, then the ids are refreshed. The counter becomes the number of ids in use.
pub fn event_multiplexing(c: &mut StepContext<'_>) -> Result<()> {
    let kind = c.cfg.kind;
    c.renumbering("EventMultiplexing", |st, _| {
        if kind == SyncKind::Event {
            reuse::event_multiplexing(st)?;
        }
        Ok((continuous::distinct_ids(st), 0))
    })
}

/// GE: `ReuseEventForMultiDims`, on ids made dense first.
pub fn reuse_event_for_multi_dims(c: &mut StepContext<'_>) -> Result<()> {
    c.renumbering("ReuseEventForMultiDims", |st, n| {
        if reuse::dims_branches(st.model).is_none() {
            return Ok((n, 0));
        }
        let dense = densify(st);
        let r = reuse::reuse_event_for_multi_dims_counted(st, dense);
        Ok((r.count, r.saved))
    })
}

/// The project's (no GE step): the steps after it insert pairs between task-bearing nodes
/// only, task-less nodes contracted away ([`insert::Contraction`]); GE syncs every edge that
/// crosses streams.
pub fn contract_taskless_nodes(c: &mut StepContext<'_>) -> Result<()> {
    c.before_split("ContractTasklessNodes")?;
    c.sync.contract = true;
    Ok(())
}

/// The project's (no GE step; GE has the pairwise `OptimizeSyncEvents`): the exact reduction,
/// every pair that other pairs and stream order already imply dropped ([`reduce::reduce_exact`]).
pub fn reduce_sync_events(c: &mut StepContext<'_>) -> Result<()> {
    c.changing("ReduceSyncEvents", |st, n| {
        reduce::reduce_exact(st);
        n
    })
}

/// The project's `event_reuse=lifetime` (no GE step): ids refreshed, then a pair takes an id
/// whose last wait already happened, together with `ReuseEventForMultiDims` (the fewer ids of
/// the combinations win: [`reuse::reuse_lifetime_with_multi_dims`]).
pub fn reuse_events_by_lifetime(c: &mut StepContext<'_>) -> Result<()> {
    c.renumbering("ReuseEventsByLifetime", |st, _| Ok(reuse::reuse_lifetime_with_multi_dims(st)))?;
    c.alloc.lifetime_ids = true;
    Ok(())
}

/// The loop's events of `SetActiveStreamsForLoop`, with the lists the whole activation stage
/// gives the loop active node (run on a copy; the lists themselves are the split stage's).
/// Each event takes the next id, out of every optimisation and reuse before it: they run
/// backwards in execution order ([`insert::insert_loop_events`]).
pub fn insert_loop_events(c: &mut StepContext<'_>) -> Result<()> {
    c.before_split("InsertLoopEvents")?;
    if !c.sync.facts.any(NodeFacts::LOOP_ACTIVE) {
        return Ok(());
    }
    let loops = loop_activations(c.model, c.alloc, &c.sync.facts)?;
    let added = insert::insert_loop_events(&mut c.sync, &loops)?;
    c.take_ids(added);
    c.commit();
    Ok(())
}

/// GE: `GenerateSyncEventNodes`: a Send after each record and a Recv before each wait. After
/// the split it has nothing left to do: the split makes its own events' nodes.
pub fn generate_sync_event_nodes(c: &mut StepContext<'_>) -> Result<()> {
    if c.pieces.is_some() || !c.cfg.materialise {
        return Ok(());
    }
    c.generated = true;
    c.commit();
    Ok(())
}

/// GE: `SetActiveStreamsByLabel`.
pub fn set_active_streams_by_label(c: &mut StepContext<'_>) -> Result<()> {
    c.before_split("SetActiveStreamsByLabel")?;
    c.activate(|a, model, alloc| a.by_label(model, alloc))
}

/// GE: `SetActiveStreamsForSubgraphs`.
pub fn set_active_streams_for_subgraphs(c: &mut StepContext<'_>) -> Result<()> {
    c.before_split("SetActiveStreamsForSubgraphs")?;
    c.activate(|a, model, alloc| {
        a.for_subgraphs(model, alloc);
        Ok(())
    })
}

/// GE: `UpdateStreamSwitchByLogicStream` (without the loop, its own step here).
pub fn update_stream_switch_by_logic_stream(c: &mut StepContext<'_>) -> Result<()> {
    c.before_split("UpdateStreamSwitchByLogicStream")?;
    c.activate(|a, model, alloc| a.stream_switch(model, alloc))
}

/// GE: `SetActiveStreamsForLoop`. Before the split: the loop active node's list and its events
/// (the last node of each stream it activates signals the StreamSwitch before it), each event
/// with the next id. After the split: the list over physical streams, as `UpdateActiveStreams`
/// redoes it.
pub fn set_active_streams_for_loop(c: &mut StepContext<'_>) -> Result<()> {
    if c.pieces.is_some() {
        c.flush();
        activate::loop_after_split(c.model, c.alloc);
        return Ok(());
    }
    c.activate(|a, model, alloc| {
        a.for_loop(model, alloc);
        Ok(())
    })?;
    if !c.sync.facts.any(NodeFacts::LOOP_ACTIVE) {
        return Ok(());
    }
    let loops: Vec<(NodeId, Vec<StreamId>)> =
        c.alloc.activations.iter().filter(|(n, _)| c.sync.facts.has(*n, NodeFacts::LOOP_ACTIVE)).cloned().collect();
    let added = insert::insert_loop_events(&mut c.sync, &loops)?;
    c.take_ids(added);
    c.commit();
    Ok(())
}

/// GE: `AssignSingleStream` (single-stream mode only).
pub fn assign_single_stream(c: &mut StepContext<'_>) -> Result<()> {
    c.before_split("AssignSingleStream")?;
    let steps = SplitSteps { assign_single: true, split: false, update_active: false, ..SplitSteps::ALL };
    c.split(steps)?;
    Ok(())
}

/// GE: `SplitStreams`, with the Send/Recv nodes of its events and `PostProcessOfSplitStreams`.
pub fn split_streams(c: &mut StepContext<'_>) -> Result<()> {
    if c.pieces.is_some() {
        bail!(Stage, "SplitStreams runs once; the list names it twice");
    }
    let steps = SplitSteps { assign_single: false, split: true, update_active: false, ..SplitSteps::ALL };
    let pieces = c.split(steps)?;
    c.pieces = Some(pieces);
    c.alloc.stage = Stage::Split;
    if c.cfg.kind == SyncKind::Event {
        c.counter = c.counter.max(c.alloc.sync_count());
    }
    Ok(())
}

/// GE: `UpdateActiveStreams`: the split pieces join the lists of their logical stream, then
/// `CheckStreamActived`.
pub fn update_active_streams(c: &mut StepContext<'_>) -> Result<()> {
    c.flush();
    let Some(pieces) = c.pieces.as_ref() else {
        bail!(Stage, "UpdateActiveStreams updates the lists after SplitStreams; name SplitStreams before it");
    };
    activate::update_after_split(c.model, c.alloc, pieces)
}
