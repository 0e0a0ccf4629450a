//! The lowered model, as the importer made it, and its two outputs: graph JSON text ([`emit`],
//! what `import` writes) and the graph builder ([`Lowered::into_builder`], what `allocate` and
//! every other reader of an ONNX file builds from). The builder holds exactly what reading the
//! text back gives, without writing and parsing the text: names and ports as they are, each
//! time as the number its text reads back as ([`as_read`]).

use std::fmt::Write as _;

use crate::error::Result;
use crate::graph::Shape;
use crate::graph::builder::{GraphSpec, LoadedEdge, ModelBuilder, NodeSpec};
use crate::graph::{EdgeKind, builder};
use crate::{bail, err};

use super::costs::{self, Kind};

/// One node of the graph being built.
#[derive(Clone, Debug)]
pub(super) struct GNode {
    pub name: String,
    pub ty: String,
    pub kind: Kind,
    pub cost_us: f64,
    pub cores: u32,
    pub out_bytes: Option<Vec<u64>>,
    pub subgraphs: Vec<String>,
    /// Names a measured time may carry for this node: its ONNX name and output tensors.
    pub keys: Vec<String>,
}

impl GNode {
    /// A task-less node (a data input, a weight, the output) of GE type `ty`.
    pub fn task_less(name: String, ty: &str, out_bytes: Option<Vec<u64>>) -> GNode {
        GNode {
            name,
            ty: ty.into(),
            kind: Kind::Const,
            cost_us: 0.0,
            cores: 0,
            out_bytes,
            subgraphs: Vec::new(),
            keys: Vec::new(),
        }
    }

    /// The engine graph JSON names: GE's local engine for the data inputs and the output.
    fn engine(&self) -> &'static str {
        if self.ty == "Data" || self.ty == "NetOutput" { "DNN_VM_GE_LOCAL" } else { self.kind.engine() }
    }
}

#[derive(Clone, Debug)]
pub(super) struct GEdge {
    pub src: usize,
    pub dst: usize,
    pub src_port: u32,
    pub dst_port: u32,
}

#[derive(Clone, Debug)]
pub(super) struct GGraph {
    pub name: String,
    pub parent: Option<String>,
    pub nodes: Vec<GNode>,
    pub edges: Vec<GEdge>,
}

/// A whole imported model: the root graph, its subgraphs, the model's name and `source` line.
#[derive(Clone, Debug)]
pub(super) struct Lowered {
    pub name: String,
    pub source: String,
    pub root: GGraph,
    pub subgraphs: Vec<GGraph>,
}

impl Lowered {
    /// Graph JSON text, one node or edge per line, fields in the corpus's order.
    pub fn emit(&self) -> String {
        let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
        let mut s = String::new();
        let _ = writeln!(s, "{{\n  \"format\": \"stream-graph\",\n  \"version\": 1,\n  \"name\": {},", q(&self.name));
        let _ = writeln!(s, "  \"shape\": \"static\",\n  \"source\": {},", q(&self.source));
        emit_body(&mut s, &self.root, "  ", &q);
        s.push_str(",\n  \"subgraphs\": [");
        for (i, g) in self.subgraphs.iter().enumerate() {
            s.push_str(if i == 0 { "\n" } else { ",\n" });
            let _ = writeln!(
                s,
                "    {{\n      \"name\": {},\n      \"parent\": {},\n      \"shape\": \"static\",",
                q(&g.name),
                q(g.parent.as_deref().unwrap_or(""))
            );
            emit_body(&mut s, g, "      ", &q);
            s.push_str("\n    }");
        }
        s.push_str(if self.subgraphs.is_empty() { "]\n}\n" } else { "\n  ]\n}\n" });
        s
    }

    /// The builder that reading [`Self::emit`]'s text gives (`json::builder_from_slice`), made
    /// directly: a 200,000-node chain spends as long writing and parsing the text as importing.
    pub fn into_builder(self) -> Result<ModelBuilder> {
        let Lowered { name, source, root, subgraphs } = self;
        let mut b = ModelBuilder::new(name);
        b.source = Some(source);
        fill(b.root_mut(), root)?;
        b.graphs.try_reserve_exact(subgraphs.len()).map_err(|_| builder::no_memory("graphs", subgraphs.len()))?;
        for g in subgraphs {
            let mut spec = GraphSpec {
                name: g.name.clone(),
                // The text writes a missing parent as "", which the builder then refuses.
                parent: Some(g.parent.clone().unwrap_or_default()),
                shape: Shape::Static,
                ..Default::default()
            };
            fill(&mut spec, g)?;
            b.graphs.push(spec);
        }
        Ok(b)
    }
}

