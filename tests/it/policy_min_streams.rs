//! min-streams against brute force on random small DAGs: the stream count is the width, the
//! antichain certificate is independent and as large, every stream is a chain.

use crate::common::policy;
use stream_alloc::allocate;
use stream_alloc::compile::Stage;
use stream_alloc::compile::policy::{Ctx, min_streams};
use stream_alloc::graph::Model;
use stream_alloc::graph::synth::{Family, generate};
use stream_alloc::memory::AllocationDocument;
use stream_alloc::verify;

/// A dense random DAG of `n` nodes on one engine, from the shared generator, under min-streams.
fn random_dag(seed: u64, n: usize, density: u32) -> Model {
    let mut m = generate(Family::Dense { density, mixed: false }, n, seed).unwrap();
    m.options.policy = "min-streams".into();
    m
}

/// reach[i] bitmask of descendants, by node index.
fn closure(m: &Model) -> Vec<u64> {
    let mut reach = vec![0u64; m.nodes.len()];
    for &n in m.root().order.iter().rev() {
        for e in m.out_edges(n) {
            reach[n.index()] |= reach[e.dst.index()] | (1 << e.dst.index());
        }
    }
    reach
}

#[test]
fn width_certificate_and_chains_on_random_dags() {
    for seed in 0..300u64 {
        let n = 4 + (seed % 15) as usize;
        let m = random_dag(seed, n, [8, 20, 40][(seed % 3) as usize]);
        let reach = closure(&m);
        let ordered = |a: usize, b: usize| reach[a] >> b & 1 == 1 || reach[b] >> a & 1 == 1;
        let tasks: Vec<usize> = m.nodes.ids().filter(|&i| m.nodes[i].tasks > 0).map(|i| i.index()).collect();
        // Brute-force width over subsets of task nodes.
        let mut width = 0;
        for mask in 1u32..(1 << tasks.len()) {
            let set: Vec<usize> = (0..tasks.len()).filter(|&k| mask >> k & 1 == 1).map(|k| tasks[k]).collect();
            if set.len() > width && set.iter().enumerate().all(|(i, &a)| set[i + 1..].iter().all(|&b| !ordered(a, b))) {
                width = set.len();
            }
        }
        let ctx = Ctx::new(&m, &m.options).unwrap();
        let cover = min_streams::chain_cover(&ctx);
        assert_eq!(cover.chains.len(), width, "seed {seed}: chains = width");
        assert_eq!(cover.antichain.len(), width, "seed {seed}: certificate size");
        for (i, &a) in cover.antichain.iter().enumerate() {
            for &b in &cover.antichain[i + 1..] {
                assert!(!ordered(a.index(), b.index()), "seed {seed}: certificate not independent");
            }
        }
        for c in &cover.chains {
            for w in c.windows(2) {
                assert!(reach[w[0].index()] >> w[1].index() & 1 == 1, "seed {seed}: stream is not a chain");
            }
        }
        let a = allocate(&m, Stage::All).unwrap();
        let r = verify::check(&m, &a.to_json_new_plan(&m));
        assert!(r.ok(), "seed {seed}: {:?}", r.violations);
        assert_eq!(Some(a.sync_count() as usize), r.edge_sync_minimum, "seed {seed}");
        assert_eq!(a.logical_count() as usize, width.max(1), "seed {seed}");
    }
}

#[test]
fn budget_never_exceeds_its_stream_count() {
    for seed in 0..60u64 {
        let mut m = random_dag(seed, 14, 10);
        for b in 1..=3u32 {
            m.options.policy = format!("budget:{b}").as_str().into();
            let a = allocate(&m, Stage::All).unwrap();
            assert!(a.logical_count() <= b, "seed {seed} budget {b}: {} streams", a.logical_count());
            let r = verify::check(&m, &a.to_json_new_plan(&m));
            assert!(r.ok(), "seed {seed}: {:?}", r.violations);
            assert_eq!(Some(a.sync_count() as usize), r.edge_sync_minimum);
        }
    }
}

#[test]
fn synthetic_generators_allocate_under_every_policy() {
    for family in [Family::Layered { width: 4 }, Family::Inception, Family::Transformer] {
        let mut m = generate(family, 400, 3).unwrap();
        assert!(m.nodes.len() >= 300, "{}", m.name);
        for p in [policy("per-operator"), policy("min-streams"), policy("budget:2")] {
            m.options.policy = p.policy();
            let a = allocate(&m, Stage::All).unwrap();
            let r = verify::check(&m, &a.to_json_new_plan(&m));
            assert!(r.ok(), "{} {p:?}: {:?}", m.name, r.violations.first());
            assert_eq!(Some(a.sync_count() as usize), r.edge_sync_minimum, "{} {p:?}", m.name);
        }
    }
}
