//! `stream-alloc check GRAPH ALLOC`: the independent checker on an allocation JSON file.

use std::path::PathBuf;

use clap::Args;

use super::{EXIT_ALLOC_ERROR, EXIT_OK, out};
use stream_alloc::frontend;
use stream_alloc::verify;

/// Prove that an allocation JSON file obeys the rules of allocation-json.md for its graph.
#[derive(Args, Debug)]
#[command(after_help = "Writes a JSON report to standard output. Exit codes: 0 every rule holds; \
1 a rule is broken (the report names the edge or sync at fault; standard error shows the first 20), \
the allocation belongs to another graph (one error, naming the graph), or a file can not be read; 2 bad usage.")]
pub struct CheckArgs {
    /// Graph JSON v1 file the allocation was made for.
    pub graph: PathBuf,
    /// Allocation JSON v1 file.
    pub allocation: PathBuf,
    /// Option KEY=VALUE over the graph file's `options`, as for `allocate`: `max_task_count=N`
    /// (and `max_huge_task_count=N` for huge streams) checks rule 7, the task limit per
    /// physical stream.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    #[command(flatten)]
    pub onnx: super::import::OnnxArgs,
}

/// Violations printed one per line on standard error; the JSON report has them all.
const SHOW_VIOLATIONS: usize = 20;

pub fn run(args: CheckArgs) -> i32 {
    let model = match stream_alloc::frontend::load_with_options(&args.graph, &args.options, &args.onnx.source()) {
        Ok(m) => m,
        Err(e) => {
            out::error(e);
            return EXIT_ALLOC_ERROR;
        }
    };
    let doc: serde_json::Value = match std::fs::read(&args.allocation)
        .map_err(|e| format!("cannot read allocation file '{}': {e}", args.allocation.display()))
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| format!("malformed allocation JSON: {e}")))
    {
        Ok(d) => d,
        Err(e) => {
            out::error(e);
            return EXIT_ALLOC_ERROR;
        }
    };
    let (report, mismatch) = match frontend::foreign(&model, &doc) {
        Some(m) => {
            let message = format!("{}: {m}", args.allocation.display());
            let violation = verify::Violation { rule: 0, message: message.clone() };
            (
                verify::Report { graph: model.name.clone(), violations: vec![violation], ..Default::default() },
                Some(message),
            )
        }
        None => (verify::check(&model, &doc), None),
    };
    let mut text = serde_json::to_string_pretty(&report.to_json()).expect("JSON values always serialise");
    text.push('\n');
    if let Err(c) = out::print(&text) {
        return c;
    }
    if let Some(m) = mismatch {
        out::error(m);
        return EXIT_ALLOC_ERROR;
    }
    let mut lines = String::new();
    for v in report.violations.iter().take(SHOW_VIOLATIONS) {
        lines.push_str(&format!("rule {}: {}\n", v.rule, v.message));
    }
    if report.violations.len() > SHOW_VIOLATIONS {
        lines.push_str(&format!(
            "… and {} more violation(s); the JSON report lists them all\n",
            report.violations.len() - SHOW_VIOLATIONS
        ));
    }
    out::eprint(&lines);
    if report.ok() { EXIT_OK } else { EXIT_ALLOC_ERROR }
}
