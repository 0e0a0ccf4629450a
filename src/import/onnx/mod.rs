//! ONNX import: a binary ModelProto (opsets 7 to 21) to graph JSON, in phases, one file each:
//! [`decode`] (protobuf, opsets, topological order, dangling names, cycles), [`names`] (unique
//! node names from output tensors), [`shapes`] with [`values`] (shape inference with the small
//! integer tensors that steer shapes), [`costs`] (engines, tasks and the roofline of
//! docs/cost-model.md) and [`measured`] (profiler times replacing estimates).
//!
//! Weights are never needed: an initializer contributes its dims, and the values of small ones.
//! Shape computations whose results are known at import time (Shape, Gather on a shape, ...)
//! fold into `Const` nodes, as GE's constant folding does. `If` becomes GE's `If` with its two
//! branches as subgraphs (the way GE's ONNX parser adapts it: every outer tensor a branch reads
//! becomes an input of the `If` node and a `Data` node of the branch); `Loop` and `Scan` have no
//! counterpart in GE's ONNX parser and are refused.

#![forbid(unsafe_code)]

pub mod attrs;
pub mod contrib;
pub mod costs;
pub mod decode;
pub mod eval;
#[cfg(test)]
mod eval_tests;
pub mod measured;
pub mod names;
pub mod ort;
#[allow(clippy::all, missing_docs)]
#[rustfmt::skip]
pub mod proto;
pub mod shapes;
pub mod types;
pub mod values;

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::Path;

use crate::error::{Error, ErrorKind, Result};
use crate::graph::device::DeviceProfile;
use crate::{bail, err};
use costs::Kind;
use decode::{Decoded, describe};
use measured::{Applied, Measured};
use names::Namer;
use proto::{GraphProto, NodeProto, ValueInfoProto, type_proto};
use values::{Tensor, check_dims, fmt_dims};

/// What the importer needs besides the file.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// `NAME=d0,d1,...`: the full shape of a graph input, for symbolic or missing dims.
    pub input_shapes: Vec<(String, Vec<u64>)>,
    /// The first dimension of every input whose first dimension is symbolic or missing.
    pub batch: Option<u64>,
    /// Run an operator the importer cannot infer at this fixed cost instead of refusing it.
    pub unknown_op_cost_us: Option<f64>,
    /// The device constants of the roofline (defaults: docs/cost-model.md).
    pub device: DeviceProfile,
    /// Measured per-node times replacing the estimates.
    pub measured: Option<Measured>,
}

impl ImportOptions {
    /// Adds `NAME=d0,d1,...` (`--input-shape`).
    pub fn add_input_shape(&mut self, spec: &str) -> Result<()> {
        let Some((name, dims)) = spec.rsplit_once('=') else {
            bail!(InvalidOption, "--input-shape '{spec}': expected NAME=d0,d1,... (e.g. input=1,3,224,224)");
        };
        if name.is_empty() {
            bail!(InvalidOption, "--input-shape '{spec}': the input name is empty");
        }
        let dims: Vec<u64> = if dims.trim().is_empty() {
            Vec::new()
        } else {
            dims.split(',')
                .map(|d| {
                    d.trim().parse::<u64>().ok().filter(|&v| v < 1 << 40).ok_or_else(|| {
                        err!(InvalidOption, "--input-shape '{spec}': '{d}' is not a dimension (an integer >= 0)")
                    })
                })
                .collect::<Result<_>>()?
        };
        if self.input_shapes.iter().any(|(n, _)| n == name) {
            bail!(InvalidOption, "--input-shape: input '{name}' given twice");
        }
        self.input_shapes.push((name.to_string(), dims));
        Ok(())
    }
}

/// What an import produced besides the JSON.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// ONNX nodes in all graphs of the file.
    pub onnx_nodes: usize,
    /// Graph JSON nodes (root and subgraphs), and of them those with a task.
    pub nodes: usize,
    pub task_nodes: usize,
    pub edges: usize,
    /// Nodes whose outputs were known at import time and became `Const`.
    pub folded: usize,
    pub subgraphs: usize,
    /// The default domain's opset.
    pub opset: i64,
    /// Nodes run at `--unknown-op-cost`.
    pub unknown_ops: Vec<String>,
    /// Nodes whose output shapes are the ones the model declares, because the importer has no rule
    /// for the operator or a value the rule needs is not known at import time.
    pub declared_ops: Vec<String>,
    /// What `--costs` did.
    pub measured: Option<Applied>,
}

