//! Fixture tests for logical allocation in the filetest syntax (`filetest.rs`), static
//! (`tests/fixtures/logical`) and dynamic-shape (`tests/fixtures/dynamic`): `NAME.expected` runs
//!
//! ```text
//! ; run: allocate [STAGE]        (the whole pipeline to STAGE, default logical)
//! ; run: pass A,B,C              (exactly these passes, on the file as given)
//! streams logical=N attached=M   (or: error CODE MESSAGE)
//! NODE STREAM [attached=A,B]     (one per node, all_nodes() order; nested: GRAPH/NODE)
//! sync kind=K ids=N              (past the logical stage: the sync kind and id count,
//! inserted NAME                   the nodes inserted, in order,
//! checker ok                      and the checker's verdict: `checker rule R: MESSAGE` lines)
//! ```
//!
//! Every expectation in the repository was checked by hand against ge-compiler.md.

use std::fmt::Write;

use crate::filetest::{self, Case};

use stream_alloc::allocate;
use stream_alloc::compile::{Stage, passes};
use stream_alloc::graph::{IdVec, Model, NodeId, StreamId};

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
    let result = (|| {
        let model = filetest::model(case)?;
        if let Some(stage) = run.strip_prefix("allocate") {
            let stage = match stage.trim() {
                "" => Stage::Logical,
                s => Stage::parse(s).unwrap_or_else(|| panic!("unknown stage in run directive '{run}'")),
            };
            let a = allocate(&model, stage)?;
            let mut out = render(&model, a.logical_stream(), a.attached(), a.logical_count(), a.attached_count());
            if stage > Stage::Logical {
                writeln!(out, "sync kind={} ids={}", a.sync_kind().as_str(), a.sync_count()).unwrap();
                for i in a.inserted().iter() {
                    writeln!(out, "inserted {}", i.name(&model)).unwrap();
                }
                out.push_str(&filetest::checker_lines(&model, &a));
            }
            Ok(out)
        } else if let Some(list) = run.strip_prefix("pass ") {
            let list = passes::parse_list(list)?;
            let st = passes::run_named(&model, &model.options, &list)?;
            let main = st.main_stream_num.unwrap_or(st.next_stream);
            Ok(render(&model, &st.node_stream, &st.attached, main, st.next_stream - main))
        } else {
            panic!("unknown run directive '{run}'")
        }
    })();
    result.unwrap_or_else(|e: stream_alloc::Error| filetest::error_line(&e))
}

#[test]
fn logical_fixtures() {
    filetest::run_all("logical", 47, actual);
}

#[test]
fn dynamic_fixtures() {
    filetest::run_all("dynamic", 29, actual);
}
