//! The dynamic-shape strategy on a real model: BERT-base exported with `"shape": "dynamic"`
//! (corpus/bert_base_dynamic.json), as is and with AICPU GetNext, HCCL and
//! stream-label nodes added. Logical streams at the logical stage, then the whole pipeline
//! (`Stage::All`): checker-verified, deterministic, events reported per node and no Send/Recv
//! nodes inserted.

use crate::common;
use serde_json::{Value, json};
use stream_alloc::allocate;
use stream_alloc::compile::dynamic::refresh::on_main_stream;
use stream_alloc::compile::{Allocation, Stage};
use stream_alloc::graph::{Model, StreamId, json as graph_json};
use stream_alloc::memory::AllocationDocument;

fn bert() -> Value {
    let path = common::corpus_graph("bert_base_dynamic.json");
    serde_json::from_slice(&std::fs::read(path).expect("bert_base_dynamic")).expect("bert JSON")
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
    let a = logical(&load(doc, options)).to_json_string_new_plan(&load(doc, options));
    let b = logical(&load(doc, options)).to_json_string_new_plan(&load(doc, options));
    assert_eq!(a, b, "allocation JSON differs between runs with {options:?}");
}

/// The whole pipeline: the checker finds nothing, two runs give byte-identical JSON, every
/// sync is listed in its nodes' `send`/`recv` arrays, and no Send/Recv node is inserted.
/// Returns the allocation.
fn full(doc: &Value, options: &[&str]) -> Allocation {
    let model = load(doc, options);
    let alloc = allocate(&model, Stage::All).expect("the whole pipeline succeeds");
    let json = alloc.to_json_new_plan(&model);
    let report = stream_alloc::verify::check(&model, &json);
    assert!(report.violations.is_empty(), "checker with {options:?}: {:?}", report.violations);
    let again = allocate(&load(doc, options), Stage::All).expect("second run").to_json_string_new_plan(&model);
    assert_eq!(alloc.to_json_string_new_plan(&model), again, "allocation JSON differs between runs with {options:?}");
    let sync_nodes = ["Send", "Recv", "SendNotify", "RecvNotify"];
    assert!(
        !alloc.inserted().iter().any(|n| sync_nodes.contains(&n.op_type())),
        "Send/Recv nodes inserted into a dynamic graph with {options:?}"
    );
    let listed = |name: &str, key: &str| -> Vec<u64> {
        let node = json["nodes"].as_array().unwrap().iter().find(|n| n["name"] == name).expect("node in JSON");
        node[key].as_array().map(|a| a.iter().map(|v| v.as_u64().unwrap()).collect()).unwrap_or_default()
    };
    for p in alloc.syncs() {
        let (from, to) = (&model.nodes[p.from.node].name, &model.nodes[p.to.node].name);
        assert!(listed(from, "send").contains(&u64::from(p.id.0)), "{from} does not list send {}", p.id);
        assert!(listed(to, "recv").contains(&u64::from(p.id.0)), "{to} does not list recv {}", p.id);
    }
    let sends: usize = model.nodes.iter().map(|n| listed(&n.name, "send").len()).sum();
    let recvs: usize = model.nodes.iter().map(|n| listed(&n.name, "recv").len()).sum();
    assert_eq!((sends, recvs), (alloc.syncs().len(), alloc.syncs().len()), "per-node sync lists with {options:?}");
    alloc
}

/// Both multi-stream option sets (without and with `ac_parallel_enable`): `check` sees the
/// logical allocation of `doc` under each, which must also be deterministic.
fn each_multi_stream(doc: &Value, check: impl Fn(&Model, &Allocation, &[&str])) {
    for opts in [&["dynamic_multi_stream=1"][..], &["dynamic_multi_stream=1", "ac_parallel_enable=1"][..]] {
        let model = load(doc, opts);
        check(&model, &logical(&model), opts);
        assert_deterministic(doc, opts);
    }
}

/// Edges whose ends are on different logical streams.
fn cross_stream_edges(model: &Model, alloc: &Allocation) -> usize {
    model.edges.iter().filter(|e| alloc.logical_stream()[e.src] != alloc.logical_stream()[e.dst]).count()
}

#[test]
fn bert_single_stream_uses_exactly_one_stream() {
    let doc = bert();
    let model = load(&doc, &[]);
    let alloc = logical(&model);
    assert_eq!(alloc.mode(), "dynamic-single");
    assert_eq!(alloc.logical_count(), 1);
    assert!(alloc.logical_stream().iter().all(|s| *s == Some(StreamId(0))));
    assert_deterministic(&doc, &[]);
    // One stream needs no synchronisation: the whole pipeline runs.
    let all = allocate(&model, Stage::All).expect("stage all succeeds on one stream");
    assert_eq!(all.physical_count(), 1);
}

