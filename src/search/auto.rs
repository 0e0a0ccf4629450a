//! `auto`: every other policy (GE's default among them) run through the whole pipeline and
//! the simulator; the shortest makespan wins, ties going to fewer streams, then fewer syncs,
//! then the earlier candidate. GE and per-operator are always candidates, so auto is never
//! slower than either under the simulator. With `max_memory`, a candidate whose memory plan
//! needs more is rejected (docs/memory.md).

use serde_json::json;

use crate::compile::policy::{Ctx, PolicyReport, min_streams};
use crate::compile::{Stage, TaskLimits};
use crate::driver::Session;
use crate::error::Result;
use crate::graph::{Model, Options, Policy};
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

/// Runs every candidate through the whole pipeline and keeps the best under `cfg`: the
/// session's [`crate::driver::Search`] for `policy=auto`.
pub fn choose(
    model: &Model,
    options: &Options,
    limits: &TaskLimits,
    cfg: &SimConfig,
) -> Result<(Policy, PolicyReport)> {
    let ctx = Ctx::new(model, options)?;
    let width = min_streams::chain_cover(&ctx).chains.len();
    drop(ctx);
    let mut best: Option<(f64, u32, usize, usize, Policy)> = None;
    let mut rows = Vec::new();
    crate::memory::budget::require_sizes(model, options)?;
    let mut smallest = None;
    for (i, p) in candidates(width).into_iter().enumerate() {
        let mut s = Session::new(model, Options { policy: p, ..options.clone() }, *limits);
        s.run_to(Stage::All)?;
        let alloc = s.allocation()?;
        let sim = simulate(model, alloc, cfg)?;
        let mut row = json!({
            "policy": p.name(),
            "makespan_us": round3(sim.makespan_us),
            "streams": sim.streams,
            "syncs": sim.syncs,
        });
        let fits = crate::memory::budget::judge(model, options, alloc, &mut row, &mut smallest, p.name());
        rows.push(row);
        if !fits {
            continue;
        }
        let key = (sim.makespan_us, sim.streams, sim.syncs, i);
        let better = match &best {
            None => true,
            Some((ms, st, sy, j, _)) => {
                key.0.total_cmp(ms).then(key.1.cmp(st)).then(key.2.cmp(sy)).then(key.3.cmp(j)).is_lt()
            }
        };
        if better {
            best = Some((key.0, key.1, key.2, key.3, p));
        }
    }
    let Some((makespan, _, _, _, chosen)) = best else {
        return Err(crate::memory::budget::none_fits(model, options, smallest));
    };
    let mut report = PolicyReport { name: "auto".into(), details: Default::default() };
    report.details.insert("chosen".into(), json!(chosen.name()));
    report.details.insert("makespan_us".into(), json!(round3(makespan)));
    report.details.insert(
        "why".into(),
        json!(format!(
            "shortest simulated makespan ({} units, {} us per wait); ties: fewer streams, fewer syncs",
            cfg.units, cfg.wait_latency_us
        )),
    );
    report.details.insert("candidates".into(), json!(rows));
    Ok((chosen, report))
}
