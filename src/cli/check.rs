//! `stream-alloc check GRAPH ALLOC`: the independent checker on an allocation JSON file.

use std::path::PathBuf;

use clap::Args;

use super::{EXIT_ALLOC_ERROR, EXIT_OK};
use stream_alloc::verify;

/// Prove that an allocation JSON file obeys the rules of allocation-json.md for its graph.
#[derive(Args, Debug)]
#[command(after_help = "Writes a JSON report to standard output. Exit codes: 0 every rule holds; \
1 a rule is broken (the report names the edge or sync at fault) or a file can not be read; 2 bad usage.")]
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
}

pub fn run(args: CheckArgs) -> i32 {
    let model = match super::allocate::load_with_options(&args.graph, &args.options) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_ALLOC_ERROR;
        }
    };
    let doc: serde_json::Value = match std::fs::read(&args.allocation)
        .map_err(|e| format!("cannot read allocation file '{}': {e}", args.allocation.display()))
        .and_then(|b| serde_json::from_slice(&b).map_err(|e| format!("malformed allocation JSON: {e}")))
    {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_ALLOC_ERROR;
        }
    };
    let report = verify::check(&model, &doc);
    let text = serde_json::to_string_pretty(&report.to_json()).expect("JSON values always serialise");
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{text}").and_then(|_| out.flush()).is_err() {
            return EXIT_ALLOC_ERROR;
        }
    }
    for v in &report.violations {
        eprintln!("rule {}: {}", v.rule, v.message);
    }
    if report.ok() { EXIT_OK } else { EXIT_ALLOC_ERROR }
}
