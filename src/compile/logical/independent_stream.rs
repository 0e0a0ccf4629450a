//! GE: `IndependentStreamPass` (ge-compiler.md §4.4).

use std::collections::BTreeMap;

use super::LogicalState;
use crate::error::Result;
use crate::graph::{EngineId, GraphId, StreamId};

/// Subgraphs of independent engines (HCCL) get one stream per (engine, stream label), first
/// occurrence taking a fresh id. This overrides a label stream from AssignByLabelPass, except
/// for a subgraph that holds a user-label stream.
pub fn run(st: &mut LogicalState<'_>, g: GraphId) -> Result<()> {
    let model = st.model;
    let mut by_key: BTreeMap<(EngineId, Option<String>), StreamId> = BTreeMap::new();
    for s in st.subgraphs_of(g) {
        let sg = &st.partition.subgraphs[s];
        if !model.engines[sg.engine].independent {
            continue;
        }
        if st.subgraph_stream[s].is_some() && sg.user_stream_label.is_some() {
            continue;
        }
        let key = (sg.engine, st.subgraph_label(s).map(str::to_string));
        let stream = *by_key.entry(key).or_insert_with(|| st.fresh_stream());
        st.subgraph_stream[s] = Some(stream);
    }
    Ok(())
}
