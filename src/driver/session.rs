//! The staged session: the pipeline cut at the points where GE's `ModelBuilder` hands control
//! back to the host (ge-compiler.md §1, seed stream-allocation-constraints.txt). The stages are
//! numbered as [`SessionStage`] numbers them, and as the C header's `SA_SESSION_*`:
//!
//! 1. [`Session::assign_logical_streams`] — `StreamAllocator::AssignLogicalStreams` (or a
//!    policy; `auto` through the session's search);
//!    then (host) memory assignment and task generation: [`Session::set_task_count`];
//! 2. [`Session::insert_syncs`] — `InsertSyncNodesByLogicStream`;
//! 3. [`Session::split_streams`] — `SplitStreamAndRefreshTaskDef` with the host's counts;
//! 4. [`Session::generate_send_recv`] — `GenerateSyncEventNodes`: the inserted nodes become
//!    visible to the host, which builds them into its own graph.
//!
//! The session is the only place that knows this order: the command line, the C ABI, the
//! searches and [`crate::allocate`] all run a session to the stage they need. Its inputs are
//! explicit: the immutable model (owned, `Arc<Model>`, or borrowed), the compile options and
//! the task limits, all resolved by the caller. Each stage runs once, in order; a call out of
//! order is `ErrorKind::Stage` naming the call that must come first.
//!
//! Send/Recv nodes are computed where the pipeline computes them (the sync stage, then the
//! split's own); the session only hands them out at stage 4, once the split has fixed their
//! physical streams.

use std::collections::BTreeSet;
use std::ops::Deref;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::bail;
use crate::compile::policy::{PolicyInput, PolicyReport};
use crate::compile::summary::{ModelCounts, StreamAllocationSummary, split_map_string};
use crate::compile::{self, Allocation, AllocationJson, InsertedNode, Mode, NodeSyncs, Stage, TaskCounts, TaskLimits};
use crate::error::Result;
use crate::graph::{EventId, GraphId, IdVec, Model, NodeId, Options, StreamId, SyncKind};
use crate::memory::{AllocationDocument, MemoryJson, MemoryPlan, plan_allocation};
use crate::simulate::SimConfig;

use super::logical::TrialCache;

/// Chooses among whole pipeline runs for a search mode (`policy=auto`) under the simulator,
/// and hands back what the chosen run computed. The searches sit above the session
/// ([`crate::search`]), so the session is handed one instead of importing it.
pub type Search = fn(&Model, &Options, &TaskLimits, &SimConfig) -> Result<Found>;

/// What a run hands its caller: the allocation, the policy's report, and the session's memory
/// plan, carried over ([`Session::into_compiled`]): planned by the session when its checker or a
/// search asked, otherwise on first use here, once. The document writers, the checker and the
/// C handles take the plan from here (or from the session) instead of planning again.
#[derive(Debug)]
pub struct Compiled {
    pub alloc: Allocation,
    pub report: Option<PolicyReport>,
    memory: std::sync::OnceLock<Option<MemoryPlan>>,
}

impl Compiled {
    /// The allocation's memory plan for `model`, the one it was compiled from.
    pub fn memory(&self, model: &Model) -> Option<&MemoryPlan> {
        self.memory.get_or_init(|| plan_allocation(model, &self.alloc)).as_ref()
    }

    /// The allocation JSON writer for `model`, with the run's memory plan.
    pub fn document<'a>(&'a self, model: &'a Model) -> AllocationJson<'a, MemoryJson<'a>> {
        self.alloc.document(model, self.memory(model))
    }
}

/// A run's allocation after each stage: what a session asked to record them keeps
/// ([`Session::recording`]), and what a session adopts instead of running a stage again.
#[derive(Clone, Debug, Default)]
pub struct Stages {
    pub logical: Option<Allocation>,
    pub sync: Option<Allocation>,
    /// After the split, with the task counts the graph gives.
    pub split: Option<Allocation>,
    /// The memory plan of `split`, when the run planned it (its checker or a search did).
    pub split_memory: Option<Option<MemoryPlan>>,
}

/// What a search found: the chosen run's stages and the search's report. The session adopts
/// both, renamed after the search mode.
#[derive(Clone, Debug)]
pub struct Found {
    pub stages: Stages,
    pub report: PolicyReport,
}

