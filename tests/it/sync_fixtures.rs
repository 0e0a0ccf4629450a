//! Every insertion scenario and GE optimisation as a fixture (tests/fixtures/sync): a graph
//! with pre-assigned streams and the sync pairs and id counts each mode must produce.

use serde_json::Value;
use stream_alloc::allocate_from_preassigned;
use stream_alloc::compile::{Allocation, Stage};
use stream_alloc::graph::{Model, json};
use stream_alloc::memory::AllocationDocument;
use stream_alloc::verify;

fn load(path: &std::path::Path) -> (Value, Value) {
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    (doc["graph"].clone(), doc["expect"].clone())
}

fn model(graph: &Value, mode: &str) -> Model {
    let mut b = json::builder_from_value(graph).unwrap();
    match mode {
        "ge" => b.options.compat_ge = true,
        "lifetime" => b.options.event_reuse_lifetime = true,
        _ => {}
    }
    b.build().unwrap()
}

fn pairs(model: &Model, alloc: &Allocation) -> Vec<(String, String)> {
    let end = |e: &stream_alloc::compile::SyncEnd| {
        let n = &model.nodes[e.node].name;
        if e.attached.is_some() { format!("{n}@attached") } else { n.clone() }
    };
    let mut v: Vec<(String, String)> = alloc.syncs().iter().map(|p| (end(&p.from), end(&p.to))).collect();
    v.sort();
    v
}

fn fixtures() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sync");
    let mut v: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    assert!(v.len() >= 19, "fixtures missing");
    v
}

#[test]
fn fixtures_produce_expected_pairs_and_counts() {
    for path in fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let (graph, expect) = load(&path);
        if let Some(err) = expect.get("error").and_then(Value::as_str) {
            let e = allocate_from_preassigned(&model(&graph, "default"), Stage::Sync).unwrap_err();
            assert!(e.message.contains(err), "{name}: error '{}' should mention {err}", e.message);
            continue;
        }
        // An error of GE's alone: compat=ge fails, the other modes are as `expect` says.
        if let Some(err) = expect.get("error_ge").and_then(Value::as_str) {
            let e = allocate_from_preassigned(&model(&graph, "ge"), Stage::Sync).unwrap_err();
            assert!(e.message.contains(err), "{name}: error '{}' should mention {err}", e.message);
        }
        let known =
            ["ge", "default", "lifetime", "skip_checker", "skip_checker_ge", "checker_stage", "inserted", "error_ge"];
        let keys: Vec<&String> = expect.as_object().map(|o| o.keys().collect()).unwrap_or_default();
        assert!(keys.iter().all(|k| known.contains(&k.as_str())), "{name}: unknown key in expect: {keys:?}");
        assert!(
            ["ge", "default", "lifetime"].iter().any(|m| expect.get(m).is_some()),
            "{name}: expect names no mode (ge, default, lifetime) and no error, so it would test nothing"
        );
        for mode in ["ge", "default", "lifetime"] {
            let Some(exp) = expect.get(mode) else { continue };
            let m = model(&graph, mode);
            let alloc = allocate_from_preassigned(&m, Stage::Sync).unwrap_or_else(|e| panic!("{name} {mode}: {e}"));
            let want: Vec<(String, String)> = exp["pairs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].as_str().unwrap().to_string(), p[1].as_str().unwrap().to_string()))
                .collect();
            assert_eq!(pairs(&m, &alloc), want, "{name} {mode}: pairs");
            assert_eq!(alloc.sync_count(), exp["count"].as_u64().unwrap() as u32, "{name} {mode}: count");
            let skip =
                expect.get("skip_checker").is_some() || (mode == "ge" && expect.get("skip_checker_ge").is_some());
            if !skip {
                // Orderings GE leaves to stream activation are proven only where the split stage
                // has written the activation lists.
                let checked = if expect.get("checker_stage").and_then(Value::as_str) == Some("all") {
                    let all =
                        allocate_from_preassigned(&m, Stage::All).unwrap_or_else(|e| panic!("{name} {mode}: {e}"));
                    assert_eq!(pairs(&m, &all), want, "{name} {mode}: pairs after the split");
                    all
                } else {
                    alloc.clone()
                };
                let report = verify::check(&m, &checked.to_json(&m));
                assert!(report.ok(), "{name} {mode}: checker: {:?}", report.violations);
            }
            if mode == "default" {
                if let Some(ins) = expect.get("inserted").and_then(Value::as_array) {
                    let got: Vec<String> = alloc.inserted().iter().map(|i| i.name(&m).into_owned()).collect();
                    let want: Vec<String> = ins.iter().map(|v| v.as_str().unwrap().to_string()).collect();
                    assert_eq!(got, want, "{name}: inserted nodes");
                }
            }
        }
    }
}
