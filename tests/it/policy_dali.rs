//! DALI's policies on GE graphs: the seed's worked example, data-node clearing, user contracts.

use crate::common::policy;
use stream_alloc::allocate;
use stream_alloc::compile::Stage;
use stream_alloc::compile::policy::Chosen;
use stream_alloc::graph::builder::{EdgeSpec, NodeSpec};
use stream_alloc::graph::{Model, ModelBuilder};
use stream_alloc::memory::AllocationDocument;
use stream_alloc::verify;

fn node(name: &str, op: &str, engine: &str, tasks: u32) -> NodeSpec {
    let mut n = NodeSpec::new(name, op, engine);
    n.tasks = tasks;
    n.cost_us = if tasks > 0 { 2.0 } else { 0.0 };
    n.cores = 1;
    n
}

fn build(nodes: Vec<NodeSpec>, edges: &[(&str, &str)], policy: Chosen) -> Model {
    let mut b = ModelBuilder::new("g");
    for n in nodes {
        b.add_node(n);
    }
    for (s, d) in edges {
        b.add_edge(EdgeSpec::data(*s, *d));
    }
    b.options.policy = policy.policy();
    b.build().unwrap()
}

/// The seed's graph, read off its table: the consumers pushed at each step.
const SEED_EDGES: &[(&str, &str)] = &[
    ("A", "B"),
    ("A", "C"),
    ("A", "E"),
    ("B", "D"),
    ("C", "D"),
    ("D", "F"),
    ("E", "F"),
    ("F", "G"),
    ("F", "I"),
    ("G", "I"),
    ("H", "I"),
];

fn seed(policy: Chosen) -> Model {
    let nodes = "ABCDEFGHI".chars().map(|c| node(&c.to_string(), "Add", "AIcoreEngine", 1)).collect();
    build(nodes, SEED_EDGES, policy)
}

fn streams(m: &Model, a: &stream_alloc::Allocation) -> String {
    m.root()
        .order
        .iter()
        .map(|&n| format!("{}{}", m.nodes[n].name, a.logical_stream()[n].map_or("-".into(), |s| s.0.to_string())))
        .collect::<Vec<_>>()
        .join(" ")
}

fn checked(m: &Model) -> stream_alloc::Allocation {
    let a = allocate(m, Stage::All).unwrap();
    let r = verify::check(m, &a.to_json_new_plan(m));
    assert!(r.ok(), "{:?}", r.violations);
    assert_eq!(Some(a.sync_count() as usize), r.edge_sync_minimum, "syncs equal the checker's edge minimum");
    a
}

#[test]
fn per_operator_reproduces_the_seed_example() {
    let m = seed(policy("per-operator"));
    let a = allocate(&m, Stage::Logical).unwrap();
    assert_eq!(streams(&m, &a), "A0 B0 C2 D0 E3 F0 G0 H1 I0");
    assert_eq!(a.logical_count(), 4);
    assert_eq!(a.mode(), "per-operator");
    checked(&m);
}

#[test]
fn single_and_per_backend() {
    let a = allocate(&seed(policy("single")), Stage::Logical).unwrap();
    assert_eq!(a.logical_count(), 1);
    assert!(a.logical_stream().iter().all(|s| s.is_some_and(|s| s.0 == 0)));
    let mut nodes: Vec<NodeSpec> = "ABCD".chars().map(|c| node(&c.to_string(), "Add", "AIcoreEngine", 1)).collect();
    nodes.push(node("V", "Add", "VectorEngine", 1));
    let m = build(nodes, &[("A", "B"), ("B", "V"), ("V", "C"), ("A", "D")], policy("per-backend"));
    let a = checked(&m);
    let s = |name: &str| a.logical_stream()[m.find_node(stream_alloc::graph::GraphId::ROOT, name).unwrap()];
    assert_eq!(a.logical_count(), 2);
    assert_eq!(s("A"), s("D"));
    assert_ne!(s("A"), s("V"));
}

/// Input data nodes carry DALI ids through the traversal (as CPU contributors do) and end on
/// no stream; constants likewise.
#[test]
fn data_nodes_are_cleared_and_task_nodes_keep_dali_ids() {
    let mut nodes = vec![node("x", "Data", "DNN_VM_GE_LOCAL", 0), node("w", "Const", "DNN_VM_GE_LOCAL", 0)];
    nodes.extend("ABC".chars().map(|c| node(&c.to_string(), "Add", "AIcoreEngine", 1)));
    let m = build(nodes, &[("x", "A"), ("w", "A"), ("A", "B"), ("A", "C")], policy("per-operator"));
    let a = checked(&m);
    assert_eq!(streams(&m, &a), "x- w- A0 B0 C1");
}

/// Labels and HCCL keep GE's meaning under every policy.
#[test]
fn user_contracts_survive_every_policy() {
    for policy in
        [policy("single"), policy("per-backend"), policy("per-operator"), policy("min-streams"), policy("budget:1")]
    {
        let mut nodes: Vec<NodeSpec> = "ABCD".chars().map(|c| node(&c.to_string(), "Add", "AIcoreEngine", 1)).collect();
        for name in ["L1", "L2"] {
            let mut l = node(name, "Add", "AIcoreEngine", 1);
            l.attrs.stream_label = Some("lab".into());
            nodes.push(l);
        }
        nodes.push(node("AR", "HcomAllReduce", "DNN_HCCL", 1));
        let edges =
            [("A", "B"), ("A", "C"), ("B", "L1"), ("C", "L2"), ("L1", "D"), ("L2", "D"), ("A", "AR"), ("AR", "D")];
        let m = build(nodes, &edges, policy);
        let a = checked(&m);
        let s =
            |name: &str| a.logical_stream()[m.find_node(stream_alloc::graph::GraphId::ROOT, name).unwrap()].unwrap();
        assert_eq!(s("L1"), s("L2"), "{policy:?}: one stream per label");
        for other in ["A", "B", "C", "D", "AR"] {
            assert_ne!(s("L1"), s(other), "{policy:?}: the label stream holds only labelled nodes");
        }
        for other in ["A", "B", "C", "D"] {
            assert_ne!(s("AR"), s(other), "{policy:?}: HCCL keeps its own stream");
        }
    }
}