/// An imported model: graph JSON text and what the import did.
#[derive(Clone, Debug)]
pub struct Imported {
    pub json: String,
    pub stats: Stats,
    /// The graph node each node of the root ONNX graph became, by the ONNX node's index in the
    /// file: what [`ort`] maps a plan back to ONNX Runtime's node names with.
    pub root_nodes: Vec<String>,
}

/// Imports an ONNX file; the graph is named after the file's stem.
pub fn import_file(path: &Path, opts: &ImportOptions) -> Result<Imported> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read ONNX file '{}': {e}", path.display())))?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into());
    let file = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    import_vec(bytes, &stem, &file, opts)
}

/// [`import_bytes`] taking the buffer: the weights are never copied.
pub fn import_vec(bytes: Vec<u8>, name: &str, file: &str, opts: &ImportOptions) -> Result<Imported> {
    import_buf(prost::bytes::Bytes::from(bytes), name, file, opts)
}

/// Imports a binary ModelProto held in memory. `name` names the graph, `file` the source in
/// messages.
pub fn import_bytes(bytes: &[u8], name: &str, file: &str, opts: &ImportOptions) -> Result<Imported> {
    import_buf(prost::bytes::Bytes::copy_from_slice(bytes), name, file, opts)
}

fn import_buf(bytes: prost::bytes::Bytes, name: &str, file: &str, opts: &ImportOptions) -> Result<Imported> {
    let what = if file.is_empty() { name } else { file };
    let dec = decode::decode(bytes, what)?;
    if let Some(us) = opts.unknown_op_cost_us
        && !(us.is_finite() && us >= 0.0)
    {
        bail!(InvalidOption, "--unknown-op-cost {us}: expected a finite time in µs >= 0");
    }
    let mut low = Lowerer {
        dec: &dec,
        opts,
        subgraphs: Vec::new(),
        subgraph_names: Namer::default(),
        stats: Stats::default(),
        root_nodes: Vec::new(),
    };
    low.subgraph_names.take(name);
    low.stats.opset = dec.opsets.get("").copied().unwrap_or(0);
    let root = dec.graph();
    let (mut graph, _) = low.lower(root, name, None, &HashMap::new(), true)?;
    let mut subgraphs = std::mem::take(&mut low.subgraphs);
    let root_nodes = std::mem::take(&mut low.root_nodes);
    let mut stats = low.stats;
    if let Some(m) = &opts.measured {
        let mut all: Vec<&mut GGraph> = vec![&mut graph];
        all.extend(subgraphs.iter_mut());
        stats.measured = Some(apply_measured(&mut all, m, &opts.device));
    }
    stats.nodes = graph.nodes.len() + subgraphs.iter().map(|g| g.nodes.len()).sum::<usize>();
    stats.edges = graph.edges.len() + subgraphs.iter().map(|g| g.edges.len()).sum::<usize>();
    stats.task_nodes = std::iter::once(&graph)
        .chain(subgraphs.iter())
        .map(|g| g.nodes.iter().filter(|n| n.kind.tasks() > 0).count())
        .sum();
    stats.subgraphs = subgraphs.len();
    let model = dec.model.producer_name.as_deref().unwrap_or("");
    let version = dec.model.producer_version.as_deref().unwrap_or("");
    let mut source = format!(
        "ONNX {what} (producer {} {}, opset {}), stream-alloc import, {} roofline costs",
        if model.is_empty() { "unknown" } else { model },
        version,
        stats.opset,
        opts.device.name
    );
    if let Some(m) = &opts.measured {
        let _ = write!(source, ", measured times from {}", m.source);
    }
    let json = emit(name, &source, &graph, &subgraphs);
    Ok(Imported { json, stats, root_nodes })
}

/// One node of the graph JSON being built.
struct GNode {
    name: String,
    ty: String,
    kind: Kind,
    cost_us: f64,
    cores: u32,
    out_bytes: Option<Vec<u64>>,
    subgraphs: Vec<String>,
    /// Names a measured time may carry for this node: its ONNX name and output tensors.
    keys: Vec<String>,
}

