//! Synthetic graphs for benchmarks and tests: random layered DAGs, Inception-like branchy
//! cells and transformer stacks, of any size, deterministic for a seed. Every generator adds a
//! data input and constants (task-less nodes), as exported models have.

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
}

impl Family {
    pub fn name(self) -> String {
        match self {
            Family::Layered { width } => format!("layered-w{width}"),
            Family::Inception => "inception".into(),
            Family::Transformer => "transformer".into(),
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
    }
    g.b.build()
}
