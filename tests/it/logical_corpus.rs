//! Every static corpus graph through the logical stage in each auto multi-stream mode, against
//! expectations the test derives from the graph JSON alone (ge-compiler.md §4.11, cv mode
//! §2.2), so an allocator that puts everything on one stream, or scatters nodes, fails:
//!
//! * the DAG modes (`LoadBalance`, `MainStream:N`, `WeightedLoadBalance:N`): the root's task
//!   nodes outside HCCL form a DAG over their direct edges, with a minimum path cover of P
//!   chains (computed here by Kuhn's augmenting paths). They land on exactly min(P, N) streams,
//!   each stream a union of whole chains: the streams' own minimum path covers add up to P.
//!   `MainStream` keeps one stream a single chain (the costliest alone).
//! * the default (no mode): at the default parallelism of 1, each engine's task nodes on one
//!   stream of their own.
//! * `cv`: vector nodes parallel to some cube node take the vector engine's stream, one more
//!   than the default's exactly when there is such a node; the others stay with the cubes.
//! * every mode: stream ids are continuous from 0, and two runs are byte-identical.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use crate::common;
use stream_alloc::allocate;
use stream_alloc::compile::Stage;
use stream_alloc::graph::{GraphId, Shape, json};
use stream_alloc::memory::AllocationDocument;

/// The root graph as the test sees it, from its JSON.
struct Dag {
    /// Node names in declaration order.
    names: Vec<String>,
    /// Per node, its direct successors.
    succ: Vec<Vec<usize>>,
    /// Per node, its type.
    types: Vec<String>,
    /// Per node, whether it runs on `AIcoreEngine`.
    aicore: Vec<bool>,
    /// Per node, whether the DAG modes place it: it has tasks and is not HCCL.
    placed: Vec<bool>,
    /// Per node, its engine when it has tasks.
    task_engine: Vec<Option<String>>,
}

/// The corpus's AI-core operator types that run on the cube unit (matrix and convolution
/// kernels); the other AI-core types are vector work.
const CUBE: &[&str] =
    &["Conv2D", "Conv2DBackpropFilter", "Conv2DBackpropInput", "DepthwiseConv2D", "MatMul", "BatchMatMul"];

impl Dag {
    fn of(graph: &Value) -> Dag {
        let nodes = graph["nodes"].as_array().unwrap();
        let mut index = HashMap::new();
        let mut dag = Dag {
            names: Vec::new(),
            succ: Vec::new(),
            types: Vec::new(),
            aicore: Vec::new(),
            placed: Vec::new(),
            task_engine: Vec::new(),
        };
        for n in nodes {
            assert!(n.get("attrs").is_none(), "a corpus node carries attributes (labels?): update this test");
            let name = n["name"].as_str().unwrap().to_string();
            let tasks = n.get("tasks").and_then(Value::as_u64).unwrap_or(1);
            index.insert(name.clone(), dag.names.len());
            dag.names.push(name);
            dag.types.push(n["type"].as_str().unwrap().to_string());
            dag.aicore.push(n["engine"] == "AIcoreEngine");
            dag.placed.push(tasks > 0 && n["engine"] != "DNN_HCCL");
            dag.task_engine.push((tasks > 0).then(|| n["engine"].as_str().unwrap().to_string()));
            dag.succ.push(Vec::new());
        }
        for e in graph["edges"].as_array().unwrap() {
            let (u, v) = (index[e["src"].as_str().unwrap()], index[e["dst"].as_str().unwrap()]);
            if !dag.succ[u].contains(&v) {
                dag.succ[u].push(v);
            }
        }
        dag
    }

    /// The size of a minimum vertex-disjoint path cover of the vertices `keep` selects, over
    /// the direct edges between them: their count less a maximum matching of out-copies to
    /// in-copies (Kuhn's augmenting paths).
    fn path_cover(&self, keep: &dyn Fn(usize) -> bool) -> usize {
        let n = self.names.len();
        let mut matched_to: Vec<Option<usize>> = vec![None; n];
        fn augment(
            u: usize,
            dag: &Dag,
            keep: &dyn Fn(usize) -> bool,
            seen: &mut [bool],
            to: &mut [Option<usize>],
        ) -> bool {
            for &v in &dag.succ[u] {
                if !keep(v) || seen[v] {
                    continue;
                }
                seen[v] = true;
                if to[v].is_none_or(|w| augment(w, dag, keep, seen, to)) {
                    to[v] = Some(u);
                    return true;
                }
            }
            false
        }
        let mut matching = 0;
        for u in (0..n).filter(|&u| keep(u)) {
            let mut seen = vec![false; n];
            if augment(u, self, keep, &mut seen, &mut matched_to) {
                matching += 1;
            }
        }
        (0..n).filter(|&u| keep(u)).count() - matching
    }

    /// Per node, the nodes it reaches along edges (itself included), as a bitset.
    fn reach(&self) -> Vec<Vec<u64>> {
        let n = self.names.len();
        let mut indeg = vec![0usize; n];
        for s in &self.succ {
            for &v in s {
                indeg[v] += 1;
            }
        }
        let mut topo: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
        let mut i = 0;
        while i < topo.len() {
            for &w in &self.succ[topo[i]] {
                indeg[w] -= 1;
                if indeg[w] == 0 {
                    topo.push(w);
                }
            }
            i += 1;
        }
        assert_eq!(topo.len(), n, "a cycle");
        let mut reach = vec![vec![0u64; n.div_ceil(64)]; n];
        for &u in topo.iter().rev() {
            let mut r = std::mem::take(&mut reach[u]);
            r[u / 64] |= 1 << (u % 64);
            for &w in &self.succ[u] {
                for (a, b) in r.iter_mut().zip(&reach[w]) {
                    *a |= b;
                }
            }
            reach[u] = r;
        }
        reach
    }
}

