//! `stream-alloc export --to ort`: ONNX Runtime's stream partition names exactly the nodes ORT's
//! own partitioner names (tests/fixtures/onnx/ort/, written by ORT 1.32 through
//! tests/ort/ort_names.py), with one stream per stream of the plan; the same document from an
//! allocation file; the errors. tests/ort/test_ort_partition.py runs the documents in ORT.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/onnx").join(name)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stream-alloc")).args(args).output().unwrap()
}

fn stdout_json(out: &Output, what: &str) -> Value {
    assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn names(doc: &Value) -> Vec<String> {
    doc["streams"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s.as_array().unwrap())
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

/// The models ORT runs, the import options they need, and ORT's partition of each.
fn models() -> Vec<(String, Vec<&'static str>, PathBuf)> {
    let mut v = vec![
        ("ops.onnx".to_string(), vec![], fixture("ort/ops.json")),
        ("if.onnx".to_string(), vec![], fixture("ort/if.json")),
        ("old_opset.onnx".to_string(), vec![], fixture("ort/old_opset.json")),
        (
            "transformer.onnx".to_string(),
            vec!["--input-shape", "ids=2,16", "--input-shape", "mask=2,16"],
            fixture("ort/transformer.json"),
        ),
    ];
    let mut zoo: Vec<PathBuf> = std::fs::read_dir(fixture("zoo"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "onnx"))
        .collect();
    zoo.sort();
    for p in zoo {
        let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
        v.push((format!("zoo/{stem}.onnx"), vec![], fixture(&format!("ort/{stem}.json"))));
    }
    v
}

/// The distinct streams of the root graph's nodes in an allocation document.
fn plan_streams(alloc: &Value) -> BTreeSet<i64> {
    alloc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["graph"].as_str().unwrap_or("").is_empty() && n["inserted"] != true)
        .map(|n| n["stream"].as_i64().unwrap())
        .filter(|&s| s >= 0)
        .collect()
}

#[test]
fn the_partition_names_every_node_ort_names() {
    let dir = std::env::temp_dir().join(format!("sa_ort_export_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut several = 0;
    for (name, import, ort_doc) in models() {
        let ort: Value = serde_json::from_str(&std::fs::read_to_string(&ort_doc).unwrap()).unwrap();
        let mut want = names(&ort);
        want.sort();
        let model = fixture(&name);
        let model = model.to_str().unwrap();
        for policy in [&[][..], &["--option", "policy=auto"][..]] {
            let what = format!("{name} {policy:?}");
            let mut args = vec!["export", model, "--to", "ort"];
            args.extend(&import);
            args.extend(policy);
            let doc = stdout_json(&run(&args), &what);
            assert_eq!(doc["type"], "DeviceBasedPartitioner", "{what}");
            let mut got = names(&doc);
            got.sort();
            assert_eq!(got, want, "{what}: the names ORT gives its nodes");
            let streams = doc["streams"].as_array().unwrap().len();
            assert_eq!(doc["devices"].as_array().unwrap().len(), streams, "{what}");
            assert!(doc["devices"].as_array().unwrap().iter().all(|d| d == "0"), "{what}");

            // One stream per stream the plan runs root nodes on; the same bytes from the file.
            let alloc_path = dir.join("a.json");
            let mut a = vec!["allocate", model, "-q", "-o", alloc_path.to_str().unwrap()];
            a.extend(&import);
            a.extend(policy);
            assert!(run(&a).status.success(), "{what}: allocate");
            let alloc: Value = serde_json::from_str(&std::fs::read_to_string(&alloc_path).unwrap()).unwrap();
            assert_eq!(streams, plan_streams(&alloc).len().max(1), "{what}: streams");
            several += usize::from(streams > 1);
            let mut again = vec!["export", model, alloc_path.to_str().unwrap(), "--to", "ort"];
            again.extend(&import);
            let from_file = run(&again);
            assert_eq!(from_file.stdout, run(&args).stdout, "{what}: export from the allocation file");
        }
    }
    assert!(several >= 5, "only {several} multi-stream partitions");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cuda_streams_are_gpu_streams() {
    let m = fixture("zoo/light_inception_v1.onnx");
    let doc = stdout_json(
        &run(&["export", m.to_str().unwrap(), "--to", "ort", "--ep", "cuda", "--option", "policy=auto"]),
        "cuda",
    );
    let devices = doc["devices"].as_array().unwrap();
    assert!(devices.len() > 1 && devices.iter().all(|d| d == "1"), "{doc}");
}

fn fails(args: &[&str], code: i32, message: &str) {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(err.contains(message), "{args:?}: {err}");
    assert!(out.stdout.is_empty() || code != 2, "{args:?}");
}

#[test]
fn bad_inputs_are_named() {
    let dir = std::env::temp_dir().join(format!("sa_ort_export_bad_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let m = fixture("zoo/light_squeezenet.onnx");
    let m = m.to_str().unwrap();
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/squeezenet1_1.json");
    fails(&["export", corpus.to_str().unwrap(), "--to", "ort"], 1, "not an ONNX model");
    fails(&["export", m, "--to", "tensorrt"], 2, "tensorrt");
    fails(&["export", m], 2, "--to");
    fails(&["export", m, "--to", "ort", "--ep", "npu"], 2, "npu");
    fails(&["export", m, "--to", "ort", "--option", "polcy=auto"], 2, "policy");
    // An allocation of another model, an error document, a missing file.
    let other = dir.join("other.json");
    let alexnet = fixture("zoo/light_bvlc_alexnet.onnx");
    assert!(run(&["allocate", alexnet.to_str().unwrap(), "-q", "-o", other.to_str().unwrap()]).status.success());
    fails(&["export", m, other.to_str().unwrap(), "--to", "ort"], 1, "is not in the model's graph");
    let error_doc = dir.join("error.json");
    std::fs::write(
        &error_doc,
        r#"{"format": "stream-allocation", "version": 1, "error": {"code": "E10001", "message": "x"}}"#,
    )
    .unwrap();
    fails(&["export", m, error_doc.to_str().unwrap(), "--to", "ort"], 1, "error document");
    fails(&["export", m, dir.join("absent.json").to_str().unwrap(), "--to", "ort"], 1, "cannot read allocation file");
    let _ = std::fs::remove_dir_all(&dir);
}
