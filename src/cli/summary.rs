//! `stream-alloc summary`: GE's stream allocation summary of a graph (`GetStreamAllocationSummary`)
//! as text (`ToStringInfo()` lines per graph), JSON or DOT.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::allocate::{Inputs, options_help};
use super::{EXIT_ALLOC_ERROR, EXIT_OK, out};
use stream_alloc::compile::allocation::error_json_string;
use stream_alloc::search;
use stream_alloc::simulate::SimConfig;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SummaryFormat {
    /// A header line, then per graph `[name]` and GE's `ToStringInfo()` line per logical stream.
    Text,
    /// Entries with node names, and GE's flattened per-graph lists.
    Json,
    /// The stream graph: one box per logical stream, syncs and activations as edges.
    Dot,
}

/// Print the stream allocation summary of a graph after the whole pipeline.
#[derive(Args, Debug)]
#[command(after_help = options_help())]
pub struct SummaryArgs {
    /// Graph JSON v1 file, or an ONNX model (.onnx).
    pub graph: PathBuf,
    #[arg(long, value_enum, default_value = "text")]
    pub format: SummaryFormat,
    /// Allocation option KEY=VALUE (as for `allocate`). Repeatable.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    #[command(flatten)]
    pub onnx: super::import::OnnxArgs,
}

pub fn run(args: SummaryArgs) -> i32 {
    let result = Inputs::load(&args.graph, &args.options, &args.onnx.source()).and_then(|inputs| {
        let model = &inputs.model;
        let mut s = search::session(model, inputs.options.clone(), inputs.limits, SimConfig::default());
        s.run_all()?;
        let summary = s.summary()?;
        Ok(match args.format {
            SummaryFormat::Text => summary.to_text(),
            SummaryFormat::Json => {
                let mut t = serde_json::to_string_pretty(&summary.to_json(model)).expect("JSON serialises");
                t.push('\n');
                t
            }
            SummaryFormat::Dot => summary.to_dot(),
        })
    });
    match result {
        Ok(text) => match out::print(&text) {
            Ok(()) => EXIT_OK,
            Err(c) => c,
        },
        Err(e) => {
            if args.format == SummaryFormat::Json {
                let _ = out::print(&error_json_string(&e));
            }
            out::error(e);
            EXIT_ALLOC_ERROR
        }
    }
}
