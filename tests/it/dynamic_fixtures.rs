//! Fixture runner for the dynamic-shape strategy: every `tests/fixtures/dynamic/G.V.expected`
//! runs graph `G.json` and checks the expected lines:
//!
//! ```text
//! # comment
//! option KEY=VALUE        applied over the graph file's options (GE string form)
//! stage logical|sync|split|all   (default logical)
//! error CODE [TEXT]       allocation (or loading) fails with CODE, message containing TEXT
//! streams N               main (logical) stream count
//! attached N              attached stream count (default 0)
//! events N                event ids after the sync stage (`events.count`)
//! kind event|notify       the sync kind (`events.kind`)
//! NODE STREAM [attached=A,B]   NODE is `name` (root) or `subgraph/name`
//! ```
//! Unless an error is expected, every node of the graph must be listed. Past the logical stage
//! every result must also pass the independent checker, with its syncs reported per node and
//! no Send/Recv nodes inserted (dynamic graphs get none).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use stream_alloc::memory::AllocationDocument;

use stream_alloc::allocate;
use stream_alloc::compile::Stage;
use stream_alloc::graph::{GraphId, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dynamic")
}

#[derive(Default)]
struct Expect {
    options: Vec<String>,
    stage: Option<Stage>,
    error: Option<(String, String)>,
    streams: Option<u32>,
    attached: u32,
    events: Option<u32>,
    kind: Option<String>,
    nodes: BTreeMap<String, (i64, Vec<u32>)>,
}

fn parse(text: &str) -> Result<Expect, String> {
    let mut e = Expect::default();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || format!("line {}: cannot read \"{line}\"", i + 1);
        let (head, rest) = line.split_once(' ').ok_or_else(bad)?;
        match head {
            "option" => e.options.push(rest.to_string()),
            "stage" => e.stage = Some(Stage::parse(rest).ok_or_else(bad)?),
            "error" => {
                let (code, text) = rest.split_once(' ').unwrap_or((rest, ""));
                e.error = Some((code.to_string(), text.to_string()));
            }
            "streams" => e.streams = Some(rest.parse().map_err(|_| bad())?),
            "attached" => e.attached = rest.parse().map_err(|_| bad())?,
            "events" => e.events = Some(rest.parse().map_err(|_| bad())?),
            "kind" => e.kind = Some(rest.to_string()),
            node => {
                let mut parts = rest.split_whitespace();
                let stream: i64 = parts.next().ok_or_else(bad)?.parse().map_err(|_| bad())?;
                let mut attached = Vec::new();
                for p in parts {
                    let list = p.strip_prefix("attached=").ok_or_else(bad)?;
                    for a in list.split(',') {
                        attached.push(a.parse().map_err(|_| bad())?);
                    }
                }
                if e.nodes.insert(node.to_string(), (stream, attached)).is_some() {
                    return Err(format!("line {}: node '{node}' listed twice", i + 1));
                }
            }
        }
    }
    Ok(e)
}

fn run_case(graph: &Path, expected: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(expected).map_err(|e| e.to_string())?;
    let want = parse(&text)?;
    let bytes = std::fs::read(graph).map_err(|e| format!("{}: {e}", graph.display()))?;
    let result = json::builder_from_slice(&bytes)
        .and_then(|mut b| {
            for o in &want.options {
                b.options.set_assignment(o)?;
            }
            b.build()
        })
        .and_then(|model| allocate(&model, want.stage.unwrap_or(Stage::Logical)).map(|a| (model, a)));
    let (model, alloc) = match (result, &want.error) {
        (Err(e), Some((code, text))) => {
            if e.code() != code || !e.message.contains(text.as_str()) {
                return Err(format!("expected error {code} containing \"{text}\", got {e}"));
            }
            return Ok(());
        }
        (Err(e), None) => return Err(format!("unexpected error {e}")),
        (Ok(_), Some((code, _))) => return Err(format!("expected error {code}, got a result")),
        (Ok(r), None) => r,
    };
    let mut problems = Vec::new();
    if let Some(n) = want.streams {
        if alloc.logical_count() != n {
            problems.push(format!("streams: expected {n}, got {}", alloc.logical_count()));
        }
    }
    if alloc.attached_count() != want.attached {
        problems.push(format!("attached streams: expected {}, got {}", want.attached, alloc.attached_count()));
    }
    if let Some(n) = want.events {
        if alloc.sync_count() != n {
            problems.push(format!("events: expected {n}, got {}", alloc.sync_count()));
        }
    }
    if let Some(k) = &want.kind {
        if alloc.sync_kind().as_str() != k {
            problems.push(format!("sync kind: expected {k}, got {}", alloc.sync_kind().as_str()));
        }
    }
    if alloc.stage() != Stage::Logical {
        let report = stream_alloc::verify::check(&model, &alloc.to_json(&model));
        for v in &report.violations {
            problems.push(format!("checker: rule {}: {}", v.rule, v.message));
        }
        if !alloc.inserted().is_empty() {
            problems.push(format!("{} nodes inserted, expected none", alloc.inserted().len()));
        }
    }
    let mut seen = 0;
    for n in model.all_nodes() {
        let node = &model.nodes[n];
        let key = if node.graph == GraphId::ROOT {
            node.name.clone()
        } else {
            format!("{}/{}", model.graphs[node.graph].name, node.name)
        };
        let got = alloc.logical_stream()[n].map_or(-1, |s| i64::from(s.0));
        let got_att: Vec<u32> = alloc.attached()[n].iter().map(|s| s.0).collect();
        match want.nodes.get(&key) {
            None => problems.push(format!("node {key} (stream {got}) is not listed")),
            Some((s, a)) => {
                seen += 1;
                if *s != got || *a != got_att {
                    problems.push(format!("node {key}: expected {s} attached {a:?}, got {got} attached {got_att:?}"));
                }
            }
        }
    }
    if seen != want.nodes.len() {
        problems.push(format!("{} listed nodes do not exist", want.nodes.len() - seen));
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n  ")) }
}

#[test]
fn dynamic_fixtures() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .expect("fixture directory")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "expected"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 20, "only {} fixture cases found", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let file = case.file_name().unwrap().to_string_lossy().to_string();
        let graph = fixtures().join(format!("{}.json", file.split('.').next().unwrap()));
        if let Err(e) = run_case(&graph, case) {
            failures.push(format!("{file}:\n  {e}"));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