/// How far a session has run: the stage numbers of the module docs, which are also the values
/// of the C header's `SA_SESSION_*` (`capi/session.rs` checks that they agree). GE's
/// `ModelBuilder` hands control back to the host between these stages (ge-compiler.md §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SessionStage {
    /// Built, nothing assigned.
    New = 0,
    Logical = 1,
    Sync = 2,
    Split = 3,
    /// Send/Recv generated: the allocation is complete.
    Generated = 4,
}

impl SessionStage {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStage::New => "new",
            SessionStage::Logical => "logical",
            SessionStage::Sync => "sync",
            SessionStage::Split => "split",
            SessionStage::Generated => "generated",
        }
    }

    /// The session stage a run to `stage` ends at ([`Session::run_to`]).
    pub fn after(stage: Stage) -> SessionStage {
        match stage {
            Stage::Logical => SessionStage::Logical,
            Stage::Sync => SessionStage::Sync,
            Stage::Split => SessionStage::Split,
            Stage::All => SessionStage::Generated,
        }
    }
}

/// The call that moves a session into `stage`.
fn call(stage: SessionStage) -> &'static str {
    match stage {
        SessionStage::New => "the session's creation",
        SessionStage::Logical => "assign_logical_streams",
        SessionStage::Sync => "insert_syncs",
        SessionStage::Split => "split_streams",
        SessionStage::Generated => "generate_send_recv",
    }
}

/// What the host reads of one node after any stage.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeInfo {
    pub logical_stream: Option<StreamId>,
    /// Physical stream (the logical one before the split).
    pub stream: Option<StreamId>,
    /// Attached streams, logical ids.
    pub attached_logical: Vec<StreamId>,
    /// Attached streams, physical ids (equal to the logical ones before the split).
    pub attached: Vec<StreamId>,
    /// Sync ids this node records after it / waits for before it (events, or notifies in
    /// notify mode).
    pub send: Vec<EventId>,
    pub recv: Vec<EventId>,
    /// In notify mode: the split's events (a kind of their own).
    pub send_events: Vec<EventId>,
    pub recv_events: Vec<EventId>,
    /// Streams this node activates (`active_stream_list`).
    pub active_streams: Vec<StreamId>,
}

/// One built model, the inputs it is compiled with, its allocation so far, and the host's task
/// counts. `M` owns or borrows the model (`Arc<Model>` for the C ABI, `&Model` in Rust).
#[derive(Clone, Debug)]
pub struct Session<M: Deref<Target = Model>> {
    model: M,
    options: Options,
    limits: TaskLimits,
    sim: SimConfig,
    search: Option<Search>,
    /// The policy's own report (width certificate, auto's candidates, ...).
    report: Option<PolicyReport>,
    /// The policies' input (GE's logical result among it) when a caller built it already (a
    /// search, for its candidates).
    input: Option<Arc<PolicyInput>>,
    /// The event budget's sync trials, shared with a search's other sessions.
    trials: Option<Arc<dyn TrialCache>>,
    /// Keep a copy of the allocation after each stage ([`Self::into_stages`]).
    record: bool,
    recorded: Stages,
    /// Stages already computed for this run (by a search, or the event budget's trial of the
    /// sync stage): each is adopted when its stage runs.
    ahead: Stages,
    /// Start from the logical streams given with the graph instead of computing them.
    preassigned: bool,
    /// Take the syncs given with the graph instead of inserting them (`allocate --from split`).
    given_syncs: bool,
    /// With given streams: the execution order to run them in instead of the computed one.
    given_order: Option<Vec<NodeId>>,
    stage: SessionStage,
    alloc: Option<Allocation>,
    /// Attached streams as logical allocation left them (the split rewrites `alloc.attached`).
    logical_attached: IdVec<NodeId, Vec<StreamId>>,
    tasks: TaskCounts,
    order: Vec<NodeId>,
    index_of: IdVec<NodeId, usize>,
    /// Per-node lookups of the current allocation, built on the first per-node query and
    /// dropped whenever the allocation changes: a host asking node by node stays linear.
    node_index: std::sync::OnceLock<NodeIndex>,
    /// The current allocation's memory plan, planned on first use and dropped whenever the
    /// allocation changes: the checker and every document writer share it.
    memory: std::sync::OnceLock<Option<MemoryPlan>>,
}

/// Every node's syncs and the position of its entry in `activations`, grouped once.
#[derive(Clone, Debug)]
struct NodeIndex {
    syncs: NodeSyncs,
    activation: IdVec<NodeId, Option<usize>>,
}