/// One graph's nodes and edges into `spec`, edges resolved to node positions as the loader
/// resolves them (node names are unique within a graph: the importer's namer makes them so).
fn fill(spec: &mut GraphSpec, g: GGraph) -> Result<()> {
    let GGraph { name, nodes, edges, .. } = g;
    spec.nodes.try_reserve_exact(nodes.len()).map_err(|_| builder::no_memory("nodes", nodes.len()))?;
    for n in nodes {
        let mut s = NodeSpec::blank();
        s.engine = n.engine().to_string();
        s.tasks = n.kind.tasks();
        if s.tasks > 0 {
            s.cost_us = as_read(n.cost_us).ok_or_else(|| {
                err!(Field, "node '{}' of graph '{name}': cost_us {} is not a time >= 0", n.name, n.cost_us)
            })?;
            s.cores = n.cores;
        }
        if n.kind == Kind::View {
            s.alias_input = Some(0);
        }
        s.name = n.name;
        s.op_type = n.ty;
        s.out_bytes = n.out_bytes;
        s.subgraphs = n.subgraphs;
        spec.nodes.push(s);
    }
    spec.loaded_edges.try_reserve_exact(edges.len()).map_err(|_| builder::no_memory("edges", edges.len()))?;
    for e in edges {
        let (Ok(src), Ok(dst)) = (u32::try_from(e.src), u32::try_from(e.dst)) else {
            bail!(Limit, "graph '{name}': more nodes than a graph holds");
        };
        let (src_port, dst_port) = (e.src_port, e.dst_port);
        spec.loaded_edges.push(LoadedEdge { src, dst, src_port, dst_port, kind: EdgeKind::Data });
    }
    Ok(())
}

/// A time as graph JSON text gives it back: rounded to the nanosecond ([`costs::round_us`]),
/// written as Rust writes an `f64` (the shortest text that reads back as the same number) and
/// read as the loader reads a number. Below 1e9 µs that text has at most 3 decimals and 15
/// digits, which every reader turns back into the same `f64`; larger times take the loader's
/// own reading. `None`: not a finite time >= 0, which the loader refuses.
fn as_read(us: f64) -> Option<f64> {
    let r = costs::round_us(us);
    if (0.0..1e9).contains(&r) {
        return Some(r);
    }
    let v: serde_json::Value = serde_json::from_str(&r.to_string()).ok()?;
    v.as_f64().filter(|x| x.is_finite() && *x >= 0.0)
}

fn emit_body(s: &mut String, g: &GGraph, ind: &str, q: &dyn Fn(&str) -> String) {
    let _ = write!(s, "{ind}\"nodes\": [");
    for (i, n) in g.nodes.iter().enumerate() {
        s.push_str(if i == 0 { "\n" } else { ",\n" });
        let _ = write!(
            s,
            "{ind}  {{\"name\": {}, \"type\": {}, \"engine\": {}, \"tasks\": {}",
            q(&n.name),
            q(&n.ty),
            q(n.engine()),
            n.kind.tasks()
        );
        if n.kind.tasks() > 0 {
            let _ = write!(s, ", \"cost_us\": {}, \"cores\": {}", costs::round_us(n.cost_us), n.cores);
        }
        if let Some(b) = &n.out_bytes {
            let parts: Vec<String> = b.iter().map(|v| v.to_string()).collect();
            let _ = write!(s, ", \"out_bytes\": [{}]", parts.join(", "));
        }
        if n.kind == Kind::View {
            s.push_str(", \"alias_input\": 0");
        }
        if !n.subgraphs.is_empty() {
            let parts: Vec<String> = n.subgraphs.iter().map(|x| q(x)).collect();
            let _ = write!(s, ", \"subgraphs\": [{}]", parts.join(", "));
        }
        s.push('}');
    }
    let _ = write!(s, "\n{ind}],\n{ind}\"edges\": [");
    for (i, e) in g.edges.iter().enumerate() {
        s.push_str(if i == 0 { "\n" } else { ",\n" });
        let _ = write!(s, "{ind}  {{\"src\": {}, \"dst\": {}", q(&g.nodes[e.src].name), q(&g.nodes[e.dst].name));
        if e.src_port != 0 {
            let _ = write!(s, ", \"src_port\": {}", e.src_port);
        }
        if e.dst_port != 0 {
            let _ = write!(s, ", \"dst_port\": {}", e.dst_port);
        }
        s.push('}');
    }
    let _ = write!(s, "\n{ind}]");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the graph JSON loader reads back from a time as [`Lowered::emit`] writes it.
    fn read_back(us: f64) -> f64 {
        let doc = format!(
            "{{\"format\": \"stream-graph\", \"version\": 1, \"name\": \"g\", \"nodes\": [{{\"name\": \"a\", \
             \"type\": \"Relu\", \"engine\": \"AIcoreEngine\", \"tasks\": 1, \"cost_us\": {}}}], \"edges\": []}}",
            costs::round_us(us)
        );
        crate::graph::json::builder_from_slice(doc.as_bytes()).unwrap().graphs[0].nodes[0].cost_us
    }

    #[test]
    fn a_time_is_the_number_its_text_reads_back_as() {
        // Times from 1e-4 µs to 1e13 µs, spread over every magnitude, and the edges.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut times = vec![0.0, -0.0, 0.0004, 0.0005, 1e9 - 0.0005, 1e9, 1e12 + 0.5, 1e13, 123.4565];
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mantissa = (x >> 11) as f64 / (1u64 << 53) as f64;
            times.push(mantissa * 10f64.powi((x % 18) as i32 - 4));
        }
        for t in times {
            let direct = as_read(t).unwrap_or_else(|| panic!("{t} refused"));
            assert_eq!(direct.to_bits(), read_back(t).to_bits(), "{t}");
        }
        assert_eq!(as_read(-1.0), None);
        assert_eq!(as_read(f64::NAN), None);
        assert_eq!(as_read(f64::INFINITY), None);
    }
}
