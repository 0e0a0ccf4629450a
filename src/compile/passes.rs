//! A registry of named compile passes, so a tool (`stream-alloc pass`) or a test can run
//! exactly the passes it names, in the order it names them.
//!
//! Every pass is found by its GE name (`AssignByDependencyPass`) or by its module name
//! (`by_dependency`). A [`PassKind::Graph`] pass runs once per graph; consecutive graph
//! passes are run together per graph, root first, then nested graphs in `all_graphs()` order,
//! which is GE's `DoAssign` order (a nested graph sees its parent node's final stream). A
//! [`PassKind::Model`] pass runs once over the whole model.
//!
//! GE's two chains are slices of the registry ([`MULTI_STREAM_CHAIN`], [`SINGLE_STREAM_CHAIN`]):
//! the pipeline runs them through [`run`], the same runner `stream-alloc pass` uses, and
//! `pass --help` and `docs/passes.md` are written from the registry ([`help_text`],
//! [`markdown`]).
//!
//! The steps after logical allocation are registered too ([`PassKind::Step`]): GE's sync,
//! activation and split steps, each run alone on the graph's streams and events by a
//! [`StepContext`] ([`run_list`]). A list names its logical passes first, then its steps.
//! The pipeline's sync stage is a slice of these steps per sync mode ([`SYNC_SEQUENCES`]),
//! run by the same runner ([`run_steps`]) with the pipeline's id rule ([`sync_stage`]).
//!
//! Adding a pass: write `fn(&mut PassContext<'_>, GraphId) -> Result<()>` (per graph) or
//! `fn(&mut PassContext<'_>) -> Result<()>` (whole model), and add one [`PassEntry`] to
//! [`PASSES`]. State a later stage needs goes into a new field of [`PassContext`]. A step is a
//! `fn(&mut StepContext<'_>) -> Result<()>` in [`crate::compile::steps`].

use crate::compile::logical::{self, LogicalResult, LogicalState, cv_parallel};
use crate::compile::split::{TaskCounts, TaskLimits};
use crate::compile::steps::{self, IdRule, StepContext, StepTrace, SyncReport};
use crate::compile::summary::ModelCounts;
use crate::compile::sync::{ModelFacts, SyncConfig};
use crate::compile::{Allocation, Mode, Stage};
use crate::error::Result;
use crate::graph::device::MAX_NOTIFY_NUM;
use crate::graph::partition::Partition;
use crate::graph::{AutoMultistreamMode, GraphId, Model, Options, SyncKind};
use crate::{bail, err};

/// What the passes read and write.
pub struct PassContext<'m> {
    pub logical: LogicalState<'m>,
}

