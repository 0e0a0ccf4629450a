//! The staged compile session: the pipeline of [`super::allocate`] cut at the points where GE's
//! `ModelBuilder` hands control back to the host (ge-compiler.md §1, seed
//! stream-allocation-constraints.txt):
//!
//! 1. [`CompileSession::assign_logical_streams`] — `StreamAllocator::AssignLogicalStreams`;
//! 2. (host) memory assignment, task generation: [`CompileSession::set_task_count`];
//! 3. [`CompileSession::insert_syncs`] — `InsertSyncNodesByLogicStream`;
//! 4. [`CompileSession::split_streams`] — `SplitStreamAndRefreshTaskDef` with the host's counts;
//! 5. [`CompileSession::generate_send_recv`] — `GenerateSyncEventNodes`: the inserted nodes
//!    become visible to the host, which builds them into its own graph.
//!
//! The model never changes (graph-structure stability: node ids and topological ids are the
//! same at every stage); the host's task counts live in the session. Each stage runs once, in
//! order; a call out of order is `ErrorKind::Stage` naming the call that must come first.
//!
//! Send/Recv nodes are computed where the one-shot pipeline computes them (the sync stage, then
//! the split's own), so names and ids equal `allocate`'s; the session only hands them out at
//! stage 5, once the split has fixed their physical streams.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::allocation::{Allocation, InsertedNode, Stage};
use super::split::TaskCounts;
use super::summary::StreamAllocationSummary;
use crate::bail;
use crate::error::Result;
use crate::graph::{GraphId, IdVec, Model, NodeId, StreamId, SyncKind};

/// How far a session has run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SessionStage {
    /// Built, nothing assigned.
    New,
    Logical,
    Sync,
    Split,
    /// Send/Recv generated: the allocation is complete.
    Generated,
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

    /// The call that moves a session into this stage.
    fn call(self) -> &'static str {
        match self {
            SessionStage::New => "the session's creation",
            SessionStage::Logical => "assign_logical_streams",
            SessionStage::Sync => "insert_syncs",
            SessionStage::Split => "split_streams",
            SessionStage::Generated => "generate_send_recv",
        }
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
    pub send: Vec<u32>,
    pub recv: Vec<u32>,
    /// In notify mode: the split's events (a kind of their own).
    pub send_events: Vec<u32>,
    pub recv_events: Vec<u32>,
    /// Streams this node activates (`active_stream_list`).
    pub active_streams: Vec<StreamId>,
}

/// One built model, its allocation so far, and the host's task counts.
#[derive(Clone, Debug)]
pub struct CompileSession {
    model: Arc<Model>,
    stage: SessionStage,
    alloc: Option<Allocation>,
    /// Attached streams as logical allocation left them (the split rewrites `alloc.attached`).
    logical_attached: IdVec<NodeId, Vec<StreamId>>,
    tasks: TaskCounts,
    order: Vec<NodeId>,
    index_of: IdVec<NodeId, usize>,
}

