//! Insertion plus exact reduction on synthetic graphs (100k and 1M nodes, 8 and 64 streams).
//! Each node reads one to three random nodes up to 64 back (`synth::Family::Random`); streams
//! are random. Then the whole sync stage without Send/Recv nodes (`passes::sync_stage`,
//! materialise off) on the synthetic families under min-streams, median of 5. Then the sync
//! stage as the event budget's trial runs it (`driver::logical`: a copy of the logical
//! allocation, the stage, its counts; over budget, the count alone) on each policy's assignment without an event budget at 100k, median of
//! 5. Model building and the policy are not timed. Run: `cargo bench --bench sync`
//! (`SYNC_BENCH_TRIALS_ONLY=1`: the trial rows alone).

use std::time::Instant;

use stream_alloc::compile;
use stream_alloc::compile::passes;
use stream_alloc::compile::sync::{SyncConfig, SyncState, insert, reduce};
use stream_alloc::graph::synth::{Family, Rng, generate};
use stream_alloc::graph::{IdVec, Model, NodeId, StreamId, SyncKind};

/// A random DAG whose edges reach at most 64 nodes back, each node on a random one of
/// `streams` streams.
fn graph(n: usize, streams: u32, seed: u64) -> (Model, IdVec<NodeId, Option<StreamId>>) {
    let model = generate(Family::Random { window: Some(64) }, n, seed).expect("synthetic graph is valid");
    let mut rng = Rng::new(seed);
    let stream = (0..model.nodes.len()).map(|_| Some(StreamId(rng.below(u64::from(streams)) as u32))).collect();
    (model, stream)
}

fn main() {
    if std::env::var_os("SYNC_BENCH_TRIALS_ONLY").is_none() {
        stages();
    }
    trials();
}

/// The sync stage as one trial of the event budget runs it, on each policy's assignment with
/// no event budget (the first trial of a policy under `auto`): the whole stage and its counts
/// (`stage_ms`: a trial that fits), and the trial over the default budget (`over_ms`), which
/// stops at the count.
fn trials() {
    println!();
    println!(
        "{:>9} {:>10} {:>12} {:>8} {:>8} {:>10} {:>10}",
        "nodes", "family", "policy", "streams", "ids", "stage_ms", "over_ms"
    );
    for family in [Family::Random { window: None }, Family::Random { window: Some(32) }, Family::Layered { width: 8 }] {
        let n = 100_000usize;
        let base = generate(family, n, 7).expect("synthetic graph is valid");
        for policy in ["per-operator", "min-streams", "list", "budget:8", "single"] {
            let mut model = base.clone();
            model.options.policy = policy.into();
            let options = stream_alloc::graph::Options { max_events: Some(u32::MAX), ..model.options.clone() };
            let limits = compile::TaskLimits::from_options(&options);
            let mut session = stream_alloc::driver::Session::new(&model, options.clone(), limits);
            session.run_to(stream_alloc::Stage::Logical).expect("the policy assigns");
            let (alloc, _) = session.into_result().expect("logical stage ran");
            let budget = model.options.event_budget();
            let mut full = Vec::new();
            let mut over = Vec::new();
            let mut ids = 0;
            for _ in 0..5 {
                let t = Instant::now();
                let mut synced = alloc.clone();
                compile::sync_stage(&model, &options, &mut synced).expect("sync succeeds");
                let c = compile::summary::ModelCounts::of(&synced);
                ids = c.event_num + c.notify_num;
                full.push(t.elapsed().as_secs_f64() * 1e3);
                let t = Instant::now();
                let mut synced = alloc.clone();
                let c = compile::sync_stage_within(&model, &options, &mut synced, budget).expect("sync succeeds");
                assert_eq!(c.event_num + c.notify_num, ids, "the trial counts what the stage makes");
                over.push(t.elapsed().as_secs_f64() * 1e3);
            }
            full.sort_by(f64::total_cmp);
            over.sort_by(f64::total_cmp);
            println!(
                "{n:>9} {:>10} {policy:>12} {:>8} {ids:>8} {:>10.1} {:>10.1}",
                family.name(),
                alloc.logical_count() + alloc.attached_count(),
                full[2],
                over[2]
            );
        }
    }
}

/// Insertion and reduction alone, then the whole stage without Send/Recv nodes.
fn stages() {
    println!(
        "{:>9} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "nodes", "streams", "inserted", "kept", "insert_ms", "reduce_ms", "total_ms"
    );
    for &n in &[100_000usize, 1_000_000] {
        for &s in &[8u32, 64] {
            let (model, stream) = graph(n, s, 42 + u64::from(s));
            let attached = IdVec::filled(model.nodes.len(), Vec::new());
            let t0 = Instant::now();
            let mut st = SyncState::new(&model, stream, attached, SyncKind::Event);
            insert::insert_sync_events(&mut st).expect("insertion succeeds");
            let t1 = Instant::now();
            let inserted = st.syncs.len();
            reduce::reduce_exact(&mut st);
            let t2 = Instant::now();
            println!(
                "{n:>9} {s:>7} {inserted:>10} {:>10} {:>10.1} {:>10.1} {:>10.1}",
                st.alive_count(),
                (t1 - t0).as_secs_f64() * 1e3,
                (t2 - t1).as_secs_f64() * 1e3,
                (t2 - t0).as_secs_f64() * 1e3
            );
        }
    }
    println!();
    println!("{:>9} {:>12} {:>10} {:>10} {:>10}", "nodes", "family", "inserted", "kept", "run_ms");
    for (n, family) in [
        (100_000usize, Family::Layered { width: 8 }),
        (100_000, Family::Inception),
        (100_000, Family::Transformer),
        (1_000_000, Family::Layered { width: 8 }),
    ] {
        let mut model = generate(family, n, 7).expect("synthetic graph is valid");
        model.options.policy = "min-streams".into();
        let limits = compile::TaskLimits::from_options(&model.options);
        let mut session = stream_alloc::driver::Session::new(&model, model.options.clone(), limits);
        session.run_to(stream_alloc::Stage::Logical).expect("min-streams assigns");
        let (alloc, _) = session.into_result().expect("logical stage ran");
        let cfg = SyncConfig { materialise: false, ..SyncConfig::new(&model, &model.options) };
        let mut times = Vec::new();
        let mut report = None;
        for _ in 0..5 {
            let mut a = alloc.clone();
            let t = Instant::now();
            report = Some(passes::sync_stage(&model, &model.options, &mut a, cfg).expect("sync succeeds"));
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        let report = report.expect("five runs");
        println!("{n:>9} {:>12} {:>10} {:>10} {:>10.1}", family.name(), report.inserted, report.kept, times[2]);
    }
}
