//! The dynamic-shape strategy on a real model: BERT-base exported with `"shape": "dynamic"`
//! (a copy of shared/corpus/bert_base_dynamic.json), as is and with AICPU GetNext, HCCL and
//! stream-label nodes added.

use std::path::Path;

use serde_json::{Value, json};
use stream_alloc::compile::{Allocation, Stage, allocate};
use stream_alloc::graph::{Model, StreamId, json as graph_json};

fn bert() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dynamic/bert_base_dynamic.json");
    serde_json::from_slice(&std::fs::read(path).expect("bert fixture")).expect("bert JSON")
}

fn load(doc: &Value, options: &[&str]) -> Model {
    let mut b = graph_json::builder_from_value(doc).expect("graph loads");
    for o in options {
        b.options.set_assignment(o).expect("valid option");
    }
    b.build().expect("graph builds")
}

fn logical(model: &Model) -> Allocation {
    allocate(model, Stage::Logical).expect("logical allocation succeeds")
}

/// Two independent runs give byte-identical allocation JSON.
fn assert_deterministic(doc: &Value, options: &[&str]) {
    let a = logical(&load(doc, options)).to_json_string(&load(doc, options));
    let b = logical(&load(doc, options)).to_json_string(&load(doc, options));
    assert_eq!(a, b, "allocation JSON differs between runs with {options:?}");
}

#[test]
fn bert_single_stream_uses_exactly_one_stream() {
    let doc = bert();
    let model = load(&doc, &[]);
    let alloc = logical(&model);
    assert_eq!(alloc.mode, "dynamic-single");
    assert_eq!(alloc.logical_count, 1);
    assert!(alloc.logical_stream.iter().all(|s| *s == Some(StreamId(0))));
    assert_deterministic(&doc, &[]);
    // One stream needs no synchronisation: the whole pipeline runs.
    let all = allocate(&model, Stage::All).expect("stage all succeeds on one stream");
    assert_eq!(all.physical_count, 1);
}

#[test]
fn bert_multi_stream_succeeds_and_is_deterministic() {
    let doc = bert();
    for opts in [&["dynamic_multi_stream=1"][..], &["dynamic_multi_stream=1", "ac_parallel_enable=1"][..]] {
        let model = load(&doc, opts);
        let alloc = logical(&model);
        assert_eq!(alloc.mode, "dynamic-multi");
        // Only AI core work and GE_LOCAL nodes: one engine stream.
        assert_eq!(alloc.logical_count, 1, "{opts:?}");
        assert!(alloc.logical_stream.iter().all(|s| *s == Some(StreamId(0))));
        assert_deterministic(&doc, opts);
    }
}

/// BERT plus a GetNext feeding the first AI core Add, an all-reduce before the output, and
/// every Gelu labelled "side".
fn bert_mixed() -> Value {
    let mut doc = bert();
    let nodes = doc["nodes"].as_array_mut().unwrap();
    let first_add = nodes.iter().find(|n| n["engine"] == "AIcoreEngine" && n["type"] == "Add").unwrap()["name"].clone();
    let mut gelus = 0;
    for n in nodes.iter_mut().filter(|n| n["type"] == "Gelu") {
        n["attrs"] = json!({"stream_label": "side"});
        gelus += 1;
    }
    assert_eq!(gelus, 12);
    let out = nodes.iter().find(|n| n["type"] == "NetOutput").unwrap()["name"].clone();
    let out_pos = nodes.iter().position(|n| n["name"] == out).unwrap();
    nodes.insert(0, json!({"name": "gn", "type": "GetNext", "engine": "aicpu_tf_kernel"}));
    nodes.insert(out_pos + 1, json!({"name": "allreduce", "type": "HcomAllReduce", "engine": "DNN_HCCL"}));
    let edges = doc["edges"].as_array_mut().unwrap();
    let last_in = edges.iter().find(|e| e["dst"] == out).unwrap()["src"].clone();
    edges.push(json!({"src": "gn", "dst": first_add, "kind": "control"}));
    edges.push(json!({"src": last_in, "dst": "allreduce"}));
    edges.push(json!({"src": "allreduce", "dst": out, "kind": "control"}));
    doc
}

#[test]
fn bert_mixed_engines_and_labels() {
    let doc = bert_mixed();
    for opts in [&["dynamic_multi_stream=1"][..], &["dynamic_multi_stream=1", "ac_parallel_enable=1"][..]] {
        let model = load(&doc, opts);
        let alloc = logical(&model);
        // AIcoreEngine(1) 0, DNN_HCCL(2) 1, DNN_VM_AICPU(4) 2, then label "side" 3.
        assert_eq!(alloc.logical_count, 4, "{opts:?}");
        for n in model.nodes.ids() {
            let node = &model.nodes[n];
            let want = match (node.name.as_str(), node.op_type.as_str()) {
                ("gn", _) => 2,
                ("allreduce", _) => 1,
                (_, "Gelu") => 3,
                _ => 0,
            };
            assert_eq!(alloc.logical_stream[n], Some(StreamId(want)), "node {} ({opts:?})", node.name);
        }
        assert_deterministic(&doc, opts);
    }
    let single = logical(&load(&doc, &[]));
    assert_eq!(single.logical_count, 1);
    assert!(single.logical_stream.iter().all(|s| *s == Some(StreamId(0))));
}
