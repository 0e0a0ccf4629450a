//! Fixture tests for the logical passes, cranelift-filetest style.
//!
//! Each `tests/fixtures/logical/NAME.expected` names what to run in `;` directives and lists
//! the expected result:
//!
//! ```text
//! ; graph: other.json            (default: NAME.json; a part after the first '.' is a variant)
//! ; run: allocate                (static-multi or static-single, stage logical)
//! ; run: pass A,B,C              (exactly these passes, on the file as given)
//! ; option: KEY=VALUE            (repeatable)
//! streams logical=N attached=M   (or: error CODE)
//! NODE STREAM [attached=A,B]     (one per node, all_nodes() order; nested: GRAPH/NODE)
//! ```
//!
//! Comment lines (`;` without a directive, or `#`) are kept. `SA_BLESS=1` rewrites the result
//! lines; every expectation in the repository was checked by hand against ge-compiler.md.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use stream_alloc::allocate;
use stream_alloc::compile::{Stage, passes};
use stream_alloc::graph::{IdVec, Model, NodeId, StreamId, json};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/logical")
}

struct Case {
    header: Vec<String>,
    graph: PathBuf,
    run: String,
    options: Vec<String>,
    expected: String,
}

fn parse(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).unwrap();
    let stem = path.file_name().unwrap().to_str().unwrap().trim_end_matches(".expected");
    let base = stem.split('.').next().unwrap();
    let mut case = Case {
        header: Vec::new(),
        graph: fixture_dir().join(format!("{base}.json")),
        run: "allocate".into(),
        options: Vec::new(),
        expected: String::new(),
    };
    for line in text.lines() {
        if line.starts_with(';') || line.starts_with('#') {
            case.header.push(line.to_string());
            let body = line.trim_start_matches(';').trim();
            if let Some(g) = body.strip_prefix("graph:") {
                case.graph = fixture_dir().join(g.trim());
            } else if let Some(r) = body.strip_prefix("run:") {
                case.run = r.trim().to_string();
            } else if let Some(o) = body.strip_prefix("option:") {
                case.options.push(o.trim().to_string());
            }
        } else if !line.trim().is_empty() {
            case.expected.push_str(line.trim_end());
            case.expected.push('\n');
        }
    }
    case
}

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
    let bytes = std::fs::read(&case.graph).unwrap_or_else(|e| panic!("{}: {e}", case.graph.display()));
    let result = (|| {
        let mut b = json::builder_from_slice(&bytes)?;
        for o in &case.options {
            b.options.set_assignment(o)?;
        }
        let model = b.build()?;
        if case.run == "allocate" {
            let a = allocate(&model, Stage::Logical)?;
            Ok(render(&model, a.logical_stream(), a.attached(), a.logical_count(), a.attached_count()))
        } else if let Some(list) = case.run.strip_prefix("pass ") {
            let list = passes::parse_list(list)?;
            let st = passes::run_named(&model, &model.options, &list)?;
            let main = st.main_stream_num.unwrap_or(st.next_stream);
            Ok(render(&model, &st.node_stream, &st.attached, main, st.next_stream - main))
        } else {
            panic!("unknown run directive '{}'", case.run)
        }
    })();
    match result {
        Ok(s) => s,
        Err::<_, stream_alloc::Error>(e) => format!("error {}\n", e.code()),
    }
}

#[test]
fn logical_fixtures() {
    let bless = std::env::var("SA_BLESS").is_ok_and(|v| v == "1");
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(".expected"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "fixtures missing: {}", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let case = parse(path);
        let got = actual(&case);
        if got != case.expected {
            if bless {
                let mut text = case.header.join("\n");
                text.push('\n');
                text.push_str(&got);
                std::fs::write(path, text).unwrap();
            } else {
                failures.push(format!("== {}\n-- expected\n{}-- actual\n{}", path.display(), case.expected, got));
            }
        }
    }
    assert!(failures.is_empty(), "{} fixture(s) differ:\n{}", failures.len(), failures.join("\n"));
}
