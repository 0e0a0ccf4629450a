//! What every front end shares: the command-line tool and the Python package (`python/`) load a
//! graph file (graph JSON or ONNX, with the importer's options), apply `KEY=VALUE` options in
//! GE's string forms, compile through the driver, and write the allocation document the same
//! way, so that the two give the same bytes for the same inputs. Nothing here prints or exits:
//! each front end reports errors its own way.

#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::baseline::{self, Peer};
use crate::compile::policy;
use crate::compile::steps::StepTrace;
use crate::compile::{Stage, TaskLimits};
use crate::driver::{self, Compiled};
use crate::graph::device::DeviceProfile;
use crate::graph::options::OPTION_KEYS;
use crate::graph::{Model, ModelBuilder, Options, json};
use crate::import::onnx::measured::Measured;
use crate::import::onnx::{self, ImportOptions, Imported};
use crate::memory::{AllocationDocument, MemoryPlan};
use crate::search::report::{AutoReport, CandidateRow};
use crate::simulate::{Bound, Ideal, SimConfig, SimResult, round3, simulate};
use crate::{Error, ErrorKind, search, verify};
use serde_json::json;

/// How an ONNX model becomes a graph (read only when the graph file is an ONNX model): the
/// command line's `--input-shape`, `--batch`, `--unknown-op-cost`, `--device` and `--costs`.
#[derive(Clone, Debug, Default)]
pub struct OnnxOptions {
    /// `NAME=d0,d1,...`, one per input.
    pub input_shapes: Vec<String>,
    pub batch: Option<u64>,
    pub unknown_op_cost: Option<f64>,
    /// Device profile JSON (docs/cost-model.md).
    pub device: Option<PathBuf>,
    /// Measured times: the Ascend profiler's op summary CSV or a Chrome trace.
    pub costs: Option<PathBuf>,
}

impl OnnxOptions {
    /// The importer's options; reads the device profile and the measured times.
    pub fn import_options(&self) -> Result<ImportOptions, Error> {
        let mut o = ImportOptions::default();
        for s in &self.input_shapes {
            o.add_input_shape(s)?;
        }
        o.batch = self.batch;
        o.unknown_op_cost_us = self.unknown_op_cost;
        if let Some(p) = &self.device {
            o.device = DeviceProfile::from_json_file(p)?;
        }
        if let Some(p) = &self.costs {
            o.measured = Some(Measured::from_file(p)?);
        }
        Ok(o)
    }
}

/// An ONNX file: named `.onnx`, or starting with ModelProto's first field (`ir_version`, tag 0x08).
pub fn is_onnx(path: &Path, bytes: &[u8]) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("onnx")) || bytes.first() == Some(&0x08)
}

/// Imports an ONNX file held in `bytes`; the graph is named after the file's stem.
pub fn import(path: &Path, bytes: Vec<u8>, args: &OnnxOptions) -> Result<Imported, Error> {
    let opts = args.import_options()?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into());
    let file = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    onnx::import_vec(bytes, &stem, &file, &opts)
}

/// Reads a graph file (graph JSON, or ONNX imported with `onnx`) into a builder whose policy,
/// if the file names one, is checked.
pub fn load_builder(path: &Path, onnx: &OnnxOptions) -> Result<ModelBuilder, Error> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read graph file '{}': {e}", path.display())))?;
    let b = if is_onnx(path, &bytes) {
        import(path, bytes, onnx)?.into_builder()?
    } else {
        json::builder_from_slice(&bytes)?
    };
    // The graph layer keeps a policy's text; the table checks it where it was given.
    policy::table::resolve(&b.options)?;
    Ok(b)
}

/// Applies `KEY=VALUE` options (GE's string forms) over `options`, checking the policy after
/// each: the command line's `--option`, the Python package's `options`.
pub fn apply_options(options: &mut Options, assignments: &[String]) -> Result<(), Error> {
    for o in assignments {
        options.set_assignment(o)?;
        policy::table::resolve(options)?;
    }
    Ok(())
}

/// Loads the graph and applies the given options over the file's own.
pub fn load_with_options(path: &Path, options: &[String], onnx: &OnnxOptions) -> Result<Model, Error> {
    let mut b = load_builder(path, onnx)?;
    apply_options(&mut b.options, options)?;
    b.build()
}

