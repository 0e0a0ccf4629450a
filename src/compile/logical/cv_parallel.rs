//! The `cv` auto multi-stream mode (`ge.autoMultistreamParallelMode=cv`): vector (AIV) work
//! that can run beside cube (AIC) work is marked `_enable_cv_parallel` and moves to
//! `VectorEngine` in the engine partition, so it gets the vector engine's stream.
//!
//! What this implements: an `AIcoreEngine` node is a cube node when its type is a matrix /
//! convolution operator ([`CUBE_TYPES`]), else a vector node. A vector node is marked when
//! some cube node of the same graph is parallel to it (neither reaches the other). Nodes that
//! already carry `_enable_cv_parallel` are marked in every mode, as GE's partitioner reads
//! the attribute whoever set it. Reachability is computed 64 cube nodes at a time with
//! bitsets: O(⌈cubes/64⌉ · (V + E)) per graph.

use crate::err;
use crate::error::Result;
use crate::graph::engines::names;
use crate::graph::{EngineId, GraphId, IdVec, Model, NodeId};

/// Operator types that run on the cube unit.
pub const CUBE_TYPES: &[&str] = &[
    "Conv2D",
    "Conv3D",
    "Conv2DBackpropInput",
    "Conv2DBackpropFilter",
    "Conv3DBackpropInput",
    "Conv3DBackpropFilter",
    "Conv2DTranspose",
    "Conv3DTranspose",
    "Deconvolution",
    "DepthwiseConv2D",
    "MatMul",
    "MatMulV2",
    "MatMulV3",
    "BatchMatMul",
    "BatchMatMulV2",
    "BatchMatMulV3",
    "FullyConnection",
    "GEMM",
    "QuantBatchMatmulV3",
    "WeightQuantBatchMatmulV2",
];

pub fn is_cube_type(t: &str) -> bool {
    CUBE_TYPES.contains(&t)
}

/// Nodes that go to `VectorEngine`, in id order.
pub fn marked_nodes(model: &Model, cv_mode: bool) -> Vec<NodeId> {
    let mut marked = vec![false; model.nodes.len()];
    for (n, node) in model.nodes.enumerate() {
        if node.ge_attrs.flag("_enable_cv_parallel") {
            marked[n.index()] = true;
        }
    }
    if cv_mode {
        if let Some(aicore) = model.engines.lookup(names::AICORE) {
            for g in model.graphs.ids() {
                mark_graph(model, g, aicore, &mut marked);
            }
        }
    }
    marked.iter().enumerate().filter(|(_, m)| **m).map(|(i, _)| NodeId::new(i)).collect()
}

fn mark_graph(model: &Model, g: GraphId, aicore: crate::graph::EngineId, marked: &mut [bool]) {
    let order = &model.graphs[g].order;
    let on_aicore = |n: NodeId| model.nodes[n].engine == aicore;
    let cubes: Vec<NodeId> =
        order.iter().copied().filter(|&n| on_aicore(n) && is_cube_type(&model.nodes[n].op_type)).collect();
    let vectors: Vec<NodeId> =
        order.iter().copied().filter(|&n| on_aicore(n) && !is_cube_type(&model.nodes[n].op_type)).collect();
    if cubes.is_empty() || vectors.is_empty() {
        return;
    }
    let base = model.graphs[g].nodes[0].index();
    let mut anc = vec![0u64; order.len()];
    let mut desc = vec![0u64; order.len()];
    for chunk in cubes.chunks(64) {
        anc.iter_mut().for_each(|x| *x = 0);
        desc.iter_mut().for_each(|x| *x = 0);
        for (bit, &c) in chunk.iter().enumerate() {
            anc[c.index() - base] |= 1 << bit;
            desc[c.index() - base] |= 1 << bit;
        }
        for &n in order {
            let mut m = anc[n.index() - base];
            for e in model.in_edges(n) {
                m |= anc[e.src.index() - base];
            }
            anc[n.index() - base] = m;
        }
        for &n in order.iter().rev() {
            let mut m = desc[n.index() - base];
            for e in model.out_edges(n) {
                m |= desc[e.dst.index() - base];
            }
            desc[n.index() - base] = m;
        }
        let full = if chunk.len() == 64 { u64::MAX } else { (1u64 << chunk.len()) - 1 };
        for &v in &vectors {
            let i = v.index() - base;
            if (anc[i] | desc[i]) != full {
                marked[v.index()] = true;
            }
        }
    }
}

/// Every node's engine with the marked nodes on `VectorEngine`: what GE's second partitioning
/// sees, as a table beside the model rather than a copy of it.
pub fn with_vector_engine(model: &Model, marked: &[NodeId]) -> Result<IdVec<NodeId, EngineId>> {
    let vector = model.engines.lookup(names::VECTOR).ok_or_else(|| {
        err!(
            UnknownEngine,
            "node '{}' is marked for cv parallelism but the engine table has no {}",
            model.nodes[marked[0]].name,
            names::VECTOR
        )
    })?;
    let mut engines: IdVec<NodeId, EngineId> = model.nodes.iter().map(|n| n.engine).collect();
    for &n in marked {
        engines[n] = vector;
    }
    Ok(engines)
}