#[test]
fn bert_multi_stream_succeeds_and_is_deterministic() {
    each_multi_stream(&bert(), |_, alloc, opts| {
        assert_eq!(alloc.mode(), "dynamic-multi");
        // Only AI core work and GE_LOCAL nodes: one engine stream.
        assert_eq!(alloc.logical_count(), 1, "{opts:?}");
        assert!(alloc.logical_stream().iter().all(|s| *s == Some(StreamId(0))));
    });
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
    each_multi_stream(&doc, |model, alloc, opts| {
        // AIcoreEngine(1) 0, DNN_HCCL(2) 1, DNN_VM_AICPU(4) 2, then label "side" 3.
        assert_eq!(alloc.logical_count(), 4, "{opts:?}");
        for n in model.nodes.ids() {
            let node = &model.nodes[n];
            let want = match (node.name.as_str(), node.op_type.as_str()) {
                ("gn", _) => 2,
                ("allreduce", _) => 1,
                (_, "Gelu") => 3,
                _ => 0,
            };
            assert_eq!(alloc.logical_stream()[n], Some(StreamId(want)), "node {} ({opts:?})", node.name);
        }
    });
    let single = logical(&load(&doc, &[]));
    assert_eq!(single.logical_count(), 1);
    assert!(single.logical_stream().iter().all(|s| *s == Some(StreamId(0))));
}

#[test]
fn bert_full_pipeline_single_and_multi_stream() {
    let doc = bert();
    for opts in [&[][..], &["dynamic_multi_stream=1"][..], &["dynamic_multi_stream=1", "ac_parallel_enable=1"][..]] {
        let alloc = full(&doc, opts);
        // Everything on one stream: nothing to synchronise.
        assert_eq!((alloc.logical_count(), alloc.physical_count(), alloc.sync_count()), (1, 1, 0), "{opts:?}");
        assert!(alloc.syncs().is_empty());
    }
}

#[test]
fn bert_mixed_full_pipeline() {
    let doc = bert_mixed();
    for opts in [&["dynamic_multi_stream=1"][..], &["dynamic_multi_stream=1", "ac_parallel_enable=1"][..]] {
        let model = load(&doc, opts);
        let alloc = full(&doc, opts);
        assert_eq!(alloc.logical_count(), 4, "{opts:?}");
        // gn -> first Add, twelve Gelus each with one producer and one consumer on stream 0,
        // the last layer output -> allreduce -> NetOutput: 1 + 24 + 2 edges cross streams.
        // NetOutput runs no device task, so allreduce -> NetOutput needs no sync; none of the
        // other 26 is implied by another (stream 3 only ever waits on stream 0 right before a
        // Gelu, and stream 0 waits on it right after).
        assert_eq!(cross_stream_edges(&model, &alloc), 27, "{opts:?}");
        assert_eq!(alloc.syncs().len(), 26, "{opts:?}");
        assert_eq!(alloc.sync_count(), 26, "{opts:?}");
    }
    let single = full(&doc, &[]);
    assert_eq!((single.logical_count(), single.sync_count()), (1, 0));
}

/// The DAG auto multi-stream modes spread BERT's AI core work over up to N streams; the
/// events they need still pass the checker.
#[test]
fn bert_dag_modes_full_pipeline() {
    let doc = bert();
    for (mode, cap) in [("LoadBalance:4", 4), ("MainStream:2", 2), ("WeightedLoadBalance:8", 8)] {
        let opt = format!("auto_multistream_parallel_mode={mode}");
        let opts = ["dynamic_multi_stream=1", opt.as_str()];
        let model = load(&doc, &opts);
        let alloc = full(&doc, &opts);
        assert!(alloc.logical_count() > 1 && alloc.logical_count() <= cap, "{mode}: {} streams", alloc.logical_count());
        assert!(alloc.sync_count() > 0, "{mode}: parallel streams need events");
        assert!(alloc.syncs().len() <= cross_stream_edges(&model, &alloc), "{mode}: more syncs than crossing edges");
        for n in model.nodes.ids() {
            let node = &model.nodes[n];
            if on_main_stream(node) {
                assert_eq!(alloc.logical_stream()[n], Some(StreamId(0)), "{mode}: {} off the main stream", node.name);
            }
        }
    }
}
