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

/// vit_b_16 as both of torch's exporters write it (tests/fixtures/onnx/vit_b_16_*.onnx, made by
/// scripts/export_fixtures.py): GE's chain gives the 24 task-less Reshape/Unsqueeze nodes of the
/// attention blocks, two per layer, a logical stream of their own, the same under `compat=ge`
/// (docs/passes.md, "A stream that holds only task-less nodes"). Under `compat=ge` GE's sync
/// stage puts a Send and a Recv on that stream for each pair; the default mode's sync stage,
/// which joins task-bearing nodes only, leaves it without a task.
#[test]
fn vit_b_16_exports_get_the_task_less_stream_ge_gives_them() {
    for file in ["vit_b_16_ts.onnx", "vit_b_16_dynamo.onnx"] {
        let onnx = format!("{}/tests/fixtures/onnx/{file}", env!("CARGO_MANIFEST_DIR"));
        let (rc, graph) = run(&["import", &onnx, "--batch", "1"]);
        assert_eq!(rc, 0, "{file}: import failed");
        let graph = crate::common::TempFile::new(&format!("vit_{file}"), &graph);
        let g: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&graph.0).unwrap()).unwrap();
        let kind: std::collections::HashMap<&str, (&str, u64)> = g["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| (n["name"].as_str().unwrap(), (n["type"].as_str().unwrap(), n["tasks"].as_u64().unwrap_or(1))))
            .collect();
        let path = graph.0.to_str().unwrap();
        let mut logical = Vec::new();
        for extra in [&[][..], &["--option", "compat=ge"][..]] {
            let mut args = vec!["allocate", path, "--format", "json"];
            args.extend_from_slice(extra);
            let (rc, out) = run(&args);
            assert_eq!(rc, 0, "{file} {extra:?}: {out}");
            let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(doc["streams"]["logical"], 2, "{file} {extra:?}");
            let on_1: Vec<&str> = doc["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|n| n["logical_stream"] == 1)
                .map(|n| n["name"].as_str().unwrap())
                .collect();
            let (views, inserted): (Vec<&str>, Vec<&str>) = on_1.iter().partition(|n| kind.contains_key(*n));
            assert_eq!(views.len(), 24, "{file} {extra:?}: {views:?}");
            for v in &views {
                let (ty, tasks) = kind[v];
                assert!(["Reshape", "Unsqueeze"].contains(&ty) && tasks == 0, "{file}: {v} is {ty} with {tasks} tasks");
            }
            // Inserted nodes on stream 1: GE's Send/Recv under compat=ge, none by default.
            assert_eq!(inserted.len(), if extra.is_empty() { 0 } else { 24 }, "{file} {extra:?}: {inserted:?}");
            logical.push(views.into_iter().map(str::to_string).collect::<Vec<_>>());
        }
        assert_eq!(logical[0], logical[1], "{file}: the default mode's logical stage is GE's chain");
    }
}
