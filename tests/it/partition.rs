//! GE's engine partitioner (ge-compiler.md §2.2).

use crate::common;
use stream_alloc::graph::partition::Partition;
use stream_alloc::graph::{GraphId, Model, json};

fn load(nodes: &[(&str, &str, &str)], edges: &[(&str, &str)]) -> Model {
    let nodes: Vec<String> =
        nodes.iter().map(|(n, t, e)| format!(r#"{{"name":"{n}","type":"{t}","engine":"{e}"}}"#)).collect();
    let edges: Vec<String> = edges.iter().map(|(s, d)| format!(r#"{{"src":"{s}","dst":"{d}"}}"#)).collect();
    json::load_str(&format!(
        r#"{{"format":"stream-graph","version":1,"name":"g","nodes":[{}],"edges":[{}]}}"#,
        nodes.join(","),
        edges.join(",")
    ))
    .unwrap()
}

/// Each subgraph as "ENGINE:node,node", in pass order.
fn groups(m: &Model, p: &Partition) -> Vec<String> {
    p.by_graph[GraphId::ROOT]
        .iter()
        .map(|&s| {
            let sg = &p.subgraphs[s];
            let names: Vec<&str> = sg.nodes.iter().map(|&n| m.node(n).name.as_str()).collect();
            format!("{}:{}", m.engines[sg.engine].name, names.join(","))
        })
        .collect()
}

const AIC: &str = "AIcoreEngine";
const HCCL: &str = "DNN_HCCL";
const LOCAL: &str = "DNN_VM_GE_LOCAL";

#[test]
fn input_data_nodes_stay_out() {
    let m = load(
        &[("x", "Data", LOCAL), ("w", "Const", LOCAL), ("a", "Conv2D", AIC), ("o", "NetOutput", LOCAL)],
        &[("x", "a"), ("w", "a"), ("a", "o")],
    );
    let p = Partition::of_model(&m);
    assert_eq!(groups(&m, &p), ["AIcoreEngine:a", "DNN_VM_GE_LOCAL:o"]);
    assert!(p.of_node[m.find_node(GraphId::ROOT, "x").unwrap()].is_none());
}

#[test]
fn same_engine_chain_merges_across_a_foreign_engine_only_without_second_path() {
    // a -> h -> b and a -> b: merging a and b would hide the path through h.
    let m = load(
        &[("a", "Conv2D", AIC), ("h", "HcomAllReduce", HCCL), ("b", "Relu", AIC)],
        &[("a", "h"), ("h", "b"), ("a", "b")],
    );
    let p = Partition::of_model(&m);
    assert_eq!(groups(&m, &p), ["AIcoreEngine:a", "DNN_HCCL:h", "AIcoreEngine:b"]);
    // Without the direct edge a and b are not adjacent either: still three subgraphs.
    let m = load(&[("a", "Conv2D", AIC), ("b", "Relu", AIC), ("c", "Relu", AIC)], &[("a", "b"), ("b", "c")]);
    assert_eq!(groups(&m, &Partition::of_model(&m)), ["AIcoreEngine:a,b,c"]);
}

#[test]
fn fork_and_join_of_one_engine_is_one_subgraph() {
    let m = load(
        &[("a", "Conv2D", AIC), ("b", "Relu", AIC), ("c", "Relu", AIC), ("d", "Add", AIC)],
        &[("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")],
    );
    let p = Partition::of_model(&m);
    assert_eq!(groups(&m, &p), ["AIcoreEngine:a,b,c,d"]);
    assert_eq!(p.inputs.entries(), 0);
}

#[test]
fn stream_labels_split_subgraphs_and_cut_edges_link_them() {
    let doc = r#"{"format":"stream-graph","version":1,"name":"g","nodes":[
        {"name":"a","type":"Conv2D","engine":"AIcoreEngine"},
        {"name":"b","type":"Relu","engine":"AIcoreEngine","attrs":{"stream_label":"s1"}},
        {"name":"c","type":"Relu","engine":"AIcoreEngine","attrs":{"stream_label":"s1"}},
        {"name":"d","type":"Add","engine":"AIcoreEngine"}],
      "edges":[{"src":"a","dst":"b"},{"src":"b","dst":"c"},{"src":"c","dst":"d"}]}"#;
    let m = json::load_str(doc).unwrap();
    let p = Partition::of_model(&m);
    assert_eq!(groups(&m, &p), ["AIcoreEngine:a", "AIcoreEngine:b,c", "AIcoreEngine:d"]);
    let labelled = p.by_graph[GraphId::ROOT][1];
    assert_eq!(p.subgraphs[labelled].stream_label.as_deref(), Some("s1"));
    assert_eq!(p.predecessors(&m, labelled), vec![p.by_graph[GraphId::ROOT][0]]);
    assert_eq!(p.successors(&m, labelled), vec![p.by_graph[GraphId::ROOT][2]]);
}

#[test]
fn given_partition_is_used_as_is() {
    let doc = r#"{"format":"stream-graph","version":1,"name":"g","nodes":[
        {"name":"a","type":"Conv2D","engine":"AIcoreEngine"},{"name":"b","type":"Relu","engine":"AIcoreEngine"}],
      "edges":[{"src":"a","dst":"b"}],
      "partition":[{"name":"second","engine":"AIcoreEngine","nodes":["b"]},{"name":"first","engine":"AIcoreEngine","nodes":["a"]}]}"#;
    let m = json::load_str(doc).unwrap();
    let p = Partition::of_model(&m);
    assert_eq!(groups(&m, &p), ["AIcoreEngine:b", "AIcoreEngine:a"]);
    assert_eq!(p.subgraphs[p.by_graph[GraphId::ROOT][0]].name, "second");
}