/// Builds graph JSON text with the given options over the file's own.
pub fn model_from_json(bytes: &[u8], options: &[String]) -> Result<Model, Error> {
    model_from_builder(json::builder_from_slice(bytes)?, options)
}

/// Builds a loaded graph with the given options over its own (`export` reads the importer's
/// graph this way).
pub fn model_from_builder(mut b: ModelBuilder, options: &[String]) -> Result<Model, Error> {
    policy::table::resolve(&b.options)?;
    apply_options(&mut b.options, options)?;
    b.build()
}

/// GE's option names that [`Options::canonical_key`] accepts besides [`OPTION_KEYS`] (a test
/// keeps the two in step).
pub const GE_OPTION_NAMES: &[&str] = &[
    "ge.enableSingleStream",
    "ge.streamMaxParallelNum",
    "ge.hcomParallel",
    "ge.event",
    "ge.exec.memoryOptimizationPolicy",
    "ge.autoMultistreamParallelMode",
    "ENABLE_DYNAMIC_SHAPE_MULTI_STREAM",
];

/// Levenshtein distance over characters, ASCII case folded.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The known option name closest to `key`, when it is close enough to be a typo: at most a
/// third of the longer name's characters differ (at least one may).
pub fn closest_option(key: &str) -> Option<&'static str> {
    OPTION_KEYS
        .iter()
        .chain(GE_OPTION_NAMES)
        .map(|k| (distance(key, k), *k))
        .filter(|(d, k)| *d <= (key.chars().count().max(k.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// What every command compiles with, resolved here at the edge: the graph, its options (the
/// file's, then the front end's) and the task limits (the options', then the device's).
pub struct Inputs {
    pub model: Model,
    pub options: Options,
    pub limits: TaskLimits,
}

impl Inputs {
    pub fn load(path: &Path, options: &[String], onnx: &OnnxOptions) -> Result<Inputs, Error> {
        Inputs::of(load_with_options(path, options, onnx)?)
    }

    /// A model whose options are final: the task limits resolved from them.
    pub fn of(model: Model) -> Result<Inputs, Error> {
        let options = model.options.clone();
        let limits = driver::resolve_task_limits(&options)?;
        Ok(Inputs { model, options, limits })
    }

    /// The pipeline up to `stage` through the one driver, `auto` decided under `sim`; with
    /// `costs`, the report also says what the policy's bounds cost (for commands that print it).
    pub fn compile(&self, stage: Stage, sim: SimConfig, costs: bool) -> Result<Compiled, Error> {
        if costs {
            return search::run_with_costs(&self.model, self.options.clone(), self.limits, stage, sim);
        }
        let mut s = search::session(&self.model, self.options.clone(), self.limits, sim);
        s.run_to(stage)?;
        s.into_compiled()
    }

    /// The graph for one entry of a `--policies` list: a peer baseline (`xla`, `nimble`,
    /// `opara`, `ort`, `trtllm[:N]`, `trtllm-cost[:N]`) or `policy=NAME` over the other options.
    pub fn load_policy(
        path: &Path,
        options: &[String],
        onnx: &OnnxOptions,
        policy: &str,
    ) -> Result<(Inputs, Option<Peer>), Error> {
        if let Some(peer) = Peer::parse(policy) {
            return Ok((Inputs::load(path, options, onnx)?, Some(peer)));
        }
        let mut opts = options.to_vec();
        opts.push(format!("policy={policy}"));
        // A name that is neither a policy nor a peer: the error lists the peers' spellings too.
        if let Err(e) = policy::table::parse(policy) {
            return Err(Error::new(e.kind, format!("{} (or a peer baseline: {})", e.message, baseline::SPELLINGS)));
        }
        Ok((Inputs::load(path, &opts, onnx)?, None))
    }

    /// [`Self::compile`] of the whole pipeline, or the peer's baseline allocation.
    pub fn compile_as(&self, peer: Option<Peer>, sim: SimConfig, costs: bool) -> Result<Compiled, Error> {
        match peer {
            Some(p) => baseline::allocate(&self.model, p, &self.options, self.limits),
            None => self.compile(Stage::All, sim, costs),
        }
    }
}

/// The checker's report as allocation JSON's `verify` object (`verify=true`): the verdict,
/// the dependencies proven ordered, the syncs against the edge minimum for this assignment
/// (the fewest syncs each joining the ends of one dependency), and the graph's width with an
/// antichain as witness.
pub fn verify_json(report: &verify::Report) -> serde_json::Value {
    let mut v = report.to_json();
    if let serde_json::Value::Object(m) = &mut v {
        for k in ["format", "version", "graph"] {
            m.remove(k);
        }
    }
    v
}

/// The allocation document `stream-alloc allocate -o OUT` writes for `compiled` (with the
/// policy's report, the checker's `verify` object under `verify=true`, and the stage counts of
/// a run from a later stage), and the checker's report when `verify=true` ran it.
pub fn allocation_document(
    inputs: &Inputs,
    compiled: &Compiled,
    trace: Option<&StepTrace>,
) -> (String, Option<verify::Report>) {
    let model = &inputs.model;
    let (alloc, report) = (&compiled.alloc, &compiled.report);
    // The memory plan, once, for the checker and the document.
    let plan = compiled.memory(model);
    // A logical stage has no syncs yet, so there is nothing to prove.
    let checked = (inputs.options.verify && alloc.stage() != Stage::Logical)
        .then(|| verify::check(model, &alloc.document(model, plan).to_value()));
    let mut doc = alloc.document(model, plan);
    if let Some(r) = report {
        doc = doc.with("policy", r.to_json());
    }
    if let Some(c) = &checked {
        doc = doc.with("verify", verify_json(c));
    }
    if let Some(t) = trace {
        doc = doc.with("steps", t.to_json());
    }
    (doc.to_string_pretty(), checked)
}

/// Why `doc` can not be an allocation of `model` at all: another graph's name, most node names
/// unknown, or an error document. One plain message instead of a violation per node.
pub fn foreign(model: &Model, doc: &serde_json::Value) -> Option<String> {
    if let Some(err) = doc.get("error") {
        let code = err.get("code").and_then(|v| v.as_str()).unwrap_or("?");
        let message = err.get("message").and_then(|v| v.as_str()).unwrap_or("");
        return Some(format!("the allocation file is an error document ({code}: {message}), not an allocation"));
    }
    if let Some(g) = doc.get("graph").and_then(|v| v.as_str())
        && g != model.name
    {
        return Some(format!("the allocation was made for graph '{g}', not for '{}'", model.name));
    }
    let known: HashSet<&str> = model.nodes.iter().map(|n| n.name.as_str()).collect();
    let listed: Vec<&str> = doc
        .get("nodes")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter(|n| n.get("inserted").and_then(|v| v.as_bool()) != Some(true))
        .filter_map(|n| n.get("name").and_then(|v| v.as_str()))
        .collect();
    let unknown = listed.iter().filter(|n| !known.contains(*n)).count();
    (unknown * 2 > listed.len()).then(|| {
        format!(
            "{unknown} of the allocation's {} node names are not in graph '{}': the allocation belongs to another graph",
            listed.len(),
            model.name
        )
    })
}

/// The memory plan's peak and the simulated schedule's most live bytes (its lower bound), when
/// the graph gives `out_bytes`.
pub fn simulated_memory(model: &Model, plan: Option<&MemoryPlan>, sim: &SimResult) -> Option<serde_json::Value> {
    let plan = plan?;
    Some(json!({"peak_bytes": plan.peak_bytes, "max_live_bytes": crate::memory::max_live_bytes(model, sim)}))
}

/// makespan / ideal (1 when the graph has no work).
pub fn to_ideal(sim: &SimResult, ideal: &Ideal) -> f64 {
    if ideal.makespan_us > 0.0 { sim.makespan_us / ideal.makespan_us } else { 1.0 }
}

/// `stream-alloc simulate --json`'s report of one allocation: the simulated times, the ideal
/// schedule beside them, the policy's report and the memory the schedule holds.
pub fn simulation_json(
    model: &Model,
    compiled: &Compiled,
    sim: &SimResult,
    ideal: &Ideal,
    cfg: &SimConfig,
) -> serde_json::Value {
    let mut doc = sim.to_json();
    doc["graph"] = json!(model.name);
    doc["ideal_us"] = json!(round3(ideal.makespan_us));
    doc["ratio_to_ideal"] = json!(round3(to_ideal(sim, ideal)));
    doc["arbitration"] = json!(cfg.arbitration.as_str());
    doc["policy"] = compiled.report.as_ref().map_or_else(|| json!({"name": "ge"}), |r| r.to_json());
    if let Some(m) = simulated_memory(model, compiled.memory(model), sim) {
        doc["memory"] = m;
    }
    doc
}

/// The Chrome trace of a simulated schedule (with the live bytes when the graph gives sizes),
/// as `simulate --trace FILE` writes it.
pub fn trace_text(model: &Model, sim: &SimResult) -> String {
    let mut t = serde_json::to_string(&crate::memory::trace_json(model, sim)).expect("JSON values always serialise");
    t.push('\n');
    t
}

/// One row of `compare`: a policy's allocation of a graph, simulated and checked.
#[derive(Clone, Debug)]
pub struct CompareRow {
    pub graph: String,
    pub policy: String,
    /// The candidate `auto` chose (empty for other policies).
    pub chosen: String,
    pub streams: u32,
    pub syncs: usize,
    /// The checker's edge minimum (fewest syncs each joining the ends of one dependency).
    pub min_syncs: Option<usize>,
    pub makespan: f64,
    /// The library's lower bound on any plan ([`crate::simulate::bound`]).
    pub lower_bound: f64,
    /// makespan / lower bound: the plan is within `ratio - 1` of any plan.
    pub ratio: f64,
    /// The ideal schedule's makespan (the same for every policy of a graph).
    pub ideal: f64,
    /// makespan / ideal.
    pub to_ideal: f64,
    /// Arena bytes of the memory plan; `None` when the graph gives no `out_bytes`.
    pub peak: Option<u64>,
    /// The single-stream plan's peak of the graph (what `memory_limit=Nx` multiplies).
    pub single_peak: Option<u64>,
    /// Sync ids (events and notifies) the allocation uses.
    pub event_ids: u32,
    /// auto's candidate rows, as its report gives them (empty for other policies).
    pub candidates: Vec<CandidateRow>,
}

impl CompareRow {
    /// How far over the bound a plan is, in percent: no plan is faster than `makespan / (1 + x %)`.
    pub fn within(&self) -> f64 {
        // A plan at the bound reads 0, not the -0.0 of rounding (a real shortfall stays visible).
        let x = (self.ratio - 1.0) * 100.0;
        if x > -1e-6 { x.max(0.0) } else { x }
    }

    /// The row as `compare --format json` writes it (times rounded to the nanosecond).
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = json!({
            "graph": self.graph, "policy": self.policy, "chosen": self.chosen, "streams": self.streams,
            "syncs": self.syncs, "edge_min_syncs": self.min_syncs, "makespan_us": round3(self.makespan),
            "lower_bound_us": round3(self.lower_bound), "ratio": round3(self.ratio),
            "within_pct_of_any_plan": round3(self.within()),
            "ideal_us": round3(self.ideal), "ratio_to_ideal": round3(self.to_ideal),
            "event_ids": self.event_ids,
        });
        if let Some(p) = self.peak {
            v["peak_bytes"] = json!(p);
        }
        if let (Some(p), Some(s)) = (self.peak, self.single_peak) {
            v["single_stream_peak_bytes"] = json!(s);
            v["peak_to_single"] = json!(round3(p as f64 / s.max(1) as f64));
        }
        if !self.candidates.is_empty() {
            v["candidates"] = json!(self.candidates);
        }
        v
    }
}

/// The compare row of `policy` on `inputs` (loaded for it, [`Inputs::load_policy`]): compiled,
/// simulated under `cfg` and checked, beside the graph's ideal schedule and lower bound; a
/// checker violation fails the row.
pub fn compare_row(
    inputs: &Inputs,
    peer: Option<Peer>,
    policy: &str,
    cfg: &SimConfig,
    (ideal, bound): (&Ideal, &Bound),
    single_peak: Option<u64>,
) -> Result<CompareRow, Error> {
    let compiled = inputs.compile_as(peer, *cfg, false)?;
    let model = &inputs.model;
    let (alloc, report, plan) = (&compiled.alloc, &compiled.report, compiled.memory(model));
    let sim = simulate(model, alloc, cfg)?;
    let check = verify::check(model, &alloc.document(model, plan).to_value());
    if let Some(v) = check.violations.first() {
        return Err(crate::err!(Failed, "{} policy {policy}: checker rule {}: {}", model.name, v.rule, v.message));
    }
    let (chosen, candidates) = match report.as_ref().and_then(|r| r.section::<AutoReport>()) {
        Some(auto) => (auto.chosen.clone(), auto.candidates.clone()),
        None => (String::new(), Vec::new()),
    };
    Ok(CompareRow {
        graph: model.name.clone(),
        policy: policy.to_string(),
        chosen,
        streams: sim.streams,
        syncs: sim.syncs,
        min_syncs: check.edge_sync_minimum,
        makespan: sim.makespan_us,
        lower_bound: bound.lower_bound_us,
        ratio: if bound.lower_bound_us > 0.0 { sim.makespan_us / bound.lower_bound_us } else { 1.0 },
        ideal: ideal.makespan_us,
        to_ideal: if ideal.makespan_us > 0.0 { sim.makespan_us / ideal.makespan_us } else { 1.0 },
        peak: plan.map(|p| p.peak_bytes),
        single_peak,
        event_ids: crate::search::sync_ids(alloc),
        candidates,
    })
}

/// Checks a `--policies` entry: a policy of the table or a peer baseline.
pub fn check_policy_name(p: &str) -> Result<(), Error> {
    if Peer::parse(p).is_none()
        && let Err(e) = policy::table::parse(p)
    {
        return Err(Error::new(e.kind, format!("{} (or a peer baseline: {})", e.message, baseline::SPELLINGS)));
    }
    Ok(())
}

/// The plan ONNX Runtime's partition takes from an allocation: the root graph's nodes in the
/// allocation's execution order, each with its physical stream (none for a task-less node).
pub fn ort_plan(model: &Model, alloc: &crate::compile::Allocation) -> onnx::ort::Plan {
    let order = alloc.order(model);
    let root = order.iter().filter(|&&id| model.graph_label(model.nodes[id].graph).is_empty());
    onnx::ort::plan_in_order(root.map(|&id| (model.nodes[id].name.as_str(), alloc.stream()[id].map(|s| s.0))))
}

/// The ONNX model at `path` as ONNX Runtime builds it, imported with `onnx`, and its file name:
/// ORT's node names come from the file itself, so a non-ONNX input is refused with `why`.
pub fn ort_model(path: &Path, onnx: &OnnxOptions, why: &str) -> Result<(onnx::ort::OrtGraph, Imported, String), Error> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read graph file '{}': {e}", path.display())))?;
    if !is_onnx(path, &bytes) {
        return Err(Error::new(ErrorKind::Format, format!("'{}' is not an ONNX model: {why}", path.display())));
    }
    let what = path.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let graph = onnx::ort::OrtGraph::of_model(&bytes, &what)?;
    let imported = import(path, bytes, onnx)?;
    Ok((graph, imported, what))
}

/// ONNX Runtime's stream partition (`export --to ort`) of an allocation of the ONNX model at
/// `path`, imported with `onnx`: the model is read again for ORT's node names and the nodes the
/// importer folded away.
pub fn ort_partition(
    path: &Path,
    onnx: &OnnxOptions,
    model: &Model,
    alloc: &crate::compile::Allocation,
    device: onnx::ort::Device,
) -> Result<onnx::ort::Partition, Error> {
    let (graph, imported, _) =
        ort_model(path, onnx, "ONNX Runtime's partition names the nodes of the .onnx file ORT loads")?;
    onnx::ort::partition_of_plan(&graph, &imported.root_nodes, &ort_plan(model, alloc), device)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ge_names_are_the_ones_options_accepts() {
        for k in OPTION_KEYS.iter().chain(GE_OPTION_NAMES) {
            assert!(Options::canonical_key(k).is_some(), "{k}");
        }
    }
}
