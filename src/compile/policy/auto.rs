//! `auto`: every other policy (GE's default among them) run through the whole pipeline and
//! the simulator; the shortest makespan wins, ties going to fewer streams, then fewer syncs,
//! then the earlier candidate. GE and per-operator are always candidates, so auto is never
//! slower than either under the simulator.

use serde_json::json;

use super::PolicyReport;
use crate::compile::{Allocation, Stage};
use crate::error::Result;
use crate::graph::{Model, Policy};
use crate::simulate::{SimConfig, round3, simulate};

/// The candidates for a graph: the fixed policies, then budgets below the width.
pub fn candidates(width: usize) -> Vec<Policy> {
    let mut v = vec![Policy::Ge, Policy::Single, Policy::PerBackend, Policy::PerOperator, Policy::MinStreams];
    for b in [2u32, 4, 8, 16] {
        if (b as usize) < width {
            v.push(Policy::Budget(b));
        }
    }
    v
}

pub fn allocate(model: &Model, stage: Stage) -> Result<(Allocation, PolicyReport)> {
    allocate_with(model, stage, &SimConfig::default())
}

/// Runs every candidate to `stage` (at least sync) and keeps the best under `cfg`.
pub fn allocate_with(model: &Model, stage: Stage, cfg: &SimConfig) -> Result<(Allocation, PolicyReport)> {
    let run_stage = stage.max(Stage::Sync);
    let ctx = super::Ctx::new(model)?;
    let width = super::min_streams::chain_cover(&ctx).chains.len();
    let mut best: Option<(f64, u32, usize, usize, Allocation, String)> = None;
    let mut rows = Vec::new();
    for (i, p) in candidates(width).into_iter().enumerate() {
        let mut m = model.clone();
        m.options.policy = p;
        let alloc = if p == Policy::Ge {
            crate::compile::allocate(&m, run_stage)
        } else {
            super::allocate(&m, run_stage).map(|a| a.0)
        };
        // A candidate beyond a device limit (more streams than the device has) is no candidate.
        let alloc = match alloc {
            Err(e) if e.kind == crate::error::ErrorKind::Limit => {
                rows.push(json!({ "policy": p.name(), "skipped": e.message }));
                continue;
            }
            other => other?,
        };
        let sim = simulate(&m, &alloc, cfg)?;
        rows.push(json!({
            "policy": p.name(),
            "makespan_us": round3(sim.makespan_us),
            "streams": sim.streams,
            "syncs": sim.syncs,
        }));
        let key = (sim.makespan_us, sim.streams, sim.syncs, i);
        let better = match &best {
            None => true,
            Some((ms, st, sy, j, _, _)) => {
                key.0.total_cmp(ms).then(key.1.cmp(st)).then(key.2.cmp(sy)).then(key.3.cmp(j)).is_lt()
            }
        };
        if better {
            best = Some((key.0, key.1, key.2, key.3, alloc, p.name()));
        }
    }
    let (makespan, _, _, _, mut alloc, chosen) =
        best.ok_or_else(|| crate::err!(Limit, "auto: every candidate policy is beyond a device limit"))?;
    alloc.mode = crate::compile::mode_name(model);
    let mut report = PolicyReport { name: "auto".into(), details: Default::default() };
    report.details.insert("chosen".into(), json!(chosen));
    report.details.insert("makespan_us".into(), json!(round3(makespan)));
    report.details.insert(
        "why".into(),
        json!(format!(
            "shortest simulated makespan ({} units, {} us per wait); ties: fewer streams, fewer syncs",
            cfg.units, cfg.wait_latency_us
        )),
    );
    report.details.insert("candidates".into(), json!(rows));
    Ok((alloc, report))
}
