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
use super::allocation::{Allocation, Stage};
use super::split::{self, SplitSteps, TaskCounts, TaskLimits};
use super::summary::ModelCounts;
use super::sync::{self, NodeFacts, RawSync, SyncState, continuous, ge_opt, insert, materialise, reuse};
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

/// GE's `StreamAllocator` between its steps.
pub struct StepContext<'m> {
    model: &'m Model,
    options: Options,
    limits: TaskLimits,
    tasks: TaskCounts,
    alloc: Allocation,
    sync: SyncState<'m>,
    kind: SyncKind,
    /// GE's `event_num_` (`notify_num_` under `event=notify`) for the logical syncs.
    counter: u32,
    /// `GenerateSyncEventNodes` ran: the logical syncs have Send/Recv nodes.
    generated: bool,
    activation: Activation,
    /// The pieces `SplitStreams` added to each logical stream; `None` before it.
    pieces: Option<SplitPieces>,
    trace: StepTrace,
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
    /// The allocator over a logical allocation: its syncs (the events given with the graph)
    /// seed the event table with their own ids, the nodes' `active_stream_list` attributes seed
    /// the activation lists.
    pub fn new(
        model: &'m Model,
        options: Options,
        limits: TaskLimits,
        tasks: TaskCounts,
        mut alloc: Allocation,
    ) -> Result<Self> {
        let kind = sync::SyncConfig::new(model, &options).kind;
        let mut lists = Vec::new();
        for n in model.all_nodes() {
            if let Some(list) = given_active_list(model, n)? {
                lists.push((n, list));
            }
        }
        if !lists.is_empty() {
            alloc.activations = lists;
        }
        let mut st = SyncState::new(model, alloc.logical_stream.clone(), alloc.attached.clone(), kind);
        // The logical passes named before the steps may have moved a given event's end.
        for p in &alloc.syncs {
            let (from, to) = (st.end_stream(p.from), st.end_stream(p.to));
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
        for p in &alloc.syncs {
            let attached_phase = p.from.attached.is_some() || p.to.attached.is_some();
            st.syncs.push(RawSync { from: p.from, to: p.to, id: p.id.0, alive: true, attached_phase });
        }
        let counter = alloc.sync_count();
        alloc.sync_kind = kind;
        let activation = Activation::new(model, &alloc, options.next_stream);
        let mut ctx = StepContext {
            model,
            options,
            limits,
            tasks,
            alloc,
            sync: st,
            kind,
            counter,
            generated: false,
            activation,
            pieces: None,
            trace: StepTrace::default(),
        };
        ctx.trace.input = ctx.counts();
        Ok(ctx)
    }

    pub fn allocation(&self) -> &Allocation {
        &self.alloc
    }

    /// The allocation and the counts after each step.
    pub fn finish(self) -> (Allocation, StepTrace) {
        (self.alloc, self.trace)
    }

    /// GE's counts now.
    pub fn counts(&self) -> StepCounts {
        let mut c = StepCounts::of(self.model, &self.alloc);
        match self.kind {
            SyncKind::Event => c.events = self.counter,
            SyncKind::Notify => c.notifies = self.counter,
        }
        c
    }

    /// Runs one registered step and records the counts after it.
    pub fn run(&mut self, name: &'static str, step: fn(&mut StepContext<'_>) -> Result<()>) -> Result<()> {
        step(self)?;
        let c = self.counts();
        self.trace.after.push((name, c));
        Ok(())
    }

    /// Refuses a step on logical streams once the split has run.
    fn before_split(&self, step: &str) -> Result<()> {
        if self.pieces.is_some() {
            bail!(Stage, "{step} works on logical streams and runs before SplitStreams; name it earlier in the list");
        }
        Ok(())
    }

    /// Writes the event table into the allocation (and the Send/Recv nodes, once generated).
    fn commit(&mut self) {
        self.alloc.syncs = self.sync.pairs();
        self.alloc.sync_kind = self.kind;
        if self.alloc.stage < Stage::Sync {
            self.alloc.stage = Stage::Sync;
        }
        if self.generated {
            self.generate_nodes();
        }
    }

    /// A step that adds pairs: GE hands each the next id of its counter.
    fn adding(&mut self, step: &str, f: impl FnOnce(&mut SyncState<'m>) -> Result<()>) -> Result<()> {
        self.before_split(step)?;
        let before = self.sync.syncs.len();
        f(&mut self.sync)?;
        for s in &mut self.sync.syncs[before..] {
            s.id = self.counter;
            self.counter += 1;
        }
        self.commit();
        Ok(())
    }

    /// A step that drops or renumbers pairs.
    fn changing(&mut self, step: &str, f: impl FnOnce(&mut SyncState<'m>, u32) -> u32) -> Result<()> {
        self.before_split(step)?;
        self.counter = f(&mut self.sync, self.counter);
        self.commit();
        Ok(())
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

    fn store_activation(&mut self) {
        self.activation.store(self.model, &mut self.alloc);
    }

    /// The split-stage steps, with GE's cut (`compat=ge`) and GE's stream counter.
    fn split(&mut self, steps: SplitSteps) -> Result<SplitPieces> {
        let options = Options { compat_ge: true, ..self.options.clone() };
        let steps = SplitSteps {
            activate: false,
            next_stream: self.options.next_stream,
            event_base: Some(self.counter).filter(|_| self.kind == SyncKind::Event),
            ..steps
        };
        split::split_steps(self.model, &options, &mut self.alloc, &self.limits, &self.tasks, steps)
    }
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
    c.changing("RefreshContinuousEvents", |st, _| continuous::refresh_continuous_events(st))
}

/// GE: `ReuseEventForMultiDims`, on ids made dense first.
pub fn reuse_event_for_multi_dims(c: &mut StepContext<'_>) -> Result<()> {
    c.changing("ReuseEventForMultiDims", |st, n| {
        if reuse::dims_branches(st.model).is_none() {
            return n;
        }
        let dense = densify(st);
        reuse::reuse_event_for_multi_dims_counted(st, dense).count
    })
}

/// GE: `GenerateSyncEventNodes`: a Send after each record and a Recv before each wait. After
/// the split it has nothing left to do: the split makes its own events' nodes.
pub fn generate_sync_event_nodes(c: &mut StepContext<'_>) -> Result<()> {
    if c.pieces.is_some() || !sync::SyncConfig::new(c.model, &c.options).materialise {
        return Ok(());
    }
    c.generated = true;
    c.commit();
    Ok(())
}

/// GE: `SetActiveStreamsByLabel`.
pub fn set_active_streams_by_label(c: &mut StepContext<'_>) -> Result<()> {
    c.before_split("SetActiveStreamsByLabel")?;
    c.activation.by_label(c.model, &c.alloc)?;
    c.store_activation();
    Ok(())
}

/// GE: `SetActiveStreamsForSubgraphs`.
pub fn set_active_streams_for_subgraphs(c: &mut StepContext<'_>) -> Result<()> {
    c.before_split("SetActiveStreamsForSubgraphs")?;
    c.activation.for_subgraphs(c.model, &c.alloc);
    c.store_activation();
    Ok(())
}

/// GE: `UpdateStreamSwitchByLogicStream` (without the loop, its own step here).
pub fn update_stream_switch_by_logic_stream(c: &mut StepContext<'_>) -> Result<()> {
    c.before_split("UpdateStreamSwitchByLogicStream")?;
    c.activation.stream_switch(c.model, &mut c.alloc)?;
    c.store_activation();
    Ok(())
}

/// GE: `SetActiveStreamsForLoop`. Before the split: the loop active node's list and its events
/// (the last node of each stream it activates signals the StreamSwitch before it), each event
/// with the next id. After the split: the list over physical streams, as `UpdateActiveStreams`
/// redoes it.
pub fn set_active_streams_for_loop(c: &mut StepContext<'_>) -> Result<()> {
    if c.pieces.is_some() {
        activate::loop_after_split(c.model, &mut c.alloc);
        return Ok(());
    }
    c.activation.for_loop(c.model, &c.alloc);
    c.store_activation();
    if !c.sync.facts.any(NodeFacts::LOOP_ACTIVE) {
        return Ok(());
    }
    let loops: Vec<(NodeId, Vec<StreamId>)> =
        c.alloc.activations.iter().filter(|(n, _)| c.sync.facts.has(*n, NodeFacts::LOOP_ACTIVE)).cloned().collect();
    let added = insert::insert_loop_events(&mut c.sync, &loops)?;
    for r in added {
        c.sync.syncs[r as usize].id = c.counter;
        c.counter += 1;
    }
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
    if c.kind == SyncKind::Event {
        c.counter = c.counter.max(c.alloc.sync_count());
    }
    Ok(())
}

/// GE: `UpdateActiveStreams`: the split pieces join the lists of their logical stream, then
/// `CheckStreamActived`.
pub fn update_active_streams(c: &mut StepContext<'_>) -> Result<()> {
    let Some(pieces) = c.pieces.as_ref() else {
        bail!(Stage, "UpdateActiveStreams updates the lists after SplitStreams; name SplitStreams before it");
    };
    activate::update_after_split(c.model, &mut c.alloc, pieces)
}
