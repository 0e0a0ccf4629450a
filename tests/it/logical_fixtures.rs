//! Fixture tests for the logical passes in the filetest syntax (`filetest.rs`):
//! `tests/fixtures/logical/NAME.expected` runs
//!
//! ```text
//! ; run: allocate                (the default: static-multi or static-single, stage logical)
//! ; run: pass A,B,C              (exactly these passes, on the file as given)
//! streams logical=N attached=M   (or: error CODE)
//! NODE STREAM [attached=A,B]     (one per node, all_nodes() order; nested: GRAPH/NODE)
//! ```
//!
//! Every expectation in the repository was checked by hand against ge-compiler.md.

use std::fmt::Write;

use crate::filetest::{self, Case};

use stream_alloc::allocate;
use stream_alloc::compile::{Stage, passes};
use stream_alloc::graph::{IdVec, Model, NodeId, StreamId, json};

fn render(
    model: &Model,
    streams: &IdVec<NodeId, Option<StreamId>>,
    attached: &IdVec<NodeId, Vec<StreamId>>,
    logical: u32,
    attached_count: u32,
) -> String {
    let mut out = format!("streams logical={logical} attached={attached_count}\n");
    for n in model.all_nodes() {
        let node = &model.nodes[n];
        let g = model.graph_label(node.graph);
        let name = if g.is_empty() { node.name.clone() } else { format!("{g}/{}", node.name) };
        let s = streams[n].map_or("-1".to_string(), |s| s.0.to_string());
        write!(out, "{name} {s}").unwrap();
        if !attached[n].is_empty() {
            let ids: Vec<String> = attached[n].iter().map(|s| s.0.to_string()).collect();
            write!(out, " attached={}", ids.join(",")).unwrap();
        }
        out.push('\n');
    }
    out
}

fn actual(case: &Case) -> String {
    let run = case.run.as_deref().unwrap_or("allocate");
    let bytes = std::fs::read(&case.graph).unwrap_or_else(|e| panic!("{}: {e}", case.graph.display()));
    let result = (|| {
        let mut b = json::builder_from_slice(&bytes)?;
        for o in &case.options {
            b.options.set_assignment(o)?;
        }
        let model = b.build()?;
        if run == "allocate" {
            let a = allocate(&model, Stage::Logical)?;
            Ok(render(&model, a.logical_stream(), a.attached(), a.logical_count(), a.attached_count()))
        } else if let Some(list) = run.strip_prefix("pass ") {
            let list = passes::parse_list(list)?;
            let st = passes::run_named(&model, &model.options, &list)?;
            let main = st.main_stream_num.unwrap_or(st.next_stream);
            Ok(render(&model, &st.node_stream, &st.attached, main, st.next_stream - main))
        } else {
            panic!("unknown run directive '{run}'")
        }
    })();
    match result {
        Ok(s) => s,
        Err::<_, stream_alloc::Error>(e) => format!("error {}\n", e.code()),
    }
}

#[test]
fn logical_fixtures() {
    filetest::run_all("logical", 20, actual);
}