#[derive(Clone, Copy)]
pub enum PassKind {
    Graph(fn(&mut PassContext<'_>, GraphId) -> Result<()>),
    Model(fn(&mut PassContext<'_>) -> Result<()>),
    /// A step after logical allocation, of GE's sync stage (`Stage::Sync`:
    /// `InsertSyncNodesByLogicStream`) or split stage (`Stage::Split`:
    /// `SplitStreamAndRefreshTaskDef`).
    Step(fn(&mut StepContext<'_>) -> Result<()>, Stage),
}

/// One registered pass.
#[derive(Clone, Copy)]
pub struct PassEntry {
    /// GE's class name.
    pub ge_name: &'static str,
    /// The module that implements it.
    pub name: &'static str,
    pub kind: PassKind,
    pub summary: &'static str,
}

macro_rules! graph_pass {
    ($module:ident) => {
        PassKind::Graph(|ctx, g| logical::$module::run(&mut ctx.logical, g))
    };
}

fn by_dependency(ctx: &mut PassContext<'_>, g: GraphId) -> Result<()> {
    let d = ctx.logical.default_stream(g);
    logical::by_dependency::run(&mut ctx.logical, g, d)
}

fn node_stream_update(ctx: &mut PassContext<'_>, g: GraphId) -> Result<()> {
    let d = ctx.logical.default_stream(g);
    logical::node_stream_update::run(&mut ctx.logical, g, d)
}

fn single_stream(ctx: &mut PassContext<'_>, g: GraphId) -> Result<()> {
    let d = ctx.logical.default_stream(g);
    let mode = ctx.logical.model.auto_multistream_mode(ctx.logical.options)?;
    logical::single_stream::run(&mut ctx.logical, g, d, mode)
}

fn path_cover(ctx: &mut PassContext<'_>) -> Result<()> {
    let mode = ctx.logical.model.auto_multistream_mode(ctx.logical.options)?;
    logical::path_cover::run(&mut ctx.logical, mode)
}

/// Every pass, in GE's chain order.
pub static PASSES: &[PassEntry] = &[
    PassEntry {
        ge_name: "SingleStreamPass",
        name: "single_stream",
        kind: PassKind::Graph(single_stream),
        summary: "one stream for every unassigned subgraph (single-stream chain)",
    },
    PassEntry {
        ge_name: "UpdateForMdeGroupPass",
        name: "mde_group",
        kind: graph_pass!(mde_group),
        summary: "fresh streams per NewStreamId (burned: NodeStreamUpdatePass overwrites them)",
    },
    PassEntry {
        ge_name: "AssignByLabelPass",
        name: "by_label",
        kind: graph_pass!(by_label),
        summary: "one stream per stream label",
    },
    PassEntry {
        ge_name: "IndependentStreamPass",
        name: "independent_stream",
        kind: graph_pass!(independent_stream),
        summary: "one stream per (independent engine, label)",
    },
    PassEntry {
        ge_name: "AssignByDependencyPass",
        name: "by_dependency",
        kind: PassKind::Graph(by_dependency),
        summary: "reuse a predecessor's stream or take a new engine stream",
    },
    PassEntry {
        ge_name: "NodeStreamUpdatePass",
        name: "node_stream_update",
        kind: PassKind::Graph(node_stream_update),
        summary: "copy subgraph streams onto nodes",
    },
    PassEntry {
        ge_name: "UpdateForParallelGroupPass",
        name: "parallel_group",
        kind: graph_pass!(parallel_group),
        summary: "one stream per parallel group within each stream",
    },
    PassEntry {
        ge_name: "AllReduceParallelPass",
        name: "all_reduce_parallel",
        kind: graph_pass!(all_reduce_parallel),
        summary: "move all-reduce successors to fresh streams (hcom_parallel)",
    },
    PassEntry {
        ge_name: "UpdateForSkippedEnginePass",
        name: "skipped_engine",
        kind: graph_pass!(skipped_engine),
        summary: "place nodes of skip-assign engines on a neighbour's stream or none",
    },
    PassEntry {
        ge_name: "OptimizeIneffectiveMultiStreamPass",
        name: "ineffective_multi_stream",
        kind: graph_pass!(ineffective_multi_stream),
        summary: "fold a lone node back between adjacent nodes of a neighbour's stream",
    },
    PassEntry {
        ge_name: "MiniDAGStreamPass",
        name: "path_cover",
        kind: PassKind::Model(path_cover),
        summary: "auto multi-stream DAG modes: minimum path cover merged to N streams",
    },
    PassEntry {
        ge_name: "RefreshContinuousStreams",
        name: "refresh_continuous",
        kind: PassKind::Model(|ctx| {
            logical::refresh_continuous::run(&mut ctx.logical);
            Ok(())
        }),
        summary: "renumber used stream ids densely from 0",
    },
    PassEntry {
        ge_name: "RefreshContinuousStreamsByNodeIds",
        name: "refresh_by_node_ids",
        kind: PassKind::Model(|ctx| {
            let l = &mut ctx.logical;
            l.next_stream = crate::compile::dynamic::refresh::run_by_node_ids(l.model, &mut l.node_stream);
            Ok(())
        }),
        summary: "dynamic roots: renumber the ids of the root's and dynamic subgraphs' direct nodes densely; \
                  main-stream nodes to 0",
    },
    PassEntry {
        ge_name: "AssignAttachedStreamPass",
        name: "attached_stream",
        kind: PassKind::Model(|ctx| logical::attached_stream::run_all(&mut ctx.logical)),
        summary: "attached streams, numbered after the main streams",
    },
    PassEntry {
        ge_name: "SetActiveStreamsByLabel",
        name: "set_active_by_label",
        kind: PassKind::Step(steps::set_active_streams_by_label, Stage::Sync),
        summary: "each node with an active label list activates the streams of those labels",
    },
    PassEntry {
        ge_name: "SetActiveStreamsForSubgraphs",
        name: "set_active_for_subgraphs",
        kind: PassKind::Step(steps::set_active_streams_for_subgraphs, Stage::Sync),
        summary: "a subgraph's first active node activates its unlabelled streams",
    },
    PassEntry {
        ge_name: "ContractTasklessNodes",
        name: "contract_taskless",
        kind: PassKind::Step(steps::contract_taskless_nodes, Stage::Sync),
        summary: "the project's: later insertions join task-bearing nodes only, task-less nodes contracted away",
    },
    PassEntry {
        ge_name: "InsertSyncEvents",
        name: "insert_sync_events",
        kind: PassKind::Step(steps::insert_sync_events, Stage::Sync),
        summary: "one event per cross-stream data or control edge, then the subgraph events",
    },
    PassEntry {
        ge_name: "InsertOneEventInTwoNodes",
        name: "insert_one_event",
        kind: PassKind::Step(steps::insert_one_event_in_two_nodes, Stage::Sync),
        summary: "the edge walk of InsertSyncEvents alone: GE's rule per edge",
    },
    PassEntry {
        ge_name: "InsertEventsForSubgraph",
        name: "insert_subgraph_events",
        kind: PassKind::Step(steps::insert_events_for_subgraph, Stage::Sync),
        summary: "subgraph inputs wait on the parent's producers; end nodes signal its consumers",
    },
    PassEntry {
        ge_name: "OptimizeSyncEvents",
        name: "optimize_sync_events",
        kind: PassKind::Step(steps::optimize_sync_events, Stage::Sync),
        summary: "GE's pairwise family: by send, by recv, by activation; StreamSwitch sends dropped",
    },
    PassEntry {
        ge_name: "OptimizeBySendEvents",
        name: "optimize_by_send",
        kind: PassKind::Step(steps::optimize_by_send_events, Stage::Sync),
        summary: "a receiving stream keeps one event from each sender",
    },
    PassEntry {
        ge_name: "OptimizeByRecvEvents",
        name: "optimize_by_recv",
        kind: PassKind::Step(steps::optimize_by_recv_events, Stage::Sync),
        summary: "a sending stream keeps only its latest event to each receiver",
    },
    PassEntry {
        ge_name: "OptimizeByStreamActivate",
        name: "optimize_by_activate",
        kind: PassKind::Step(steps::optimize_by_stream_activate, Stage::Sync),
        summary: "drop events into labelled streams that their activation already orders",
    },
    PassEntry {
        ge_name: "ReduceSyncEvents",
        name: "reduce_exact",
        kind: PassKind::Step(steps::reduce_sync_events, Stage::Sync),
        summary: "the project's: drop every pair that other pairs and stream order imply (transitive reduction)",
    },
    PassEntry {
        ge_name: "RefreshContinuousEvents",
        name: "refresh_continuous_events",
        kind: PassKind::Step(steps::refresh_continuous_events, Stage::Sync),
        summary: "renumber event (notify) ids 0..n-1 by first record in node order",
    },
    PassEntry {
        ge_name: "ReuseEventForMultiDims",
        name: "reuse_multi_dims",
        kind: PassKind::Step(steps::reuse_event_for_multi_dims, Stage::Sync),
        summary: "branches of a multi-batch Case share event ids",
    },
    PassEntry {
        ge_name: "ReuseEventsByLifetime",
        name: "reuse_lifetime",
        kind: PassKind::Step(steps::reuse_events_by_lifetime, Stage::Sync),
        summary: "the project's event_reuse=lifetime, and a policy's way out when one id per sync exceeds max_events: a pair takes an id whose last wait already happened",
    },
    PassEntry {
        ge_name: "InsertSyncEventsWithAttachedStream",
        name: "insert_attached_events",
        kind: PassKind::Step(steps::insert_sync_events_with_attached_stream, Stage::Sync),
        summary: "value-dependent inputs of attached-stream nodes get events",
    },
    PassEntry {
        ge_name: "CoverAllStreamByNetoutput",
        name: "cover_by_netoutput",
        kind: PassKind::Step(steps::cover_all_stream_by_netoutput, Stage::Sync),
        summary: "the last node of every attached stream signals its graph's NetOutput",
    },
    PassEntry {
        ge_name: "RefreshContinuousAttachedEvents",
        name: "refresh_attached_events",
        kind: PassKind::Step(steps::refresh_continuous_attached_events, Stage::Sync),
        summary: "renumber the attached-stream pairs only, after the main ids",
    },
    PassEntry {
        ge_name: "EventMultiplexing",
        name: "event_multiplexing",
        kind: PassKind::Step(steps::event_multiplexing, Stage::Sync),
        summary: "_event_multiplexing: above 65 500 events, declared pairs share the declared ids",
    },
    PassEntry {
        ge_name: "UpdateStreamSwitchByLogicStream",
        name: "update_stream_switch",
        kind: PassKind::Step(steps::update_stream_switch_by_logic_stream, Stage::Sync),
        summary: "a StreamActive on a new stream after each switch whose label has several streams",
    },
    PassEntry {
        ge_name: "SetActiveStreamsForLoop",
        name: "set_active_for_loop",
        kind: PassKind::Step(steps::set_active_streams_for_loop, Stage::Sync),
        summary: "the loop active node takes every other stream; their last nodes signal the switch",
    },
    PassEntry {
        ge_name: "InsertLoopEvents",
        name: "insert_loop_events",
        kind: PassKind::Step(steps::insert_loop_events, Stage::Sync),
        summary: "the loop's events of SetActiveStreamsForLoop, its list as the activation stage gives it",
    },
    PassEntry {
        ge_name: "GenerateSyncEventNodes",
        name: "generate_sync_nodes",
        kind: PassKind::Step(steps::generate_sync_event_nodes, Stage::Sync),
        summary: "a Send node after each record, a Recv node before each wait",
    },
    PassEntry {
        ge_name: "AssignSingleStream",
        name: "assign_single_stream",
        kind: PassKind::Step(steps::assign_single_stream, Stage::Split),
        summary: "single-stream mode: one stream, huge when its tasks exceed the normal limit",
    },
    PassEntry {
        ge_name: "SplitStreams",
        name: "split_streams",
        kind: PassKind::Step(steps::split_streams, Stage::Split),
        summary: "cut streams over the task limit; one event joins consecutive pieces",
    },
    PassEntry {
        ge_name: "UpdateActiveStreams",
        name: "update_active_streams",
        kind: PassKind::Step(steps::update_active_streams, Stage::Split),
        summary: "split pieces join the activation lists of their stream",
    },
];

/// GE's sync stage (`InsertSyncNodesByLogicStream`, ge-compiler.md §6), step by step.
pub const SYNC_STAGE_STEPS: &[&str] = &[
    "SetActiveStreamsByLabel",
    "SetActiveStreamsForSubgraphs",
    "InsertSyncEvents",
    "OptimizeSyncEvents",
    "RefreshContinuousEvents",
    "ReuseEventForMultiDims",
    "InsertSyncEventsWithAttachedStream",
    "CoverAllStreamByNetoutput",
    "UpdateStreamSwitchByLogicStream",
    "SetActiveStreamsForLoop",
    "GenerateSyncEventNodes",
];

/// GE's split stage (`SplitStreamAndRefreshTaskDef`, ge-compiler.md §8), step by step.
pub const SPLIT_STAGE_STEPS: &[&str] = &["AssignSingleStream", "SplitStreams", "UpdateActiveStreams"];

/// One way the pipeline's sync stage runs: a slice of the registry, and the options that choose
/// it.
pub struct SyncSequence {
    /// `pass` runs the sequence step by step as `sync:NAME`.
    pub name: &'static str,
    pub summary: &'static str,
    /// Whether the options choose this sequence; the sync stage runs the first that does.
    pub chosen: fn(&SyncConfig) -> bool,
    /// Registered steps, by GE name.
    pub steps: &'static [&'static str],
}

/// The pipeline's sync sequences, one per sync mode: the sync stage ([`sync_stage`]) runs the
/// first one the options choose through [`run_steps`], the runner `pass` uses. A new mode is
/// one entry here, a new step in a mode one name in its list (and one [`PassEntry`]).
pub static SYNC_SEQUENCES: &[SyncSequence] = &[
    SyncSequence {
        name: "ge",
        summary: "compat=ge: GE's pairwise optimisations, continuity and reuse, in GE's order",
        chosen: |c| c.compat_ge,
        steps: &[
            "InsertSyncEvents",
            "OptimizeSyncEvents",
            "RefreshContinuousEvents",
            "ReuseEventForMultiDims",
            "InsertSyncEventsWithAttachedStream",
            "CoverAllStreamByNetoutput",
            "RefreshContinuousAttachedEvents",
            "EventMultiplexing",
            "InsertLoopEvents",
            "GenerateSyncEventNodes",
        ],
    },
    SyncSequence {
        name: "exact-lifetime",
        summary: "event_reuse=lifetime, or a policy's streams whose ids one per sync exceed max_events: the exact reduction on the contracted graph, then lifetime reuse",
        chosen: |c| c.event_reuse_lifetime,
        steps: &[
            "ContractTasklessNodes",
            "InsertSyncEvents",
            "InsertSyncEventsWithAttachedStream",
            "CoverAllStreamByNetoutput",
            "ReduceSyncEvents",
            "ReuseEventsByLifetime",
            "InsertLoopEvents",
            "GenerateSyncEventNodes",
        ],
    },
    SyncSequence {
        name: "exact",
        summary: "the default: the exact reduction on the contracted graph, then GE's continuity and reuse",
        chosen: |_| true,
        steps: &[
            "ContractTasklessNodes",
            "InsertSyncEvents",
            "InsertSyncEventsWithAttachedStream",
            "CoverAllStreamByNetoutput",
            "ReduceSyncEvents",
            "RefreshContinuousEvents",
            "ReuseEventForMultiDims",
            "InsertLoopEvents",
            "GenerateSyncEventNodes",
        ],
    },
];

/// The sync sequence the configuration chooses.
pub fn sync_sequence(cfg: &SyncConfig) -> &'static SyncSequence {
    SYNC_SEQUENCES.iter().find(|s| (s.chosen)(cfg)).expect("the last sync sequence is chosen by every configuration")
}

/// A sync sequence by name.
pub fn sync_sequence_named(name: &str) -> Option<&'static SyncSequence> {
    SYNC_SEQUENCES.iter().find(|s| s.name == name)
}

/// The pipeline's sync stage (GE's `InsertSyncNodesByLogicStream`) on a logical allocation:
/// the sequence `cfg` chooses, run by [`run_steps`] with the pipeline's id rule. Syncs the
/// allocation already holds (given with the graph, `allocate --from sync`) are kept ahead of
/// the inserted ones and optimised with them.
pub fn sync_stage(model: &Model, options: &Options, alloc: &mut Allocation, cfg: SyncConfig) -> Result<SyncReport> {
    let mut ctx = StepContext::for_stage(model, options, cfg, alloc, IdRule::Position);
    run_steps(&mut ctx, &chain(sync_sequence(&cfg).steps))?;
    let (_, report) = ctx.finish();
    check_notify_count(model, cfg, report.ids)?;
    Ok(report)
}

/// [`sync_stage`] as a trial of the event budget runs it: the allocation's counts after the
/// stage, and the allocation complete only when its sync ids (events plus notifies) are at
/// most `max_ids`. Over that, the pairs and their Send/Recv nodes are never written (the
/// allocation keeps the syncs it came with): the trial only needs the count, and GE's notify
/// limit is left to the caller, which reuses ids or cuts streams first. Errors and counts are
/// otherwise [`sync_stage`]'s. `facts`: the model's, when the caller keeps them.
pub fn sync_stage_within(
    model: &Model,
    options: &Options,
    alloc: &mut Allocation,
    cfg: SyncConfig,
    max_ids: u32,
    facts: Option<&ModelFacts>,
) -> Result<ModelCounts> {
    let mut ctx = StepContext::for_stage_with(model, options, cfg, alloc, IdRule::Position, facts);
    run_steps(&mut ctx, &chain(sync_sequence(&cfg).steps))?;
    let counts = ctx.pending_counts();
    if counts.event_num + counts.notify_num > max_ids {
        // GE asserts kMaxNotifyNum on its final count, after every reuse it runs; over the
        // budget the caller may still reuse ids or cut streams, and checks what it keeps.
        return Ok(counts);
    }
    let (_, report) = ctx.finish();
    check_notify_count(model, cfg, report.ids)?;
    debug_assert_eq!(counts, ModelCounts::of(alloc));
    Ok(counts)
}

/// [`sync_stage_within`] one id per sync and, over `max_ids`, with ids reused by lifetime on
/// the same streams, as the event budget's trials run the two: the steps the default sequence
/// and the `exact-lifetime` one share (contraction, insertion, the exact reduction) run once.
/// `options` choose the configuration as [`SyncConfig::new`] reads them. Returns the counts
/// one id per sync and, when those were over, the reused counts; `alloc` is
/// complete with the first that fits (the reused result where only that fits), each
/// byte for byte what [`sync_stage_within`] gives under its own options.
pub fn sync_stage_reusing(
    model: &Model,
    options: &Options,
    alloc: &mut Allocation,
    (max_ids, facts): (u32, Option<&ModelFacts>),
) -> Result<(ModelCounts, Option<ModelCounts>)> {
    let cfg = SyncConfig::new(model, options);
    let reuse_cfg = SyncConfig { event_reuse_lifetime: true, ..cfg };
    let reuse_options = Options { event_reuse_lifetime: true, ..options.clone() };
    let (exact, reused) = (sync_sequence(&cfg).steps, sync_sequence(&reuse_cfg).steps);
    let shared = exact.iter().zip(reused).take_while(|(a, b)| a == b).count();
    let mut other = alloc.clone();
    let mut ctx = StepContext::for_stage_with(model, options, cfg, alloc, IdRule::Position, facts);
    run_steps(&mut ctx, &chain(&exact[..shared]))?;
    let mut again = ctx.fork(&reuse_options, reuse_cfg, &mut other);
    run_steps(&mut ctx, &chain(&exact[shared..]))?;
    let counts = ctx.pending_counts();
    if counts.event_num + counts.notify_num <= max_ids {
        drop(again);
        let (_, report) = ctx.finish();
        check_notify_count(model, cfg, report.ids)?;
        return Ok((counts, None));
    }
    drop(ctx);
    run_steps(&mut again, &chain(&reused[shared..]))?;
    let second = again.pending_counts();
    if second.event_num + second.notify_num <= max_ids {
        let (_, report) = again.finish();
        check_notify_count(model, reuse_cfg, report.ids)?;
        *alloc = other;
    }
    Ok((counts, Some(second)))
}

/// GE refuses more notifies than `kMaxNotifyNum`.
fn check_notify_count(model: &Model, cfg: SyncConfig, ids: u32) -> Result<()> {
    if cfg.kind == SyncKind::Notify && ids as usize > MAX_NOTIFY_NUM {
        bail!(
            Limit,
            "graph '{}' needs {ids} notifies after optimisation; at most {MAX_NOTIFY_NUM} are supported (kMaxNotifyNum)",
            model.name,
        );
    }
    Ok(())
}

/// GE's multi-stream chain (`LogicalStreamAllocator::Assign`, ge-compiler.md §4.1): the
/// `DoAssign` passes on the root, then on every nested graph in `all_graphs()` order with one
/// shared `next_stream`; the auto multi-stream custom pass (MiniDAG path cover) when a DAG
/// mode is set; `RefreshContinuousStreams`; then attached streams numbered after the main ones.
pub const MULTI_STREAM_CHAIN: &[&str] = &[
    "UpdateForMdeGroupPass",
    "AssignByLabelPass",
    "IndependentStreamPass",
    "AssignByDependencyPass",
    "NodeStreamUpdatePass",
    "UpdateForParallelGroupPass",
    "AllReduceParallelPass",
    "UpdateForSkippedEnginePass",
    "OptimizeIneffectiveMultiStreamPass",
    "MiniDAGStreamPass",
    "RefreshContinuousStreams",
    "AssignAttachedStreamPass",
];

/// GE's single-stream chain (`enable_single_stream`): `SingleStreamPass` →
/// `NodeStreamUpdatePass` → `UpdateForSkippedEnginePass` on every graph, then
/// `RefreshContinuousStreams` and `AssignAttachedStreamPass`, as GE's `Assign` does for both.
pub const SINGLE_STREAM_CHAIN: &[&str] = &[
    "SingleStreamPass",
    "NodeStreamUpdatePass",
    "UpdateForSkippedEnginePass",
    "RefreshContinuousStreams",
    "AssignAttachedStreamPass",
];

/// The registry entries of a chain.
pub fn chain(names: &[&str]) -> Vec<&'static PassEntry> {
    names.iter().map(|n| lookup(n).unwrap_or_else(|| panic!("chain names unregistered pass {n}"))).collect()
}

/// Runs GE's single-stream chain on a fresh state.
pub fn assign_single_stream(model: &Model, options: &Options) -> Result<LogicalResult> {
    let partition = Partition::for_compile(model, options.compat_ge, None);
    let mut ctx = PassContext { logical: LogicalState::new(model, options, partition) };
    run(&mut ctx, &chain(SINGLE_STREAM_CHAIN))?;
    Ok(ctx.logical.finish())
}

/// Runs GE's multi-stream chain on a fresh state. The `cv` mode (and any node already
/// carrying `_enable_cv_parallel`) re-partitions with the marked vector nodes on
/// `VectorEngine` first, as GE's second partitioning does.
pub fn assign_multi_stream(model: &Model, options: &Options) -> Result<LogicalResult> {
    let mode = model.auto_multistream_mode(options)?;
    let marked = cv_parallel::marked_nodes(model, mode == AutoMultistreamMode::Cv);
    let engines = if marked.is_empty() { None } else { Some(cv_parallel::with_vector_engine(model, &marked)?) };
    let partition = Partition::for_compile(model, options.compat_ge, engines.as_ref());
    let mut ctx = PassContext { logical: LogicalState::new(model, options, partition) };
    ctx.logical.engines = engines;
    run(&mut ctx, &chain(MULTI_STREAM_CHAIN))?;
    Ok(ctx.logical.finish())
}

fn is_step(p: &PassEntry) -> bool {
    matches!(p.kind, PassKind::Step(..))
}

/// The `pass --help` list: every pass and step by GE name and module name, and GE's orders.
pub fn help_text() -> String {
    let mut s = String::from("Logical passes (GE name / module name: what it does):\n");
    for p in PASSES.iter().filter(|p| !is_step(p)) {
        s.push_str(&format!("  {} / {}: {}\n", p.ge_name, p.name, p.summary));
    }
    s.push_str("Steps after logical allocation, on the graph's streams and events (GE's algorithm each):\n");
    for p in PASSES.iter().filter(|p| is_step(p)) {
        s.push_str(&format!("  {} / {}: {}\n", p.ge_name, p.name, p.summary));
    }
    s.push_str(&format!("GE's multi-stream chain: {}\n", MULTI_STREAM_CHAIN.join(", ")));
    s.push_str(&format!("GE's single-stream chain: {}\n", SINGLE_STREAM_CHAIN.join(", ")));
    s.push_str(&format!("GE's sync stage: {}\n", SYNC_STAGE_STEPS.join(", ")));
    s.push_str("The pipeline's sync sequences (run one as sync:NAME):\n");
    for q in SYNC_SEQUENCES {
        s.push_str(&format!("  sync:{} ({}): {}\n", q.name, q.summary, q.steps.join(", ")));
    }
    s.push_str(&format!("GE's split stage: {}", SPLIT_STAGE_STEPS.join(", ")));
    s
}

/// `docs/passes.md`, written from the registry (a test keeps the checked-in page current).
pub fn markdown() -> String {
    let mut s = String::from(
        "# Passes and steps\n\nGenerated from the pass registry (`src/compile/passes.rs`); `stream-alloc pass NAMES \
         GRAPH` runs any of them, in the order named, on the streams the graph gives: the logical passes first, \
         then the steps after logical allocation, which also start from the events the graph gives \
         (graph-json.md `events`). Each step runs GE's own algorithm (`compat` does not change it); the \
         allocation JSON it writes carries GE's counts after every step (allocation-json.md `steps`).\n\n\
         | GE name | module | kind | what it does |\n|---|---|---|---|\n",
    );
    for p in PASSES {
        let kind = match p.kind {
            PassKind::Graph(_) => "per graph",
            PassKind::Model(_) => "whole model",
            PassKind::Step(_, Stage::Split) => "split step",
            PassKind::Step(..) => "sync step",
        };
        s.push_str(&format!("| `{}` | `{}` | {kind} | {} |\n", p.ge_name, p.name, p.summary));
    }
    s.push_str(&format!("\nGE's multi-stream chain: {}.\n", MULTI_STREAM_CHAIN.join(" → ")));
    s.push_str(&format!("\nGE's single-stream chain: {}.\n", SINGLE_STREAM_CHAIN.join(" → ")));
    s.push_str(&format!("\nGE's sync stage (`InsertSyncNodesByLogicStream`): {}.\n", SYNC_STAGE_STEPS.join(" → ")));
    s.push_str(&format!("\nGE's split stage (`SplitStreamAndRefreshTaskDef`): {}.\n", SPLIT_STAGE_STEPS.join(" → ")));
    s.push_str(SEQUENCE_NOTES);
    for q in SYNC_SEQUENCES {
        s.push_str(&format!("- `sync:{}`, {}: {}.\n", q.name, q.summary, q.steps.join(" → ")));
    }
    s.push_str(STEP_NOTES);
    s
}

/// How the pipeline's sync stage reads the registry.
const SEQUENCE_NOTES: &str = "
## The pipeline's sync sequences

The pipeline's sync stage is a slice of this registry per sync mode (`SYNC_SEQUENCES` in \
`src/compile/passes.rs`), run by the runner `stream-alloc pass` uses; the first sequence the options \
choose runs. A new sync mode is one entry of that table, a new step one `PassEntry` and its name in a \
sequence. The two differ only in how a pair added by a step gets its id: `pass` hands out GE's running \
counter (`event_num_`, so the `steps` counts are GE's), the pipeline the pair's place in the event table; \
the continuity refresh numbers pairs by the send-list walk alone, so both give the same ids from the \
first refresh on. `pass sync:NAME` runs a sequence step by step, on the streams the graph gives, in \
GE's node order (the pipeline runs outside `compat=ge` in its own execution order).

";

/// Where a step run alone does not do exactly what GE's function does, and why.
const STEP_NOTES: &str = "
## Where a step differs from GE's function

- `SplitStreams` counts the wait (2 tasks) and record (1) it adds at each of its own cuts, which \
GE does not: no piece ends above the limit. GE's unit test of 403 five-task nodes gives 199 + 199 + 5 \
nodes (the middle stream 998 > 997 tasks); here 199 + 198 + 6. It also makes the Send/Recv nodes of its \
own events (GE's `GenerateSyncEventNodes(false)`) and runs `PostProcessOfSplitStreams`; \
`GenerateSyncEventNodes` named after it has nothing left to do. Events never made into Send/Recv nodes \
before the split stay in `syncs` (GE's `ClearNodes2SyncEvents` would drop them from its maps).
- `InsertOneEventInTwoNodes` runs on every data and control edge (GE's tests call it on one pair of \
nodes); `InsertSyncEvents` is that walk plus `InsertEventsForSubgraph`, which is also a step of its own.
- `UpdateStreamSwitchByLogicStream` leaves the loop to `SetActiveStreamsForLoop`, its own step. After \
the split, `SetActiveStreamsForLoop` redoes the loop's list over physical streams and adds no events.
- `ReuseEventForMultiDims` first numbers the ids in use densely, in their order (GE runs it on \
refreshed ids).
- `RefreshContinuousEvents` refreshes notifies under `event=notify` (GE's `RefreshContinuousNotifies`); \
`_event_multiplexing` (only above 65 500 events) is no step of its own.
- `SplitStreams` reports every piece of a huge logical stream as huge (`huge_streams` [0, 1] after a \
single-stream model splits once), under `compat=ge` too. GE writes its huge-stream list once, in \
`AssignSingleStream`, and keeps [0]; its runtime then creates the later pieces as normal streams, \
although the split filled each of them up to the huge limit (GE's own unit test puts 8 080 tasks on \
piece 1, whose normal depth is 1 024). A piece must be created huge to hold what the split put on it.

## `compat=ge` and GE's standard library

`AssignAttachedStreamPass` and the dynamic allocator's `AssignAttachedResource` number attached \
streams group by group. GE keeps the groups in a `std::unordered_map<std::string, …>` and numbers \
them in its iteration order, which is libstdc++'s (GE is built with GCC). Under `compat=ge` the \
groups are numbered in that order, reproduced by `src/compile/libstdcxx.rs`: the key hash is \
`std::hash<std::string>`, i.e. `std::_Hash_bytes(data, len, 0xc70f6907)`, the 64-bit MurmurHash2 \
variant of libstdc++'s `hash_bytes.cc`; the bucket counts are `_Prime_rehash_policy`'s (1 when empty, \
then 13, 29, 59, 127, …: the next of its primes at or above twice the old count, each time the \
element count would pass the bucket count); a new key is linked first in its bucket when the bucket \
has keys, else at the head of the list, and a rehash relinks the list in order the same way. \
Iteration walks the list from its head. Hashes and orders (up to 700 keys, across six rehashes) \
were checked against a g++ 12 program; the unit tests keep some of its output. With two groups the \
group a node named last comes first: relu3/relu4 of `group0` get the first attached stream and \
relu1/relu2 of `_default_stream_info_group`, named before, the second \
(`tests/fixtures/logical/attached_groups.compat.expected`). Outside `compat=ge` groups go in name \
order, which reads better and does not depend on a standard library.

## A stream that holds only task-less nodes

GE's chain can open a logical stream that holds nothing but task-less nodes, and the logical stage, \
GE's chain in every mode, keeps it. torchvision's vit_b_16, from either of torch's exporters, gets a \
second stream holding only 24 Reshape and Unsqueeze nodes (`DNN_VM_GE_LOCAL`, no task), two per \
layer: the pair between the attention's input projection and its Transpose. \
`AssignByDependencyPass` may not give that GE_LOCAL subgraph its producer's stream: the producer's \
AI-core subgraph has another AI-core successor subgraph (the one after the Transpose, which the \
residual edge also reaches, so the partition could not merge it with its producer), and the \
sibling rule (`SubGraphCouldReuse`) comes before the attach rule, so the subgraph takes a new \
GE_LOCAL stream. `UpdateForSkippedEnginePass` then sees two streams among each node's neighbours, \
since GE counts the node's partner on the new stream (`GetInAllNodes`, `GetOutAllNodes`), and \
`OptimizeIneffectiveMultiStreamPass` skips a node with a neighbour on its own stream; both stay. \
GE's own source does exactly this (hicann/ge, \
`compiler/graph/build/stream/logical_stream_allocator.cc`: `UpdateForSkippedEnginePass::Run`, \
`GetSingleInoutStream`, `OptimizeIneffectiveMultiStreamPass::Run`). Under `compat=ge` GE's sync \
stage then puts an event on both edges of the pair, so the stream runs a Recv and a Send; in the \
default mode the sync stage joins task-bearing nodes only, and the stream has no task and no sync. \
The exported models are tested as they are (`tests/fixtures/onnx/vit_b_16_ts.onnx`, \
`vit_b_16_dynamo.onnx`, made by `scripts/export_fixtures.py`; `tests/it/logical_cli.rs`), and the \
attention block alone shows it (`tests/fixtures/logical/taskless_view_stream.json`, its two \
`.expected` files):

```console
$ stream-alloc allocate tests/fixtures/logical/taskless_view_stream.json --option compat=ge
taskless_view_stream: 12 nodes, mode static-multi, stage all
  streams: 2 logical, 2 physical, 0 attached
  events: 2
  nodes per stream: 0:7 1:2 (no stream: 3)
  time: 0.550 ms
```
";

/// Finds a pass by GE name or module name.
pub fn lookup(name: &str) -> Option<&'static PassEntry> {
    PASSES.iter().find(|p| p.ge_name == name || p.name == name)
}

/// Resolves a comma-separated list of pass names.
pub fn parse_list(list: &str) -> Result<Vec<&'static PassEntry>> {
    let names: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    if names.is_empty() {
        bail!(InvalidOption, "no pass named in \"{list}\"");
    }
    let mut out = Vec::with_capacity(names.len());
    for n in names {
        if let Some(seq) = n.strip_prefix("sync:") {
            let Some(seq) = sync_sequence_named(seq) else {
                let known: Vec<&str> = SYNC_SEQUENCES.iter().map(|q| q.name).collect();
                bail!(InvalidOption, "unknown sync sequence \"{n}\"; known: sync:{}", known.join(", sync:"));
            };
            out.extend(chain(seq.steps));
            continue;
        }
        out.push(lookup(n).ok_or_else(|| {
            let known: Vec<&str> = PASSES.iter().map(|p| p.ge_name).collect();
            err!(InvalidOption, "unknown pass \"{n}\"; known passes: {}", known.join(", "))
        })?);
    }
    Ok(out)
}

/// Runs logical `passes` in order; consecutive graph passes run together per graph (GE's
/// order). Steps after logical allocation run through [`run_list`] instead.
pub fn run(ctx: &mut PassContext<'_>, passes: &[&PassEntry]) -> Result<()> {
    let graphs = ctx.logical.graphs.clone();
    let mut i = 0;
    while i < passes.len() {
        match passes[i].kind {
            PassKind::Step(..) => {
                bail!(InvalidOption, "{} is a step after logical allocation, not a logical pass", passes[i].ge_name)
            }
            PassKind::Model(f) => {
                f(ctx)?;
                i += 1;
            }
            PassKind::Graph(_) => {
                let end = passes[i..]
                    .iter()
                    .position(|p| !matches!(p.kind, PassKind::Graph(_)))
                    .map_or(passes.len(), |k| i + k);
                for &g in &graphs {
                    for p in &passes[i..end] {
                        if let PassKind::Graph(f) = p.kind {
                            f(ctx, g)?;
                        }
                    }
                }
                i = end;
            }
        }
    }
    Ok(())
}

/// Runs the named passes on a model as given: pre-assigned node streams are the starting
/// streams, the file's `partition` (or GE's partitioner) gives the engine subgraphs.
pub fn run_named<'m>(model: &'m Model, options: &'m Options, passes: &[&PassEntry]) -> Result<LogicalState<'m>> {
    let partition = Partition::for_compile(model, options.compat_ge, None);
    let mut ctx = PassContext { logical: LogicalState::from_preassigned(model, options, partition) };
    run(&mut ctx, passes)?;
    Ok(ctx.logical)
}

/// What `stream-alloc pass` runs: the logical passes of `list` on the graph's streams (as
/// [`run_named`]), then its steps on the result and the graph's events (a [`StepContext`] with
/// the task `limits`). The counts after each step come back when the list names steps. A
/// logical pass named after a step is refused: logical allocation is over by then.
pub fn run_list(
    model: &Model,
    options: &Options,
    limits: TaskLimits,
    list: &[&PassEntry],
) -> Result<(Allocation, Option<StepTrace>)> {
    let first_step = list.iter().position(|p| is_step(p)).unwrap_or(list.len());
    let (logical, steps) = list.split_at(first_step);
    if let Some(late) = steps.iter().find(|p| !is_step(p)) {
        bail!(
            InvalidOption,
            "logical pass {} is named after step {}; name the logical passes first, then the steps after \
             logical allocation",
            late.ge_name,
            list[first_step].ge_name
        );
    }
    let mut alloc = if logical.is_empty() {
        super::preassigned_logical(model, options)?
    } else {
        let st = run_named(model, options, logical)?;
        let main = st.main_stream_num.unwrap_or(st.next_stream);
        let attached_count = st.next_stream.saturating_sub(main);
        let mode = Mode::of(model, options)?.name();
        Allocation::from_logical(mode, options.event, st.node_stream, main, st.attached, attached_count)
    };
    if steps.is_empty() {
        return Ok((alloc, None));
    }
    if !logical.is_empty() {
        alloc.syncs = super::given_syncs(model);
    }
    let mut ctx = StepContext::new(model, options, limits, TaskCounts::default(), &mut alloc)?;
    run_steps(&mut ctx, steps)?;
    let (trace, _) = ctx.finish();
    Ok((alloc, trace))
}

/// Runs `steps` in order on a context: the one runner of the steps after logical allocation,
/// for `pass` ([`run_list`]) and the pipeline's sync stage ([`sync_stage`]).
pub fn run_steps(ctx: &mut StepContext<'_>, steps: &[&PassEntry]) -> Result<()> {
    for p in steps {
        let PassKind::Step(f, _) = p.kind else {
            bail!(InvalidOption, "{} is a logical pass, not a step after logical allocation", p.ge_name);
        };
        ctx.run(p.ge_name, f)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_both_ways_and_are_unique() {
        for p in PASSES {
            assert!(std::ptr::eq(lookup(p.ge_name).unwrap(), p));
            assert!(std::ptr::eq(lookup(p.name).unwrap(), p));
        }
        let mut names: Vec<&str> = PASSES.iter().flat_map(|p| [p.ge_name, p.name]).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n);
    }

    #[test]
    fn lists_parse_in_order_and_reject_unknown_names() {
        let l = parse_list("AssignByLabelPass, by_dependency").unwrap();
        assert_eq!(l.iter().map(|p| p.name).collect::<Vec<_>>(), ["by_label", "by_dependency"]);
        let e = parse_list("by_label,Nope").err().unwrap();
        assert_eq!(e.code(), "E10001");
        assert!(e.message.contains("Nope"));
        assert!(parse_list(" , ").is_err());
    }
}
