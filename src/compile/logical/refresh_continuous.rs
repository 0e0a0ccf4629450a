//! GE: `RefreshContinuousStreams` (ge-compiler.md §4.12).

use super::LogicalState;
use crate::graph::StreamId;

/// Renumbers the stream ids still used by some node densely from 0, keeping their order, and
/// sets `next_stream` to the count.
pub fn run(st: &mut LogicalState<'_>) {
    let bound = st.next_stream as usize;
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
