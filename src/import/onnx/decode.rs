//! Decoding: the file's bytes into ONNX's protobuf types (prost), with the checks that make the
//! rest of the importer safe to run: a model with a graph, an opset it knows, tensor names that
//! resolve, and no cycle.

use prost::Message;

use super::names::{Map, Set};
use super::proto::{GraphProto, ModelProto, NodeProto, TensorProto};
use crate::error::Result;
use crate::{bail, err};

/// The default-domain opsets the importer reads.
pub const MIN_OPSET: i64 = 7;
pub const MAX_OPSET: i64 = 21;

/// A decoded model with its opsets by domain (`""` for the default domain).
pub struct Decoded {
    pub model: ModelProto,
    pub opsets: Map<String, i64>,
}

impl Decoded {
    pub fn graph(&self) -> &GraphProto {
        self.model.graph.as_ref().expect("checked by decode")
    }

    /// The opset a node runs under: its domain's entry in the model's opset imports.
    pub fn opset_of(&self, node: &NodeProto) -> i64 {
        let d = domain(node);
        self.opsets.get(d).copied().unwrap_or(0)
    }
}

/// The node's domain, with `ai.onnx` spelled as the default domain `""`.
pub fn domain(node: &NodeProto) -> &str {
    match node.domain.as_deref().unwrap_or("") {
        "ai.onnx" => "",
        d => d,
    }
}

/// Decodes a binary ModelProto. `what` names the source in errors. Tensor payloads stay
/// slices of `bytes` (no copy of the weights).
pub fn decode(bytes: prost::bytes::Bytes, what: &str) -> Result<Decoded> {
    if bytes.is_empty() {
        bail!(Format, "{what}: empty file, not an ONNX model");
    }
    if matches!(bytes.iter().find(|b| !b.is_ascii_whitespace()), Some(b'{' | b'[')) {
        bail!(Format, "{what}: this is JSON, not a binary ONNX model (graph JSON loads without import)");
    }
    let model = ModelProto::decode(bytes)
        .map_err(|e| err!(Format, "{what}: not a binary ONNX model, or a truncated one ({e})"))?;
    let Some(graph) = model.graph.as_ref() else {
        bail!(Format, "{what}: not an ONNX model: no graph (truncated file, or another protobuf message)");
    };
    if model.ir_version.unwrap_or(0) <= 0 {
        bail!(Format, "{what}: not an ONNX model: no ir_version (truncated file, or another protobuf message)");
    }
    let mut opsets = Map::default();
    for o in &model.opset_import {
        let d = match o.domain.as_deref().unwrap_or("") {
            "ai.onnx" => "",
            d => d,
        };
        opsets.insert(d.to_string(), o.version.unwrap_or(0));
    }
    // IR version 3 models may omit opset_import; ONNX then means opset 1, which is too old here.
    let opset = opsets.get("").copied().unwrap_or(1);
    if !(MIN_OPSET..=MAX_OPSET).contains(&opset) {
        bail!(
            Format,
            "{what}: unsupported opset {opset} of the default ONNX domain (this importer reads opsets {MIN_OPSET} to {MAX_OPSET}; \
             convert the model with onnx.version_converter)"
        );
    }
    if graph.node.is_empty() && graph.output.is_empty() {
        bail!(Format, "{what}: the ONNX graph is empty (no nodes, no outputs)");
    }
    Ok(Decoded { model, opsets })
}

/// Tensors of one graph that nodes may read: inputs, initializers, outer-scope names.
pub fn known_sources<'g>(g: &'g GraphProto, outer: &Set<&'g str>) -> Set<&'g str> {
    let mut s: Set<&str> = outer.clone();
    s.extend(g.input.iter().map(|i| i.name.as_deref().unwrap_or("")));
    s.extend(g.initializer.iter().map(|t| t.name.as_deref().unwrap_or("")));
    s
}

