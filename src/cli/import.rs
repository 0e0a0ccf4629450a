//! `stream-alloc import`, and the ONNX options every command that reads a graph accepts: a
//! graph argument ending in `.onnx` (or a file that starts like a binary ModelProto) is imported
//! on the fly with them.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;

use super::{EXIT_ALLOC_ERROR, EXIT_OK, out};
use stream_alloc::frontend::{self, OnnxOptions};
use stream_alloc::import::onnx::Imported;
use stream_alloc::{Error, ErrorKind};

/// How an ONNX model becomes a graph (used only when the graph is an ONNX file).
#[derive(Args, Debug, Clone, Default)]
pub struct OnnxArgs {
    /// ONNX: the shape of a graph input with symbolic or missing dims, NAME=d0,d1,...; repeatable.
    #[arg(long = "input-shape", value_name = "NAME=DIMS")]
    pub input_shape: Vec<String>,
    /// ONNX: the first dimension of every input whose first dimension is symbolic or missing.
    #[arg(long, value_name = "N")]
    pub batch: Option<u64>,
    /// ONNX: run operators the importer has no shape rule for at this fixed cost (µs) instead of
    /// refusing the model.
    #[arg(long = "unknown-op-cost", value_name = "US")]
    pub unknown_op_cost: Option<f64>,
    /// Device profile JSON (docs/cost-model.md): the constants of the importer's roofline.
    #[arg(long, value_name = "FILE")]
    pub device: Option<PathBuf>,
    /// ONNX: measured per-node times replacing the estimates: the Ascend profiler's op summary
    /// CSV or a Chrome trace (docs/cost-model.md).
    #[arg(long, value_name = "FILE")]
    pub costs: Option<PathBuf>,
}

impl OnnxArgs {
    /// The importer's options as the front ends share them.
    pub fn source(&self) -> OnnxOptions {
        OnnxOptions {
            input_shapes: self.input_shape.clone(),
            batch: self.batch,
            unknown_op_cost: self.unknown_op_cost,
            device: self.device.clone(),
            costs: self.costs.clone(),
        }
    }
}

/// Import an ONNX model (binary ModelProto, opsets 7 to 21) and write graph JSON.
#[derive(Args, Debug)]
#[command(after_help = "Shapes are inferred from the graph inputs; give symbolic ones with --input-shape or \
--batch. Engines, tasks, cost_us, cores and out_bytes follow docs/cost-model.md (constants from --device), \
unless --costs gives measured times. Node names are the first output tensor's name (docs/graph-json.md).\n\n\
Exit codes: 0 success; 1 the model could not be imported (the reason on standard error); 2 bad usage.")]
pub struct ImportArgs {
    /// The ONNX model file.
    pub model: PathBuf,
    /// Write graph JSON here instead of standard output.
    #[arg(short, long, value_name = "GRAPH")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub onnx: OnnxArgs,
    /// Do not print the import summary on standard error.
    #[arg(short, long)]
    pub quiet: bool,
}

pub fn run(args: ImportArgs) -> i32 {
    let start = Instant::now();
    let result = std::fs::read(&args.model)
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read ONNX file '{}': {e}", args.model.display())))
        .and_then(|bytes| frontend::import(&args.model, bytes, &args.onnx.source()));
    let imported = match result {
        Ok(i) => i,
        Err(e) => {
            out::error(e);
            return EXIT_ALLOC_ERROR;
        }
    };
    let json = imported.json();
    let elapsed = start.elapsed();
    if let Err(c) = out::emit(args.output.as_deref(), &json) {
        return c;
    }
    if !args.quiet {
        out::eprint(&summary(&imported, elapsed.as_secs_f64() * 1e3));
    }
    EXIT_OK
}

/// What the import did, for standard error.
pub fn summary(i: &Imported, ms: f64) -> String {
    let s = &i.stats;
    let mut t = format!(
        "imported opset {}: {} ONNX nodes -> {} nodes ({} with a task, {} folded to constants), {} edges, {} subgraphs in {ms:.1} ms\n",
        s.opset, s.onnx_nodes, s.nodes, s.task_nodes, s.folded, s.edges, s.subgraphs
    );
    if !s.unknown_ops.is_empty() {
        t.push_str(&format!(
            "  {} node(s) at --unknown-op-cost: {}\n",
            s.unknown_ops.len(),
            s.unknown_ops.iter().take(8).cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if !s.declared_ops.is_empty() {
        t.push_str(&format!(
            "  {} node(s) take the output shapes the model declares (no shape rule, or a value not known at import time): {}{}\n",
            s.declared_ops.len(),
            s.declared_ops.iter().take(8).cloned().collect::<Vec<_>>().join(", "),
            if s.declared_ops.len() > 8 { ", …" } else { "" }
        ));
    }
    if let Some(m) = &s.measured {
        t.push_str(&format!(
            "  measured times: {} node(s) matched; {} node(s) with a task unmatched (they keep their estimate){}; {} measured name(s) matched no node{}\n",
            m.matched,
            m.unmatched_nodes.len(),
            list(&m.unmatched_nodes),
            m.unused.len(),
            list(&m.unused)
        ));
    }
    t
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        return String::new();
    }
    let shown: Vec<&str> = v.iter().take(10).map(|s| s.as_str()).collect();
    format!(": {}{}", shown.join(", "), if v.len() > 10 { ", …" } else { "" })
}