impl GNode {
    /// A task-less node (a data input, a weight, the output) of GE type `ty`.
    fn task_less(name: String, ty: &str, out_bytes: Option<Vec<u64>>) -> GNode {
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
}

struct GEdge {
    src: usize,
    dst: usize,
    src_port: u32,
    dst_port: u32,
}

struct GGraph {
    name: String,
    parent: Option<String>,
    nodes: Vec<GNode>,
    edges: Vec<GEdge>,
}

/// Where a tensor comes from: the node and port that write it, and its shape.
#[derive(Clone)]
struct Source {
    node: usize,
    port: u32,
    tensor: Tensor,
}

struct Lowerer<'a> {
    dec: &'a Decoded,
    opts: &'a ImportOptions,
    subgraphs: Vec<GGraph>,
    /// Subgraph names are unique across the model (`#2`, ... as node names are).
    subgraph_names: Namer,
    stats: Stats,
    /// [`Imported::root_nodes`].
    root_nodes: Vec<String>,
}

impl Lowerer<'_> {
    /// Lowers one graph (the root, or a branch reading `outer` tensors) and returns it with its
    /// output tensors.
    fn lower(
        &mut self,
        g: &GraphProto,
        gname: &str,
        parent: Option<&str>,
        outer: &HashMap<String, Tensor>,
        root: bool,
    ) -> Result<(GGraph, Vec<Tensor>)> {
        let outer_names: HashSet<String> = outer.keys().cloned().collect();
        let order = decode::topo_order(g, gname, &outer_names)?;
        self.stats.onnx_nodes += g.node.len();
        let mut namer = Namer::default();
        let mut out = GGraph {
            name: gname.to_string(),
            parent: parent.map(str::to_string),
            nodes: Vec::new(),
            edges: Vec::new(),
        };
        let mut table: HashMap<String, Source> = HashMap::new();
        let dev = &self.opts.device;
        let init_names: HashSet<&str> = g.initializer.iter().filter_map(|t| t.name.as_deref()).collect();
        let declared: HashMap<&str, &ValueInfoProto> =
            g.value_info.iter().chain(g.output.iter()).filter_map(|v| v.name.as_deref().map(|n| (n, v))).collect();

        // Graph inputs (the root's, less initializers listed as inputs by IR < 4 exporters).
        if root {
            for name in self.opts.input_shapes.iter().map(|(n, _)| n) {
                if !g.input.iter().any(|i| i.name.as_deref() == Some(name)) {
                    bail!(InvalidOption, "--input-shape: the model has no input '{name}'");
                }
            }
        }
        for vi in &g.input {
            let name = vi.name.as_deref().unwrap_or("");
            if init_names.contains(name) {
                continue;
            }
            let t = if root {
                self.input_tensor(vi)?
            } else {
                declared_tensor(vi)
                    .ok_or_else(|| err!(Field, "graph '{gname}': input '{name}' has no concrete shape"))?
            };
            let idx = out.nodes.len();
            let bytes = t.numel() * dev.element_bytes as u64;
            out.nodes.push(GNode::task_less(namer.take(name), "Data", Some(vec![bytes])));
            table.insert(name.to_string(), Source { node: idx, port: 0, tensor: t });
        }
        // A branch reads outer tensors through Data nodes of its own, in order of first use.
        if !root {
            let mut reads = Vec::new();
            decode::collect_outer_reads(g, &mut reads);
            for r in reads {
                if table.contains_key(r) || init_names.contains(r) {
                    continue;
                }
                let Some(t) = outer.get(r) else {
                    bail!(UnknownNode, "graph '{gname}' reads tensor '{r}', which no enclosing graph produces");
                };
                let idx = out.nodes.len();
                out.nodes.push(GNode::task_less(
                    namer.take(r),
                    "Data",
                    Some(vec![t.numel() * dev.element_bytes as u64]),
                ));
                table.insert(r.to_string(), Source { node: idx, port: 0, tensor: t.clone() });
            }
        }
        // Initializers that something reads become Const nodes (weights carry no out_bytes).
        let mut read: HashSet<&str> = HashSet::new();
        for n in &g.node {
            read.extend(n.input.iter().map(|s| s.as_str()));
            for a in &n.attribute {
                let mut r = Vec::new();
                for sub in a.g.iter().chain(a.graphs.iter()) {
                    decode::collect_outer_reads(sub, &mut r);
                }
                read.extend(r);
            }
        }
        read.extend(g.output.iter().filter_map(|o| o.name.as_deref()));
        for t in &g.initializer {
            let name = t.name.as_deref().unwrap_or("");
            if !read.contains(name) || table.contains_key(name) {
                continue;
            }
            let tensor = values::from_proto(t, name)?;
            let idx = out.nodes.len();
            out.nodes.push(GNode::task_less(namer.take(name), "Const", None));
            table.insert(name.to_string(), Source { node: idx, port: 0, tensor });
        }

        if root {
            self.root_nodes = vec![String::new(); g.node.len()];
        }
        for &i in &order {
            let node = &g.node[i];
            self.lower_node(gname, node, i, &mut out, &mut table, &mut namer, outer, &declared)?;
            if root && let Some(n) = out.nodes.last() {
                self.root_nodes[i] = n.name.clone();
            }
        }

        // NetOutput, reading every graph output.
        let mut outputs = Vec::new();
        let net = out.nodes.len();
        out.nodes.push(GNode::task_less(namer.take("NetOutput"), "NetOutput", None));
        for (k, o) in g.output.iter().enumerate() {
            let name = o.name.as_deref().unwrap_or("");
            let src = table
                .get(name)
                .ok_or_else(|| err!(UnknownNode, "graph '{gname}': output '{name}' is produced by nothing"))?;
            out.edges.push(GEdge { src: src.node, dst: net, src_port: src.port, dst_port: k as u32 });
            outputs.push(src.tensor.clone());
        }
        Ok((out, outputs))
    }

    /// A root input's shape: declared dims, with `--input-shape` and `--batch` filling the
    /// symbolic or missing ones.
    fn input_tensor(&self, vi: &ValueInfoProto) -> Result<Tensor> {
        let name = vi.name.as_deref().unwrap_or("");
        let (elem, dims) = declared_dims(vi);
        let given = self.opts.input_shapes.iter().find(|(n, _)| n == name).map(|(_, d)| d);
        let dims: Vec<u64> = match (dims, given) {
            (Some(decl), Some(g)) => {
                if decl.len() != g.len() {
                    bail!(
                        InvalidOption,
                        "--input-shape {name}={}: the model declares rank {} for '{name}'",
                        g.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","),
                        decl.len()
                    );
                }
                for (k, (d, &v)) in decl.iter().zip(g).enumerate() {
                    if let Dim::Fixed(f) = d
                        && *f != v
                    {
                        bail!(
                            InvalidOption,
                            "--input-shape: input '{name}' dimension {k} is fixed at {f} in the model, not {v}"
                        );
                    }
                }
                g.clone()
            }
            (None, Some(g)) => g.clone(),
            (Some(decl), None) => {
                let mut v = Vec::with_capacity(decl.len());
                for (k, d) in decl.iter().enumerate() {
                    match (d, k, self.opts.batch) {
                        (Dim::Fixed(f), _, _) => v.push(*f),
                        (_, 0, Some(b)) => v.push(b),
                        (Dim::Param(p), _, _) => bail!(
                            Field,
                            "graph input '{name}' dimension {k} is symbolic ('{p}'): give its shape with --input-shape {name}=... {}",
                            if k == 0 { "or --batch N" } else { "" }
                        ),
                        (Dim::Missing, _, _) => bail!(
                            Field,
                            "graph input '{name}' dimension {k} has no size: give its shape with --input-shape {name}=... {}",
                            if k == 0 { "or --batch N" } else { "" }
                        ),
                    }
                }
                v
            }
            (None, None) => bail!(
                Field,
                "graph input '{name}' has no shape in the model: give it with --input-shape {name}=d0,d1,..."
            ),
        };
        check_dims(&dims, &|| format!("graph input '{name}'"))?;
        Ok(Tensor::new(dims, elem))
    }

    #[allow(clippy::too_many_arguments)]
    fn lower_node(
        &mut self,
        gname: &str,
        node: &NodeProto,
        index: usize,
        out: &mut GGraph,
        table: &mut HashMap<String, Source>,
        namer: &mut Namer,
        outer: &HashMap<String, Tensor>,
        declared: &HashMap<&str, &ValueInfoProto>,
    ) -> Result<()> {
        let op = node.op_type.as_deref().unwrap_or("");
        let domain = decode::domain(node);
        let opset = self.dec.opset_of(node);
        let who = || {
            let set =
                if domain.is_empty() { format!("opset {opset}") } else { format!("domain '{domain}' opset {opset}") };
            format!("node {} in graph '{gname}' ({set})", describe(node, index))
        };
        let srcs: Vec<Option<Source>> =
            node.input.iter().map(|n| if n.is_empty() { None } else { table.get(n.as_str()).cloned() }).collect();
        for (k, n) in node.input.iter().enumerate() {
            if !n.is_empty() && srcs[k].is_none() {
                bail!(UnknownNode, "{}: input '{n}' is produced by no node, initializer or graph input", who());
            }
        }
        if op.is_empty() {
            bail!(Field, "{}: the node has no op_type", who());
        }
        let ins: Vec<Option<&Tensor>> = srcs.iter().map(|s| s.as_ref().map(|s| &s.tensor)).collect();
        // Named before its branches are lowered: they name it as their parent.
        let node_name = namer.take(names::base_name(&node.output, op));
        let mut subgraph_names = Vec::new();
        let mut extra_inputs: Vec<Source> = Vec::new();
        let mut how = How::default();
        let ort_op = contrib::handles(domain, op);
        let outs: Vec<Tensor> = if !domain.is_empty() && domain != "ai.onnx" && !is_collective(op) && !ort_op {
            self.no_rule(node, &ins, declared, &who, &mut how)?
        } else if op == "If" {
            let (outs, names, extra) = self.lower_if(gname, &node_name, node, table, outer, &who)?;
            subgraph_names = names;
            extra_inputs = extra;
            outs
        } else if matches!(op, "Loop" | "Scan") {
            bail!(
                NotImplemented,
                "{}: {op} has no control-flow counterpart in GE's ONNX parser (it adapts If only); \
                 unroll the loop before export, or export with a fixed trip count",
                who()
            );
        } else if is_collective(op) {
            vec![Tensor::new(ins.first().copied().flatten().map(|t| t.dims.clone()).unwrap_or_default(), 0)]
        } else {
            self.by_rule(node, opset, &ins, declared, &who, &mut how)?
        };
        if how.by_declaration {
            self.stats.declared_ops.push(format!("{} ({op})", namer_peek(node)));
        }
        let fixed_cost = how.fixed_cost;
        let mut outs = outs;
        outs.resize(node.output.len(), Tensor::new(Vec::new(), 0));
        check_declared(node, &mut outs, declared, fixed_cost.is_some(), &who)?;

        let folded = !matches!(op, "Constant" | "ConstantOfShape")
            && !outs.is_empty()
            && !node.input.is_empty()
            && subgraph_names.is_empty()
            && fixed_cost.is_none()
            && outs.iter().zip(&node.output).all(|(t, n)| n.is_empty() || t.value.is_some());
        let kind = if folded {
            self.stats.folded += 1;
            Kind::Const
        } else if fixed_cost.is_some() {
            Kind::AiCore
        } else {
            costs::kind_of(op)
        };
        let dev = &self.opts.device;
        let eb = dev.element_bytes as u64;
        let out_bytes = match kind {
            Kind::Const => None,
            Kind::View => Some(vec![0; outs.len()]),
            _ => Some(outs.iter().map(|t| t.numel() * eb).collect()),
        };
        let (cost_us, cores) = match fixed_cost {
            Some(us) => (us, 1),
            None => {
                let mut all_ins = ins.clone();
                all_ins.extend(extra_inputs.iter().map(|s| Some(&s.tensor)));
                let f = contrib::flops(node, &ins, &outs).unwrap_or_else(|| costs::flops(node, &ins, &outs));
                let b = costs::bytes(dev, &all_ins, &outs);
                costs::estimate(dev, kind, f, b)
            }
        };
        if fixed_cost.is_some() {
            self.stats.unknown_ops.push(format!("{} ({op})", namer_peek(node)));
        }
        let idx = out.nodes.len();
        let mut keys: Vec<String> = node.output.iter().filter(|o| !o.is_empty()).cloned().collect();
        if let Some(n) = node.name.as_deref().filter(|s| !s.is_empty()) {
            keys.insert(0, n.to_string());
        }
        out.nodes.push(GNode {
            name: node_name,
            ty: if kind == Kind::Const { "Const".into() } else { costs::ge_type(node, &ins) },
            kind,
            cost_us,
            cores,
            out_bytes,
            subgraphs: subgraph_names,
            keys,
        });
        if kind != Kind::Const {
            let extra = extra_inputs.iter().map(|s| Some(s.clone()));
            for (port, s) in srcs.iter().cloned().chain(extra).enumerate() {
                if let Some(s) = s {
                    out.edges.push(GEdge { src: s.node, dst: idx, src_port: s.port, dst_port: port as u32 });
                }
            }
        }
        for (k, t) in outs.into_iter().enumerate() {
            let name = &node.output[k];
            if !name.is_empty() {
                table.insert(name.clone(), Source { node: idx, port: k as u32, tensor: t });
            }
        }
        Ok(())
    }

    /// Output shapes by the operator's shape rule; where a value the rule needs is not known at
    /// import time, the shapes the model declares; where there is no rule, [`Self::no_rule`].
    fn by_rule(
        &self,
        node: &NodeProto,
        opset: i64,
        ins: &[Option<&Tensor>],
        declared: &HashMap<&str, &ValueInfoProto>,
        who: &dyn Fn() -> String,
        how: &mut How,
    ) -> Result<Vec<Tensor>> {
        // ORT's own operators (docs/ort.md) run under the model's default-domain opset.
        let inferred = if contrib::handles(decode::domain(node), node.op_type.as_deref().unwrap_or("")) {
            contrib::infer(node, self.stats.opset, ins)
        } else {
            shapes::infer(node, opset, ins)
        };
        match inferred {
            Ok(o) => Ok(o),
            Err(shapes::Fail::Bad(msg)) => {
                let shapes: Vec<String> = ins.iter().map(|t| t.map_or("-".into(), |t| fmt_dims(&t.dims))).collect();
                bail!(Attribute, "{}: {msg} (input shapes {})", who(), shapes.join(" "));
            }
            Err(shapes::Fail::Unknown(msg)) => match declared_outputs(node, declared) {
                Some(o) => {
                    how.by_declaration = true;
                    Ok(o)
                }
                None => bail!(
                    Attribute,
                    "{}: {msg}, and the model declares no shape for the node's outputs (value_info)",
                    who()
                ),
            },
            Err(shapes::Fail::Unsupported) => self.no_rule(node, ins, declared, who, how),
        }
    }

    /// Output shapes for an operator without a rule ([`Self::unknown`]), or its refusal.
    fn no_rule(
        &self,
        node: &NodeProto,
        ins: &[Option<&Tensor>],
        declared: &HashMap<&str, &ValueInfoProto>,
        who: &dyn Fn() -> String,
        how: &mut How,
    ) -> Result<Vec<Tensor>> {
        match self.unknown(node, ins, declared) {
            Some(NoRule::Fixed(o)) => {
                how.fixed_cost = self.opts.unknown_op_cost_us;
                Ok(o)
            }
            Some(NoRule::Declared(o)) => {
                how.by_declaration = true;
                Ok(o)
            }
            None => Err(unknown_err(&who(), node.op_type.as_deref().unwrap_or(""), decode::domain(node))),
        }
    }

    /// Output shapes for an operator without a rule: with `--unknown-op-cost`, the shapes the
    /// model declares, else the first input's, at the fixed cost; without it, the declared shapes
    /// when every output has one, at the estimated cost. `None`: neither, the node is refused.
    fn unknown(
        &self,
        node: &NodeProto,
        ins: &[Option<&Tensor>],
        declared: &HashMap<&str, &ValueInfoProto>,
    ) -> Option<NoRule> {
        if self.opts.unknown_op_cost_us.is_none() {
            return declared_outputs(node, declared).map(NoRule::Declared);
        }
        let first = ins.iter().flatten().next().map(|t| t.dims.clone()).unwrap_or_default();
        let outs = node
            .output
            .iter()
            .map(|o| {
                let decl = declared.get(o.as_str()).and_then(|vi| declared_tensor(vi));
                decl.unwrap_or_else(|| Tensor::new(first.clone(), 0))
            })
            .collect();
        Some(NoRule::Fixed(outs))
    }

    /// Lowers an `If`: both branches become subgraphs; the node reads the condition and every
    /// outer tensor the branches read; each output is the larger of the two branches' (the
    /// memory the If must hold).
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn lower_if(
        &mut self,
        gname: &str,
        node_name: &str,
        node: &NodeProto,
        table: &HashMap<String, Source>,
        outer: &HashMap<String, Tensor>,
        who: &dyn Fn() -> String,
    ) -> Result<(Vec<Tensor>, Vec<String>, Vec<Source>)> {
        let a = attrs::Attrs::of(node);
        let (Some(then_g), Some(else_g)) = (a.g("then_branch"), a.g("else_branch")) else {
            bail!(Field, "{}: If needs then_branch and else_branch graphs", who());
        };
        let mut scope: HashMap<String, Tensor> = outer.clone();
        for (k, s) in table {
            scope.insert(k.clone(), s.tensor.clone());
        }
        let prefix = if gname.is_empty() { String::new() } else { format!("{gname}/") };
        let mut names = Vec::new();
        let mut results = Vec::new();
        let mut reads = Vec::new();
        for (attr, sub) in [("then_branch", then_g), ("else_branch", else_g)] {
            let sname = self.subgraph_names.take(&format!("{prefix}{node_name}/{attr}"));
            let (sg, outs) = self.lower(sub, &sname, Some(node_name), &scope, false)?;
            if outs.len() != node.output.len() {
                bail!(Field, "{}: {attr} has {} outputs, the If node {}", who(), outs.len(), node.output.len());
            }
            decode::collect_outer_reads(sub, &mut reads);
            self.subgraphs.push(sg);
            names.push(sname);
            results.push(outs);
        }
        let outs: Vec<Tensor> = results[0]
            .iter()
            .zip(&results[1])
            .map(|(t, e)| {
                let big = if e.numel() > t.numel() { e } else { t };
                Tensor::new(big.dims.clone(), big.elem)
            })
            .collect();
        let mut seen = HashSet::new();
        let extra: Vec<Source> =
            reads.into_iter().filter(|r| seen.insert(*r)).filter_map(|r| table.get(r).cloned()).collect();
        Ok((outs, names, extra))
    }
}

