//! Every corpus graph split at `max_task_count=64`, in single-stream mode and with a
//! deterministic multi-stream test assignment (one stream per engine, one sync per cross-stream
//! edge), under `compat=ge` and the default plan. The checks recount everything independently.

use crate::common;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use stream_alloc::compile::passes::assign_single_stream;
use stream_alloc::compile::split::{TaskLimits, insert_sync_nodes, split_streams};
use stream_alloc::compile::{Allocation, SyncEnd, SyncPair};
use stream_alloc::graph::{IdVec, Model, NodeId, StreamId, json};

const LIMIT: u32 = 64;
const ROOM: u64 = 64 - 27;

fn load(path: &std::path::Path, compat: bool) -> Model {
    let mut m = json::load_file(path).unwrap();
    m.options.max_task_count = Some(LIMIT);
    m.options.compat_ge = compat;
    m
}

fn single_input(m: &mut Model) -> Allocation {
    m.options.enable_single_stream = true;
    let l = assign_single_stream(m, &m.options).unwrap();
    Allocation::from_logical(
        "static-single",
        m.options.event,
        l.node_stream,
        l.main_stream_count,
        l.attached,
        l.attached_count,
    )
}

/// One stream per engine (first appearance), syncs on every cross-stream edge.
fn engine_input(m: &Model) -> Allocation {
    let mut engines: BTreeMap<String, u32> = BTreeMap::new();
    let mut streams: IdVec<NodeId, Option<StreamId>> = IdVec::filled(m.nodes.len(), None);
    for n in m.all_nodes() {
        if m.nodes[n].tasks > 0 {
            let next = engines.len() as u32;
            streams[n] = Some(StreamId(*engines.entry(m.engine(n).name.clone()).or_insert(next)));
        }
    }
    let mut pairs = BTreeSet::new();
    for e in m.edges.iter() {
        if let (Some(a), Some(b)) = (streams[e.src], streams[e.dst]) {
            if a != b {
                pairs.insert((m.topo_index[e.src], e.src, e.dst));
            }
        }
    }
    let syncs: Vec<SyncPair> = pairs
        .into_iter()
        .enumerate()
        .map(|(i, (_, a, b))| SyncPair {
            id: stream_alloc::graph::EventId(i as u32),
            from: SyncEnd::main(a),
            to: SyncEnd::main(b),
        })
        .collect();
    let count = engines.len() as u32;
    let a = Allocation::from_logical(
        "test-engine",
        m.options.event,
        streams,
        count,
        IdVec::filled(m.nodes.len(), vec![]),
        0,
    );
    let mut a = a.with_given_syncs(syncs);
    insert_sync_nodes(m, &mut a);
    a
}

/// Splits and checks the result; returns the number of syncs the split added.
fn split_and_check(m: &Model, mut a: Allocation, what: &str) -> u32 {
    let input_syncs = a.syncs().to_vec();
    let logical = a.logical_stream().clone();
    split_streams(m, &m.options, &mut a, &TaskLimits::from_options(&m.options)).unwrap();
    let order = m.all_nodes();

    // No physical stream over the limit, counting every task on it: the nodes' own, every
    // Send 1 and every Recv 2 (the input's and the split's own), StreamActive 1.
    // A node alone over the limit (an all-reduce waiting on many streams) gets a stream of its own.
    let mut tasks = vec![0u64; a.physical_count() as usize];
    let mut task_nodes = vec![0u32; a.physical_count() as usize];
    for &n in &order {
        if let Some(s) = a.stream()[n] {
            let t = u64::from(m.nodes[n].tasks);
            if t > 0 {
                tasks[s.index()] += t;
                task_nodes[s.index()] += 1;
            }
        }
    }
    for ins in a.inserted() {
        tasks[ins.stream.index()] += ins.kind.sync_tasks().unwrap_or(1);
    }
    for (s, (&t, &k)) in tasks.iter().zip(&task_nodes).enumerate() {
        assert!(t <= ROOM || k == 1, "{what}: stream {s} holds {t} tasks in {k} nodes");
    }

    // Each logical stream's nodes keep their order: its pieces are contiguous runs.
    let mut runs: BTreeMap<StreamId, Vec<(StreamId, NodeId, NodeId)>> = BTreeMap::new();
    for &n in &order {
        let (Some(l), Some(p)) = (logical[n], a.stream()[n]) else { continue };
        assert_eq!(a.split_to_logic()[p.index()], l, "{what}: piece {p} of stream {l}");
        let r = runs.entry(l).or_default();
        match r.last_mut() {
            Some(last) if last.0 == p => last.2 = n,
            _ => {
                assert!(r.iter().all(|x| x.0 != p), "{what}: stream {l} returns to piece {p}");
                r.push((p, n, n));
            }
        }
    }

    // Consecutive pieces are ordered: the split's sync, or a chain of stream order and syncs.
    let mut next_on_stream: IdVec<NodeId, Option<NodeId>> = IdVec::filled(m.nodes.len(), None);
    let mut last_on: BTreeMap<StreamId, NodeId> = BTreeMap::new();
    for &n in &order {
        if let Some(s) = a.stream()[n] {
            if let Some(prev) = last_on.insert(s, n) {
                next_on_stream[prev] = Some(n);
            }
        }
    }
    let mut sync_out: IdVec<NodeId, Vec<NodeId>> = IdVec::filled(m.nodes.len(), vec![]);
    for p in a.syncs() {
        sync_out[p.from.node].push(p.to.node);
    }
    let reaches = |from: NodeId, to: NodeId| {
        let mut seen = BTreeSet::from([from]);
        let mut queue = VecDeque::from([from]);
        while let Some(x) = queue.pop_front() {
            for y in next_on_stream[x].iter().chain(sync_out[x].iter()) {
                if *y == to {
                    return true;
                }
                if seen.insert(*y) {
                    queue.push_back(*y);
                }
            }
        }
        false
    };
    for r in runs.values() {
        for w in r.windows(2) {
            let (last, first) = (w[0].2, w[1].1);
            assert!(reaches(last, first), "{what}: pieces {} and {} are not ordered", w[0].0, w[1].0);
        }
    }
    let split_pairs = (a.syncs().len() - input_syncs.len()) as u32;
    assert_eq!(split_pairs, a.split_event_count(), "{what}");
    let ids: BTreeSet<u32> = a.syncs().iter().map(|p| p.id.0).collect();
    assert_eq!(ids.len() as u32, a.sync_count(), "{what}: sync ids are 0..count");
    a.split_event_count()
}

#[test]
fn corpus_single_stream_and_engine_streams_at_limit_64() {
    let mut report = Vec::new();
    for path in common::corpus_paths() {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let mut row = Vec::new();
        for compat in [true, false] {
            let mut m = load(&path, compat);
            let single = single_input(&mut m);
            row.push(split_and_check(&m, single, &format!("{name} single compat={compat}")));
            let m = load(&path, compat);
            let multi = engine_input(&m);
            row.push(split_and_check(&m, multi, &format!("{name} engines compat={compat}")));
        }
        // The default plan never adds more syncs than GE's loop.
        assert!(row[2] <= row[0] && row[3] <= row[1], "{name}: {row:?}");
        report
            .push(format!("{name}: single ge={} default={}; engines ge={} default={}", row[0], row[2], row[1], row[3]));
    }
    eprintln!("syncs added by the split (max_task_count=64):\n{}", report.join("\n"));
}
