//! `stream-alloc pass`: runs exactly the named passes on a graph as given.

use std::path::PathBuf;

use clap::Args;

use super::allocate::load_with_options;
use super::{EXIT_ALLOC_ERROR, EXIT_OK, out};
use stream_alloc::compile::allocation::error_json_string;
use stream_alloc::compile::{Allocation, Mode, passes};

/// Run named logical passes (GE names such as AssignByDependencyPass, or module names such as
/// by_dependency) in order and write allocation JSON (stage logical). Pre-assigned node
/// `stream` ids are the starting streams; the file's `partition` is used when present.
#[derive(Args, Debug)]
#[command(after_help = passes::help_text())]
pub struct PassArgs {
    /// Comma-separated pass names, run in this order.
    pub passes: String,
    /// Graph JSON v1 file.
    pub graph: PathBuf,
    /// Allocation option KEY=VALUE (as for `allocate`). Repeatable.
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Write allocation JSON (or the error document) here instead of standard output.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
}

pub fn run(args: PassArgs) -> i32 {
    let result = passes::parse_list(&args.passes).and_then(|list| {
        let model = load_with_options(&args.graph, &args.options)?;
        let options = model.options.clone();
        let st = passes::run_named(&model, &options, &list)?;
        let main = st.main_stream_num.unwrap_or(st.next_stream);
        let attached_count = st.next_stream.saturating_sub(main);
        let mode = Mode::of(&model, &options).name();
        let alloc = Allocation::from_logical(mode, options.event, st.node_stream, main, st.attached, attached_count);
        Ok(alloc.to_json_string(&model))
    });
    let (text, code) = match result {
        Ok(text) => (text, EXIT_OK),
        Err(e) => {
            out::error(&e);
            (error_json_string(&e), EXIT_ALLOC_ERROR)
        }
    };
    match &args.output {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &text) {
                out::error(format_args!("cannot write '{}': {e}", path.display()));
                return EXIT_ALLOC_ERROR;
            }
        }
        None => {
            if let Err(c) = out::print(&text) {
                return c;
            }
        }
    }
    code
}