#[test]
fn every_corpus_node_with_inputs_or_a_task_is_partitioned() {
    for path in common::corpus_paths() {
        let m = json::load_file(&path).unwrap();
        let p = Partition::of_model(&m);
        for (id, node) in m.nodes.enumerate() {
            let has_inputs = m.in_edges(id).next().is_some();
            let expected = has_inputs || !node.is_data_like();
            assert_eq!(p.of_node[id].is_some(), expected, "{}: node {}", path.display(), node.name);
        }
        // Pass order is by first node, and subgraphs are single-engine.
        let firsts: Vec<u32> =
            p.by_graph[GraphId::ROOT].iter().map(|&s| m.topo_index[p.subgraphs[s].nodes[0]]).collect();
        assert!(firsts.windows(2).all(|w| w[0] < w[1]), "{}", path.display());
        for sg in p.subgraphs.iter() {
            assert!(sg.nodes.iter().all(|&n| m.node(n).engine == sg.engine));
        }
    }
}

/// Under `compat=ge` the second-path search runs from both ends; outside it, forward from the
/// parent with a budget these families never reach (`graph::partition::partition_engines`):
/// both searches are then exact, so the two partitions must agree subgraph for subgraph.
#[test]
fn two_ended_search_agrees_with_the_forward_search_where_the_budget_is_not_reached() {
    use stream_alloc::graph::synth::{Family, generate};
    for family in [Family::Layered { width: 8 }, Family::Inception, Family::Transformer] {
        for seed in [7, 8] {
            let m = generate(family, 3000, seed).unwrap();
            let exact = Partition::for_compile(&m, true, None);
            let bounded = Partition::for_compile(&m, false, None);
            assert!(
                exact.len() < m.nodes.len() / 2,
                "{}: few merges, the test would not exercise the search",
                family.name()
            );
            assert_eq!(groups(&m, &exact), groups(&m, &bounded), "{} seed {seed}", family.name());
        }
    }
}

/// The `compat=ge` search (from both ends, bounded by the kept topological order of the merged
/// clusters) answers every check as GE's plain forward search without a budget does
/// (`graph::partition::partition_engines_forward`), also on the random family, whose long
/// edges make each search reach most of the graph and each merge move many places.
#[test]
fn ordered_two_ended_search_agrees_with_the_unbounded_forward_search() {
    use stream_alloc::graph::partition::partition_engines_forward;
    use stream_alloc::graph::synth::{Family, generate};
    let families = [
        (Family::Random { window: None }, 3000),
        (Family::Random { window: Some(32) }, 3000),
        (Family::Layered { width: 8 }, 2000),
        (Family::Inception, 2000),
        (Family::Transformer, 2000),
        (Family::Dense { density: 30, mixed: true }, 200),
        (Family::Dense { density: 5, mixed: false }, 400),
    ];
    for (family, nodes) in families {
        for seed in [7, 8, 9] {
            let m = generate(family, nodes, seed).unwrap();
            let exact = Partition::for_compile(&m, true, None);
            let forward = partition_engines_forward(&m);
            assert!(exact.len() < nodes * 9 / 10, "{}: few merges, nothing searched", family.name());
            let (a, b) = (groups(&m, &exact), groups(&m, &forward));
            let first = a.iter().zip(&b).find(|(x, y)| x != y);
            assert!(a == b, "{} seed {seed}: first difference {first:?}", family.name());
        }
    }
}
