//! `fifo:N`: TensorRT-LLM's automatic multi-stream pass on the project's costs, each stream
//! running its nodes in the order the pass placed them (NVIDIA/TensorRT-LLM
//! `tensorrt_llm/_torch/compilation/multi_stream/auto_multi_stream.py`: `compute_distance`
//! for the priority, `pick_stream` for the stream, and the streams launched in assignment
//! order), where every other policy leaves the order to the pipeline's critical-path-first
//! schedule (`compile::order`). The syncs are the sync stage's, contracted and reduced as for
//! any policy, not the pass's wait per cross-stream edge.
//!
//! The placement is `earliest:N`'s ([`super::earliest`]) with the pass's priority: a node's
//! distance to the exit, the longest path of costs from it to a sink *without* its own cost
//! (`earliest:N` counts it), ties by topological position. The pass's order is every root
//! node once, producers first, so it is an execution order as it stands; nested graphs keep
//! theirs.

use super::{Assignment, Ctx, earliest};
use crate::graph::{IdVec, Pos};

/// At most `max_streams` (at least one) streams for the task nodes, numbered by their first
/// node in topological order, and the root positions in the order they were placed.
pub fn assign(ctx: &Ctx<'_>, max_streams: u32) -> Assignment {
    let level = &ctx.timing().level;
    // The longest path below a node without it: its successors' bottom levels.
    let distance: IdVec<Pos, f64> =
        ctx.order.ids().map(|p| ctx.succ.of(p).iter().map(|&q| level[q]).fold(0.0, f64::max)).collect();
    let (mut a, placed) = earliest::place(ctx, max_streams, &distance);
    // One stream runs in any order alike: GE's keeps the document as `single`'s.
    if a.count > 1 {
        a.order = placed;
    }
    a
}
