//! GE: `RefreshContinuousStreams` (ge-compiler.md §4.12).

use super::LogicalState;
use crate::graph::StreamId;

/// Renumbers the stream ids still used by some node densely from 0, keeping their order, and
/// sets `next_stream` to the count.
///
/// GE only looks at ids below `next_stream`. AssignByDependencyPass's nested-graph decrement
/// can leave a node on id `next_stream` itself (it hands that id out again); GE then counts one
/// stream too few. Here the bound also covers every id in use, so the count stays right and
/// the ids GE would give are unchanged.
pub fn run(st: &mut LogicalState<'_>) {
    let max_used = st.node_stream.iter().flatten().map(|s| s.0 + 1).max().unwrap_or(0);
    let bound = st.next_stream.max(max_used) as usize;
    let mut used = vec![false; bound];
    for s in st.node_stream.iter().flatten() {
        if let Some(u) = used.get_mut(s.index()) {
            *u = true;
        }
    }
    let mut remap = vec![None; bound];
    let mut next = 0u32;
    for (i, u) in used.iter().enumerate() {
        if *u {
            remap[i] = Some(StreamId(next));
            next += 1;
        }
    }
    for s in st.node_stream.iter_mut() {
        if let Some(old) = *s {
            if let Some(new) = remap.get(old.index()).copied().flatten() {
                *s = Some(new);
            }
        }
    }
    st.next_stream = next;
}
