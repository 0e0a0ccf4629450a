//! Command-line front end. Exit codes: 0 success, 1 allocation error (the JSON error document
//! is written where the result would have gone), 2 bad usage (nothing is written, not even with
//! `-o`: the command did not run). Every write goes through [`out`], so a closed standard output
//! never panics.

#![forbid(unsafe_code)]

mod allocate;
mod check;
mod compare;
mod device;
mod dot;
mod export;
mod import;
mod out;
mod pass;
mod plot;
mod replay;
mod simulate;
mod summary;
mod usage;

use clap::{Parser, Subcommand};

pub const EXIT_OK: i32 = 0;
pub const EXIT_ALLOC_ERROR: i32 = 1;
pub const EXIT_USAGE: i32 = 2;

#[derive(Parser, Debug)]
#[command(
    name = "stream-alloc",
    version,
    about = "Stream, event and notify allocation for Ascend Graph Engine graphs",
    long_about = "Assigns the operators of a graph (graph JSON v1) to device streams the way the Ascend \
Graph Engine does, synchronises the streams and splits streams that exceed the device's task limit. \
Writes allocation JSON v1.\n\nFormats: docs/graph-json.md (input) and docs/allocation-json.md (output) in the repository.\n\n\
Exit codes: 0 success; 1 allocation error (the JSON error document is written); 2 bad usage \
(an unknown subcommand, argument or --option name; nothing is written)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    Allocate(allocate::AllocateArgs),
    Check(check::CheckArgs),
    Pass(pass::PassArgs),
    Summary(summary::SummaryArgs),
    Simulate(simulate::SimulateArgs),
    Dot(dot::DotArgs),
    Compare(compare::CompareArgs),
    Import(import::ImportArgs),
    Export(export::ExportArgs),
    Replay(replay::ReplayArgs),
}

impl Command {
    /// The subcommand's name and its `--option` list.
    fn options(&self) -> (&'static str, &[String]) {
        match self {
            Command::Allocate(a) => ("allocate", &a.options),
            Command::Check(_) => ("check", &[]),
            Command::Pass(a) => ("pass", &a.options),
            Command::Summary(a) => ("summary", &a.options),
            Command::Simulate(a) => ("simulate", &a.options),
            Command::Dot(a) => ("dot", &a.plan.options),
            Command::Compare(a) => ("compare", &a.options),
            Command::Import(_) => ("import", &[]),
            Command::Export(a) => ("export", &a.options),
            Command::Replay(a) => ("replay", &a.plan.options),
        }
    }
}

pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return code;
        }
    };
    let (name, options) = cli.command.options();
    if let Err(message) = usage::check_options(name, options) {
        out::error(message);
        return EXIT_USAGE;
    }
    match cli.command {
        Command::Allocate(args) => allocate::run(args),
        Command::Check(args) => check::run(args),
        Command::Pass(args) => pass::run(args),
        Command::Summary(args) => summary::run(args),
        Command::Simulate(args) => simulate::run(args),
        Command::Dot(args) => dot::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Import(args) => import::run(args),
        Command::Export(args) => export::run(args),
        Command::Replay(args) => replay::run(args),
    }
}