impl NodeIndex {
    fn of(a: &Allocation, nodes: usize) -> Self {
        let mut activation = IdVec::filled(nodes, None);
        for (i, (n, _)) in a.activations().iter().enumerate() {
            if activation[*n].is_none() {
                activation[*n] = Some(i);
            }
        }
        NodeIndex { syncs: a.node_syncs(), activation }
    }
}

impl<M: Deref<Target = Model>> Session<M> {
    /// A session compiling `model` with `options`, splitting at `limits`.
    pub fn new(model: M, options: Options, limits: TaskLimits) -> Self {
        let order = model.all_nodes();
        let mut index_of = IdVec::filled(model.nodes.len(), 0usize);
        for (i, &n) in order.iter().enumerate() {
            index_of[n] = i;
        }
        Session {
            logical_attached: IdVec::filled(model.nodes.len(), Vec::new()),
            model,
            options,
            limits,
            sim: SimConfig::default(),
            search: None,
            report: None,
            input: None,
            trials: None,
            record: false,
            recorded: Stages::default(),
            ahead: Stages::default(),
            preassigned: false,
            given_syncs: false,
            given_order: None,
            stage: SessionStage::New,
            alloc: None,
            tasks: TaskCounts::default(),
            order,
            index_of,
            node_index: std::sync::OnceLock::new(),
            memory: std::sync::OnceLock::new(),
        }
    }

    /// The search that picks a fixed policy for `policy=auto`, under the simulator `sim`.
    pub fn with_search(mut self, search: Search, sim: SimConfig) -> Self {
        self.search = Some(search);
        self.sim = sim;
        self
    }

    /// Stage 1 starts from the policies' `input` (GE's logical result, the node roles, the
    /// chain cover once computed), built once by the caller for many sessions of the same
    /// model and options other than the policy (a search's candidates).
    pub fn with_policy_input(mut self, input: Arc<PolicyInput>) -> Self {
        self.input = Some(input);
        self
    }

    /// Stage 1 shares the event budget's sync trials through `trials` with the other sessions
    /// of the same model and options (a search's candidates, which differ in policy alone):
    /// the search's cache.
    pub fn with_trials(mut self, trials: Arc<dyn TrialCache>) -> Self {
        self.trials = Some(trials);
        self
    }

    /// Keeps a copy of the allocation after stages 1 and 2 (the split's is the session's own),
    /// for [`Self::into_stages`].
    pub fn recording(mut self) -> Self {
        self.record = true;
        self
    }

    /// The logical stage a [`Self::recording`] session kept, once stage 1 ran.
    pub fn recorded_logical(&self) -> Option<&Allocation> {
        self.recorded.logical.as_ref()
    }

    /// Replaces the logical stage a [`Self::recording`] session kept: a run whose logical stage
    /// carried pairs for its sync stage hands on the stage without them.
    pub fn set_recorded_logical(&mut self, logical: Allocation) {
        self.recorded.logical = Some(logical);
    }

    /// The policy's report a session adopting a logical stage ([`Self::with_logical`]) carries
    /// on: the report of the run whose stage it is.
    pub fn with_report(mut self, report: Option<PolicyReport>) -> Self {
        self.report = report;
        self
    }

    /// Stage 1 takes the logical streams given with the graph (`stream`, `attached_stream_ids`)
    /// instead of computing them: the entry for assignments made elsewhere.
    pub fn from_preassigned(mut self) -> Self {
        self.preassigned = true;
        self
    }

    /// Stages 1 and 2 take what the graph gives: its logical streams and its events (graph
    /// JSON `events`) as the syncs; the split is the first stage computed.
    pub fn from_given_syncs(mut self) -> Self {
        self.preassigned = true;
        self.given_syncs = true;
        self
    }

    /// Stage 1 adopts `logical`, a logical allocation with its execution order chosen (a
    /// search's trial of a changed assignment), instead of assigning; the later stages run on it
    /// as on any other.
    pub fn with_logical(mut self, logical: Allocation) -> Self {
        self.ahead.logical = Some(logical);
        self
    }