/// How a node's output shapes were found, when not by its rule alone.
#[derive(Default)]
struct How {
    /// Run at `--unknown-op-cost`.
    fixed_cost: Option<f64>,
    /// Shaped by the model's declarations.
    by_declaration: bool,
}

/// Checks each output against the shape the model declares for it: a disagreement is a shape
/// conflict (not for a node at `--unknown-op-cost`); a bounded dimension yields to a declared size
/// no larger (the size the exporter traced).
fn check_declared(
    node: &NodeProto,
    outs: &mut [Tensor],
    declared: &HashMap<&str, &ValueInfoProto>,
    fixed_cost: bool,
    who: &dyn Fn() -> String,
) -> Result<()> {
    for (k, t) in outs.iter_mut().enumerate() {
        let name = &node.output[k];
        check_dims(&t.dims, &|| format!("{}: output '{name}'", who()))?;
        let Some(vi) = declared.get(name.as_str()) else { continue };
        let (_, Some(decl)) = declared_dims(vi) else { continue };
        let mut conflict = decl.len() != t.rank();
        for (i, d) in decl.iter().enumerate().take(t.rank()) {
            let Dim::Fixed(f) = *d else { continue };
            if t.is_bounded(i) && f <= t.dims[i] {
                t.dims[i] = f;
                t.bound &= !(1 << i);
            } else if f != t.dims[i] {
                conflict = true;
            }
        }
        if conflict && !fixed_cost {
            bail!(
                Attribute,
                "{}: shape conflict on output '{name}': inferred {} but the model declares {}",
                who(),
                fmt_dims(&t.dims),
                fmt_decl(&decl)
            );
        }
    }
    Ok(())
}

