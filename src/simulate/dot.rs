//! Graphviz DOT of an assignment: nodes filled with their stream's colour, engine subgraphs
//! (GE's partition) as clusters, data edges solid, control edges dotted, syncs dashed red.

use std::fmt::Write;

use crate::graph::partition::Partition;
use crate::graph::{EdgeKind, IdVec, Model, NodeId, StreamId};

/// A qualitative palette (ColorBrewer Set3 + Pastel1), cycled by stream id.
const PALETTE: &[&str] = &[
    "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd",
    "#ccebc5", "#ffed6f", "#fbb4ae", "#b3cde3", "#decbe4", "#fed9a6",
];

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// DOT text for a model with a stream per node and a list of waits (record node, waiting node).
pub fn dot(model: &Model, stream: &IdVec<NodeId, Option<StreamId>>, waits: &[(NodeId, NodeId)]) -> String {
    let part = Partition::of_model(model);
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", quote(&model.name));
    let _ = writeln!(
        out,
        "  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];"
    );
    let id = |n: NodeId| format!("n{}", n.0);
    let node_line = |n: NodeId| {
        let node = &model.nodes[n];
        let (label, color) = match stream[n] {
            Some(s) => (format!("{}\\n{} · s{}", node.name, node.op_type, s.0), PALETTE[s.index() % PALETTE.len()]),
            None => (format!("{}\\n{}", node.name, node.op_type), "#ffffff"),
        };
        format!("{} [label={}, fillcolor=\"{}\"];", id(n), quote(&label), color)
    };
    let mut in_cluster = IdVec::filled(model.nodes.len(), false);
    for (i, sg) in part.subgraphs.iter().enumerate() {
        let _ = writeln!(out, "  subgraph cluster_{i} {{");
        let _ = writeln!(
            out,
            "    label={}; style=dashed; color=\"#888888\";",
            quote(&format!("{} ({})", sg.name, model.engines[sg.engine].name))
        );
        for &n in &sg.nodes {
            in_cluster[n] = true;
            let _ = writeln!(out, "    {}", node_line(n));
        }
        let _ = writeln!(out, "  }}");
    }
    for n in model.all_nodes() {
        if !in_cluster[n] {
            let _ = writeln!(out, "  {}", node_line(n));
        }
    }
    for e in model.edges.iter() {
        let style = if e.kind == EdgeKind::Control { " [style=dotted]" } else { "" };
        let _ = writeln!(out, "  {} -> {}{};", id(e.src), id(e.dst), style);
    }
    for &(f, t) in waits {
        let _ = writeln!(out, "  {} -> {} [style=dashed, color=\"#d62728\", constraint=false];", id(f), id(t));
    }
    out.push_str("}\n");
    out
}