    /// With given streams ([`Self::from_given_syncs`]), the streams run their nodes in `order`
    /// (every node of the model once, a topological order) instead of the computed order: a
    /// peer's own launch order.
    pub fn with_order(mut self, order: Vec<NodeId>) -> Self {
        self.given_order = Some(order);
        self
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The handle the session was built with.
    pub fn model_handle(&self) -> &M {
        &self.model
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    pub fn limits(&self) -> &TaskLimits {
        &self.limits
    }

    /// The policy's report, after logical assignment under a policy other than GE's.
    pub fn report(&self) -> Option<&PolicyReport> {
        self.report.as_ref()
    }

    pub fn stage(&self) -> SessionStage {
        self.stage
    }

    /// Nodes in GE's `GetAllNodes` order; node indexes address this list. (Each stream runs
    /// its nodes in the allocation's execution order, [`crate::compile::Allocation::order`].)
    pub fn order(&self) -> &[NodeId] {
        &self.order
    }

    pub fn index_of(&self, n: NodeId) -> usize {
        self.index_of[n]
    }

    /// The node at `index` in execution order.
    pub fn node_at(&self, index: usize) -> Result<NodeId> {
        match self.order.get(index) {
            Some(&n) => Ok(n),
            None => bail!(Field, "node index {index} is out of range (the model has {} nodes)", self.order.len()),
        }
    }

    /// Node `name` of graph `graph` (`None`, `""` or the root's name: the root).
    pub fn find_node(&self, graph: Option<&str>, name: &str) -> Result<NodeId> {
        let g = match graph {
            None | Some("") => GraphId::ROOT,
            Some(g) if g == self.model.name => GraphId::ROOT,
            Some(g) => match self.model.find_graph(g) {
                Some(id) => id,
                None => bail!(UnknownNode, "graph '{g}' does not exist in model '{}'", self.model.name),
            },
        };
        match self.model.find_node(g, name) {
            Some(n) => Ok(n),
            None => bail!(UnknownNode, "node '{name}' is not a node of graph '{}'", self.model.graphs[g].name),
        }
    }

    /// Refuses the call `what` unless the session is exactly at `need`.
    fn expect(&self, what: &str, need: SessionStage) -> Result<()> {
        if self.stage == need {
            return Ok(());
        }
        if self.stage < need {
            let missing = [SessionStage::Logical, SessionStage::Sync, SessionStage::Split, SessionStage::Generated]
                .into_iter()
                .find(|s| *s > self.stage)
                .unwrap_or(need);
            bail!(
                Stage,
                "{what} on model '{}': {} must run first (the session is at stage '{}')",
                self.model.name,
                call(missing),
                self.stage.as_str()
            );
        }
        bail!(
            Stage,
            "{what} on model '{}': the session is already at stage '{}'; each stage runs once, in order \
             (logical, sync, split, generate)",
            self.model.name,
            self.stage.as_str()
        )
    }

    /// Drops what was derived from the allocation, before it changes.
    fn changed(&mut self) {
        self.node_index = std::sync::OnceLock::new();
        self.memory = std::sync::OnceLock::new();
    }

    fn alloc_mut(&mut self) -> Result<&mut Allocation> {
        self.changed();
        match self.alloc.as_mut() {
            Some(a) => Ok(a),
            None => {
                bail!(Internal, "session of model '{}' has no allocation after logical assignment", self.model.name)
            }
        }
    }

    /// Stage 1: logical streams (GE's `AssignLogicalStreams`, or the policy's). A search mode
    /// first runs its search for the fixed policy to use, then assigns with that policy; the
    /// result keeps the search mode's name.
    pub fn assign_logical_streams(&mut self) -> Result<()> {
        self.expect("assign_logical_streams", SessionStage::New)?;
        self.assign(self.preassigned)
    }

    /// Stage 1 from the host's assignment: the logical streams and attached streams given with
    /// the graph (node `stream` / `attached_stream_ids`) and its events, instead of GE's
    /// `AssignLogicalStreams`.
    pub fn assign_given_streams(&mut self) -> Result<()> {
        self.expect("assign_given_streams", SessionStage::New)?;
        self.assign(true)
    }

    fn assign(&mut self, given: bool) -> Result<()> {
        let mode = Mode::of(&self.model, &self.options)?;
        let (alloc, report) = if let Some(alloc) = self.ahead.logical.take() {
            (alloc, self.report.take())
        } else if given {
            let mut alloc = compile::preassigned_logical(&self.model, &self.options)?;
            match self.given_order.take() {
                Some(order) => alloc.set_order(&self.model, order)?,
                None => compile::choose_order(&self.model, &self.options, &mut alloc),
            }
            (alloc, None)
        } else if mode.is_search() || (self.options.memory_limit.is_some() && self.search.is_some()) {
            let Some(search) = self.search else {
                bail!(
                    InvalidOption,
                    "policy '{}' chooses by simulating whole pipelines; this session was built without a search \
                     (use stream_alloc::allocate or search::session)",
                    mode.name()
                );
            };
            let found = search(&self.model, &self.options, &self.limits, &self.sim)?;
            self.ahead = found.stages;
            let Some(alloc) = self.ahead.logical.take() else {
                bail!(
                    Internal,
                    "policy '{}' on model '{}': the search found no allocation",
                    mode.name(),
                    self.model.name
                );
            };
            (alloc.named(mode.name()), Some(found.report))
        } else {
            let assigned = super::logical::assign(
                &self.model,
                &self.options,
                &self.limits,
                self.input.as_ref(),
                self.trials.as_deref(),
            )?;
            self.ahead.sync = assigned.synced;
            // The budget's split of those syncs, adopted by stage 3 like a search's; the
            // `verify` option's check runs only where stage 3 splits itself.
            self.ahead.split = assigned.split.filter(|_| !self.options.verify);
            (assigned.alloc, assigned.report)
        };
        if self.record {
            self.recorded.logical = Some(alloc.clone());
        }
        self.report = report;
        self.logical_attached = alloc.attached().clone();
        self.alloc = Some(alloc);
        self.changed();
        self.stage = SessionStage::Logical;
        Ok(())
    }

    /// Stage 2: event / notify insertion and optimisation (GE's `InsertSyncNodesByLogicStream`).
    pub fn insert_syncs(&mut self) -> Result<()> {
        self.expect("insert_syncs", SessionStage::Logical)?;
        self.insert(false)
    }

    /// Stage 2 from the host's syncs: the events given with the graph (graph JSON `events`,
    /// kept by stage 1) become the syncs, each with its Send/Recv node, instead of GE's
    /// insertion and optimisation.
    pub fn insert_given_syncs(&mut self) -> Result<()> {
        self.expect("insert_given_syncs", SessionStage::Logical)?;
        self.insert(true)
    }

    fn insert(&mut self, given: bool) -> Result<()> {
        self.changed();
        let alloc = self.alloc.as_mut().expect("logical stage ran");
        if given {
            compile::given_sync_stage(&self.model, &self.options, alloc)?;
        } else {
            // A policy's streams that no budget trial ran ahead of (a search's changed streams)
            // get the trials' way out: ids reused by lifetime when one per sync exceeds
            // `max_events`.
            let reuse = !self.preassigned
                && super::logical::reuses_over_budget(&self.options)
                && matches!(Mode::of(&self.model, &self.options)?, Mode::Policy(_));
            match self.ahead.sync.take() {
                Some(synced) => *alloc = synced.named(alloc.mode().to_string()),
                None if reuse => super::logical::sync_stage_or_reused(&self.model, &self.options, alloc)?,
                None => compile::sync_stage(&self.model, &self.options, alloc)?,
            }
            if self.record {
                self.recorded.sync = Some(alloc.clone());
            }
        }
        self.stage = SessionStage::Sync;
        Ok(())
    }

    /// Refuses task counts outside the window where they mean something: after logical
    /// allocation (the host generates tasks for assigned streams), before the split reads them.
    fn task_window(&self, call: &str) -> Result<()> {
        match self.stage {
            SessionStage::Logical | SessionStage::Sync => Ok(()),
            SessionStage::New => bail!(
                Stage,
                "{call} on model '{}': assign_logical_streams must run first (task counts follow the host's task \
                 generation on assigned streams)",
                self.model.name
            ),
            s => bail!(
                Stage,
                "{call} on model '{}': the split has already read the task counts (the session is at stage '{}'); \
                 set them before split_streams",
                self.model.name,
                s.as_str()
            ),
        }
    }

    /// Sets the main-stream task count of node `n` (the host's `TaskDef`s for it), overriding
    /// its `tasks` and `_node_sqe_num` / `_hccl_task_num` for the split.
    pub fn set_task_count(&mut self, n: NodeId, tasks: u64) -> Result<()> {
        self.task_window("set_task_count")?;
        if n.index() >= self.model.nodes.len() {
            bail!(Field, "node id {} is out of range (the model has {} nodes)", n.index(), self.model.nodes.len());
        }
        self.tasks.main.insert(n, tasks);
        Ok(())
    }

    /// Sets the task count of the `index`-th attached stream of node `n`, overriding its
    /// `attached_tasks` and `_hccl_attached_task_num`.
    pub fn set_attached_task_count(&mut self, n: NodeId, index: usize, tasks: u64) -> Result<()> {
        self.task_window("set_attached_task_count")?;
        if n.index() >= self.model.nodes.len() {
            bail!(Field, "node id {} is out of range (the model has {} nodes)", n.index(), self.model.nodes.len());
        }
        let have = self.logical_attached[n].len();
        if index >= have {
            bail!(
                Field,
                "node '{}': attached stream index {index} is out of range; logical allocation gave it {have} \
                 attached stream(s)",
                self.model.nodes[n].name
            );
        }
        self.tasks.attached.insert((n, index), tasks);
        Ok(())
    }

    /// The task counts the host has set.
    pub fn task_counts(&self) -> &TaskCounts {
        &self.tasks
    }

    /// Stage 3: physical split and activation update (GE's `SplitStreamAndRefreshTaskDef`),
    /// then the `verify` option's check.
    pub fn split_streams(&mut self) -> Result<()> {
        self.expect("split_streams", SessionStage::Sync)?;
        self.changed();
        let alloc = self.alloc.as_mut().expect("sync stage ran");
        // A run computed ahead split with the graph's task counts: adopted while the host set
        // none. It was checked when it ran, under the same options.
        let unchanged = self.tasks.main.is_empty() && self.tasks.attached.is_empty();
        match self.ahead.split.take().filter(|_| unchanged) {
            Some(split) => {
                *alloc = split.named(alloc.mode().to_string());
                if let Some(plan) = self.ahead.split_memory.take() {
                    let _ = self.memory.set(plan);
                }
            }
            None => {
                // A policy's split reuses ids as the budget's trial split it.
                let policy = !self.preassigned && matches!(Mode::of(&self.model, &self.options)?, Mode::Policy(_));
                let reuse = super::logical::split_reuse_budget(&self.options).filter(|_| policy);
                compile::split_stage(&self.model, &self.options, alloc, &self.limits, &self.tasks, reuse)?;
                if self.options.verify {
                    self.verify_stage()?;
                }
            }
        }
        self.stage = SessionStage::Split;
        Ok(())
    }

    /// Stage 4: hands the Send/Recv (SendNotify/RecvNotify) nodes to the host.
    pub fn generate_send_recv(&mut self) -> Result<()> {
        self.expect("generate_send_recv", SessionStage::Split)?;
        // The stage only hands the nodes out: the memory plan stays the split's.
        let memory = std::mem::take(&mut self.memory);
        compile::generated_stage(self.alloc_mut()?);
        self.memory = memory;
        self.stage = SessionStage::Generated;
        Ok(())
    }

    /// Runs every remaining stage in order.
    pub fn run_all(&mut self) -> Result<()> {
        self.run_to(Stage::All)
    }

    /// Runs the remaining stages up to `stage`: what `allocate --stage` asks for. A run that
    /// stops before the split still checks the `verify` option on what it has.
    pub fn run_to(&mut self, stage: Stage) -> Result<()> {
        let target = SessionStage::after(stage);
        if self.stage == SessionStage::New && target >= SessionStage::Logical {
            self.assign_logical_streams()?;
        }
        if self.stage == SessionStage::Logical && target >= SessionStage::Sync {
            if self.given_syncs {
                self.insert_given_syncs()?
            } else {
                self.insert_syncs()?
            }
            if target == SessionStage::Sync && self.options.verify {
                self.verify_stage()?;
            }
        }
        if self.stage == SessionStage::Sync && target >= SessionStage::Split {
            self.split_streams()?;
        }
        if self.stage == SessionStage::Split && target >= SessionStage::Generated {
            self.generate_send_recv()?;
        }
        Ok(())
    }

    /// The `verify` option's check of the current allocation, with its memory plan.
    fn verify_stage(&self) -> Result<()> {
        super::verify_stage(&self.model, self.allocation()?, &self.limits, self.memory_plan()?)
    }

    /// The memory plan of the current allocation (`None` when the graph gives no `out_bytes`),
    /// planned once per stage and shared by the checker, the searches and the documents.
    pub fn memory_plan(&self) -> Result<Option<&MemoryPlan>> {
        let a = self.allocation()?;
        Ok(self.memory.get_or_init(|| plan_allocation(&self.model, a)).as_ref())
    }

    /// The finished allocation, the policy's report and the memory plan, when planned already.
    pub fn into_compiled(self) -> Result<Compiled> {
        match self.alloc {
            Some(alloc) => Ok(Compiled { alloc, report: self.report, memory: self.memory }),
            None => bail!(Stage, "model '{}': nothing is allocated yet", self.model.name),
        }
    }

    /// The finished allocation and the policy's report.
    pub fn into_result(self) -> Result<(Allocation, Option<PolicyReport>)> {
        match self.alloc {
            Some(a) => Ok((a, self.report)),
            None => bail!(Stage, "model '{}': nothing is allocated yet", self.model.name),
        }
    }

    /// The allocation after each stage run so far, up to the split (the last one the session's
    /// own), for a session built [`Self::recording`]; with the policy's report.
    pub fn into_stages(self) -> Result<(Stages, Option<PolicyReport>)> {
        let stage = self.stage;
        let mut stages = self.recorded;
        let (alloc, report) = match self.alloc {
            Some(a) => (a, self.report),
            None => bail!(Stage, "model '{}': nothing is allocated yet", self.model.name),
        };
        match stage {
            SessionStage::Logical => stages.logical = Some(alloc),
            SessionStage::Sync => stages.sync = Some(alloc),
            SessionStage::Split => {
                stages.split = Some(alloc);
                stages.split_memory = self.memory.into_inner();
            }
            SessionStage::New | SessionStage::Generated => {
                bail!(Internal, "model '{}': stages are kept up to the split", self.model.name)
            }
        }
        Ok((stages, report))
    }

    /// The allocation so far; `Stage` error before logical assignment.
    pub fn allocation(&self) -> Result<&Allocation> {
        match &self.alloc {
            Some(a) => Ok(a),
            None => bail!(
                Stage,
                "model '{}': assign_logical_streams must run first; nothing is allocated yet",
                self.model.name
            ),
        }
    }

    /// Allocation JSON of the current stage.
    pub fn allocation_json(&self) -> Result<Value> {
        let a = self.allocation()?;
        if self.stage == SessionStage::Generated {
            return Ok(a.document(&self.model, self.memory_plan()?).to_value());
        }
        // Before stage 4 the document lists only what the host may see: an allocation of its
        // own (no Send/Recv nodes, no sync end on one), which no session ran, so it is planned
        // for itself.
        Ok(a.without_sync_nodes(self.stage >= SessionStage::Split).to_json_new_plan(&self.model))
    }

    /// The nodes the host inserts into its graph, each with its anchor, side, stream and id:
    /// StreamActive nodes from the split on, Send/Recv once [`Self::generate_send_recv`] ran.
    pub fn inserted_nodes(&self) -> Result<Vec<&InsertedNode>> {
        let a = self.allocation()?;
        let all = self.stage == SessionStage::Generated;
        Ok(a.inserted().iter().filter(|i| all || (self.stage >= SessionStage::Split && !is_sync_node(i))).collect())
    }

    /// Per-node results of the current stage.
    pub fn node_info(&self, n: NodeId) -> Result<NodeInfo> {
        let a = self.allocation()?;
        if n.index() >= self.model.nodes.len() {
            bail!(Field, "node id {} is out of range (the model has {} nodes)", n.index(), self.model.nodes.len());
        }
        let index = self.node_index.get_or_init(|| NodeIndex::of(a, self.model.nodes.len()));
        let mut info = self.info_of(a, &index.syncs, n);
        if let Some(i) = index.activation[n] {
            info.active_streams = a.activations()[i].1.clone();
        }
        Ok(info)
    }

    /// [`Self::node_info`] of every node (index = node id), from one index of the syncs.
    pub fn node_infos(&self) -> Result<IdVec<NodeId, NodeInfo>> {
        let a = self.allocation()?;
        let syncs = a.node_syncs();
        let mut out: IdVec<NodeId, NodeInfo> = self.model.nodes.ids().map(|n| self.info_of(a, &syncs, n)).collect();
        for (n, list) in a.activations() {
            out[*n].active_streams = list.clone();
        }
        Ok(out)
    }

    fn info_of(&self, a: &Allocation, syncs: &NodeSyncs, n: NodeId) -> NodeInfo {
        NodeInfo {
            logical_stream: a.logical_stream()[n],
            stream: a.stream()[n],
            attached_logical: self.logical_attached[n].clone(),
            attached: a.attached()[n].clone(),
            send: syncs.sends(n).to_vec(),
            recv: syncs.recvs(n).to_vec(),
            send_events: syncs.split_sends(n).to_vec(),
            recv_events: syncs.split_recvs(n).to_vec(),
            active_streams: Vec::new(),
        }
    }

    /// The attributes GE writes on a node, as a JSON object: `_logic_stream_id`, `stream_id`,
    /// `_logic_attached_stream_ids`, `_attached_stream_ids`, `_send_event_ids`,
    /// `_recv_event_ids` (in notify mode also `_send_notify_ids` / `_recv_notify_ids`),
    /// `active_stream_list`. Empty lists and absent streams are left out (`stream_id` is -1).
    pub fn node_ge_attrs(&self, n: NodeId) -> Result<Value> {
        let info = self.node_info(n)?;
        let ids = |v: &[StreamId]| json!(v.iter().map(|s| i64::from(s.0)).collect::<Vec<_>>());
        let mut m = Map::new();
        if let Some(l) = info.logical_stream {
            m.insert("_logic_stream_id".into(), json!(l.0));
        }
        m.insert("stream_id".into(), json!(info.stream.map_or(-1, |s| i64::from(s.0))));
        if !info.attached.is_empty() {
            m.insert("_logic_attached_stream_ids".into(), ids(&info.attached_logical));
            m.insert("_attached_stream_ids".into(), ids(&info.attached));
        }
        let notify = self.allocation()?.sync_kind() == SyncKind::Notify;
        let (send, recv) = if notify { (&info.send_events, &info.recv_events) } else { (&info.send, &info.recv) };
        if !send.is_empty() {
            m.insert("_send_event_ids".into(), json!(send));
        }
        if !recv.is_empty() {
            m.insert("_recv_event_ids".into(), json!(recv));
        }
        if notify && !info.send.is_empty() {
            m.insert("_send_notify_ids".into(), json!(info.send));
        }
        if notify && !info.recv.is_empty() {
            m.insert("_recv_notify_ids".into(), json!(info.recv));
        }
        if !info.active_streams.is_empty() {
            m.insert("active_stream_list".into(), ids(&info.active_streams));
        }
        Ok(Value::Object(m))
    }

    /// Model counts GE writes in `BuildModelDefForStream`.
    pub fn counts(&self) -> Result<ModelCounts> {
        Ok(ModelCounts::of(self.allocation()?))
    }

    /// `_split_logic_stream_2_origin_logic_stream`: `"phys:logic,phys:logic,..."`.
    pub fn split_map_string(&self) -> Result<String> {
        let a = self.allocation()?;
        Ok(split_map_string(a.split_to_logic()))
    }

    /// The model attributes GE writes: `stream_num`, `event_num`, `notify_num`,
    /// `_attached_stream_num`, `huge_stream_list`, `_split_logic_stream_2_origin_logic_stream`.
    pub fn model_ge_attrs(&self) -> Result<Value> {
        let a = self.allocation()?;
        let c = self.counts()?;
        Ok(json!({
            "stream_num": c.stream_num,
            "event_num": c.event_num,
            "notify_num": c.notify_num,
            "_attached_stream_num": c.attached_stream_num,
            "huge_stream_list": a.huge_streams().iter().map(|s| s.0).collect::<Vec<_>>(),
            "_split_logic_stream_2_origin_logic_stream": split_map_string(a.split_to_logic()),
        }))
    }

    /// GE's `GetStreamAllocationSummary` for the current stage.
    pub fn summary(&self) -> Result<StreamAllocationSummary> {
        StreamAllocationSummary::new(&self.model, &self.options, self.allocation()?, self.stage.as_str())
    }

    /// The independent checker on the current allocation JSON.
    pub fn verify(&self) -> Result<crate::verify::Report> {
        Ok(crate::verify::check(&self.model, &self.allocation_json()?))
    }

    /// Distinct logical streams with at least one node of graph `g` (for tests and tools).
    pub fn graph_streams(&self, g: GraphId) -> Result<BTreeSet<StreamId>> {
        let a = self.allocation()?;
        Ok(self.model.graphs[g].nodes.iter().filter_map(|&n| a.logical_stream()[n]).collect())
    }
}

fn is_sync_node(i: &InsertedNode) -> bool {
    matches!(i.op_type(), "Send" | "Recv" | "SendNotify" | "RecvNotify")
}
