//! Dynamic-shape stream allocation: GE's `DynamicStreamAllocator` (ge-compiler.md §5).
//!
//! A model whose root graph is `"shape": "dynamic"` goes through this strategy; the root's
//! shape alone picks the mode ([`crate::compile::mode_name`]), as GE decides per root graph. A
//! dynamic graph nested in a static root therefore stays with the static strategy, which
//! treats it through its `default_stream` rule (-1 for graphs whose parent lives in an
//! unknown-shape graph).
//!
//! Inside a dynamic root, GE assigns streams to the root and its *unknown-shape* subgraphs only
//! ([`dynamic_graphs`]); known-shape subgraphs are compiled as separate known-shape models with
//! their own stream space. Here their nodes are left unassigned and so end on the main stream 0
//! through the final forcing rule of `RefreshContinuousStreams`, like their owning control-flow
//! node; the `NetOutput` of every `While` body ends on stream 0 the same way.
//!
//! Single-stream (the default, GE without `ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1`): every node on
//! stream 0. Multi-stream (`Options::dynamic_multi_stream`), per graph in GE's order:
//! [`engines_owning`] → [`aicpu`] (`AssignAicpuCanParallel` when `ac_parallel_enable` is
//! `"1"`, else `AssignIndependentAicpuNode`) → [`reuse`] → [`remain`] → [`subgraph_nodes`] →
//! [`stream_label`]; then [`refresh`] once for the whole model, and in a DAG
//! `auto_multistream_parallel_mode` the MiniDAG path cover on the root with
//! `RefreshContinuousStreamsByNodeIds` after it. Attached streams
//! ([`attached`], GE's `AssignAttachedResource`) follow the main streams in both modes.
//! Events are left to the sync stage.

pub mod aicpu;
pub mod attached;
pub mod engines_owning;
pub mod refresh;
pub mod remain;
pub mod reuse;
pub mod stream_label;
pub mod subgraph_nodes;

use std::collections::BTreeMap;

use super::logical::{LogicalResult, LogicalState, path_cover};
use crate::error::Result;
use crate::graph::engines::names;
use crate::graph::partition::Partition;
use crate::graph::{AutoMultistreamMode, EngineId, GraphId, IdVec, Model, NodeId, Options, StreamId, SubgraphId};

/// Engines that own one stream each (`AssignEnginesOwningStream`).
pub const STREAM_OWNING_ENGINES: &[&str] = &[names::AICORE, names::VECTOR, names::HCCL, names::DSA];

/// The AICPU engines (`AssignAicpuCanParallel`, `AssignIndependentAicpuNode`, and the
/// "AICPU never reuses an independent peer" rule).
pub const AICPU_ENGINES: &[&str] =
    &[names::AICPU, names::AICPU_FFTS_PLUS, names::AICPU_ASCEND, names::AICPU_ASCEND_FFTS_PLUS];

/// The state the dynamic steps share (GE's `DynamicStreamAllocator` members). Stream ids are
/// temporary until [`refresh`] renumbers them.
#[derive(Clone, Debug)]
pub struct DynamicState<'m> {
    pub model: &'m Model,
    pub partition: Partition,
    /// Stream of each engine subgraph (GE's `Subgraph::stream_id`).
    pub subgraph_stream: IdVec<SubgraphId, Option<StreamId>>,
    /// The subgraph whose stream a subgraph took (GE's `reused_subgraph`, always the owner).
    pub reused: IdVec<SubgraphId, Option<SubgraphId>>,
    pub node_stream: IdVec<NodeId, Option<StreamId>>,
    /// One stream per engine, shared by every graph (GE's `engine_streams_`).
    pub engine_streams: BTreeMap<EngineId, StreamId>,
    /// One stream per stream label, shared by every graph.
    pub label_streams: BTreeMap<String, StreamId>,
    pub next_stream: u32,
}

impl<'m> DynamicState<'m> {
    pub fn new(model: &'m Model, options: &Options) -> Self {
        let partition = Partition::for_compile(model, options.compat_ge, None);
        let subgraphs = partition.subgraphs.len();
        DynamicState {
            model,
            partition,
            subgraph_stream: IdVec::filled(subgraphs, None),
            reused: IdVec::filled(subgraphs, None),
            node_stream: IdVec::filled(model.nodes.len(), None),
            engine_streams: BTreeMap::new(),
            label_streams: BTreeMap::new(),
            next_stream: 0,
        }
    }

