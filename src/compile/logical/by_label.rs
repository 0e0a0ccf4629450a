//! GE: `AssignByLabelPass` (ge-compiler.md §4.3).

use std::collections::BTreeMap;

use super::LogicalState;
use crate::error::Result;
use crate::graph::{GraphId, StreamId};

/// Every labelled subgraph (stream label, or user label copied into it) gets its label's
/// stream: the first subgraph of a label takes a fresh id, later ones share it, whatever
/// their engine. Labels are per graph, as GE builds the pass per `DoAssign`.
pub fn run(st: &mut LogicalState<'_>, g: GraphId) -> Result<()> {
    let mut by_label: BTreeMap<String, StreamId> = BTreeMap::new();
    for s in st.subgraphs_of(g) {
        let Some(label) = st.subgraph_label(s).map(str::to_string) else { continue };
        let stream = *by_label.entry(label).or_insert_with(|| st.fresh_stream());
        st.subgraph_stream[s] = Some(stream);
    }
    Ok(())
}
