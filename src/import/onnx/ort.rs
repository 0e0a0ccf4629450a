//! ONNX Runtime's stream partition of a plan: the document ORT reads from the session config
//! entry `session.node_partition_config_file`,
//! `{"type": "DeviceBasedPartitioner", "streams": [[node names…], …], "devices": […]}`
//! (onnxruntime `onnxruntime/core/framework/allocation_planner.cc`, `DeviceBasedPartitioner`;
//! test data `onnxruntime/test/testdata/multi_stream_models/`).
//!
//! ORT refuses a document that leaves out any node of the graph it runs, so every node of that
//! graph is placed, under ORT's own name for it:
//! - ORT's graph is the root graph of the file less its `Constant` nodes, which ORT turns into
//!   initializers when it loads the model (`onnxruntime/core/graph/graph.cc`, the `Graph`
//!   constructor). Nested graphs (`If` branches) are planned by ORT on their own; the document
//!   names root nodes only (`PlannerImpl::CreatePlan` passes the file to the root graph alone).
//! - A named node keeps its name. An unnamed node is `OpType` followed by a counter per op type,
//!   counted along ORT's topological order (`DeviceBasedPartitioner::PartitionGraph`). That
//!   order is `GraphViewer`'s default: a depth-first walk up from the leaf nodes (nodes no
//!   other node reads), leaving a node after its inputs, inputs taken highest index first
//!   (`onnxruntime/core/graph/graph_viewer.cc`, `Graph::ReverseDFSFrom` with `NodeCompare`).
//!   Node indices are the file's order.
//! - A node the plan runs on a stream goes on that stream. One the plan leaves without a stream
//!   (a constant the importer folded, shape arithmetic, a view) goes on the stream of its first
//!   consumer in plan order, just before it; failing a consumer with a stream, just after its
//!   first producer with one; failing both, on the first stream.
//!
//! Inside a stream the names come in the plan's order. ORT itself runs each stream's nodes in
//! its own topological order (it fills streams walking that order), so the order in the file
//! is for readers; the assignment is what ORT takes.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use super::decode;
use super::proto::{GraphProto, NodeProto};
use crate::{Result, bail};

/// The execution provider the partition is for, as ORT's `OrtDevice::DeviceType` of its streams
/// (onnxruntime `include/onnxruntime/core/framework/ortdevice.h`: CPU = 0, GPU = 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// The CPU execution provider: every stream is a CPU stream, `"0"`.
    Cpu,
    /// The CUDA execution provider: every stream is a GPU stream, `"1"`.
    Cuda,
}

impl Device {
    /// The `devices` entry ORT parses (a decimal string, `std::atoi`).
    pub fn code(self) -> &'static str {
        match self {
            Device::Cpu => "0",
            Device::Cuda => "1",
        }
    }

    pub fn parse(s: &str) -> Option<Device> {
        match s {
            "cpu" => Some(Device::Cpu),
            "cuda" | "gpu" => Some(Device::Cuda),
            _ => None,
        }
    }
}

/// One node of the graph ORT builds from the file.
#[derive(Clone, Debug)]
pub struct OrtNode {
    /// ORT's name for it: its own, or `OpType` and a counter.
    pub name: String,
    /// Its index among the root graph's nodes in the file.
    pub onnx_index: usize,
    /// ORT nodes whose outputs it reads (explicitly or from a nested graph), ascending.
    pub inputs: Vec<usize>,
    /// ORT nodes that read its outputs, ascending.
    pub consumers: Vec<usize>,
}

/// The graph ORT builds from a model file: its nodes in ORT's index order, and ORT's
/// topological order of them.
#[derive(Clone, Debug)]
pub struct OrtGraph {
    pub nodes: Vec<OrtNode>,
    pub topo: Vec<usize>,
}

/// Whether ORT turns the node into an initializer when it loads the model.
fn becomes_initializer(n: &NodeProto) -> bool {
    n.op_type.as_deref() == Some("Constant") && decode::domain(n).is_empty()
}

impl OrtGraph {
    /// ORT's view of a binary ModelProto's root graph (`what` names it in errors).
    pub fn of_model(bytes: &[u8], what: &str) -> Result<OrtGraph> {
        let dec = decode::decode(prost::bytes::Bytes::copy_from_slice(bytes), what)?;
        OrtGraph::of(dec.graph())
    }

