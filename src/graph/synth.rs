//! Synthetic graphs for benchmarks and tests: random layered DAGs, Inception-like branchy
//! cells, transformer stacks, random DAGs with a mix of engines and labels, and small dense
//! DAGs for brute-force checks, of any size, deterministic for a seed. Every generator but the
//! dense one starts from a data input; all but the random and dense DAGs add constants
//! (task-less nodes), as exported models have.
//!
//! Tests and benchmarks that need a random DAG shape or random choices take them from here
//! ([`Rng`], [`dag_edges`]), so that one generator, not one per test file, decides what a
//! random graph looks like.

use super::builder::{EdgeSpec, NodeSpec};
use super::{Model, ModelBuilder};
use crate::error::Result;

/// The generator families.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Layers of `width` nodes; each node reads 1–3 nodes of the previous two layers, and feeds
    /// at least one node of the next.
    Layered { width: usize },
    /// Cells of four branches (1, 2, 3 convolutions and a pool + conv) joined by a concat.
    Inception,
    /// Transformer blocks: Q, K, V projections in parallel, attention, residual, norm, FFN.
    Transformer,
    /// A random DAG with the corpus's engine mix: each node reads 1–3 earlier nodes, any of
    /// them (`window: None`) or only among the previous `window`; a few stream labels, user
    /// stream labels and parallel groups; 5 % of the edges are control edges. Long edges make
    /// every search that walks paths pay for the whole graph, so this family guards against
    /// superlinear steps.
    Random { window: Option<usize> },
    /// Nodes `n0..nN` in topological order with every pair `i < j` an edge with probability
    /// `density` percent; one node in five has no task. Task nodes are on AI Core, or with
    /// `mixed` one in three on the vector engine. Small and dense: the shape that brute-force
    /// and property tests compare against.
    Dense { density: u32, mixed: bool },
}

impl Family {
    pub fn name(self) -> String {
        match self {
            Family::Layered { width } => format!("layered-w{width}"),
            Family::Inception => "inception".into(),
            Family::Transformer => "transformer".into(),
            Family::Random { window: None } => "random".into(),
            Family::Random { window: Some(w) } => format!("window-{w}"),
            Family::Dense { density, mixed: false } => format!("dense-{density}"),
            Family::Dense { density, mixed: true } => format!("dense-{density}-mixed"),
        }
    }
}

/// A reproducible generator without a dependency: a 64-bit linear congruential generator
/// (Knuth's MMIX multiplier and increment) returning its high 31 bits.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn draw(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    /// A value in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.draw() % n.max(1)
    }
}

/// The edges of a random DAG on nodes `0..n` numbered in a topological order: `draws` pairs
/// of distinct nodes, each oriented from the lower index to the higher. A draw that would give
/// a node more than `max_fan_in` inputs is dropped; with `distinct` so is a repeated pair,
/// otherwise it stays as a parallel edge (GE graphs have them). Fewer than two nodes give none.
pub fn dag_edges(rng: &mut Rng, n: usize, draws: usize, max_fan_in: usize, distinct: bool) -> Vec<(usize, usize)> {
    let mut edges = Vec::with_capacity(draws);
    if n < 2 {
        return edges;
    }
    let mut fan_in = vec![0usize; n];
    let mut seen = std::collections::HashSet::new();
    for _ in 0..draws {
        let a = rng.below(n as u64) as usize;
        let b = (a + 1 + rng.below(n as u64 - 1) as usize) % n;
        let (s, d) = (a.min(b), a.max(b));
        if fan_in[d] >= max_fan_in || (distinct && !seen.insert((s, d))) {
            continue;
        }
        fan_in[d] += 1;
        edges.push((s, d));
    }
    edges
}

struct Gen {
    b: ModelBuilder,
    rng: Rng,
    count: usize,
}

impl Gen {
    fn node(&mut self, op: &str, tasks: u32) -> usize {
        let id = self.count;
        self.count += 1;
        let mut n = NodeSpec::new(format!("n{id}"), op, if tasks == 0 { "DNN_VM_GE_LOCAL" } else { "AIcoreEngine" });
        n.tasks = tasks;
        if tasks > 0 {
            n.cost_us = 1.0 + (self.rng.draw() % 40) as f64;
            n.cores = 1 + (self.rng.draw() % 24) as u32;
        }
        self.b.add_node(n);
        id
    }
    fn edge(&mut self, s: usize, d: usize) {
        self.b.add_edge(EdgeSpec::data(format!("n{s}"), format!("n{d}")));
    }
    /// A task node reading `inputs` and one fresh constant (weights).
    fn op(&mut self, op: &str, inputs: &[usize]) -> usize {
        let w = self.node("Const", 0);
        let v = self.node(op, 1);
        for &i in inputs {
            self.edge(i, v);
        }
        self.edge(w, v);
        v
    }
}

