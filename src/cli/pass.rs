//! `stream-alloc pass`: runs exactly the named passes on a graph as given.

use std::path::PathBuf;

use clap::Args;

use super::{EXIT_ALLOC_ERROR, EXIT_OK, out};
use stream_alloc::compile::allocation::error_json_string;
use stream_alloc::compile::{TaskLimits, passes};
use stream_alloc::driver;
use stream_alloc::frontend::load_with_options;
use stream_alloc::memory::AllocationDocument;

/// Run named passes and steps (GE names such as AssignByDependencyPass or OptimizeByRecvEvents,
/// or module names such as by_dependency; sync:NAME for one of the pipeline's sync sequences)
/// in order and write allocation JSON. Pre-assigned node
/// `stream` / `attached_stream_ids` are the starting streams, the graph's `events` the events
/// already present; the file's `partition` is used when present. Logical passes come first,
/// then the steps after logical allocation, each as GE runs it; with steps, the JSON's `steps`
/// object gives GE's stream, event and notify counts after each.
#[derive(Args, Debug)]
#[command(after_help = passes::help_text())]
pub struct PassArgs {
    /// Comma-separated pass names, run in this order.
    pub passes: String,
    /// Graph JSON v1 file, or an ONNX model (.onnx).
    pub graph: PathBuf,
    /// Allocation option KEY=VALUE (as for `allocate`). Repeatable.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    #[command(flatten)]
    pub onnx: super::import::OnnxArgs,
    /// Write allocation JSON (or the error document) here instead of standard output.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
}

pub fn run(args: PassArgs) -> i32 {
    let result = passes::parse_list(&args.passes).and_then(|list| {
        let model = load_with_options(&args.graph, &args.options, &args.onnx.source())?;
        let options = model.options.clone();
        // Only the split needs task limits: a list of logical passes never asks the device.
        let limits = if list.iter().any(|p| matches!(p.kind, passes::PassKind::Step(..))) {
            driver::resolve_task_limits(&options)?
        } else {
            TaskLimits::from_options(&options)
        };
        // A pass list runs outside any session: its allocation is planned here, once.
        let (alloc, trace) = passes::run_list(&model, &options, limits, &list)?;
        let Some(trace) = trace else { return Ok(alloc.to_json_string_new_plan(&model)) };
        let mut doc = alloc.to_json_new_plan(&model);
        doc["steps"] = trace.to_json();
        let mut text = serde_json::to_string_pretty(&doc).expect("JSON values always serialise");
        text.push('\n');
        Ok(text)
    });
    let (text, code) = match result {
        Ok(text) => (text, EXIT_OK),
        Err(e) => {
            out::error(&e);
            (error_json_string(&e), EXIT_ALLOC_ERROR)
        }
    };
    match out::emit(args.output.as_deref(), &text) {
        Ok(()) => code,
        Err(c) => c,
    }
}
