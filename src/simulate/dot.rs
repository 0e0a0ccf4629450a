//! Graphviz DOT of an assignment, in two views.
//!
//! - [`dot`], every node: nodes filled with their stream's colour, engine subgraphs (GE's
//!   partition) as clusters, data edges solid, control edges dotted, syncs dashed red. Graphviz
//!   lays out graphs of a few hundred nodes in well under a second, but a training graph
//!   (a thousand nodes, forward and backward joined by long edges) takes it many minutes.
//! - [`stream_dot`], one box per stream: its node count, first and last node and most common
//!   operator types, with the syncs between two streams collapsed into one edge per ordered
//!   pair labelled with their number. Its size is the number of streams, so it renders in
//!   seconds whatever the graph.
//!
//! Labels are DOT strings: names are escaped (`\` and `"`), and `\n` separates label lines.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::graph::partition::Partition;
use crate::graph::{EdgeKind, IdVec, Model, NodeId, StreamId};

/// A qualitative palette (ColorBrewer Set3 + Pastel1), cycled by stream id.
const PALETTE: &[&str] = &[
    "#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd",
    "#ccebc5", "#ffed6f", "#fbb4ae", "#b3cde3", "#decbe4", "#fed9a6",
];

/// Text escaped for a DOT string: a backslash and a quote are escaped, a line break becomes
/// DOT's `\n`.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

fn quote(s: &str) -> String {
    format!("\"{}\"", escape(s))
}

/// A DOT string of several label lines (each escaped, joined by DOT's `\n` line break).
fn label<S: AsRef<str>>(lines: &[S]) -> String {
    let lines: Vec<String> = lines.iter().map(|l| escape(l.as_ref())).collect();
    format!("\"{}\"", lines.join("\\n"))
}

fn color(s: StreamId) -> &'static str {
    PALETTE[s.index() % PALETTE.len()]
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
        let (text, fill) = match stream[n] {
            Some(s) => (label(&[node.name.clone(), format!("{} · s{}", node.op_type, s.0)]), color(s)),
            None => (label(&[&node.name, &node.op_type]), "#ffffff"),
        };
        format!("{} [label={text}, fillcolor=\"{fill}\"];", id(n))
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

/// At most this many characters of a node name in a stream box.
const NAME_CHARS: usize = 48;

fn short(name: &str) -> String {
    if name.chars().count() <= NAME_CHARS {
        name.to_string()
    } else {
        let head: String = name.chars().take(NAME_CHARS - 1).collect();
        format!("{head}…")
    }
}

/// The nodes of one stream, in the model's order.
#[derive(Default)]
struct StreamBox {
    nodes: Vec<NodeId>,
    types: BTreeMap<String, usize>,
}

/// The most common operator types of a set of nodes, `Conv2D ×53, Relu ×49, …`.
fn top_types(types: &BTreeMap<String, usize>, k: usize) -> String {
    let mut v: Vec<(&String, &usize)> = types.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut parts: Vec<String> = v.iter().take(k).map(|(t, n)| format!("{t} ×{n}")).collect();
    if v.len() > k {
        parts.push(format!("+{} type(s)", v.len() - k));
    }
    parts.join(", ")
}

/// DOT text with one box per stream and one edge per ordered pair of streams joined by syncs
/// (labelled with the number of syncs); nodes on no stream are counted in one dotted box.
pub fn stream_dot(model: &Model, stream: &IdVec<NodeId, Option<StreamId>>, waits: &[(NodeId, NodeId)]) -> String {
    let mut boxes: BTreeMap<StreamId, StreamBox> = BTreeMap::new();
    let mut none = StreamBox::default();
    for n in model.all_nodes() {
        let b = match stream[n] {
            Some(s) => boxes.entry(s).or_default(),
            None => &mut none,
        };
        b.nodes.push(n);
        *b.types.entry(model.nodes[n].op_type.clone()).or_default() += 1;
    }
    let mut edges: BTreeMap<(StreamId, StreamId), usize> = BTreeMap::new();
    for &(f, t) in waits {
        if let (Some(a), Some(b)) = (stream[f], stream[t]) {
            *edges.entry((a, b)).or_default() += 1;
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", quote(&model.name));
    let title = format!(
        "{}: {} nodes on {} streams ({} on no stream), {} syncs; one box per stream, one edge per pair of streams with the number of syncs",
        model.name,
        model.nodes.len(),
        boxes.len(),
        none.nodes.len(),
        waits.len()
    );
    let _ = writeln!(out, "  label={}; labelloc=t; fontname=\"Helvetica\";", quote(&title));
    let _ = writeln!(
        out,
        "  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n  edge [color=\"#d62728\", fontname=\"Helvetica\", fontsize=9];"
    );
    let name = |n: NodeId| short(&model.nodes[n].name);
    for (s, b) in &boxes {
        let (first, last) = (b.nodes[0], b.nodes[b.nodes.len() - 1]);
        let text = label(&[
            format!("stream {} · {} node(s)", s.0, b.nodes.len()),
            format!("first: {}", name(first)),
            format!("last: {}", name(last)),
            top_types(&b.types, 3),
        ]);
        let _ = writeln!(out, "  s{} [label={text}, fillcolor=\"{}\"];", s.0, color(*s));
    }
    if !none.nodes.is_empty() {
        let text = label(&[format!("no stream · {} node(s)", none.nodes.len()), top_types(&none.types, 3)]);
        let _ = writeln!(out, "  none [label={text}, style=\"rounded,dotted\"];");
    }
    for ((a, b), k) in &edges {
        let width = 1.0 + (*k as f64).log2().min(4.0);
        let _ = writeln!(out, "  s{} -> s{} [label=\"{k}\", penwidth={width:.1}];", a.0, b.0);
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_escape_names_and_break_lines() {
        assert_eq!(label(&["a\\b \"q\"", "Conv2D · s1"]), r#""a\\b \"q\"\nConv2D · s1""#);
        assert_eq!(quote("two\nlines"), r#""two\nlines""#);
        assert_eq!(short(&"x".repeat(60)).chars().count(), NAME_CHARS);
    }

    #[test]
    fn top_types_are_by_count() {
        let t: BTreeMap<String, usize> =
            [("Relu", 3), ("Conv2D", 5), ("Add", 3), ("Mul", 1)].iter().map(|(k, v)| (k.to_string(), *v)).collect();
        assert_eq!(top_types(&t, 3), "Conv2D ×5, Add ×3, Relu ×3, +1 type(s)");
    }
}
