//! `stream-alloc pass`: GE names and module names run the same passes; errors are reported.

use std::process::Command;

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/logical/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_stream-alloc")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn ge_and_module_names_agree() {
    let g = fixture("independent_switch_label.json");
    let chain =
        "AssignByLabelPass,IndependentStreamPass,AssignByDependencyPass,NodeStreamUpdatePass,RefreshContinuousStreams";
    let (rc, ge) = run(&["pass", chain, &g]);
    assert_eq!(rc, 0, "{ge}");
    let (rc, ours) =
        run(&["pass", "by_label,independent_stream,by_dependency,node_stream_update,refresh_continuous", &g]);
    assert_eq!(rc, 0);
    assert_eq!(ge, ours);
    let doc: serde_json::Value = serde_json::from_str(&ge).unwrap();
    assert_eq!(doc["stage"], "logical");
    assert_eq!(doc["streams"]["logical"], 4);
    let streams: Vec<i64> =
        doc["nodes"].as_array().unwrap().iter().map(|n| n["logical_stream"].as_i64().unwrap()).collect();
    assert_eq!(streams, vec![0, 2, 1, 3]);
}

#[test]
fn pass_errors_are_documents() {
    let (rc, out) = run(&["pass", "NoSuchPass", &fixture("no_label.json")]);
    assert_eq!(rc, 1);
    assert!(out.contains("E10001") && out.contains("NoSuchPass"), "{out}");
    let (rc, out) = run(&["pass", "NodeStreamUpdatePass", &fixture("no_label.json")]);
    assert_eq!(rc, 1);
    assert!(out.contains("E19999"), "{out}");
}

#[test]
fn allocate_static_multi_matches_full_pass_chain() {
    let g = fixture("aicore_hccl_parallel.json");
    let (rc, alloc) = run(&["allocate", &g, "--stage", "logical", "--format", "json", "-q"]);
    assert_eq!(rc, 0, "{alloc}");
    let chain = "UpdateForMdeGroupPass,AssignByLabelPass,IndependentStreamPass,AssignByDependencyPass,\
NodeStreamUpdatePass,UpdateForParallelGroupPass,AllReduceParallelPass,UpdateForSkippedEnginePass,\
OptimizeIneffectiveMultiStreamPass,MiniDAGStreamPass,RefreshContinuousStreams,AssignAttachedStreamPass";
    let (rc, pass) = run(&["pass", chain, &g]);
    assert_eq!(rc, 0, "{pass}");
    assert_eq!(alloc, pass);
}

/// `docs/passes.md` is written from the pass registry; a stale page fails here
/// (`SA_BLESS=1` rewrites it).
#[test]
fn pass_docs_come_from_the_registry() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/passes.md");
    let fresh = stream_alloc::compile::passes::markdown();
    if std::env::var_os("SA_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(on_disk == fresh, "docs/passes.md is stale: run SA_BLESS=1 cargo test --test it pass_docs");
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_stream-alloc")).args(["pass", "--help"]).output();
    let help = String::from_utf8(help.unwrap().stdout).unwrap();
    for p in stream_alloc::compile::passes::PASSES {
        assert!(help.contains(p.ge_name) && help.contains(p.summary), "pass --help misses {}", p.ge_name);
    }
}