/// How an operator without a shape rule is imported.
enum NoRule {
    /// At `--unknown-op-cost`.
    Fixed(Vec<Tensor>),
    /// With the shapes the model declares, at the estimated cost.
    Declared(Vec<Tensor>),
}

/// Every named output's declared shape, when each has a fully fixed one.
fn declared_outputs(node: &NodeProto, declared: &HashMap<&str, &ValueInfoProto>) -> Option<Vec<Tensor>> {
    node.output
        .iter()
        .map(
            |o| {
                if o.is_empty() { Some(Tensor::new(Vec::new(), 0)) } else { declared_tensor(declared.get(o.as_str())?) }
            },
        )
        .collect()
}

fn is_collective(op: &str) -> bool {
    costs::kind_of(op) == Kind::Collective
}

fn namer_peek(node: &NodeProto) -> String {
    names::base_name(&node.output, node.op_type.as_deref().unwrap_or("")).to_string()
}

fn unknown_err(who: &str, op: &str, domain: &str) -> Error {
    let d = if domain.is_empty() { String::new() } else { format!(" of domain '{domain}'") };
    err!(
        NotImplemented,
        "{who}: cannot infer the output shapes of operator {op}{d}: the importer has no rule for it \
         and the model declares no shape for its outputs (value_info); declare them, or \
         --unknown-op-cost US runs it at a fixed cost"
    )
}

