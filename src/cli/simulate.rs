//! `stream-alloc simulate`: allocate, then run the device model on the result.

use std::path::PathBuf;

use clap::Args;
use serde_json::json;

use super::allocate::Inputs;
use super::{EXIT_ALLOC_ERROR, EXIT_OK, EXIT_USAGE, out};
use stream_alloc::compile::{Allocation, policy};
use stream_alloc::graph::Model;
use stream_alloc::memory::MemoryPlan;
use stream_alloc::simulate::{Ideal, SimConfig, SimResult, ideal, round3, simulate};
use stream_alloc::{Error, ErrorKind};

/// Simulate a graph's allocation on a device model: makespan, lower bound, utilisation.
#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// Graph JSON v1 file, or an ONNX model (.onnx).
    pub graph: PathBuf,
    /// Allocation option KEY=VALUE (as for `allocate`); repeatable.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    #[command(flatten)]
    pub onnx: super::import::OnnxArgs,
    /// Write a Chrome trace-event JSON file (Perfetto, chrome://tracing).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub device: super::device::DeviceArgs,
    /// Comma-separated policies to simulate one after another, each over the `--option`s: the
    /// project's (`policy=NAME`) and the peers' baselines `xla`, `nimble`, `opara`, `ort`,
    /// `trtllm[:N]`, `trtllm-cost[:N]` (docs/peers.md). Without it, the options' own policy. With `--json`, an array.
    #[arg(long, value_name = "LIST")]
    pub policies: Option<String>,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The memory plan's peak and the simulated schedule's most live bytes (its lower bound), when
/// the graph gives `out_bytes`.
fn memory(model: &Model, plan: Option<&MemoryPlan>, sim: &SimResult) -> Option<serde_json::Value> {
    let plan = plan?;
    Some(json!({"peak_bytes": plan.peak_bytes, "max_live_bytes": stream_alloc::memory::max_live_bytes(model, sim)}))
}

/// makespan / ideal (1 when the graph has no work).
fn to_ideal(sim: &SimResult, ideal: &Ideal) -> f64 {
    if ideal.makespan_us > 0.0 { sim.makespan_us / ideal.makespan_us } else { 1.0 }
}

fn text(
    model: &Model,
    alloc: &Allocation,
    sim: &SimResult,
    ideal: &Ideal,
    report: &Option<policy::PolicyReport>,
    peer: Option<&str>,
    memory: Option<&serde_json::Value>,
) -> String {
    let mut s = format!(
        "{}: policy {}, {} streams, {} syncs\n  makespan {:.3} us, lower bound {:.3} us (critical path {:.3}, work/units {:.3}), ratio {:.3}\n  ideal {:.3} us (dynamic schedule, unlimited streams, free syncs), makespan / ideal {:.3}\n  single stream {:.3} us, utilisation {:.1} %\n",
        model.name,
        peer.unwrap_or(alloc.mode()),
        sim.streams,
        sim.syncs,
        sim.makespan_us,
        sim.lower_bound_us,
        sim.critical_path_us,
        sim.work_bound_us,
        sim.ratio(),
        ideal.makespan_us,
        to_ideal(sim, ideal),
        sim.single_stream_us,
        sim.utilisation * 100.0
    );
    if let Some(m) = memory {
        s.push_str(&format!(
            "  memory: plan peak {} bytes, at most {} bytes live at once in this schedule\n",
            m["peak_bytes"], m["max_live_bytes"]
        ));
    }
    if let Some(r) = report
        && r.has_details()
    {
        s.push_str(&super::allocate::policy_line(r));
    }
    s
}

/// One policy's report (text, or the JSON object); writes the trace when asked.
fn one(args: &SimulateArgs, cfg: SimConfig, policy: Option<&str>) -> Result<(String, serde_json::Value), Error> {
    let (inputs, peer) = match policy {
        Some(p) => Inputs::load_policy(&args.graph, &args.options, &args.onnx, p)?,
        None => (Inputs::load(&args.graph, &args.options, &args.onnx)?, None),
    };
    let compiled = inputs.compile_as(peer, cfg, true)?;
    let model = inputs.model;
    let (alloc, report) = (&compiled.alloc, &compiled.report);
    let sim = simulate(&model, alloc, &cfg)?;
    let ideal = ideal(&model, &cfg)?;
    if let Some(path) = &args.trace {
        let mut t = serde_json::to_string(&stream_alloc::memory::trace_json(&model, &sim))
            .expect("JSON values always serialise");
        t.push('\n');
        std::fs::write(path, t)
            .map_err(|e| Error::new(ErrorKind::Io, format!("cannot write trace '{}': {e}", path.display())))?;
    }
    let mut doc = sim.to_json();
    doc["graph"] = json!(model.name);
    doc["ideal_us"] = json!(round3(ideal.makespan_us));
    doc["ratio_to_ideal"] = json!(round3(to_ideal(&sim, &ideal)));
    doc["arbitration"] = json!(cfg.arbitration.as_str());
    doc["policy"] = report.as_ref().map_or_else(|| json!({"name": "ge"}), |r| r.to_json());
    let memory = memory(&model, compiled.memory(&model), &sim);
    if let Some(m) = &memory {
        doc["memory"] = m.clone();
    }
    Ok((text(&model, alloc, &sim, &ideal, report, peer.map(|p| p.name()).as_deref(), memory.as_ref()), doc))
}

pub fn run(args: SimulateArgs) -> i32 {
    let cfg = match args.device.config(args.onnx.device.as_ref()) {
        Ok(c) => c,
        Err(e) => {
            out::error(e);
            return EXIT_ALLOC_ERROR;
        }
    };
    let policies: Vec<Option<&str>> = match &args.policies {
        None => vec![None],
        Some(list) => {
            let v: Vec<&str> = list.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
            if v.is_empty() {
                out::error("--policies lists no policy");
                return EXIT_USAGE;
            }
            if args.trace.is_some() && v.len() > 1 {
                out::error("--trace writes one schedule: give --policies one policy with it");
                return EXIT_USAGE;
            }
            v.into_iter().map(Some).collect()
        }
    };
    let mut texts = Vec::new();
    let mut docs = Vec::new();
    for p in &policies {
        match one(&args, cfg, *p) {
            Ok((t, d)) => {
                texts.push(t);
                docs.push(d);
            }
            Err(e) => {
                out::error(e);
                return EXIT_ALLOC_ERROR;
            }
        }
    }
    let text = if args.json {
        let v = if args.policies.is_some() { serde_json::Value::Array(docs) } else { docs.remove(0) };
        let mut t = serde_json::to_string_pretty(&v).expect("JSON values always serialise");
        t.push('\n');
        t
    } else {
        texts.concat()
    };
    match out::print(&text) {
        Ok(()) => EXIT_OK,
        Err(c) => c,
    }
}
