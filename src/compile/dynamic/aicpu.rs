//! GE: `DynamicStreamAllocator::AssignAicpuCanParallel` and `AssignIndependentAicpuNode`.

use super::{DynamicState, STREAM_OWNING_ENGINES};
use crate::graph::engines::names;
use crate::graph::{GraphId, SubgraphId};

/// AICPU operators that always run on the AICPU engine's own stream when `ac_parallel_enable`
/// is off.
pub const INDEPENDENT_AICPU_OPS: &[&str] =
    &["DropOutGenMask", "DropOutDoMaskV3", "GetNext", "DynamicGetNext", "DynamicGetNextV2"];

/// `AssignIndependentAicpuNode`: AICPU subgraphs holding one of [`INDEPENDENT_AICPU_OPS`] take
/// their engine's stream.
pub fn assign_independent(st: &mut DynamicState<'_>, g: GraphId) {
    for s in st.partition.by_graph[g].clone() {
        if st.subgraph_stream[s].is_some() || !st.is_aicpu(s) {
            continue;
        }
        let model = st.model;
        let independent = st.partition.subgraphs[s]
            .nodes
            .iter()
            .any(|&n| INDEPENDENT_AICPU_OPS.contains(&model.nodes[n].op_type.as_str()));
        if independent {
            let engine = st.partition.subgraphs[s].engine;
            st.subgraph_stream[s] = Some(st.engine_stream(engine));
        }
    }
}

/// `AssignAicpuCanParallel` (`ac_parallel_enable` = "1"): an AICPU subgraph takes its engine's
/// stream, and so may run in parallel with AI core work, when it has no producer subgraph, or
/// when all its producers are GE_LOCAL subgraphs without producers (no device work before it),
/// or when no producer is one it could continue: such a producer has an engine that owns a
/// stream, is not independent, and has no other consumer subgraph of its own engine.
pub fn assign_can_parallel(st: &mut DynamicState<'_>, g: GraphId) {
    for s in st.partition.by_graph[g].clone() {
        if st.subgraph_stream[s].is_some() || !st.is_aicpu(s) {
            continue;
        }
        if can_parallel(st, s) {
            let engine = st.partition.subgraphs[s].engine;
            st.subgraph_stream[s] = Some(st.engine_stream(engine));
        }
    }
}

fn can_parallel(st: &DynamicState<'_>, s: SubgraphId) -> bool {
    let model = st.model;
    let preds = st.partition.predecessors(model, s);
    if preds.is_empty() {
        return true;
    }
    let only_inputless_local =
        preds.iter().all(|&p| st.engine_name(p) == names::GE_LOCAL && st.partition.predecessors(model, p).is_empty());
    if only_inputless_local {
        return true;
    }
    !preds.iter().any(|&p| could_continue(st, p, s))
}

/// Whether the AICPU subgraph `s` could continue on producer `p`'s stream.
fn could_continue(st: &DynamicState<'_>, p: SubgraphId, s: SubgraphId) -> bool {
    let model = st.model;
    let engine = st.partition.subgraphs[p].engine;
    if !STREAM_OWNING_ENGINES.contains(&st.engine_name(p)) || model.engines[engine].independent {
        return false;
    }
    !st.partition.successors(model, p).into_iter().any(|c| c != s && st.partition.subgraphs[c].engine == engine)
}
