//! `stream-alloc export GRAPH [ALLOC] --to ort`: a plan in another runtime's format. ONNX
//! Runtime's stream partition (docs/ort.md) names every node of the graph ORT builds from the
//! model file, under ORT's name, on the plan's stream.

use std::collections::HashMap;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::allocate::{Inputs, model_from_builder};
use super::import::OnnxArgs;
use super::{EXIT_ALLOC_ERROR, EXIT_OK, out};
use stream_alloc::compile::Stage;
use stream_alloc::frontend::{ort_model, ort_plan};
use stream_alloc::graph::Model;
use stream_alloc::import::onnx::ort::{self, Device, Partition, Placed, Plan};
use stream_alloc::simulate::SimConfig;
use stream_alloc::{Error, ErrorKind, driver};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Target {
    /// ONNX Runtime's `session.node_partition_config_file` (DeviceBasedPartitioner JSON).
    Ort,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EpArg {
    /// The CPU execution provider: CPU streams (device "0").
    Cpu,
    /// The CUDA execution provider: GPU streams (device "1").
    Cuda,
}

/// Write a plan in another runtime's format: ONNX Runtime's stream partition.
#[derive(Args, Debug)]
#[command(after_help = "GRAPH is the ONNX model ONNX Runtime will load (for an optimised session: the \
model ORT saved with SessionOptions.optimized_model_filepath, served with optimisations off). Without \
ALLOC the model is allocated first (with the --option values, as `allocate` does).\n\n\
The document names every node of the graph ORT builds from the file under ORT's name (its own, or \
OpType and a counter for an unnamed node); nodes the plan runs on no stream (folded constants, shape \
arithmetic, views) go on the stream of a consumer, else of a producer. docs/ort.md has the workflow.\n\n\
Exit codes: 0 written; 1 an error (the model, the plan or ALLOC); 2 bad usage.")]
pub struct ExportArgs {
    /// The ONNX model (.onnx).
    pub graph: PathBuf,
    /// Allocation JSON v1 file of this model (default: allocate it with --option).
    pub allocation: Option<PathBuf>,
    /// The format to write.
    #[arg(long, value_enum)]
    pub to: Target,
    /// Write the document here (default: standard output).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// The execution provider ORT runs the model on: the device of every stream.
    #[arg(long, value_enum, default_value = "cpu")]
    pub ep: EpArg,
    /// Allocation option KEY=VALUE (as for `allocate`); repeatable.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    #[command(flatten)]
    pub onnx: OnnxArgs,
}

/// The plan of a freshly compiled model.
fn compile_plan(model: Model) -> Result<Plan, Error> {
    let options = model.options.clone();
    let limits = driver::resolve_task_limits(&options)?;
    let inputs = Inputs { model, options, limits };
    let alloc = inputs.compile(Stage::All, SimConfig::default(), false)?.alloc;
    Ok(ort_plan(&inputs.model, &alloc))
}

/// The plan an allocation JSON document gives: root nodes in `nodes` order with their `stream`.
fn document_plan(model: &Model, path: &PathBuf) -> Result<Plan, Error> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read allocation file '{}': {e}", path.display())))?;
    let doc: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| Error::new(ErrorKind::Json, format!("allocation file '{}': {e}", path.display())))?;
    let field = |what: String| Error::new(ErrorKind::Field, format!("allocation file '{}': {what}", path.display()));
    if let Some(e) = doc.get("error") {
        return Err(field(format!("it is an error document ({e}), not an allocation")));
    }
    let nodes = doc.get("nodes").and_then(|v| v.as_array()).ok_or_else(|| field("missing array 'nodes'".into()))?;
    let root: HashMap<&str, ()> =
        model.nodes.iter().filter(|n| model.graph_label(n.graph).is_empty()).map(|n| (n.name.as_str(), ())).collect();
    let mut plan = Plan::new();
    for (position, v) in nodes.iter().enumerate() {
        if v.get("inserted").and_then(|x| x.as_bool()) == Some(true) {
            continue;
        }
        if v.get("graph").and_then(|x| x.as_str()).is_some_and(|g| !g.is_empty()) {
            continue;
        }
        let name =
            v.get("name").and_then(|x| x.as_str()).ok_or_else(|| field(format!("nodes[{position}].name missing")))?;
        if !root.contains_key(name) {
            return Err(field(format!(
                "nodes[{position}]: node '{name}' is not in the model's graph (an allocation of another model?)"
            )));
        }
        let s = v
            .get("stream")
            .and_then(|x| x.as_i64())
            .ok_or_else(|| field(format!("nodes[{position}].stream missing")))?;
        let placed = u32::try_from(s).ok().map(|stream| Placed { stream, position });
        plan.insert(name.to_string(), placed);
    }
    for n in model.nodes.iter().filter(|n| model.graph_label(n.graph).is_empty() && n.tasks > 0) {
        if !plan.contains_key(&n.name) {
            return Err(field(format!("node '{}' of the model is not in the allocation", n.name)));
        }
    }
    Ok(plan)
}

/// The partition and what it came from, for the summary.
fn export(args: &ExportArgs) -> Result<(Partition, String), Error> {
    let path = &args.graph;
    let (graph, mut imported, what) = ort_model(
        path,
        &args.onnx.source(),
        "export --to ort names ONNX Runtime's nodes, so it needs the .onnx file ORT loads",
    )?;
    let root_nodes = std::mem::take(&mut imported.root_nodes);
    let model = model_from_builder(imported.into_builder()?, &args.options)?;
    let plan = match &args.allocation {
        Some(p) => document_plan(&model, p)?,
        None => compile_plan(model)?,
    };
    let device = match args.ep {
        EpArg::Cpu => Device::Cpu,
        EpArg::Cuda => Device::Cuda,
    };
    let part = ort::partition_of_plan(&graph, &root_nodes, &plan, device)?;
    let planned = graph
        .nodes
        .iter()
        .filter(|n| root_nodes.get(n.onnx_index).and_then(|r| plan.get(r)).is_some_and(|p| p.is_some()))
        .count();
    let summary = format!(
        "{what}: {} ONNX Runtime nodes on {} stream(s) (devices \"{}\"); {planned} on the plan's streams, {} placed beside a neighbour\n",
        graph.nodes.len(),
        part.streams.len(),
        device.code(),
        graph.nodes.len() - planned
    );
    Ok((part, summary))
}

pub fn run(args: ExportArgs) -> i32 {
    let (part, summary) = match export(&args) {
        Ok(r) => r,
        Err(e) => {
            out::error(e);
            return EXIT_ALLOC_ERROR;
        }
    };
    if !part.shared_names.is_empty() {
        out::eprint(&format!(
            "note: {} ONNX Runtime name(s) shared by several nodes, each listed once (ORT runs every node of one name on one stream): {}\n",
            part.shared_names.len(),
            part.shared_names.iter().take(8).cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    let text = part.to_json();
    if let Err(c) = out::emit(args.output.as_deref(), &text) {
        return c;
    }
    // The summary takes standard output when the document went to a file.
    if args.output.is_none() {
        out::eprint(&summary);
    } else if let Err(c) = out::print(&summary) {
        return c;
    }
    EXIT_OK
}