/// The inputs of the tests that hold a fast routine to its reference: the families the benches
/// run (layered, Inception-like, transformer, random, window-32) at `nodes` nodes with seed 7,
/// `dense` (a density in percent) adding a dense mixed one, then the named corpus graphs.
/// Sizes every node's one output at random, 512 B to 32 KiB in steps of 512 (the families carry
/// no `out_bytes`): what the memory-aware order and the memory plan measure on these graphs.
pub fn with_tensor_sizes(model: &mut Model, seed: u64) {
    let mut rng = Rng::new(seed ^ 0x5eed);
    for n in model.nodes.iter_mut() {
        n.out_bytes = Some(vec![512 * (1 + rng.below(64))]);
    }
}

#[cfg(test)]
pub fn test_models(nodes: usize, dense: Option<u32>, corpus: &[&str]) -> Vec<Model> {
    let mut families =
        vec![Family::Layered { width: 8 }, Family::Inception, Family::Transformer, Family::Random { window: None }];
    families.push(Family::Random { window: Some(32) });
    families.extend(dense.map(|density| Family::Dense { density, mixed: true }));
    let mut models: Vec<Model> =
        families.into_iter().map(|f| generate(f, nodes, 7).expect("synthetic graph is valid")).collect();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    for name in corpus {
        models.push(super::json::load_file(dir.join(format!("{name}.json"))).expect("corpus graph loads"));
    }
    models
}

/// A graph of about `nodes` nodes (at least a few) of the given family.
pub fn generate(family: Family, nodes: usize, seed: u64) -> Result<Model> {
    let mut g = Gen { b: ModelBuilder::new(format!("{}-{nodes}", family.name())), rng: Rng(seed), count: 0 };
    // Every family but the dense DAGs starts from one data input, `n0`.
    let x = if matches!(family, Family::Dense { .. }) { 0 } else { g.node("Data", 0) };
    match family {
        Family::Layered { width } => {
            let width = width.max(1);
            let mut prev2: Vec<usize> = vec![x];
            let mut prev: Vec<usize> = vec![x];
            while g.count + width < nodes.max(2) {
                let mut layer = Vec::with_capacity(width);
                for _ in 0..width {
                    let k = 1 + (g.rng.draw() % 3) as usize;
                    let mut ins = Vec::with_capacity(k);
                    for j in 0..k {
                        let src = if j == 2 { &prev2 } else { &prev };
                        ins.push(src[(g.rng.draw() as usize) % src.len()]);
                    }
                    ins.sort_unstable();
                    ins.dedup();
                    let v = g.node("Conv2D", 1);
                    for i in ins {
                        g.edge(i, v);
                    }
                    layer.push(v);
                }
                // Every node of the previous layer feeds the next one: no dangling sinks.
                for (j, &p) in prev.iter().enumerate() {
                    if p != x {
                        g.edge(p, layer[j % layer.len()]);
                    }
                }
                prev2 = std::mem::replace(&mut prev, layer);
            }
        }
        Family::Inception => {
            let mut cur = g.op("Conv2D", &[x]);
            while g.count + 16 < nodes.max(20) {
                let b1 = g.op("Conv2D", &[cur]);
                let b2a = g.op("Conv2D", &[cur]);
                let b2 = g.op("Conv2D", &[b2a]);
                let b3a = g.op("Conv2D", &[cur]);
                let b3b = g.op("Conv2D", &[b3a]);
                let b3 = g.op("Conv2D", &[b3b]);
                let p = g.node("MaxPool", 1);
                g.edge(cur, p);
                let b4 = g.op("Conv2D", &[p]);
                let cat = g.node("ConcatV2", 1);
                for b in [b1, b2, b3, b4] {
                    g.edge(b, cat);
                }
                cur = cat;
            }
        }
        Family::Transformer => {
            let mut cur = g.op("MatMulV2", &[x]);
            while g.count + 24 < nodes.max(30) {
                let q = g.op("MatMulV2", &[cur]);
                let k = g.op("MatMulV2", &[cur]);
                let v = g.op("MatMulV2", &[cur]);
                let kt = g.node("Transpose", 1);
                g.edge(k, kt);
                let s = g.op("BatchMatMul", &[q, kt]);
                let sm = g.node("SoftmaxV2", 1);
                g.edge(s, sm);
                let av = g.op("BatchMatMul", &[sm, v]);
                let o = g.op("MatMulV2", &[av]);
                let r1 = g.node("Add", 1);
                g.edge(o, r1);
                g.edge(cur, r1);
                let n1 = g.op("LayerNorm", &[r1]);
                let f1 = g.op("MatMulV2", &[n1]);
                let act = g.node("Gelu", 1);
                g.edge(f1, act);
                let f2 = g.op("MatMulV2", &[act]);
                let r2 = g.node("Add", 1);
                g.edge(f2, r2);
                g.edge(n1, r2);
                cur = g.op("LayerNorm", &[r2]);
            }
        }
        Family::Random { window } => random_dag(&mut g, nodes, window),
        Family::Dense { density, mixed } => dense_dag(&mut g, nodes, density, mixed),
    }
    g.b.build()
}