/// The node order to import in: the file's order where it is already topological, else the
/// order Kahn's algorithm gives with the file's order breaking ties. Refuses a tensor produced
/// twice, an input nothing produces (naming the node and the tensor) and a cycle (naming nodes
/// on it).
pub fn topo_order<'g>(g: &'g GraphProto, graph_name: &str, outer: &Set<&'g str>) -> Result<Vec<usize>> {
    let sources = known_sources(g, outer);
    let mut producer: Map<&str, usize> = Map::with_capacity_and_hasher(g.node.len(), Default::default());
    for (i, n) in g.node.iter().enumerate() {
        for o in n.output.iter().filter(|o| !o.is_empty()) {
            if sources.contains(o.as_str()) && !outer.contains(o.as_str()) {
                bail!(
                    Field,
                    "graph '{graph_name}': node {} writes tensor '{o}', which is also a graph input or initializer",
                    describe(n, i)
                );
            }
            if let Some(&j) = producer.get(o.as_str()) {
                bail!(
                    DuplicateName,
                    "graph '{graph_name}': tensor '{o}' is produced twice, by node {} and node {}",
                    describe(&g.node[j], j),
                    describe(n, i)
                );
            }
            producer.insert(o, i);
        }
    }
    // Each node's producers, once each, in order of first read: (reader, producer) pairs.
    let mut arcs: Vec<(usize, usize)> = Vec::with_capacity(g.node.len());
    let mut reads: Vec<&str> = Vec::new();
    let mut sorted = true;
    for (i, n) in g.node.iter().enumerate() {
        reads.clear();
        reads.extend(n.input.iter().filter(|s| !s.is_empty()).map(|s| s.as_str()));
        // Nested graphs read outer tensors by name: they are inputs of the node that owns them.
        for a in &n.attribute {
            for sub in a.g.iter().chain(a.graphs.iter()) {
                collect_outer_reads(sub, &mut reads);
            }
        }
        // A node reads few tensors, so a look back finds a repeat; a set where it reads many.
        let many = reads.len() > 32;
        let mut seen: Set<&str> = Set::default();
        for (k, &t) in reads.iter().enumerate() {
            let repeat = if many { !seen.insert(t) } else { reads[..k].contains(&t) };
            if repeat {
                continue;
            }
            if let Some(&p) = producer.get(t) {
                if p == i {
                    bail!(Cycle, "graph '{graph_name}': node {} reads its own output '{t}' (a cycle)", describe(n, i));
                }
                sorted &= p < i;
                arcs.push((i, p));
            } else if !sources.contains(t) {
                bail!(
                    UnknownNode,
                    "graph '{graph_name}': node {} reads tensor '{t}', which no node, initializer or graph input produces (a dangling tensor name)",
                    describe(n, i)
                );
            }
        }
    }
    for o in &g.output {
        let name = o.name.as_deref().unwrap_or("");
        if !producer.contains_key(name) && !sources.contains(name) {
            bail!(
                UnknownNode,
                "graph '{graph_name}': graph output '{name}' is produced by no node, initializer or graph input (a dangling tensor name)"
            );
        }
    }
    // Every node after its producers: the file's order is the one Kahn's algorithm would give.
    if sorted {
        return Ok((0..g.node.len()).collect());
    }
    let mut indeg = vec![0usize; g.node.len()];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); g.node.len()];
    for &(i, p) in &arcs {
        indeg[i] += 1;
        users[p].push(i);
    }
    // Kahn's algorithm, smallest file index first, so a topological file keeps its order.
    let mut ready = std::collections::BinaryHeap::new();
    for (i, &d) in indeg.iter().enumerate() {
        if d == 0 {
            ready.push(std::cmp::Reverse(i));
        }
    }
    let mut order = Vec::with_capacity(g.node.len());
    while let Some(std::cmp::Reverse(i)) = ready.pop() {
        order.push(i);
        for &u in &users[i] {
            indeg[u] -= 1;
            if indeg[u] == 0 {
                ready.push(std::cmp::Reverse(u));
            }
        }
    }
    if order.len() < g.node.len() {
        let stuck: Vec<String> =
            (0..g.node.len()).filter(|&i| indeg[i] > 0).take(4).map(|i| describe(&g.node[i], i)).collect();
        bail!(
            Cycle,
            "graph '{graph_name}' has a cycle: {} nodes never become ready, among them {}",
            g.node.len() - order.len(),
            stuck.join(", ")
        );
    }
    Ok(order)
}

/// Names a nested graph reads from enclosing scopes (read but not defined inside it).
pub fn collect_outer_reads<'g>(g: &'g GraphProto, out: &mut Vec<&'g str>) {
    let mut defined: Set<&str> = Set::default();
    for i in &g.input {
        defined.insert(i.name.as_deref().unwrap_or(""));
    }
    for t in &g.initializer {
        defined.insert(t.name.as_deref().unwrap_or(""));
    }
    for n in &g.node {
        for o in &n.output {
            defined.insert(o);
        }
    }
    let mut reads: Vec<&str> = Vec::new();
    for n in &g.node {
        reads.extend(n.input.iter().filter(|s| !s.is_empty()).map(|s| s.as_str()));
        for a in &n.attribute {
            for sub in a.g.iter().chain(a.graphs.iter()) {
                collect_outer_reads(sub, &mut reads);
            }
        }
    }
    reads.extend(g.output.iter().filter_map(|o| o.name.as_deref()));
    for r in reads {
        if !defined.contains(r) && !out.contains(&r) {
            out.push(r);
        }
    }
}

/// A node for messages: its name when it has one, its first output otherwise, and its op.
pub fn describe(n: &NodeProto, index: usize) -> String {
    let op = n.op_type.as_deref().unwrap_or("?");
    match n.name.as_deref().filter(|s| !s.is_empty()) {
        Some(name) => format!("'{name}' ({op})"),
        None => match n.output.iter().find(|o| !o.is_empty()) {
            Some(o) => format!("#{index} ({op}, output '{o}')"),
            None => format!("#{index} ({op})"),
        },
    }
}

/// An initializer's dims, refusing negative ones.
pub fn tensor_dims(t: &TensorProto) -> Result<Vec<u64>> {
    t.dims
        .iter()
        .map(|&d| {
            u64::try_from(d).map_err(|_| {
                err!(Field, "initializer '{}' has a negative dimension {d}", t.name.as_deref().unwrap_or(""))
            })
        })
        .collect()
}
