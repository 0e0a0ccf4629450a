//! `stream-alloc compare`: policies side by side under the simulator.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde_json::Value;

use super::allocate::Inputs;
use super::plot;
use super::{EXIT_ALLOC_ERROR, EXIT_OK, EXIT_USAGE, out};
use stream_alloc::Error;
use stream_alloc::baseline::Peer;
use stream_alloc::frontend::{CompareRow, OnnxOptions, compare_row};
use stream_alloc::simulate::{Bound, Ideal, SimConfig, bound, ideal};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TableFormat {
    Markdown,
    Csv,
    Json,
}

/// Compare policies on a graph or every graph of a directory: streams, syncs, makespan, and the
/// ideal schedule's makespan (unlimited streams, free syncs) and the lower bound beside it.
#[derive(Args, Debug)]
#[command(after_help = "A graph file that does not load, or a policy that fails on a graph, is reported on standard \
error and left out of the table; the others are compared, and the exit code is 1 when anything failed.")]
pub struct CompareArgs {
    /// Graph JSON v1 file or ONNX model, or a directory of them (*.json, *.onnx).
    pub path: PathBuf,
    /// Comma-separated policies: the project's, and the peers' baselines `xla`, `nimble`,
    /// `opara`, `ort`, `trtllm[:N]`, `trtllm-cost[:N]` (docs/peers.md).
    #[arg(long, default_value = "ge,per-operator,min-streams,budget:8,list,auto")]
    pub policies: String,
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: TableFormat,
    /// Allocation option KEY=VALUE applied to every run; repeatable.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    #[command(flatten)]
    pub onnx: super::import::OnnxArgs,
    #[command(flatten)]
    pub device: super::device::DeviceArgs,
    /// Also draw each graph's plans (every row and auto's candidates) as makespan / ideal
    /// against peak / single-stream peak, the Pareto front marked, into this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
}

/// A row of the table: the front ends' shared compare row.
type Row = CompareRow;

fn graphs(path: &Path) -> Result<Vec<PathBuf>, String> {
    if path.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| format!("cannot read directory '{}': {e}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "json" || e == "onnx"))
            .collect();
        v.sort();
        Ok(v)
    } else {
        Ok(vec![path.to_path_buf()])
    }
}

fn row(
    path: &Path,
    options: &[String],
    onnx: &OnnxOptions,
    policy: &str,
    cfg: &SimConfig,
    (ideal, bound): (&Ideal, &Bound),
    single_peak: Option<u64>,
) -> Result<Row, Error> {
    let (inputs, peer) = Inputs::load_policy(path, options, onnx, policy)?;
    compare_row(&inputs, peer, policy, cfg, (ideal, bound), single_peak)
}

/// Every plan of every graph for the plot: the rows, and auto's candidates that made a plan.
fn plot_points(rows: &[Row]) -> Vec<plot::Graph> {
    let mut graphs: Vec<plot::Graph> = Vec::new();
    for r in rows {
        let (Some(peak), Some(single)) = (r.peak, r.single_peak) else { continue };
        if graphs.last().is_none_or(|g| g.name != r.graph) {
            graphs.push(plot::Graph { name: r.graph.clone(), points: Vec::new() });
        }
        let g = graphs.last_mut().expect("pushed above");
        let single = single.max(1) as f64;
        let label = if r.chosen.is_empty() { r.policy.clone() } else { format!("{} → {}", r.policy, r.chosen) };
        g.points.push(plot::Point { label, makespan: r.to_ideal, peak: peak as f64 / single, chosen: false });
        for c in &r.candidates {
            let (Some(plan), Some(p)) = (c.plan.as_ref(), c.peak_bytes) else { continue };
            if r.ideal <= 0.0 {
                continue;
            }
            let label =
                if c.execution_order.is_some() { format!("{} (memory order)", c.policy) } else { c.policy.clone() };
            g.points.push(plot::Point {
                label,
                makespan: plan.makespan_us / r.ideal,
                peak: p as f64 / single,
                chosen: c.policy == r.chosen && c.rejected.is_none(),
            });
        }
    }
    graphs
}

fn geomean(xs: impl Iterator<Item = f64>) -> f64 {
    let (s, n) = xs.fold((0.0, 0usize), |(s, n), x| (s + x.ln(), n + 1));
    if n == 0 { 1.0 } else { (s / n as f64).exp() }
}

