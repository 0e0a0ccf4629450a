//! GE: `SingleStreamPass` (ge-compiler.md §4.14).

use super::LogicalState;
use crate::bail;
use crate::error::Result;
use crate::graph::{AutoMultistreamMode, GraphId, StreamId};

/// Puts every unassigned engine subgraph of `g` on one stream: the parent's stream for a nested
/// graph, else a fresh one. An auto multi-stream mode is E10056 (checked first); a stream label
/// is E10055.
pub fn run(
    st: &mut LogicalState<'_>,
    g: GraphId,
    default_stream: Option<StreamId>,
    auto_mode: AutoMultistreamMode,
) -> Result<()> {
    if auto_mode.is_set() {
        bail!(
            SingleStreamAutoMode,
            "Cannot configure both parameters ge.autoMultistreamParallelMode (\"{}\") and ge.enableSingleStream simultaneously",
            auto_mode.to_ge_string()
        );
    }
    let stream = match default_stream {
        Some(s) => s,
        None => st.fresh_stream(),
    };
    for s in st.subgraphs_of(g) {
        if st.subgraph_stream[s].is_some() {
            continue;
        }
        if let Some(label) = st.subgraph_label(s) {
            let first = st.partition.subgraphs[s].nodes[0];
            bail!(
                SingleStreamLabel,
                "Option ge.enableSingleStream=true conflicts with stream label \"{label}\" (node '{}'); set ge.enableSingleStream to false",
                st.model.nodes[first].name
            );
        }
        st.subgraph_stream[s] = Some(stream);
    }
    Ok(())
}