    /// ORT's view of a root graph.
    pub fn of(g: &GraphProto) -> Result<OrtGraph> {
        let entries = entries(g)?;
        let mut producer: HashMap<&str, usize> = HashMap::new();
        for (k, e) in entries.iter().enumerate() {
            for o in e.writes.iter().filter(|o| !o.is_empty()) {
                producer.insert(o, k);
            }
        }
        let mut nodes: Vec<OrtNode> = entries
            .iter()
            .map(|e| OrtNode {
                name: String::new(),
                onnx_index: e.onnx_index,
                inputs: Vec::new(),
                consumers: Vec::new(),
            })
            .collect();
        for (k, e) in entries.iter().enumerate() {
            let mut ins: Vec<usize> =
                e.reads.iter().filter_map(|r| producer.get(r.as_str()).copied()).filter(|&p| p != k).collect();
            ins.sort_unstable();
            ins.dedup();
            for &p in &ins {
                nodes[p].consumers.push(k);
            }
            nodes[k].inputs = ins;
        }
        for n in &mut nodes {
            n.consumers.sort_unstable();
            n.consumers.dedup();
        }
        let topo = reverse_dfs_order(&nodes);
        // Unnamed nodes: op type and a counter per op type, along the topological order.
        let mut counter: HashMap<&str, u64> = HashMap::new();
        let mut names = vec![String::new(); nodes.len()];
        for &k in &topo {
            let e = &entries[k];
            names[k] = match e.name.filter(|s| !s.is_empty()) {
                Some(s) => s.to_string(),
                None => {
                    let c = counter.entry(e.op.as_str()).or_insert(0);
                    *c += 1;
                    format!("{}{}", e.op, *c - 1)
                }
            };
        }
        for (n, name) in nodes.iter_mut().zip(names) {
            n.name = name;
        }
        Ok(OrtGraph { nodes, topo })
    }
}

/// A node of ORT's graph before naming: a node of the file, or one of the nodes a function
/// body puts in its place.
struct Entry<'g> {
    name: Option<&'g str>,
    op: String,
    reads: Vec<String>,
    writes: Vec<String>,
    onnx_index: usize,
}

/// ORT's nodes in index order: the file's nodes less its `Constant`s, then the bodies of the
/// operators ORT inlines, in the order of the nodes they replace (a body's nodes are added to
/// the graph after every node it had).
fn entries(g: &GraphProto) -> Result<Vec<Entry<'_>>> {
    let mut out = Vec::with_capacity(g.node.len());
    let mut bodies = Vec::new();
    for (i, n) in g.node.iter().enumerate() {
        if becomes_initializer(n) {
            continue;
        }
        if let Some(body) = function_body(n, i)? {
            bodies.extend(body);
            continue;
        }
        let mut reads: Vec<&str> = n.input.iter().filter(|s| !s.is_empty()).map(String::as_str).collect();
        for a in &n.attribute {
            for sub in a.g.iter().chain(a.graphs.iter()) {
                decode::collect_outer_reads(sub, &mut reads);
            }
        }
        out.push(Entry {
            name: n.name.as_deref(),
            op: n.op_type.clone().unwrap_or_default(),
            reads: reads.into_iter().map(str::to_string).collect(),
            writes: n.output.clone(),
            onnx_index: i,
        });
    }
    out.extend(bodies);
    Ok(out)
}

/// The nodes ORT 1.32's CPU provider runs in place of an ONNX operator it has no kernel for and
/// that ONNX defines as a function (ORT inlines the function when it partitions the graph; the
/// body's nodes are unnamed). Bodies from the ONNX operator definitions (onnx
/// `onnx/defs/math/defs.cc` HardSwish and Mish, `onnx/defs/generator/defs.cc` Bernoulli,
/// `onnx/defs/tensor/defs.cc` CastLike), checked against the names ORT gives them.
fn function_body<'g>(n: &'g NodeProto, index: usize) -> Result<Option<Vec<Entry<'g>>>> {
    if !decode::domain(n).is_empty() {
        return Ok(None);
    }
    let op = n.op_type.as_deref().unwrap_or("");
    let x = n.input.first().cloned().unwrap_or_default();
    let y = n.output.first().cloned().unwrap_or_default();
    // Tensors between the body's nodes: names no file tensor can have.
    let t = |k: u32| format!("{y}\u{0}{k}");
    let steps: Vec<(&str, Vec<String>, String)> = match op {
        "HardSwish" => vec![("HardSigmoid", vec![x.clone()], t(0)), ("Mul", vec![x, t(0)], y)],
        "Mish" => vec![("Softplus", vec![x.clone()], t(0)), ("Tanh", vec![t(0)], t(1)), ("Mul", vec![x, t(1)], y)],
        "Bernoulli" => vec![
            ("RandomUniformLike", vec![x.clone()], t(0)),
            ("Greater", vec![t(0), x], t(1)),
            ("Cast", vec![t(1)], y),
        ],
        "CastLike" => vec![("Cast", vec![x], y)],
        "GroupNormalization" => bail!(
            NotImplemented,
            "node {}: ONNX Runtime runs GroupNormalization as its ONNX function, a subgraph of some 25 nodes \
             whose names the ORT export does not compute; export the model at opset 17 or below (as \
             InstanceNormalization with Reshape), or write the partition for it by hand",
            decode::describe(n, index)
        ),
        _ => return Ok(None),
    };
    Ok(Some(
        steps
            .into_iter()
            .map(|(op, reads, write)| Entry {
                name: None,
                op: op.to_string(),
                reads,
                writes: vec![write],
                onnx_index: index,
            })
            .collect(),
    ))
}

