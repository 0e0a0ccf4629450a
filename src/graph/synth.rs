//! Synthetic graphs for benchmarks and tests: random layered DAGs, Inception-like branchy
//! cells, transformer stacks and random DAGs with a mix of engines and labels, of any size,
//! deterministic for a seed. Every generator starts from a data input; all but the random DAGs
//! add constants (task-less nodes), as exported models have.

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
}

impl Family {
    pub fn name(self) -> String {
        match self {
            Family::Layered { width } => format!("layered-w{width}"),
            Family::Inception => "inception".into(),
            Family::Transformer => "transformer".into(),
            Family::Random { window: None } => "random".into(),
            Family::Random { window: Some(w) } => format!("window-{w}"),
        }
    }
}

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

struct Gen {
    b: ModelBuilder,
    rng: Lcg,
    count: usize,
}

impl Gen {
    fn node(&mut self, op: &str, tasks: u32) -> usize {
        let id = self.count;
        self.count += 1;
        let mut n = NodeSpec::new(format!("n{id}"), op, if tasks == 0 { "DNN_VM_GE_LOCAL" } else { "AIcoreEngine" });
        n.tasks = tasks;
        if tasks > 0 {
            n.cost_us = 1.0 + (self.rng.next() % 40) as f64;
            n.cores = 1 + (self.rng.next() % 24) as u32;
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

/// A graph of about `nodes` nodes (at least a few) of the given family.
pub fn generate(family: Family, nodes: usize, seed: u64) -> Result<Model> {
    let mut g = Gen { b: ModelBuilder::new(format!("{}-{nodes}", family.name())), rng: Lcg(seed), count: 0 };
    let x = g.node("Data", 0);
    match family {
        Family::Layered { width } => {
            let width = width.max(1);
            let mut prev2: Vec<usize> = vec![x];
            let mut prev: Vec<usize> = vec![x];
            while g.count + width < nodes.max(2) {
                let mut layer = Vec::with_capacity(width);
                for _ in 0..width {
                    let k = 1 + (g.rng.next() % 3) as usize;
                    let mut ins = Vec::with_capacity(k);
                    for j in 0..k {
                        let src = if j == 2 { &prev2 } else { &prev };
                        ins.push(src[(g.rng.next() as usize) % src.len()]);
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
        let mut pick = g.rng.next() % 100;
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
            n.cost_us = 1.0 + (g.rng.next() % 40) as f64;
            n.cores = 1 + (g.rng.next() % 24) as u32;
        }
        // About 1 % of the nodes carry each kind of label, from a handful of values.
        let r = g.rng.next() % 1000;
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
        let k = 1 + (g.rng.next() % 3) as usize;
        ins.clear();
        for _ in 0..k {
            ins.push(id - 1 - (g.rng.next() as usize) % span);
        }
        ins.sort_unstable();
        ins.dedup();
        for &src in &ins {
            let e = if g.rng.next() % 20 == 0 {
                EdgeSpec::control(format!("n{src}"), format!("n{id}"))
            } else {
                EdgeSpec::data(format!("n{src}"), format!("n{id}"))
            };
            g.b.add_edge(e);
        }
    }
}
