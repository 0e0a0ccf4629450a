//! `stream-alloc allocate`.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};

use super::import::OnnxArgs;
use super::{EXIT_ALLOC_ERROR, EXIT_OK, EXIT_USAGE, out};
use stream_alloc::compile::allocation::error_json_string;
use stream_alloc::compile::policy::{self, PolicyReport};
use stream_alloc::compile::{Allocation, Stage};
use stream_alloc::driver::Compiled;
pub use stream_alloc::frontend::{Inputs, model_from_builder};
use stream_alloc::graph::Model;
use stream_alloc::simulate::SimConfig;
use stream_alloc::{Error, frontend, search, verify};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// A short human summary only (the default without -o).
    Text,
    /// Allocation JSON on standard output, the summary on standard error.
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StageArg {
    /// Logical stream ids only.
    Logical,
    /// Logical streams and synchronisation.
    Sync,
    /// Physical split and activation.
    Split,
    /// The whole pipeline.
    All,
}

impl From<StageArg> for Stage {
    fn from(s: StageArg) -> Stage {
        match s {
            StageArg::Logical => Stage::Logical,
            StageArg::Sync => Stage::Sync,
            StageArg::Split => Stage::Split,
            StageArg::All => Stage::All,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FromArg {
    /// Take the logical streams the graph gives (node `stream`, `attached_stream_ids`); compute
    /// the syncs (keeping the graph's `events`), the split and the rest.
    Sync,
    /// Take the logical streams and the events the graph gives; compute the split and the rest.
    Split,
}

impl From<FromArg> for Stage {
    fn from(f: FromArg) -> Stage {
        match f {
            FromArg::Sync => Stage::Sync,
            FromArg::Split => Stage::Split,
        }
    }
}

/// Allocate streams and syncs for a graph and write allocation JSON.
#[derive(Args, Debug)]
#[command(after_help = options_help())]
pub struct AllocateArgs {
    /// Graph JSON v1 file, or an ONNX model (.onnx).
    pub graph: PathBuf,
    /// Write allocation JSON (or the error document) to this file.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Allocation option KEY=VALUE in GE's string form; overrides the graph file's `options`.
    /// Repeatable. See the list below.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Run the pipeline up to this stage.
    #[arg(long, value_enum, default_value = "all")]
    pub stage: StageArg,
    /// Start the pipeline at this stage, taking what comes before it from the graph (its
    /// streams; from split also its events). The JSON then carries GE's counts before and
    /// after each stage run (`steps`).
    #[arg(long, value_enum)]
    pub from: Option<FromArg>,
    /// Where the result goes when there is no -o.
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// Do not print the human summary.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub onnx: OnnxArgs,
}

/// A graph and an allocation of it written before (`dot`, `replay`); without one, the graph
/// is allocated with the `--option` values.
#[derive(Args, Debug)]
pub struct PlanArgs {
    /// Graph JSON v1 file, or an ONNX model (.onnx).
    pub graph: PathBuf,
    /// Allocation JSON v1 file of this graph (default: allocate the graph with --option).
    pub allocation: Option<PathBuf>,
    /// Allocation option KEY=VALUE (as for `allocate`); repeatable.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    #[command(flatten)]
    pub onnx: OnnxArgs,
}

impl PlanArgs {
    /// The graph with the options applied.
    pub fn load(&self) -> Result<Inputs, Error> {
        Inputs::load(&self.graph, &self.options, &self.onnx.source())
    }
}

/// The options' help, the policies listed from the policy table.
pub fn options_help() -> String {
    OPTIONS_HELP.replacen("POLICIES", &policy::table::usage(), 1)
}

/// [`options_help`] before the policy table fills in its line.
const OPTIONS_HELP: &str = "\
Options (--option KEY=VALUE; GE's option names are accepted too):
  enable_single_stream=true|false       ge.enableSingleStream: one stream for the whole graph
  max_parallel_num=ENGINE:N[,ENGINE:N]  ge.streamMaxParallelNum: new streams per engine (default 1)
  hcom_parallel=0|1                     ge.hcomParallel: AllReduce runs in parallel (E10006 otherwise)
  event=event|notify                    ge.event: what cross-stream syncs are made of
  memory_priority=true|false            ge.exec.memoryOptimizationPolicy=MemoryPriority
  ac_parallel_enable=\"\"|0|1             dynamic graphs: AICPU may get its own stream
  dynamic_multi_stream=true|false       ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1
  auto_multistream_parallel_mode=MODE   cv, LoadBalance[:N], MainStream:N, WeightedLoadBalance:N (N in 1..64)
  max_task_count=N, max_huge_task_count=N   per-stream task limits (normal, huge)
  unlimited_depth=true|false            the device needs no split
  policy=POLICIES
  max_streams=N|unlimited               policy streams of every policy but ge (default 64); more are merged
  max_events=N|unlimited                sync ids of every policy but ge (default 1024); more merge streams
  compat=ge                             reproduce GE's results exactly in every stage
  event_reuse=lifetime|never            lifetime: reuse sync ids whose lifetimes do not overlap;
                                        never: one id per sync even over max_events (default:
                                        a policy over max_events reuses before it cuts streams)
  verify=true|false                     run the checker on the result; `allocate` reports it
                                        (summary line, `verify` object in the JSON)
  memory_limit=BYTES[K|M|G|KiB|MiB|GiB]|Nx
                                        the memory plan's arena at most (Nx: N times the single-stream
                                        plan's peak; also max_memory, ge.graphMemoryMaxSize): auto keeps
                                        the fastest plan within it, other policies reorder to fit or
                                        fail with SA2003
  execution_order=critical-path|memory  memory: each stream's order keeps live bytes low (exact
                                        where small enough; docs/memory.md)
  next_stream=N                         `pass`: GE's pass context, the first stream id a pass or step
                                        hands out (default: one past the ids the graph gives)
An unknown option name is bad usage (exit 2, with the closest name as a tip); an invalid value
of a known option is GE's error E10001 naming the option and the value (exit 1).

Exit codes: 0 success; 1 allocation error (the JSON error document is written); 2 bad usage
(nothing is written, not even with -o).";

/// Streams listed one by one up to this many; above it, the largest few and a histogram.
const LIST_STREAMS: usize = 16;

/// `nodes per stream`, short whatever the stream count: every stream up to [`LIST_STREAMS`],
/// else min / median / max, the largest streams and a histogram of stream sizes.
fn nodes_per_stream_lines(per: &[usize], unassigned: usize) -> String {
    if per.len() <= LIST_STREAMS {
        let list: Vec<String> = per.iter().enumerate().map(|(i, n)| format!("{i}:{n}")).collect();
        return format!("  nodes per stream: {} (no stream: {unassigned})\n", list.join(" "));
    }
    let mut sorted = per.to_vec();
    sorted.sort_unstable();
    let median = sorted[sorted.len() / 2];
    let mut by_size: Vec<(usize, usize)> = per.iter().copied().enumerate().collect();
    by_size.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let largest: Vec<String> = by_size.iter().take(8).map(|(i, n)| format!("{i}:{n}")).collect();
    let mut s = format!(
        "  nodes per stream: {} streams, min {}, median {median}, max {} (no stream: {unassigned})\n",
        per.len(),
        sorted[0],
        sorted[sorted.len() - 1]
    );
    s.push_str(&format!("    largest: {} …\n", largest.join(" ")));
    // Decades: 0, 1, 2-9, 10-99, ...
    let mut buckets: Vec<(String, usize)> = Vec::new();
    for &n in &sorted {
        let label = match n {
            0 | 1 => n.to_string(),
            _ => {
                let lo = 10usize.pow(n.ilog10());
                format!("{}-{}", lo.max(2), lo * 10 - 1)
            }
        };
        match buckets.last_mut() {
            Some((l, c)) if *l == label => *c += 1,
            _ => buckets.push((label, 1)),
        }
    }
    let hist: Vec<String> =
        buckets.iter().map(|(l, c)| format!("{c} of {l} node{}", if l == "1" { "" } else { "s" })).collect();
    s.push_str(&format!("    streams by size: {}\n", hist.join(", ")));
    s
}

/// The policy report on one line: scalars as they are, lists and objects by their size (the
/// JSON output has them whole).
pub fn policy_line(report: &PolicyReport) -> String {
    use serde_json::Value;
    let mut parts = vec![report.name.clone()];
    let doc = report.to_json();
    for (k, v) in doc.as_object().into_iter().flatten().filter(|(k, _)| *k != "name") {
        let v = match v {
            Value::String(s) => s.clone(),
            Value::Array(a) => format!("{} entries", a.len()),
            Value::Object(o) => format!("{} fields", o.len()),
            other => other.to_string(),
        };
        parts.push(format!("{k} {v}"));
    }
    format!("  policy: {}\n", parts.join("; "))
}

/// The checker's findings on one line.
fn verify_line(report: &verify::Report, syncs: u32) -> String {
    let opt = |x: Option<usize>| x.map_or_else(|| "-".to_string(), |v| v.to_string());
    let mut witness: Vec<&str> = report.antichain.iter().take(3).map(String::as_str).collect();
    if report.antichain.len() > witness.len() {
        witness.push("…");
    }
    format!(
        "  verify: {}; {} edges ordered; syncs {syncs}, edge minimum {}; width {}, antichain {}\n",
        if report.ok() { "ok" } else { "FAILED" },
        report.edges_checked,
        opt(report.edge_sync_minimum),
        opt(report.width),
        witness.join(", ")
    )
}

fn summary(model: &Model, alloc: &Allocation, elapsed: std::time::Duration) -> String {
    let mut s = format!(
        "{}: {} nodes, mode {}, stage {}\n  streams: {} logical, {} physical, {} attached\n  {}s: {}\n",
        model.name,
        model.nodes.len(),
        alloc.mode(),
        alloc.stage().as_str(),
        alloc.logical_count(),
        alloc.physical_count(),
        alloc.attached_count(),
        alloc.sync_kind().as_str(),
        alloc.sync_count()
    );
    let unassigned = alloc.stream().iter().filter(|s| s.is_none()).count();
    s.push_str(&nodes_per_stream_lines(&alloc.nodes_per_stream(), unassigned));
    s.push_str(&format!("  time: {:.3} ms\n", elapsed.as_secs_f64() * 1e3));
    s
}

pub fn run(args: AllocateArgs) -> i32 {
    if args.output.is_some() && args.format == Some(OutputFormat::Json) {
        out::error("--format json writes to standard output; it cannot be combined with -o");
        return EXIT_USAGE;
    }
    if let Some(from) = args.from {
        if Stage::from(args.stage) < Stage::from(from) {
            out::error(format_args!(
                "--from {} starts after stage {}: --stage must be {} or later",
                Stage::from(from).as_str(),
                Stage::from(args.stage).as_str(),
                Stage::from(from).as_str()
            ));
            return EXIT_USAGE;
        }
    }
    let json_to_stdout = args.output.is_none() && args.format == Some(OutputFormat::Json);
    let start = Instant::now();
    // A policy other than GE's also reports why it chose what it chose (allocation JSON's
    // `policy` object); a run from a later stage reports GE's counts of each stage.
    let mut trace = None;
    let result = Inputs::load(&args.graph, &args.options, &args.onnx.source()).and_then(|inputs| match args.from {
        Some(from) => {
            let (c, t) = search::fit::run_from(
                &inputs.model,
                inputs.options.clone(),
                inputs.limits,
                from.into(),
                args.stage.into(),
            )?;
            trace = Some(t);
            Ok((inputs, c))
        }
        None => {
            let c = inputs.compile(args.stage.into(), SimConfig::default(), true)?;
            Ok((inputs, c))
        }
    });
    let elapsed = start.elapsed();
    // The document (with its memory plan) is made only when written, or checked (`verify`).
    let wanted = |inputs: &Inputs| args.output.is_some() || json_to_stdout || inputs.options.verify;
    let (text, checked, code) = match &result {
        Ok((inputs, _)) if !wanted(inputs) => (String::new(), None, EXIT_OK),
        Ok((inputs, c)) => {
            let (text, checked) = frontend::allocation_document(inputs, c, trace.as_ref());
            (text, checked, EXIT_OK)
        }
        Err(e) => (error_json_string(e), None, EXIT_ALLOC_ERROR),
    };
    if let Some(path) = &args.output {
        if let Err(c) = out::write_file(path, &text) {
            return c;
        }
    } else if json_to_stdout && let Err(c) = out::print(&text) {
        return c;
    }
    match &result {
        Ok((inputs, Compiled { alloc, report, .. })) => {
            if !args.quiet {
                let mut s = summary(&inputs.model, alloc, elapsed);
                if let Some(r) = report {
                    s.push_str(&policy_line(r));
                }
                if let Some(c) = &checked {
                    s.push_str(&verify_line(c, alloc.document_sync_count()));
                } else if inputs.options.verify {
                    s.push_str("  verify: nothing to check at stage logical\n");
                }
                if json_to_stdout {
                    out::eprint(&s);
                } else if let Err(c) = out::print(&s) {
                    return c;
                }
            }
        }
        Err(e) => out::error(e),
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_streams_summarise_in_a_few_short_lines() {
        let mut per = vec![1usize; 200];
        per[30] = 162;
        per[16] = 110;
        per[7] = 12;
        per[8] = 0;
        let s = nodes_per_stream_lines(&per, 325);
        assert!(s.lines().count() <= 3 && s.lines().all(|l| l.len() < 160), "{s}");
        assert!(s.contains("200 streams, min 0, median 1, max 162 (no stream: 325)"), "{s}");
        assert!(s.contains("largest: 30:162 16:110 7:12 0:1"), "{s}");
        assert!(
            s.contains("streams by size: 1 of 0 nodes, 196 of 1 node, 1 of 10-99 nodes, 2 of 100-999 nodes"),
            "{s}"
        );
        assert_eq!(nodes_per_stream_lines(&[2, 451], 3), "  nodes per stream: 0:2 1:451 (no stream: 3)\n");
    }
}