/// A declared dimension.
#[derive(Clone, Debug, PartialEq)]
enum Dim {
    Fixed(u64),
    Param(String),
    Missing,
}

/// A value info's element type and dims (`None` when it declares no shape).
fn declared_dims(vi: &ValueInfoProto) -> (i32, Option<Vec<Dim>>) {
    let Some(type_proto::Value::TensorType(tt)) = vi.r#type.as_ref().and_then(|t| t.value.as_ref()) else {
        return (0, None);
    };
    let elem = tt.elem_type.unwrap_or(0);
    let Some(shape) = tt.shape.as_ref() else { return (elem, None) };
    use proto::tensor_shape_proto::dimension::Value as V;
    let dims = shape
        .dim
        .iter()
        .map(|d| match &d.value {
            Some(V::DimValue(v)) if *v >= 0 => Dim::Fixed(*v as u64),
            Some(V::DimParam(p)) if !p.is_empty() => Dim::Param(p.clone()),
            _ => Dim::Missing,
        })
        .collect();
    (elem, Some(dims))
}

fn declared_tensor(vi: &ValueInfoProto) -> Option<Tensor> {
    let (elem, dims) = declared_dims(vi);
    let dims: Option<Vec<u64>> = dims?.iter().map(|d| if let Dim::Fixed(f) = d { Some(*f) } else { None }).collect();
    dims.filter(|d| check_dims(d, &String::new).is_ok()).map(|d| Tensor::new(d, elem))
}