    /// The engine's stream, taking `next_stream++` on first sight.
    pub fn engine_stream(&mut self, engine: EngineId) -> StreamId {
        if let Some(&s) = self.engine_streams.get(&engine) {
            return s;
        }
        let s = StreamId(self.next_stream);
        self.next_stream += 1;
        self.engine_streams.insert(engine, s);
        s
    }

    /// The label's stream, taking `next_stream++` on first sight.
    pub fn label_stream(&mut self, label: &str) -> StreamId {
        if let Some(&s) = self.label_streams.get(label) {
            return s;
        }
        let s = StreamId(self.next_stream);
        self.next_stream += 1;
        self.label_streams.insert(label.to_string(), s);
        s
    }

    pub fn engine_name(&self, s: SubgraphId) -> &'m str {
        &self.model.engines[self.partition.subgraphs[s].engine].name
    }

    pub fn is_aicpu(&self, s: SubgraphId) -> bool {
        AICPU_ENGINES.contains(&self.engine_name(s))
    }
}

/// The graphs GE's dynamic allocator walks: the root, then every unknown-shape subgraph in
/// `GetAllSubgraphs` order.
pub fn dynamic_graphs(model: &Model) -> Vec<GraphId> {
    model.all_graphs().into_iter().filter(|&g| g == GraphId::ROOT || model.is_dynamic(g)).collect()
}

/// GE's `AssignStreamsForDynamicShapeGraph` followed by `AssignAttachedResource`, for a model
/// with a dynamic root.
///
/// `auto_multistream_parallel_mode` is read (and an invalid one rejected, E10001) in both
/// modes. In multi-stream mode a DAG mode runs GE's `RunCustomStreamPass` on the refreshed
/// streams ([`run_custom_stream_pass`]); `cv` and the graph attribute `default` change
/// nothing here, since the vector-engine re-partition belongs to GE's static allocator. In
/// single-stream mode GE never runs the dynamic allocator's custom passes: one stream.
pub fn assign(model: &Model, options: &Options) -> Result<LogicalResult> {
    let auto_mode = model.auto_multistream_mode(options)?;
    let mut st = DynamicState::new(model, options);
    let main_stream_count = if options.dynamic_multi_stream {
        let ac_parallel = options.ac_parallel_enable == "1";
        for g in dynamic_graphs(model) {
            engines_owning::run(&mut st, g);
            if ac_parallel {
                aicpu::assign_can_parallel(&mut st, g);
            } else {
                aicpu::assign_independent(&mut st, g);
            }
            reuse::run(&mut st, g);
            remain::run(&mut st, g);
            subgraph_nodes::run(&mut st, g);
            stream_label::run(&mut st, g);
        }
        let count = refresh::run(&mut st);
        if matches!(
            auto_mode,
            AutoMultistreamMode::LoadBalance(_)
                | AutoMultistreamMode::MainStream(_)
                | AutoMultistreamMode::WeightedLoadBalance(_)
        ) {
            run_custom_stream_pass(&mut st, options, count, auto_mode)?
        } else {
            count
        }
    } else {
        for s in st.node_stream.iter_mut() {
            *s = Some(StreamId(0));
        }
        1
    };
    let (attached, attached_count) = attached::run(model, &st.node_stream, main_stream_count, options.compat_ge)?;
    Ok(LogicalResult { node_stream: st.node_stream, main_stream_count, attached, attached_count })
}

/// GE: `RunCustomStreamPass` on a dynamic root in a DAG auto multi-stream mode, then
/// `RefreshContinuousStreamsByNodeIds` ([`refresh::run_by_node_ids`]). The MiniDAG path
/// cover is the static allocator's ([`path_cover::run`]), run on the root graph with fresh ids
/// starting after the `main_stream_count` refreshed dynamic streams. Returns the new count.
fn run_custom_stream_pass(
    st: &mut DynamicState<'_>,
    options: &Options,
    main_stream_count: u32,
    mode: AutoMultistreamMode,
) -> Result<u32> {
    let model = st.model;
    let mut ls = LogicalState::new(model, options, st.partition.clone());
    ls.node_stream = std::mem::take(&mut st.node_stream);
    ls.next_stream = main_stream_count;
    let ran = path_cover::run(&mut ls, mode);
    st.node_stream = ls.node_stream;
    ran?;
    Ok(refresh::run_by_node_ids(model, &mut st.node_stream))
}