/// `GraphViewer`'s default topological order: from the leaves (in index order, the last
/// walked first), a depth-first walk over inputs that emits a node once its inputs are emitted;
/// a node's inputs are pushed in ascending index order, so the highest is walked first.
fn reverse_dfs_order(nodes: &[OrtNode]) -> Vec<usize> {
    let mut stack: Vec<(usize, bool)> =
        (0..nodes.len()).filter(|&k| nodes[k].consumers.is_empty()).map(|k| (k, false)).collect();
    let mut visited = vec![false; nodes.len()];
    let mut order = Vec::with_capacity(nodes.len());
    while let Some((k, leave)) = stack.pop() {
        if leave {
            order.push(k);
            continue;
        }
        if visited[k] {
            continue;
        }
        visited[k] = true;
        stack.push((k, true));
        for &i in &nodes[k].inputs {
            if !visited[i] {
                stack.push((i, false));
            }
        }
    }
    order
}

/// Where the plan put a node: its stream and its position in the plan's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    pub stream: u32,
    pub position: usize,
}

/// ORT's partition document.
#[derive(Clone, Debug, PartialEq)]
pub struct Partition {
    pub streams: Vec<Vec<String>>,
    pub devices: Vec<String>,
    /// ORT names two or more nodes share: ORT puts every node of one name on one stream (the
    /// name is listed once, where the first of them goes).
    pub shared_names: Vec<String>,
}

impl Partition {
    /// The document, one stream per line; the same partition always gives the same bytes.
    pub fn to_json(&self) -> String {
        let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
        let mut s = String::from("{\n  \"type\": \"DeviceBasedPartitioner\",\n  \"streams\": [");
        for (i, st) in self.streams.iter().enumerate() {
            let names: Vec<String> = st.iter().map(|n| q(n)).collect();
            let _ = write!(s, "{}\n    [{}]", if i == 0 { "" } else { "," }, names.join(", "));
        }
        let devices: Vec<String> = self.devices.iter().map(|d| q(d)).collect();
        let _ = write!(s, "\n  ],\n  \"devices\": [{}]\n}}\n", devices.join(", "));
        s
    }
}

/// Where a plan put each node of the root graph, by graph node name (`None`: no stream).
pub type Plan = HashMap<String, Option<Placed>>;

/// A [`Plan`] from the plan's nodes in its order (allocation JSON's `nodes`,
/// `Allocation::order`) with their streams; nodes of nested graphs left out by the caller.
pub fn plan_in_order<'a>(nodes: impl IntoIterator<Item = (&'a str, Option<u32>)>) -> Plan {
    nodes
        .into_iter()
        .enumerate()
        .map(|(position, (name, stream))| (name.to_string(), stream.map(|stream| Placed { stream, position })))
        .collect()
}

/// The partition of an ONNX model for a plan of its imported graph: `root_nodes` is what the
/// import made of each root node ([`super::Imported::root_nodes`]), `plan` where the plan put
/// those graph nodes. What the command line's `export --to ort` and the Python package write.
pub fn partition_of_plan(graph: &OrtGraph, root_nodes: &[String], plan: &Plan, device: Device) -> Result<Partition> {
    let placed: Vec<Option<Placed>> = root_nodes.iter().map(|n| plan.get(n).copied().flatten()).collect();
    partition(graph, &placed, device)
}

/// A node's place in its stream: (the plan position it anchors to, before it / at it / after
/// it, ORT's topological rank).
type Key = (usize, u8, usize);