/// The engines of [`Family::Random`] with their weights out of 100, and their task counts.
const RANDOM_ENGINES: &[(&str, u64, u32)] = &[
    ("AIcoreEngine", 72, 1),
    ("VectorEngine", 10, 1),
    ("DNN_HCCL", 4, 1),
    ("aicpu_ascend_kernel", 4, 1),
    ("DNN_VM_GE_LOCAL", 6, 0),
    ("DSAEngine", 4, 1),
];

fn random_dag(g: &mut Gen, nodes: usize, window: Option<usize>) {
    let total = nodes.max(8);
    let mut ins: Vec<usize> = Vec::with_capacity(3);
    while g.count < total {
        let id = g.count;
        let mut pick = g.rng.draw() % 100;
        let &(engine, _, tasks) = RANDOM_ENGINES
            .iter()
            .find(|&&(_, w, _)| {
                let hit = pick < w;
                pick = pick.saturating_sub(w);
                hit
            })
            .unwrap_or(&RANDOM_ENGINES[0]);
        let op = match engine {
            "DNN_HCCL" => "HcomAllReduce",
            "DNN_VM_GE_LOCAL" => "Reshape",
            "DSAEngine" => "DSARandomNormal",
            "aicpu_ascend_kernel" => "Where",
            "VectorEngine" => "Add",
            _ => "Conv2D",
        };
        let mut n = NodeSpec::new(format!("n{id}"), op, engine);
        n.tasks = tasks;
        if tasks > 0 {
            n.cost_us = 1.0 + (g.rng.draw() % 40) as f64;
            n.cores = 1 + (g.rng.draw() % 24) as u32;
        }
        // About 1 % of the nodes carry each kind of label, from a handful of values.
        let r = g.rng.draw() % 1000;
        if r < 10 {
            n.attrs.stream_label = Some(format!("s{}", r % 4));
        } else if r < 15 {
            n.attrs.user_stream_label = Some(format!("u{}", r % 3));
        } else if r < 25 {
            n.attrs.parallel_group = Some(format!("g{}", r % 4));
        }
        g.b.add_node(n);
        g.count += 1;
        if id == 0 {
            continue;
        }
        let span = window.map_or(id, |w| w.clamp(1, id));
        let k = 1 + (g.rng.draw() % 3) as usize;
        ins.clear();
        for _ in 0..k {
            ins.push(id - 1 - (g.rng.draw() as usize) % span);
        }
        ins.sort_unstable();
        ins.dedup();
        for &src in &ins {
            let e = if g.rng.draw() % 20 == 0 {
                EdgeSpec::control(format!("n{src}"), format!("n{id}"))
            } else {
                EdgeSpec::data(format!("n{src}"), format!("n{id}"))
            };
            g.b.add_edge(e);
        }
    }
}

fn dense_dag(g: &mut Gen, nodes: usize, density: u32, mixed: bool) {
    for i in 0..nodes {
        let engine = if mixed && g.rng.below(3) == 0 { "VectorEngine" } else { "AIcoreEngine" };
        let mut n = NodeSpec::new(format!("n{i}"), "Add", engine);
        n.tasks = if g.rng.below(5) == 4 { 0 } else { 1 };
        n.cost_us = 1.0 + g.rng.below(9) as f64;
        n.cores = 1 + g.rng.below(24) as u32;
        g.b.add_node(n);
    }
    for j in 1..nodes {
        for i in 0..j {
            if g.rng.below(100) < u64::from(density) {
                g.edge(i, j);
            }
        }
    }
    g.count = nodes;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dag_edges_point_forward_and_keep_their_caps() {
        for seed in 0..50 {
            let capped = dag_edges(&mut Rng::new(seed), 12, 60, 2, false);
            let mut fan_in = [0; 12];
            for &(s, d) in &capped {
                assert!(s < d && d < 12, "seed {seed}: {s} -> {d}");
                fan_in[d] += 1;
            }
            assert!(fan_in.iter().all(|&k| k <= 2), "seed {seed}: {fan_in:?}");
            let distinct = dag_edges(&mut Rng::new(seed), 6, 60, usize::MAX, true);
            let set: std::collections::HashSet<_> = distinct.iter().collect();
            assert_eq!(set.len(), distinct.len(), "seed {seed}: a repeated pair");
            assert_eq!(distinct, dag_edges(&mut Rng::new(seed), 6, 60, usize::MAX, true));
        }
        assert!(dag_edges(&mut Rng::new(1), 1, 10, usize::MAX, false).is_empty());
    }

    #[test]
    fn dense_dags_follow_their_density() {
        let sparse = generate(Family::Dense { density: 5, mixed: false }, 40, 3).unwrap();
        let dense = generate(Family::Dense { density: 60, mixed: true }, 40, 3).unwrap();
        assert_eq!((sparse.nodes.len(), dense.nodes.len()), (40, 40));
        assert!(sparse.edges.len() * 4 < dense.edges.len(), "{} vs {}", sparse.edges.len(), dense.edges.len());
        let on = |m: &Model, name: &str| m.nodes.iter().filter(|n| Some(n.engine) == m.engines.lookup(name)).count();
        assert_eq!(on(&sparse, "AIcoreEngine"), 40);
        assert!(on(&dense, "VectorEngine") > 0);
    }
}