fn render(rows: &[Row], policies: &[&str], format: TableFormat) -> String {
    let opt = |x: Option<usize>| x.map_or_else(|| "-".to_string(), |v| v.to_string());
    // Peak memory is a column only when some graph gives sizes, so other tables stay as they were.
    let mem = rows.iter().any(|r| r.peak.is_some());
    let peak = |r: &Row| if mem { r.peak.map_or_else(|| "-".to_string(), |p| p.to_string()) } else { String::new() };
    let lean = |r: &Row| match (r.peak, r.single_peak) {
        (Some(p), Some(s)) if s > 0 => format!("{:.3}", p as f64 / s as f64),
        _ => "-".to_string(),
    };
    match format {
        TableFormat::Json => {
            let v: Vec<Value> = rows.iter().map(CompareRow::to_json).collect();
            let mut s = serde_json::to_string_pretty(&Value::Array(v)).expect("JSON values always serialise");
            s.push('\n');
            s
        }
        TableFormat::Csv => {
            let mut s = String::from(
                "graph,policy,chosen,streams,syncs,edge_min_syncs,makespan_us,lower_bound_us,ratio,ideal_us,ratio_to_ideal,event_ids",
            );
            s.push_str(if mem { ",peak_bytes,peak_to_single\n" } else { "\n" });
            for r in rows {
                s.push_str(&format!(
                    "{},{},{},{},{},{},{:.3},{:.3},{:.3},{:.3},{:.3},{}{}{}{}\n",
                    r.graph,
                    r.policy,
                    r.chosen,
                    r.streams,
                    r.syncs,
                    opt(r.min_syncs),
                    r.makespan,
                    r.lower_bound,
                    r.ratio,
                    r.ideal,
                    r.to_ideal,
                    r.event_ids,
                    if mem { "," } else { "" },
                    peak(r),
                    if mem { format!(",{}", lean(r)) } else { String::new() }
                ));
            }
            s
        }
        TableFormat::Markdown => {
            let mut s = String::from(if mem {
                "| graph | policy | streams | syncs | edge-min syncs | event ids | makespan us | ideal us | lower bound us | makespan / ideal | makespan / bound | within % of any plan | peak bytes | peak / single |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
            } else {
                "| graph | policy | streams | syncs | edge-min syncs | event ids | makespan us | ideal us | lower bound us | makespan / ideal | makespan / bound | within % of any plan |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
            });
            for r in rows {
                let policy =
                    if r.chosen.is_empty() { r.policy.clone() } else { format!("{} → {}", r.policy, r.chosen) };
                s.push_str(&format!(
                    "| {} | {} | {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} |{}\n",
                    r.graph,
                    policy,
                    r.streams,
                    r.syncs,
                    opt(r.min_syncs),
                    r.event_ids,
                    r.makespan,
                    r.ideal,
                    r.lower_bound,
                    r.to_ideal,
                    r.ratio,
                    r.within(),
                    if mem { format!(" {} | {} |", peak(r), lean(r)) } else { String::new() }
                ));
            }
            s.push_str(
                "\n| policy | geometric mean of makespan / ideal | worst makespan / ideal | geometric mean of makespan / bound |\n|---|---:|---:|---:|\n",
            );
            for p in policies {
                let of = || rows.iter().filter(|r| r.policy == *p);
                let worst = of().map(|r| r.to_ideal).reduce(f64::max).unwrap_or(1.0);
                let (g_ideal, g_bound) = (geomean(of().map(|r| r.to_ideal)), geomean(of().map(|r| r.ratio)));
                s.push_str(&format!("| {p} | {g_ideal:.3} | {worst:.3} | {g_bound:.3} |\n"));
            }
            s.push_str(&candidate_table(rows));
            s
        }
    }
}