/// The partition of `graph` (ORT's view of the model) for a plan. `placed[i]` is where the plan
/// put the graph node that root ONNX node `i` became (`None`: no stream).
pub fn partition(graph: &OrtGraph, placed: &[Option<Placed>], device: Device) -> Result<Partition> {
    let n = graph.nodes.len();
    // Sort key in a stream: (anchor position, before / at / after, ORT topological rank).
    let mut rank = vec![0usize; n];
    for (r, &k) in graph.topo.iter().enumerate() {
        rank[k] = r;
    }
    if placed.len() < graph.nodes.iter().map(|x| x.onnx_index + 1).max().unwrap_or(0) {
        bail!(Field, "the plan places {} ONNX nodes; the model has more", placed.len());
    }
    let mut at: Vec<Option<(u32, Key)>> = graph
        .nodes
        .iter()
        .enumerate()
        .map(|(k, node)| placed.get(node.onnx_index).copied().flatten().map(|p| (p.stream, (p.position, 1, rank[k]))))
        .collect();
    // Unplaced nodes before their first placed consumer (consumers first: reverse topological).
    for &k in graph.topo.iter().rev() {
        if at[k].is_some() {
            continue;
        }
        let first = graph.nodes[k].consumers.iter().filter_map(|&c| at[c]).min_by_key(|(_, key)| key.0);
        if let Some((s, key)) = first {
            at[k] = Some((s, (key.0, 0, rank[k])));
        }
    }
    // Then after their first placed producer.
    for &k in &graph.topo {
        if at[k].is_some() {
            continue;
        }
        let first = graph.nodes[k].inputs.iter().filter_map(|&p| at[p]).min_by_key(|(_, key)| key.0);
        at[k] = Some(match first {
            Some((s, key)) => (s, (key.0, 2, rank[k])),
            None => (u32::MAX, (0, 0, rank[k])),
        });
    }
    let used: Vec<u32> = {
        let mut v: Vec<u32> = at.iter().flatten().map(|(s, _)| *s).filter(|&s| s != u32::MAX).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let first_stream = used.first().copied().unwrap_or(0);
    let mut by_stream: BTreeMap<u32, Vec<(Key, usize)>> = BTreeMap::new();
    for (k, a) in at.iter().enumerate() {
        let (s, key) = a.unwrap_or((u32::MAX, (0, 0, rank[k])));
        let s = if s == u32::MAX { first_stream } else { s };
        by_stream.entry(s).or_default().push((key, k));
    }
    let mut seen: HashMap<&str, ()> = HashMap::new();
    let mut shared_names = Vec::new();
    let mut streams = Vec::new();
    for (_, mut list) in by_stream {
        list.sort_unstable();
        let mut names = Vec::new();
        for (_, k) in list {
            let name = graph.nodes[k].name.as_str();
            if seen.insert(name, ()).is_some() {
                if !shared_names.iter().any(|s: &String| s == name) {
                    shared_names.push(name.to_string());
                }
                continue;
            }
            names.push(name.to_string());
        }
        if !names.is_empty() {
            streams.push(names);
        }
    }
    if streams.is_empty() {
        streams.push(Vec::new());
    }
    let devices = vec![device.code().to_string(); streams.len()];
    Ok(Partition { streams, devices, shared_names })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::onnx::proto::{GraphProto, NodeProto};

    fn node(name: &str, op: &str, ins: &[&str], outs: &[&str]) -> NodeProto {
        NodeProto {
            name: if name.is_empty() { None } else { Some(name.into()) },
            op_type: Some(op.into()),
            input: ins.iter().map(|s| s.to_string()).collect(),
            output: outs.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    /// x -> Relu(a); x -> Sigmoid(b) -> Relu(c); Constant k; Mul(c, k) named; Add(a, d);
    /// Shape(e); Reshape(e, s): the names and order ORT 1.32 writes for it.
    fn sample() -> GraphProto {
        GraphProto {
            node: vec![
                node("", "Relu", &["x"], &["a"]),
                node("", "Sigmoid", &["x"], &["b"]),
                node("", "Relu", &["b"], &["c"]),
                node("", "Constant", &[], &["k"]),
                node("named_mul", "Mul", &["c", "k"], &["d"]),
                node("", "Add", &["a", "d"], &["e"]),
                node("", "Shape", &["e"], &["s"]),
                node("", "Reshape", &["e", "s"], &["y"]),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn names_and_order_are_those_ort_writes() {
        let g = OrtGraph::of(&sample()).unwrap();
        let topo: Vec<&str> = g.topo.iter().map(|&k| g.nodes[k].name.as_str()).collect();
        // ORT's own partition of this graph, written when the config file is absent.
        assert_eq!(topo, ["Sigmoid0", "Relu0", "named_mul", "Relu1", "Add0", "Shape0", "Reshape0"]);
        assert!(g.nodes.iter().all(|n| n.onnx_index != 3), "the Constant is an initializer in ORT");
    }

    #[test]
    fn unplaced_nodes_join_a_consumer_or_a_producer() {
        let g = OrtGraph::of(&sample()).unwrap();
        let p = |stream, position| Some(Placed { stream, position });
        // Relu(a) on 1, Sigmoid and Relu(c) on 0, Mul on 0, Add on 1; Shape and Reshape unplaced.
        let placed = vec![p(1, 2), p(0, 0), p(0, 1), None, p(0, 3), p(1, 4), None, None];
        let part = partition(&g, &placed, Device::Cpu).unwrap();
        assert_eq!(
            part.streams,
            vec![vec!["Sigmoid0", "Relu0", "named_mul"], vec!["Relu1", "Add0", "Shape0", "Reshape0"]]
        );
        assert_eq!(part.devices, ["0", "0"]);
        assert!(part.shared_names.is_empty());
        let json = part.to_json();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["type"], "DeviceBasedPartitioner");
        assert_eq!(v["streams"][1][3], "Reshape0");
        // Shape feeds Reshape, which has no placed consumer: both follow Add, their producer.
        let placed = vec![p(0, 0), p(0, 1), p(0, 2), None, p(0, 3), p(0, 4), None, None];
        let one = partition(&g, &placed, Device::Cuda).unwrap();
        assert_eq!(one.streams.len(), 1);
        assert_eq!(one.devices, ["1"]);
    }

    #[test]
    fn a_consumer_earlier_in_the_plan_wins() {
        // k is read by two nodes on different streams: it goes before the earlier one.
        let g = OrtGraph::of(&GraphProto {
            node: vec![
                node("k", "Shape", &["x"], &["s"]),
                node("late", "Reshape", &["x", "s"], &["y"]),
                node("early", "Expand", &["x", "s"], &["z"]),
            ],
            ..Default::default()
        })
        .unwrap();
        let p = |stream, position| Some(Placed { stream, position });
        let part = partition(&g, &[None, p(0, 9), p(1, 3)], Device::Cpu).unwrap();
        assert_eq!(part.streams, vec![vec!["late"], vec!["k", "early"]]);
    }

    #[test]
    fn functions_ort_inlines_become_their_bodies() {
        // ORT 1.32 runs HardSwish as HardSigmoid and Mul, unnamed, on the stream of the node.
        let g = OrtGraph::of(&GraphProto {
            node: vec![
                node("hsig_op", "HardSigmoid", &["x"], &["h"]),
                node("hswish_op", "HardSwish", &["h"], &["s"]),
                node("", "Mul", &["s", "x"], &["y"]),
            ],
            ..Default::default()
        })
        .unwrap();
        let topo: Vec<&str> = g.topo.iter().map(|&k| g.nodes[k].name.as_str()).collect();
        // What ORT writes for this graph: the body's Mul comes first in its order.
        assert_eq!(topo, ["hsig_op", "HardSigmoid0", "Mul0", "Mul1"]);
        let p = |stream, position| Some(Placed { stream, position });
        let part = partition(&g, &[p(0, 0), p(1, 1), p(0, 2)], Device::Cpu).unwrap();
        assert_eq!(part.streams, vec![vec!["hsig_op", "Mul1"], vec!["HardSigmoid0", "Mul0"]]);
        let gn =
            GraphProto { node: vec![node("gn", "GroupNormalization", &["x", "s", "b"], &["y"])], ..Default::default() };
        let e = OrtGraph::of(&gn).unwrap_err();
        assert!(e.to_string().contains("'gn' (GroupNormalization)"), "{e}");
    }

    #[test]
    fn a_shared_name_is_listed_once() {
        let g = OrtGraph::of(&GraphProto {
            node: vec![node("n", "Relu", &["x"], &["a"]), node("n", "Relu", &["a"], &["b"])],
            ..Default::default()
        })
        .unwrap();
        let p = |stream, position| Some(Placed { stream, position });
        let part = partition(&g, &[p(0, 0), p(1, 1)], Device::Cpu).unwrap();
        assert_eq!(part.streams, vec![vec!["n"]]);
        assert_eq!(part.shared_names, ["n"]);
    }
}
