//! The staged compile session: stage order, task counts set between the stages, and equality
//! with the one-shot pipeline.

use crate::common;
use std::sync::Arc;
use stream_alloc::memory::AllocationDocument;

use stream_alloc::ErrorKind;
use stream_alloc::allocate;
use stream_alloc::compile::Stage;
use stream_alloc::driver::Session;
use stream_alloc::driver::SessionStage;
use stream_alloc::graph::{Model, NodeId, json};

/// Two AI-core chains joined by an HCCL node, and a task limit of 47 (20 tasks of room after
/// the 27 reserved): with one task per node nothing splits.
fn graph(tasks: u32) -> String {
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    for i in 0..10 {
        nodes.push(format!(r#"{{"name":"a{i}","type":"Conv2D","engine":"AIcoreEngine","tasks":{tasks}}}"#));
        if i > 0 {
            edges.push(format!(r#"{{"src":"a{}","dst":"a{i}"}}"#, i - 1));
        }
    }
    nodes.push(r#"{"name":"ar","type":"HcomAllReduce","engine":"DNN_HCCL","tasks":1}"#.into());
    nodes.push(r#"{"name":"out","type":"NetOutput","engine":"DNN_VM_GE_LOCAL","tasks":0}"#.into());
    edges.push(r#"{"src":"a0","dst":"ar"}"#.into());
    edges.push(r#"{"src":"ar","dst":"out"}"#.into());
    edges.push(r#"{"src":"a9","dst":"out"}"#.into());
    format!(
        r#"{{"format":"stream-graph","version":1,"name":"g","options":{{"max_task_count":47}},"nodes":[{}],"edges":[{}]}}"#,
        nodes.join(","),
        edges.join(",")
    )
}

fn session(tasks: u32) -> Session<Arc<Model>> {
    common::session(Arc::new(json::load_str(&graph(tasks)).unwrap()))
}

fn node(m: &Model, name: &str) -> NodeId {
    m.find_node(stream_alloc::graph::GraphId::ROOT, name).unwrap()
}

fn stage_error(r: stream_alloc::Result<()>, needs: &str) {
    let e = r.expect_err("out of order");
    assert_eq!(e.kind, ErrorKind::Stage, "{e}");
    assert_eq!(e.code(), "SA2002");
    assert!(e.message.contains(needs), "message should name '{needs}': {}", e.message);
}

#[test]
fn every_stage_out_of_order_names_the_stage_before_it() {
    let mut s = session(1);
    let a0 = node(s.model(), "a0");
    stage_error(s.insert_syncs(), "assign_logical_streams must run first");
    stage_error(s.split_streams(), "assign_logical_streams must run first");
    stage_error(s.generate_send_recv(), "assign_logical_streams must run first");
    stage_error(s.set_task_count(a0, 3), "assign_logical_streams must run first");
    assert_eq!(s.allocation().unwrap_err().kind, ErrorKind::Stage);
    assert_eq!(s.summary().unwrap_err().kind, ErrorKind::Stage);

    s.assign_logical_streams().unwrap();
    stage_error(s.assign_logical_streams(), "already at stage 'logical'");
    stage_error(s.split_streams(), "insert_syncs must run first");
    stage_error(s.generate_send_recv(), "insert_syncs must run first");
    s.set_task_count(a0, 3).unwrap();

    s.insert_syncs().unwrap();
    stage_error(s.insert_syncs(), "already at stage 'sync'");
    stage_error(s.generate_send_recv(), "split_streams must run first");
    s.set_task_count(a0, 3).unwrap();

    s.split_streams().unwrap();
    stage_error(s.set_task_count(a0, 3), "the split has already read the task counts");
    stage_error(s.set_attached_task_count(a0, 0, 3), "the split has already read the task counts");
    stage_error(s.insert_syncs(), "already at stage 'split'");
    s.generate_send_recv().unwrap();
    stage_error(s.generate_send_recv(), "already at stage 'generated'");
    stage_error(s.split_streams(), "already at stage 'generated'");
    assert_eq!(s.stage(), SessionStage::Generated);
}

#[test]
fn attached_index_past_the_nodes_attached_streams_is_a_field_error() {
    let mut s = session(1);
    s.assign_logical_streams().unwrap();
    let a0 = node(s.model(), "a0");
    let e = s.set_attached_task_count(a0, 0, 5).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Field);
    assert!(e.message.contains("'a0'") && e.message.contains("index 0"), "{}", e.message);
}

#[test]
fn task_counts_set_between_the_stages_change_the_split() {
    // Without counts: 10 one-task nodes fit in one stream.
    let mut plain = session(1);
    plain.run_all().unwrap();
    let before = plain.allocation().unwrap().physical_count();
    assert_eq!(before, plain.allocation().unwrap().logical_count());

    // The host's task generation reports 5 tasks per chain node: 50 tasks, a0's Send to the
    // all-reduce (1) and out's Recv from it (2) on a stream with room for 20. Every piece but
    // the first also holds the split's wait (2), every piece but the last its record (1): 4
    // pieces (a0..a2 with a0's Send: 17, a3..a5: 18, a6..a8: 18, a9 and out: 9), three new
    // physical streams.
    let mut s = session(1);
    s.assign_logical_streams().unwrap();
    let chain: Vec<NodeId> = (0..10).map(|i| node(s.model(), &format!("a{i}"))).collect();
    for &n in &chain[..5] {
        s.set_task_count(n, 5).unwrap(); // between logical and sync (after memory assignment)
    }
    s.insert_syncs().unwrap();
    for &n in &chain[5..] {
        s.set_task_count(n, 5).unwrap(); // between sync and split (after task generation)
    }
    s.split_streams().unwrap();
    let a = s.allocation().unwrap();
    assert_eq!(a.physical_count(), before + 3);
    let chain_logical = a.logical_stream()[chain[0]].unwrap();
    let pieces: std::collections::BTreeSet<_> = chain.iter().map(|&n| a.stream()[n].unwrap()).collect();
    assert_eq!(pieces.len(), 4);
    let piece_of = |i: usize| a.stream()[chain[i]].unwrap();
    assert!((0..10).all(|i| piece_of(i) == piece_of(i / 3 * 3)), "pieces a0..a2, a3..a5, a6..a8, a9");
    for p in &pieces {
        assert_eq!(a.split_to_logic()[p.index()], chain_logical);
    }
    // The model itself is untouched: graph-structure stability.
    assert!(chain.iter().all(|&n| s.model().nodes[n].tasks == 1));

    // Same result as the one-shot pipeline on a graph that carries those counts itself.
    s.generate_send_recv().unwrap();
    let carried = json::load_str(&graph(5)).unwrap();
    assert_eq!(s.allocation_json().unwrap(), allocate(&carried, Stage::All).unwrap().to_json_new_plan(&carried));
    assert!(s.verify().unwrap().violations.is_empty());
}

#[test]
fn send_recv_nodes_appear_only_after_generation() {
    let mut s = session(1);
    s.assign_logical_streams().unwrap();
    s.insert_syncs().unwrap();
    assert!(s.inserted_nodes().unwrap().is_empty());
    assert!(!s.allocation().unwrap().syncs().is_empty(), "the HCCL branch needs syncs");
    s.split_streams().unwrap();
    assert!(
        s.inserted_nodes()
            .unwrap()
            .iter()
            .all(|i| !i.op_type().starts_with("Send") && !i.op_type().starts_with("Recv"))
    );
    s.generate_send_recv().unwrap();
    let inserted = s.inserted_nodes().unwrap();
    let pairs = s.allocation().unwrap().syncs().len();
    assert_eq!(inserted.iter().filter(|i| i.op_type() == "Send").count(), pairs);
    assert_eq!(inserted.iter().filter(|i| i.op_type() == "Recv").count(), pairs);
    for i in &inserted {
        let info = s.node_info(i.anchor).unwrap();
        let id = i.sync_id.unwrap();
        if i.before {
            assert!(info.recv.contains(&id), "{} waits before its anchor", i.name(s.model()));
        } else {
            assert!(info.send.contains(&id), "{} records after its anchor", i.name(s.model()));
        }
    }
}

#[test]
fn ge_attrs_follow_the_allocation() {
    let mut s = session(1);
    s.run_all().unwrap();
    let a = s.allocation().unwrap();
    let ar = node(s.model(), "ar");
    let attrs = s.node_ge_attrs(ar).unwrap();
    assert_eq!(attrs["_logic_stream_id"], a.logical_stream()[ar].unwrap().0);
    assert_eq!(attrs["stream_id"], a.stream()[ar].unwrap().0);
    let m = s.model_ge_attrs().unwrap();
    assert_eq!(m["stream_num"], a.physical_count());
    assert_eq!(m["event_num"], a.sync_count());
    let split = m["_split_logic_stream_2_origin_logic_stream"].as_str().unwrap();
    let want: Vec<String> = a.split_to_logic().iter().enumerate().map(|(p, l)| format!("{p}:{}", l.0)).collect();
    assert_eq!(split, want.join(","));
}

#[test]
fn every_corpus_graph_staged_equals_one_shot() {
    for path in common::corpus_paths() {
        let model = Arc::new(json::load_file(&path).unwrap());
        let mut s = common::session(Arc::clone(&model));
        s.run_all().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let one_shot = allocate(&model, Stage::All).unwrap();
        assert_eq!(s.allocation_json().unwrap(), one_shot.to_json_new_plan(&model), "{}", path.display());
    }
}
