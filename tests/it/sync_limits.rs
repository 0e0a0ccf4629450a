//! Limits and whole-stage switches: the notify limit, GE's event multiplexing above 65 500
//! events, the `verify` option, notify naming, dynamic graphs without Send/Recv nodes, and the
//! `check` command line.

use stream_alloc::allocate_from_preassigned;
use stream_alloc::compile::Stage;
use stream_alloc::graph::builder::{EdgeSpec, NodeSpec};
use stream_alloc::graph::{Model, ModelBuilder, Shape, SyncKind};
use stream_alloc::memory::AllocationDocument;
use stream_alloc::{ErrorKind, verify};

/// a_i on stream 0, b_i on stream 1, edges a_i -> b_i: every pair is needed.
fn ladder(n: usize, f: impl FnOnce(&mut ModelBuilder)) -> Model {
    let mut b = ModelBuilder::new("ladder");
    for i in 0..n {
        let mut a = NodeSpec::new(format!("a{i}"), "Conv2D", "AIcoreEngine");
        a.stream = Some(0);
        b.add_node(a);
    }
    for i in 0..n {
        let mut x = NodeSpec::new(format!("b{i}"), "Conv2D", "AIcoreEngine");
        x.stream = Some(1);
        b.add_node(x);
        b.add_edge(EdgeSpec::data(format!("a{i}"), format!("b{i}")));
    }
    f(&mut b);
    b.build().unwrap()
}

#[test]
fn notify_limit_is_a_limit_error() {
    let m = ladder(1025, |b| b.options.event = SyncKind::Notify);
    let e = allocate_from_preassigned(&m, Stage::Sync).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Limit);
    assert!(e.message.contains("1025") && e.message.contains("1024"), "{}", e.message);
    let m = ladder(1024, |b| b.options.event = SyncKind::Notify);
    let a = allocate_from_preassigned(&m, Stage::Sync).unwrap();
    assert_eq!(a.sync_count(), 1024);
    assert_eq!(a.inserted()[stream_alloc::graph::InsertedId(0)].op_type(), "SendNotify");
    assert_eq!(a.inserted()[stream_alloc::graph::InsertedId(0)].name(&m), "ladder_Send_Notify_0");
    assert!(verify::check(&m, &a.to_json_new_plan(&m)).ok());
}

#[test]
fn event_multiplexing_applies_only_above_the_threshold() {
    let declare = |b: &mut ModelBuilder| {
        b.options.compat_ge = true;
        b.graphs[0].nodes[0].attrs.event_multiplexing = vec!["SendTo;b0;0".into()];
        b.graphs[0].nodes[1].attrs.event_multiplexing = vec!["SendTo;b1;0".into()];
    };
    let below = ladder(100, declare);
    assert_eq!(allocate_from_preassigned(&below, Stage::Sync).unwrap().sync_count(), 100);
    let n = 65_501;
    let above = ladder(n, declare);
    let a = allocate_from_preassigned(&above, Stage::Sync).unwrap();
    assert_eq!(a.sync_count() as usize, n - 1, "the two declared events share one id");
    let id_of = |src: &str| a.syncs().iter().find(|p| above.nodes[p.from.node].name == src).unwrap().id;
    assert_eq!(id_of("a0"), id_of("a1"));
    let bad = ladder(n, |b| {
        b.options.compat_ge = true;
        b.graphs[0].nodes[0].attrs.event_multiplexing = vec!["SendTo;nowhere;0".into()];
    });
    let e = allocate_from_preassigned(&bad, Stage::Sync).unwrap_err();
    assert!(e.message.contains("a0") && e.message.contains("unknown peer"), "{}", e.message);
}

#[test]
fn verify_option_accepts_good_results_and_names_violations() {
    let m = ladder(10, |b| b.options.verify = true);
    allocate_from_preassigned(&m, Stage::Sync).unwrap();
    // GE leaves Enter -> consumer to loop activation; without activations the checker objects.
    let mut b = ModelBuilder::new("g");
    for (name, ty, s) in [("en", "Enter", 0), ("x", "Conv2D", 1)] {
        let mut n = NodeSpec::new(name, ty, "AIcoreEngine");
        n.stream = Some(s);
        b.add_node(n);
    }
    b.add_edge(EdgeSpec::data("en", "x"));
    b.options.verify = true;
    let e = allocate_from_preassigned(&b.build().unwrap(), Stage::Sync).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Failed);
    assert!(e.message.contains("edge en -> x"), "{}", e.message);
}

#[test]
fn dynamic_graphs_get_no_send_recv_nodes() {
    let m = ladder(3, |b| b.graphs[0].shape = Shape::Dynamic);
    let a = allocate_from_preassigned(&m, Stage::Sync).unwrap();
    assert_eq!(a.syncs().len(), 3);
    assert!(a.inserted().is_empty());
    let doc = a.to_json_new_plan(&m);
    assert_eq!(doc["nodes"][0]["send"], serde_json::json!([0]));
}

#[test]
fn check_command_reports_and_exits() {
    let m = ladder(3, |_| {});
    let a = allocate_from_preassigned(&m, Stage::Sync).unwrap();
    let dir = std::env::temp_dir().join(format!("sa-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let graph = dir.join("g.json");
    let mut gdoc = serde_json::json!({"format":"stream-graph","version":1,"name":"ladder","nodes":[],"edges":[]});
    for n in m.nodes.iter() {
        gdoc["nodes"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"name": n.name, "type": "Conv2D", "engine": "AIcoreEngine"}));
    }
    for e in m.edges.iter() {
        gdoc["edges"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"src": m.nodes[e.src].name, "dst": m.nodes[e.dst].name}));
    }
    std::fs::write(&graph, gdoc.to_string()).unwrap();
    let good = dir.join("good.json");
    std::fs::write(&good, a.to_json_string_new_plan(&m)).unwrap();
    let mut broken = a.to_json_new_plan(&m);
    broken["syncs"].as_array_mut().unwrap().remove(1);
    let bad = dir.join("bad.json");
    std::fs::write(&bad, broken.to_string()).unwrap();
    let exe = env!("CARGO_BIN_EXE_stream-alloc");
    let out = std::process::Command::new(exe).arg("check").arg(&graph).arg(&good).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], serde_json::json!(true));
    assert_eq!(report["syncs"]["edge_minimum"], serde_json::json!(3));
    let out = std::process::Command::new(exe).arg("check").arg(&graph).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("edge a1 -> b1"));
    std::fs::remove_dir_all(&dir).ok();
}