fn fmt_decl(d: &[Dim]) -> String {
    let parts: Vec<String> = d
        .iter()
        .map(|d| match d {
            Dim::Fixed(f) => f.to_string(),
            Dim::Param(p) => p.clone(),
            Dim::Missing => "?".into(),
        })
        .collect();
    format!("[{}]", parts.join(","))
}

/// Replaces estimates by measured times (see [`measured`] for the matching rule).
fn apply_measured(graphs: &mut [&mut GGraph], m: &Measured, dev: &DeviceProfile) -> Applied {
    // Normalised key -> (graph, node); None when two nodes share it.
    let mut exact: HashMap<String, (usize, usize)> = HashMap::new();
    let mut by_key: HashMap<String, Option<(usize, usize)>> = HashMap::new();
    for (gi, g) in graphs.iter().enumerate() {
        for (ni, n) in g.nodes.iter().enumerate() {
            if n.kind.tasks() == 0 {
                continue;
            }
            exact.entry(n.name.clone()).or_insert((gi, ni));
            let mut keys: Vec<&str> = n.keys.iter().map(|k| measured::normalise(k)).collect();
            keys.push(measured::normalise(&n.name));
            keys.sort_unstable();
            keys.dedup();
            for k in keys {
                by_key.entry(k.to_string()).and_modify(|e| *e = None).or_insert(Some((gi, ni)));
            }
        }
    }
    let mut hit: HashSet<(usize, usize)> = HashSet::new();
    let mut applied = Applied::default();
    for (name, e) in &m.entries {
        let target = exact.get(name).copied().or_else(|| by_key.get(measured::normalise(name)).copied().flatten());
        match target {
            Some((gi, ni)) => {
                let n = &mut graphs[gi].nodes[ni];
                n.cost_us = e.us;
                if let Some(c) = e.cores {
                    n.cores = c.min(dev.units);
                }
                hit.insert((gi, ni));
            }
            None => applied.unused.push(name.clone()),
        }
    }
    applied.matched = hit.len();
    for (gi, g) in graphs.iter().enumerate() {
        for (ni, n) in g.nodes.iter().enumerate() {
            if n.kind.tasks() > 0 && !hit.contains(&(gi, ni)) {
                applied.unmatched_nodes.push(if gi == 0 { n.name.clone() } else { format!("{}:{}", g.name, n.name) });
            }
        }
    }
    applied
}

/// Graph JSON text, one node or edge per line, fields in the corpus's order.
fn emit(name: &str, source: &str, root: &GGraph, subgraphs: &[GGraph]) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let mut s = String::new();
    let _ = writeln!(s, "{{\n  \"format\": \"stream-graph\",\n  \"version\": 1,\n  \"name\": {},", q(name));
    let _ = writeln!(s, "  \"shape\": \"static\",\n  \"source\": {},", q(source));
    emit_body(&mut s, root, "  ", &q);
    s.push_str(",\n  \"subgraphs\": [");
    for (i, g) in subgraphs.iter().enumerate() {
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
    s.push_str(if subgraphs.is_empty() { "]\n}\n" } else { "\n  ]\n}\n" });
    s
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
            q(if n.ty == "Data" || n.ty == "NetOutput" { "DNN_VM_GE_LOCAL" } else { n.kind.engine() }),
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
