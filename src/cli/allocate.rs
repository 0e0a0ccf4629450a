//! `stream-alloc allocate`.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};

use super::{EXIT_ALLOC_ERROR, EXIT_OK, EXIT_USAGE};
use stream_alloc::compile::allocation::error_json_string;
use stream_alloc::compile::policy::PolicyReport;
use stream_alloc::compile::{Allocation, Stage, TaskLimits};
use stream_alloc::graph::{Model, Options, json};
use stream_alloc::simulate::SimConfig;
use stream_alloc::{Error, ErrorKind, driver, search};

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

/// Allocate streams and syncs for a graph and write allocation JSON.
#[derive(Args, Debug)]
#[command(after_help = OPTIONS_HELP)]
pub struct AllocateArgs {
    /// Graph JSON v1 file.
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
    /// Where the result goes when there is no -o.
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// Do not print the human summary.
    #[arg(short, long)]
    pub quiet: bool,
}

pub const OPTIONS_HELP: &str = "\
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
  policy=ge|single|per-backend|per-operator|min-streams|budget:N|auto
  compat=ge                             reproduce GE's results exactly in every stage
  event_reuse=lifetime                  reuse sync ids whose lifetimes do not overlap
  verify=true|false                     run the checker on the result
  max_memory=BYTES[K|M|G]               policy=auto rejects candidates whose memory plan needs more
An invalid value is error E10001 naming the option and the value.

Exit codes: 0 success; 1 allocation error (the JSON error document is written); 2 bad usage.";

/// Loads the graph and applies command-line options over the file's own.
pub fn load_with_options(path: &PathBuf, options: &[String]) -> Result<Model, Error> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read graph file '{}': {e}", path.display())))?;
    let mut b = json::builder_from_slice(&bytes)?;
    for o in options {
        b.options.set_assignment(o)?;
    }
    b.build()
}

/// What every command compiles with, resolved here at the edge: the graph, its options (the
/// file's, then the command line's) and the task limits (the options', then the device's).
pub struct Inputs {
    pub model: Model,
    pub options: Options,
    pub limits: TaskLimits,
}

impl Inputs {
    pub fn load(path: &PathBuf, options: &[String]) -> Result<Inputs, Error> {
        let model = load_with_options(path, options)?;
        let options = model.options.clone();
        let limits = driver::resolve_task_limits(&options)?;
        Ok(Inputs { model, options, limits })
    }

    /// The pipeline up to `stage` through the one driver, `auto` decided under `sim`.
    pub fn compile(&self, stage: Stage, sim: SimConfig) -> Result<(Allocation, Option<PolicyReport>), Error> {
        search::run(&self.model, self.options.clone(), self.limits, stage, sim)
    }
}

/// Allocation JSON with the policy's report as an extra `policy` object.
pub fn to_json_with_report(model: &Model, alloc: &Allocation, report: &PolicyReport) -> serde_json::Value {
    let mut doc = alloc.to_json(model);
    if let serde_json::Value::Object(m) = &mut doc {
        m.insert("policy".into(), report.to_json());
    }
    doc
}

fn summary(model: &Model, alloc: &Allocation, elapsed: std::time::Duration) -> String {
    let mut s = format!(
        "{}: {} nodes, mode {}, stage {}\n  streams: {} logical, {} physical, {} attached\n  {}s: {}\n",
        model.name,
        model.nodes.len(),
        alloc.mode,
        alloc.stage.as_str(),
        alloc.logical_count,
        alloc.physical_count,
        alloc.attached_count,
        alloc.sync_kind.as_str(),
        alloc.sync_count
    );
    let per = alloc.nodes_per_stream();
    let unassigned = alloc.stream.iter().filter(|s| s.is_none()).count();
    let per: Vec<String> = per.iter().enumerate().map(|(i, n)| format!("{i}:{n}")).collect();
    s.push_str(&format!("  nodes per stream: {} (no stream: {unassigned})\n", per.join(" ")));
    s.push_str(&format!("  time: {:.3} ms\n", elapsed.as_secs_f64() * 1e3));
    s
}

pub fn run(args: AllocateArgs) -> i32 {
    if args.output.is_some() && args.format == Some(OutputFormat::Json) {
        eprintln!("error: --format json writes to standard output; it cannot be combined with -o");
        return EXIT_USAGE;
    }
    let json_to_stdout = args.output.is_none() && args.format == Some(OutputFormat::Json);
    let start = Instant::now();
    // A policy other than GE's also reports why it chose what it chose (allocation JSON's
    // `policy` object).
    let result = Inputs::load(&args.graph, &args.options).and_then(|inputs| {
        let (a, r) = inputs.compile(args.stage.into(), SimConfig::default())?;
        Ok((inputs.model, a, r))
    });
    let elapsed = start.elapsed();
    let (text, code) = match &result {
        Ok((model, alloc, None)) => (alloc.to_json_string(model), EXIT_OK),
        Ok((model, alloc, Some(report))) => {
            let doc = to_json_with_report(model, alloc, report);
            let mut text = serde_json::to_string_pretty(&doc).expect("JSON values always serialise");
            text.push('\n');
            (text, EXIT_OK)
        }
        Err(e) => (error_json_string(e), EXIT_ALLOC_ERROR),
    };
    if let Some(path) = &args.output {
        if let Err(e) = std::fs::write(path, &text) {
            eprintln!("error: cannot write '{}': {e}", path.display());
            return EXIT_ALLOC_ERROR;
        }
    } else if json_to_stdout {
        let mut out = std::io::stdout().lock();
        if out.write_all(text.as_bytes()).and_then(|_| out.flush()).is_err() {
            return EXIT_ALLOC_ERROR;
        }
    }
    match &result {
        Ok((model, alloc, report)) => {
            if !args.quiet {
                let mut s = summary(model, alloc, elapsed);
                if let Some(r) = report {
                    s.push_str(&format!("  policy: {}\n", r.to_json()));
                }
                if json_to_stdout { eprint!("{s}") } else { print!("{s}") }
            }
        }
        Err(e) => eprintln!("error: {e}"),
    }
    code
}