/// auto's candidates per graph (markdown): every candidate's columns, or why it was rejected.
fn candidate_table(rows: &[Row]) -> String {
    let mut s = String::new();
    let cell = |v: Option<String>| v.unwrap_or_else(|| "-".to_string());
    let mem = rows.iter().any(|r| r.single_peak.is_some());
    for r in rows.iter().filter(|r| !r.candidates.is_empty()) {
        if s.is_empty() {
            s.push_str(if mem {
                "\n### auto's candidates\n\n| graph | candidate | streams | syncs | event ids | makespan us | ideal us | lower bound us | makespan / ideal | peak / single | note |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n"
            } else {
                "\n### auto's candidates\n\n| graph | candidate | streams | syncs | event ids | makespan us | ideal us | lower bound us | makespan / ideal | note |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n"
            });
        }
        for c in &r.candidates {
            let plan = c.plan.as_ref();
            let to_ideal = match plan.map(|p| p.makespan_us) {
                Some(m) if c.ideal_us > 0.0 => format!("{:.3}", m / c.ideal_us),
                Some(_) => "1.000".to_string(),
                None => "-".to_string(),
            };
            let lean = match (c.peak_bytes, r.single_peak) {
                (Some(p), Some(sp)) if mem && sp > 0 => format!(" {:.3} |", p as f64 / sp as f64),
                _ if mem => " - |".to_string(),
                _ => String::new(),
            };
            let order = if c.execution_order.is_some() { " (memory-aware order)" } else { "" };
            let note = match &c.rejected {
                Some(why) => format!("rejected: {}", why.replace('|', "/")),
                None if c.policy == r.chosen => format!("chosen{order}"),
                None => order.trim_start().to_string(),
            };
            s.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {:.3} | {:.3} | {} |{} {} |\n",
                r.graph,
                c.policy,
                cell(plan.map(|p| p.streams.to_string())),
                cell(plan.map(|p| p.syncs.to_string())),
                cell(plan.map(|p| p.event_ids.to_string())),
                cell(plan.map(|p| format!("{:.3}", p.makespan_us))),
                c.ideal_us,
                c.lower_bound_us,
                to_ideal,
                lean,
                note
            ));
        }
    }
    s
}

pub fn run(args: CompareArgs) -> i32 {
    let policies: Vec<&str> = args.policies.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
    if policies.is_empty() {
        out::error("--policies lists no policy");
        return EXIT_USAGE;
    }
    for p in &policies {
        if Peer::parse(p).is_none()
            && let Err(e) = stream_alloc::compile::policy::table::parse(p)
        {
            out::error(format_args!(
                "--policies: {e} (or a peer baseline: xla, nimble, opara, ort, trtllm[:N], trtllm-cost[:N])"
            ));
            return EXIT_USAGE;
        }
    }
    let files = match graphs(&args.path) {
        Ok(f) => f,
        Err(e) => {
            out::error(e);
            return EXIT_ALLOC_ERROR;
        }
    };
    let cfg = match args.device.config(args.onnx.device.as_ref()) {
        Ok(c) => c,
        Err(e) => {
            out::error(e);
            return EXIT_ALLOC_ERROR;
        }
    };
    // A file that does not load, or a policy that fails on it, is reported and skipped; the
    // table has the rest, and the exit code says that something failed.
    let onnx = args.onnx.source();
    let mut rows = Vec::new();
    let mut failed = 0usize;
    for f in &files {
        // The ideal schedule and the bound depend on the graph alone: once per graph.
        let reference = Inputs::load(f, &args.options, &onnx)
            .and_then(|inputs| Ok((ideal(&inputs.model, &cfg)?, bound(&inputs.model, &cfg)?)));
        let (ideal, bound) = match reference {
            Ok(r) => r,
            Err(e) => {
                out::error(format_args!("{}: {e}; skipped", f.display()));
                failed += policies.len();
                continue;
            }
        };
        // The single-stream plan's peak, once per graph, for the peak / single column.
        let single_peak = Inputs::load(f, &args.options, &onnx)
            .and_then(|i| stream_alloc::search::fit::single_stream_peak(&i.model, &i.options, &i.limits))
            .unwrap_or(None);
        for p in &policies {
            match row(f, &args.options, &onnx, p, &cfg, (&ideal, &bound), single_peak) {
                Ok(r) => rows.push(r),
                Err(e) => {
                    out::error(format_args!("{}: policy {p}: {e}", f.display()));
                    failed += 1;
                }
            }
        }
    }
    if let Err(c) = out::print(&render(&rows, &policies, args.format)) {
        return c;
    }
    if let Some(path) = &args.plot
        && let Err(e) = std::fs::write(path, plot::svg(&plot_points(&rows)))
    {
        out::error(format_args!("cannot write '{}': {e}", path.display()));
        return EXIT_ALLOC_ERROR;
    }
    if failed > 0 {
        out::error(format_args!(
            "{failed} of {} runs ({} graph(s) × {} policies) failed; the table has the others",
            files.len() * policies.len(),
            files.len(),
            policies.len()
        ));
        return EXIT_ALLOC_ERROR;
    }
    EXIT_OK
}