impl CompileSession {
    pub fn new(model: Arc<Model>) -> Self {
        let order = model.all_nodes();
        let mut index_of = IdVec::filled(model.nodes.len(), 0usize);
        for (i, &n) in order.iter().enumerate() {
            index_of[n] = i;
        }
        CompileSession {
            logical_attached: IdVec::filled(model.nodes.len(), Vec::new()),
            model,
            stage: SessionStage::New,
            alloc: None,
            tasks: TaskCounts::default(),
            order,
            index_of,
        }
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    pub fn model_arc(&self) -> &Arc<Model> {
        &self.model
    }

    pub fn stage(&self) -> SessionStage {
        self.stage
    }

    /// Nodes in execution order (GE's `GetAllNodes`); node indexes address this list.
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

    /// Refuses `call` unless the session is exactly at `need`.
    fn expect(&self, call: &str, need: SessionStage) -> Result<()> {
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
                "{call} on model '{}': {} must run first (the session is at stage '{}')",
                self.model.name,
                missing.call(),
                self.stage.as_str()
            );
        }
        bail!(
            Stage,
            "{call} on model '{}': the session is already at stage '{}'; each stage runs once, in order \
             (logical, sync, split, generate)",
            self.model.name,
            self.stage.as_str()
        )
    }

    fn alloc_mut(&mut self) -> Result<&mut Allocation> {
        match self.alloc.as_mut() {
            Some(a) => Ok(a),
            None => {
                bail!(Internal, "session of model '{}' has no allocation after logical assignment", self.model.name)
            }
        }
    }

    /// Stage 1: logical streams (GE's `AssignLogicalStreams`).
    pub fn assign_logical_streams(&mut self) -> Result<()> {
        self.expect("assign_logical_streams", SessionStage::New)?;
        let alloc = super::logical_stage(&self.model)?;
        self.logical_attached = alloc.attached.clone();
        self.alloc = Some(alloc);
        self.stage = SessionStage::Logical;
        Ok(())
    }

    /// Stage 3: event / notify insertion and optimisation (GE's `InsertSyncNodesByLogicStream`).
    pub fn insert_syncs(&mut self) -> Result<()> {
        self.expect("insert_syncs", SessionStage::Logical)?;
        let model = Arc::clone(&self.model);
        super::sync_stage(&model, self.alloc_mut()?)?;
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

    /// Stage 4: physical split and activation update (GE's `SplitStreamAndRefreshTaskDef`),
    /// then the `verify` option's check.
    pub fn split_streams(&mut self) -> Result<()> {
        self.expect("split_streams", SessionStage::Sync)?;
        let model = Arc::clone(&self.model);
        let tasks = std::mem::take(&mut self.tasks);
        let r = super::split_stage(&model, self.alloc_mut()?, &tasks);
        self.tasks = tasks;
        r?;
        if model.options.verify {
            super::verify_stage(&model, self.alloc.as_ref().expect("checked by alloc_mut"))?;
        }
        self.stage = SessionStage::Split;
        Ok(())
    }

    /// Stage 5: hands the Send/Recv (SendNotify/RecvNotify) nodes to the host.
    pub fn generate_send_recv(&mut self) -> Result<()> {
        self.expect("generate_send_recv", SessionStage::Split)?;
        self.alloc_mut()?.stage = Stage::All;
        self.stage = SessionStage::Generated;
        Ok(())
    }

    /// Runs every remaining stage in order.
    pub fn run_all(&mut self) -> Result<()> {
        if self.stage == SessionStage::New {
            self.assign_logical_streams()?;
        }
        if self.stage == SessionStage::Logical {
            self.insert_syncs()?;
        }
        if self.stage == SessionStage::Sync {
            self.split_streams()?;
        }
        if self.stage == SessionStage::Split {
            self.generate_send_recv()?;
        }
        Ok(())
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
            return Ok(a.to_json(&self.model));
        }
        // Before stage 5 the document lists only what the host may see.
        let mut view = a.clone();
        view.inserted = self.inserted_nodes()?.into_iter().cloned().collect();
        let keep: Vec<usize> =
            a.inserted.iter().enumerate().filter(|(_, i)| !is_sync_node(i)).map(|(k, _)| k).collect();
        view.inserted_activations = a
            .inserted_activations
            .iter()
            .filter_map(|(k, s)| keep.iter().position(|x| x == k).map(|p| (p, s.clone())))
            .collect();
        Ok(view.to_json(&self.model))
    }

    /// The nodes the host inserts into its graph, each with its anchor, side, stream and id:
    /// StreamActive nodes from the split on, Send/Recv once [`Self::generate_send_recv`] ran.
    pub fn inserted_nodes(&self) -> Result<Vec<&InsertedNode>> {
        let a = self.allocation()?;
        let all = self.stage == SessionStage::Generated;
        Ok(a.inserted.iter().filter(|i| all || (self.stage >= SessionStage::Split && !is_sync_node(i))).collect())
    }

    /// Per-node results of the current stage.
    pub fn node_info(&self, n: NodeId) -> Result<NodeInfo> {
        let a = self.allocation()?;
        if n.index() >= self.model.nodes.len() {
            bail!(Field, "node id {} is out of range (the model has {} nodes)", n.index(), self.model.nodes.len());
        }
        let mut info = NodeInfo {
            logical_stream: a.logical_stream[n],
            stream: a.stream[n],
            attached_logical: self.logical_attached[n].clone(),
            attached: a.attached[n].clone(),
            ..NodeInfo::default()
        };
        for p in &a.syncs {
            if p.from.node == n {
                info.send.push(p.id);
            }
            if p.to.node == n {
                info.recv.push(p.id);
            }
        }
        for p in &a.split_events {
            if p.from.node == n {
                info.send_events.push(p.id);
            }
            if p.to.node == n {
                info.recv_events.push(p.id);
            }
        }
        if let Some((_, list)) = a.activations.iter().find(|(m, _)| *m == n) {
            info.active_streams = list.clone();
        }
        Ok(info)
    }

    /// [`Self::node_info`] of every node (index = node id), in one pass over the syncs.
    pub fn node_infos(&self) -> Result<IdVec<NodeId, NodeInfo>> {
        let a = self.allocation()?;
        let mut out: IdVec<NodeId, NodeInfo> = self
            .model
            .nodes
            .ids()
            .map(|n| NodeInfo {
                logical_stream: a.logical_stream[n],
                stream: a.stream[n],
                attached_logical: self.logical_attached[n].clone(),
                attached: a.attached[n].clone(),
                ..NodeInfo::default()
            })
            .collect();
        for p in &a.syncs {
            out[p.from.node].send.push(p.id);
            out[p.to.node].recv.push(p.id);
        }
        for p in &a.split_events {
            out[p.from.node].send_events.push(p.id);
            out[p.to.node].recv_events.push(p.id);
        }
        for (n, list) in &a.activations {
            out[*n].active_streams = list.clone();
        }
        Ok(out)
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
        let notify = self.allocation()?.sync_kind == SyncKind::Notify;
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
        let a = self.allocation()?;
        let (event_num, notify_num) = match a.sync_kind {
            SyncKind::Event => (a.sync_count, 0),
            SyncKind::Notify => (a.split_event_count, a.sync_count),
        };
        Ok(ModelCounts {
            logical_stream_num: a.logical_count,
            stream_num: a.physical_count,
            attached_stream_num: a.attached_count,
            event_num,
            notify_num,
        })
    }

    /// `_split_logic_stream_2_origin_logic_stream`: `"phys:logic,phys:logic,..."`.
    pub fn split_map_string(&self) -> Result<String> {
        let a = self.allocation()?;
        Ok(split_map_string(&a.split_to_logic))
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
            "huge_stream_list": a.huge_streams.iter().map(|s| s.0).collect::<Vec<_>>(),
            "_split_logic_stream_2_origin_logic_stream": split_map_string(&a.split_to_logic),
        }))
    }

    /// GE's `GetStreamAllocationSummary` for the current stage.
    pub fn summary(&self) -> Result<StreamAllocationSummary> {
        StreamAllocationSummary::from_session(self)
    }

    /// The independent checker on the current allocation JSON.
    pub fn verify(&self) -> Result<crate::verify::Report> {
        Ok(crate::verify::check(&self.model, &self.allocation_json()?))
    }

    /// Distinct logical streams with at least one node of graph `g` (for tests and tools).
    pub fn graph_streams(&self, g: GraphId) -> Result<BTreeSet<StreamId>> {
        let a = self.allocation()?;
        Ok(self.model.graphs[g].nodes.iter().filter_map(|&n| a.logical_stream[n]).collect())
    }
}

