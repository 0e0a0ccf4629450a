//! `stream-alloc replay`: execute an allocation on host threads or a CUDA GPU, measure it and
//! check that every dependency was ordered.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::allocate::PlanArgs;
use super::{EXIT_ALLOC_ERROR, EXIT_OK, out};
use stream_alloc::compile::Stage;
use stream_alloc::replay::{Executor, Program, Report, cpu::CpuExecutor, replay, trace};
use stream_alloc::simulate::{SimConfig, simulate};
use stream_alloc::verify::doc::Doc;
use stream_alloc::{Error, ErrorKind};

/// Exit code of a replay that found a dependency its consumer did not wait for.
pub const EXIT_VIOLATION: i32 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    /// One host thread per stream (what the tests run).
    Cpu,
    /// One CUDA stream per stream, spin kernels on a share of the SMs (needs libcuda.so.1).
    Cuda,
}

/// Execute an allocation: measure its makespan and catch missing syncs.
#[derive(Args, Debug)]
#[command(after_help = "Without ALLOC the graph is allocated first (with the --option values, as \
`allocate` does). Every task-bearing node runs, in its stream's order, as a kernel that holds \
min(cores, units) of the device for cost_us x --time-scale; an event is recorded after every sync \
source and waited for before every sync target. Each kernel checks, when it starts, that every node \
it depends on has finished. docs/replay.md has the details.\n\n\
Environment (cuda): SA_CUDA_LIB names the driver library (default libcuda.so.1), SA_CUDA_DEVICE \
the device (default 0).\n\n\
Exit codes: 0 every dependency was ordered; 1 an error (bad graph or allocation, no device, a \
deadlocking plan); 2 bad usage; 3 a dependency was not ordered (a missing sync; the report names \
the edge).")]
pub struct ReplayArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Where the plan runs.
    #[arg(long, value_enum)]
    pub backend: BackendArg,
    /// Runs; the reported makespan is their median.
    #[arg(long, default_value_t = 5)]
    pub repeat: u32,
    /// Kernel time = cost_us x this (a small scale keeps a host replay short).
    #[arg(long = "time-scale", default_value_t = 1.0, value_name = "X")]
    pub time_scale: f64,
    /// Compute units of the device model (a node holds min(cores, units) of them).
    #[arg(long, default_value_t = 24)]
    pub units: u32,
    /// Latency of one wait in the simulated figure, µs.
    #[arg(long = "wait-latency", default_value_t = 1.0, value_name = "US")]
    pub wait_latency: f64,
    /// Write a Chrome trace-event JSON file of the median run.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

fn read_doc(path: &PathBuf) -> Result<serde_json::Value, Error> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read allocation file '{}': {e}", path.display())))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| Error::new(ErrorKind::Json, format!("allocation file '{}': {e}", path.display())))
}

fn executor(args: &ReplayArgs) -> Result<Box<dyn Executor>, Error> {
    Ok(match args.backend {
        BackendArg::Cpu => Box::new(CpuExecutor { time_scale: args.time_scale, units: args.units }),
        BackendArg::Cuda => Box::new(stream_alloc::replay::cuda::CudaExecutor::new(args.time_scale)?),
    })
}

fn run_replay(args: &ReplayArgs) -> Result<Report, Error> {
    let cfg = SimConfig { units: args.units, wait_latency_us: args.wait_latency, ..SimConfig::default() };
    let inputs = args.plan.load()?;
    let model = &inputs.model;
    let (doc_json, simulated, policy) = match &args.plan.allocation {
        Some(p) => {
            let doc = read_doc(p)?;
            let policy = doc.get("mode").and_then(|m| m.as_str()).unwrap_or("").to_string();
            (doc, None, policy)
        }
        None => {
            let compiled = inputs.compile(Stage::All, cfg, false)?;
            let sim = simulate(model, &compiled.alloc, &cfg)?;
            let policy = compiled.report.as_ref().map_or_else(|| "ge".to_string(), |r| r.name.clone());
            (compiled.document(model).to_value(), Some(sim.makespan_us), policy)
        }
    };
    let doc = Doc::parse(model, &doc_json).map_err(|v| {
        let first: Vec<String> = v.iter().take(3).map(|x| x.message.clone()).collect();
        Error::new(ErrorKind::Field, format!("the allocation can not be replayed: {}", first.join("; ")))
    })?;
    let program = Program::build(model, &doc, args.units)?;
    let mut exec = executor(args)?;
    let backend = match args.backend {
        BackendArg::Cpu => "cpu",
        BackendArg::Cuda => "cuda",
    };
    let mut report = replay(&program, exec.as_mut(), args.repeat, args.time_scale, backend)?;
    report.policy = policy;
    match simulated {
        Some(s) => {
            report.simulated_us = s;
            report.simulated_by = "simulate";
        }
        None => report.simulated_us = program.model_makespan(&cfg)?,
    }
    if let Some(path) = &args.trace {
        let mut t = serde_json::to_string(&trace::trace_json(&program, &report.median_run, &report.device))
            .expect("JSON values always serialise");
        t.push('\n');
        std::fs::write(path, t)
            .map_err(|e| Error::new(ErrorKind::Io, format!("cannot write trace '{}': {e}", path.display())))?;
    }
    Ok(report)
}

pub fn run(args: ReplayArgs) -> i32 {
    let report = match run_replay(&args) {
        Ok(r) => r,
        Err(e) => {
            out::error(e);
            return EXIT_ALLOC_ERROR;
        }
    };
    let text = if args.json {
        let mut t = serde_json::to_string_pretty(&report.to_json()).expect("JSON values always serialise");
        t.push('\n');
        t
    } else {
        report.text()
    };
    if let Err(c) = out::print(&text) {
        return c;
    }
    if report.violations.is_empty() { EXIT_OK } else { EXIT_VIOLATION }
}