/// The stream cap of a DAG mode (8 when it names none), `None` for the other modes.
fn dag_cap(mode: &str) -> Option<usize> {
    let (name, n) = mode.split_once(':').map_or((mode, None), |(a, b)| (a, Some(b.parse().unwrap())));
    matches!(name, "LoadBalance" | "MainStream" | "WeightedLoadBalance").then(|| n.unwrap_or(8))
}

#[test]
fn corpus_static_multi_logical() {
    let files = common::corpus_paths();
    assert!(files.len() >= 10, "corpus missing");
    let mut checked = 0;
    let mut spread = 0;
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        let graph: Value = serde_json::from_slice(&bytes).unwrap();
        let dag = Dag::of(&graph);
        let mut default_count = 0;
        for mode in ["", "cv", "LoadBalance", "MainStream:2", "WeightedLoadBalance:4"] {
            let mut b = json::builder_from_slice(&bytes).unwrap();
            if !mode.is_empty() {
                b.options.set_str("auto_multistream_parallel_mode", mode).unwrap();
            }
            let model = b.build().unwrap();
            if model.root().shape != Shape::Static {
                continue;
            }
            let what = format!("{} mode '{mode}'", path.display());
            let a = allocate(&model, Stage::Logical).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(a.mode(), "static-multi", "{what}");
            let mut used = vec![false; a.logical_count() as usize];
            for s in a.logical_stream().iter().flatten() {
                assert!(s.0 < a.logical_count(), "{what}: stream {s} >= count {}", a.logical_count());
                used[s.index()] = true;
            }
            assert!(used.iter().all(|u| *u), "{what}: stream ids are not continuous: {used:?}");
            let again = allocate(&model, Stage::Logical).unwrap();
            assert_eq!(a.to_json_string_new_plan(&model), again.to_json_string_new_plan(&model), "{what}: runs differ");

            // Each node's stream; u32::MAX for none.
            let stream: Vec<u32> = dag
                .names
                .iter()
                .map(|name| a.logical_stream()[model.find_node(GraphId::ROOT, name).unwrap()].map_or(u32::MAX, |s| s.0))
                .collect();
            let mut members: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
            for v in (0..dag.names.len()).filter(|&v| dag.placed[v]) {
                assert_ne!(stream[v], u32::MAX, "{what}: task node {} has no stream", dag.names[v]);
                members.entry(stream[v]).or_default().push(v);
            }
            if mode.is_empty() {
                // At the default parallelism of 1, one stream per engine holds its task nodes.
                let mut of_engine: BTreeMap<&str, BTreeSet<u32>> = BTreeMap::new();
                for (v, e) in dag.task_engine.iter().enumerate() {
                    if let Some(e) = e {
                        of_engine.entry(e).or_default().insert(stream[v]);
                    }
                }
                let streams: Vec<&BTreeSet<u32>> = of_engine.values().collect();
                assert!(streams.iter().all(|s| s.len() == 1), "{what}: an engine on several streams: {of_engine:?}");
                let distinct: BTreeSet<u32> = streams.iter().flat_map(|s| s.iter().copied()).collect();
                assert_eq!(distinct.len(), of_engine.len(), "{what}: engines share a stream: {of_engine:?}");
                default_count = a.logical_count();
            }
            if let Some(cap) = dag_cap(mode) {
                let p = dag.path_cover(&|v| dag.placed[v]);
                assert_eq!(members.len(), p.min(cap), "{what}: {p} chains on {} streams", members.len());
                let covers: Vec<usize> =
                    members.keys().map(|&s| dag.path_cover(&|v| dag.placed[v] && stream[v] == s)).collect();
                assert_eq!(covers.iter().sum::<usize>(), p, "{what}: streams split chains: covers {covers:?}");
                if mode.starts_with("MainStream") && p > 1 {
                    assert!(covers.contains(&1), "{what}: no stream holds one chain alone: {covers:?}");
                }
                spread += usize::from(members.len() > 1);
            }
            if mode == "cv" {
                let cubes: Vec<usize> =
                    (0..dag.names.len()).filter(|&v| dag.placed[v] && CUBE.contains(&dag.types[v].as_str())).collect();
                let cube_streams: Vec<u32> = cubes.iter().map(|&c| stream[c]).collect();
                let reach = dag.reach();
                let reaches = |u: usize, v: usize| reach[u][v / 64] >> (v % 64) & 1 == 1;
                let mut parallel = 0;
                for v in (0..dag.names.len())
                    .filter(|&v| dag.placed[v] && dag.aicore[v] && !CUBE.contains(&dag.types[v].as_str()))
                {
                    let on_cube_stream = cube_streams.contains(&stream[v]);
                    if cubes.iter().any(|&c| !reaches(c, v) && !reaches(v, c)) {
                        parallel += 1;
                    } else {
                        assert!(
                            on_cube_stream,
                            "{what}: vector node {} ordered against every cube node left the cube streams",
                            dag.names[v]
                        );
                    }
                }
                // The marked nodes take the vector engine's stream, one more than the default's.
                assert_eq!(
                    a.logical_count(),
                    default_count + u32::from(parallel > 0),
                    "{what}: {parallel} vector nodes parallel to cube nodes"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 50, "only {checked} runs checked");
    assert!(spread >= 10, "only {spread} DAG-mode runs use more than one stream");
}