/// Model-level counts after the current stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelCounts {
    pub logical_stream_num: u32,
    /// `stream_num`: physical streams, attached and inserted ones included.
    pub stream_num: u32,
    pub attached_stream_num: u32,
    pub event_num: u32,
    pub notify_num: u32,
}

fn is_sync_node(i: &InsertedNode) -> bool {
    matches!(i.op_type, "Send" | "Recv" | "SendNotify" | "RecvNotify")
}

/// `"phys:logic,..."` in physical order.
pub fn split_map_string(split_to_logic: &[StreamId]) -> String {
    let parts: Vec<String> = split_to_logic.iter().enumerate().map(|(p, l)| format!("{p}:{}", l.0)).collect();
    parts.join(",")
}

/// Parses a `_split_logic_stream_2_origin_logic_stream` string back into the map (index =
/// physical id), as GE's summary reads it.
pub fn parse_split_map(s: &str) -> Result<Vec<StreamId>> {
    let mut out: Vec<Option<StreamId>> = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let Some((p, l)) = part.split_once(':') else {
            bail!(Attribute, "_split_logic_stream_2_origin_logic_stream: entry '{part}' is not 'phys:logic'");
        };
        let (Ok(p), Ok(l)) = (p.trim().parse::<u32>(), l.trim().parse::<u32>()) else {
            bail!(Attribute, "_split_logic_stream_2_origin_logic_stream: entry '{part}' is not two stream ids");
        };
        if out.len() <= p as usize {
            out.resize(p as usize + 1, None);
        }
        out[p as usize] = Some(StreamId(l));
    }
    Ok(out.into_iter().enumerate().map(|(p, l)| l.unwrap_or(StreamId(p as u32))).collect())
}
