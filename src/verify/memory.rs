//! Rule 8 of allocation-json.md: the `memory` plan. Tensors whose byte ranges overlap must
//! have ordered lifetimes (every reader of one, through views, and its producer happen
//! strictly before the other's producer, by stream order and syncs), every tensor that owns
//! memory is placed once inside the arena with its graph's size, views own nothing, and no
//! view outlives its base: a reader found through views is never later than the tensor's
//! listed `last_users`.
//!
//! Independent of the planner (src/memory): lifetimes are recomputed from the graph, and
//! happens-before comes from the document's own points (every node's stream and attached
//! streams, in `nodes` order) with a vector clock per point, joined over the syncs. Pairs
//! are tested reader by reader, not through the planner's per-stream footprints.
//! Cost: O(P·S) for P points and S streams, then O(T log T + overlapping pairs × readers).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::Violation;
use super::doc::Doc;
use crate::graph::{EdgeKind, Model, NodeId};

fn v8(message: String) -> Violation {
    Violation { rule: 8, message }
}

/// Vector clocks at the main point of every document node.
struct Clocks {
    streams: usize,
    /// `(dense stream, seq from 1)` of each document node's main point.
    main: Vec<Option<(usize, u32)>>,
    /// Clock row of each document node's main point.
    row: Vec<usize>,
    clocks: Vec<u32>,
}

impl Clocks {
    fn build(doc: &Doc) -> Clocks {
        let mut dense: BTreeMap<u32, usize> = BTreeMap::new();
        for n in &doc.nodes {
            for s in n.stream.iter().chain(n.attached.iter()) {
                let k = dense.len();
                dense.entry(*s).or_insert(k);
            }
        }
        let streams = dense.len();
        // Sync arcs into each (node, stream) point, from earlier nodes only.
        let mut into: HashMap<(usize, u32), Vec<(usize, u32)>> = HashMap::new();
        for s in &doc.syncs {
            if s.from.node < s.to.node && s.from.stream != s.to.stream {
                into.entry((s.to.node, s.to.stream)).or_default().push((s.from.node, s.from.stream));
            }
        }
        let mut point_row: HashMap<(usize, u32), usize> = HashMap::new();
        let mut last_row: Vec<Option<usize>> = vec![None; streams];
        let mut seq = vec![0u32; streams];
        let mut clocks: Vec<u32> = Vec::new();
        let mut main = vec![None; doc.nodes.len()];
        let mut row = vec![usize::MAX; doc.nodes.len()];
        let mut rows = 0usize;
        for (i, n) in doc.nodes.iter().enumerate() {
            let mut seen = BTreeSet::new();
            for &s in n.stream.iter().chain(n.attached.iter()) {
                if !seen.insert(s) {
                    continue;
                }
                let d = dense[&s];
                let base = clocks.len();
                match last_row[d] {
                    Some(r) => clocks.extend_from_within(r * streams..(r + 1) * streams),
                    None => clocks.resize(base + streams, 0),
                }
                for src in into.get(&(i, s)).into_iter().flatten() {
                    if let Some(&r) = point_row.get(src) {
                        for k in 0..streams {
                            clocks[base + k] = clocks[base + k].max(clocks[r * streams + k]);
                        }
                    }
                }
                seq[d] += 1;
                clocks[base + d] = seq[d];
                point_row.insert((i, s), rows);
                last_row[d] = Some(rows);
                if n.stream == Some(s) {
                    main[i] = Some((d, seq[d]));
                    row[i] = rows;
                }
                rows += 1;
            }
        }
        Clocks { streams, main, row, clocks }
    }

    /// Document node `x` runs strictly before document node `y` (main points).
    fn before(&self, x: usize, y: usize) -> bool {
        if x == y {
            return false;
        }
        let (Some((sx, qx)), Some(_)) = (self.main[x], self.main[y]) else { return false };
        self.clocks[self.row[y] * self.streams + sx] >= qx
    }
}

/// A tensor of the plan, resolved.
struct Entry {
    node: NodeId,
    port: u32,
    offset: u64,
    end: u64,
    /// Bearing readers through views (document node indexes).
    readers: Vec<usize>,
    until_end: bool,
}

/// Checks the `memory` section, if the document has one; returns the overlapping pairs tested.
pub fn check_memory(model: &Model, doc: &Doc, raw: &Value, out: &mut Vec<Violation>) -> Option<usize> {
    let mem = raw.get("memory")?;
    let Some(peak) = mem.get("peak_bytes").and_then(Value::as_u64) else {
        out.push(v8("memory.peak_bytes is missing or not a non-negative integer".into()));
        return Some(0);
    };
    let Some(list) = mem.get("tensors").and_then(Value::as_array) else {
        out.push(v8("memory.tensors is missing or not an array".into()));
        return Some(0);
    };
    let bearing = |n: NodeId| model.nodes[n].tasks > 0 && doc.nodes[doc.node_of_model[n]].stream.is_some();
    let name = |n: NodeId| model.nodes[n].name.as_str();
    let mut placed: BTreeMap<(NodeId, u32), usize> = BTreeMap::new();
    let mut entries: Vec<Entry> = Vec::new();
    let mut by_key: HashMap<(&str, &str), NodeId> = HashMap::with_capacity(model.nodes.len());
    for (id, n) in model.nodes.enumerate() {
        by_key.insert((model.graph_label(n.graph), n.name.as_str()), id);
    }
    let clocks = Clocks::build(doc);
    for (i, t) in list.iter().enumerate() {
        let node = t.get("node").and_then(Value::as_str);
        let graph = t.get("graph").and_then(Value::as_str).unwrap_or("");
        let port = t.get("port").and_then(Value::as_u64).unwrap_or(0);
        let (Some(node), Some(offset), Some(bytes)) =
            (node, t.get("offset").and_then(Value::as_u64), t.get("bytes").and_then(Value::as_u64))
        else {
            out.push(v8(format!("memory.tensors[{i}] needs a string 'node' and integer 'offset' and 'bytes'")));
            continue;
        };
        let Some(&n) = by_key.get(&(graph, node)) else {
            out.push(v8(format!("memory.tensors[{i}]: '{node}' (graph '{graph}') is not a node of the graph")));
            continue;
        };
        let gn = &model.nodes[n];
        let size = u32::try_from(port).ok().and_then(|p| gn.out_bytes.as_ref()?.get(p as usize).copied());
        let Some(size) = size else {
            out.push(v8(format!("memory.tensors[{i}]: node '{node}' has no out_bytes for output port {port}")));
            continue;
        };
        let port = port as u32;
        if gn.alias_input.is_some() {
            out.push(v8(format!(
                "memory.tensors[{i}]: '{node}' is a view (alias_input) and owns no memory; its readers belong to its base"
            )));
            continue;
        }
        if bytes != size || size == 0 {
            out.push(v8(format!("memory.tensors[{i}]: '{node}':{port} has {bytes} bytes, out_bytes says {size}")));
            continue;
        }
        if placed.insert((n, port), i).is_some() {
            out.push(v8(format!("memory.tensors[{i}]: '{node}':{port} is placed twice")));
            continue;
        }
        let end = offset.saturating_add(bytes);
        if end > peak {
            out.push(v8(format!(
                "memory: tensor '{node}':{port} [{offset}, {end}) is outside the arena of {peak} bytes"
            )));
        }
        let (readers, until_end) = readers_of(model, n, port, &bearing);
        let readers: Vec<usize> = readers.into_iter().map(|r| doc.node_of_model[r]).collect();
        // Views never outlive their base: every reader is at or before a listed last user.
        if let Some(users) = t.get("last_users").and_then(Value::as_array) {
            let mut listed = Vec::new();
            for u in users {
                match u.as_str().and_then(|u| by_key.get(&(graph, u))) {
                    Some(&u) => listed.push(doc.node_of_model[u]),
                    None => out.push(v8(format!(
                        "memory: tensor '{node}':{port} lists last user {u}, not a node of its graph"
                    ))),
                }
            }
            for &r in &readers {
                if !listed.iter().any(|&u| u == r || clocks.before(r, u)) {
                    out.push(v8(format!(
                        "memory: tensor '{node}':{port} is read by '{}' after its last users {:?}: the tensor (or a view of it) outlives its listed lifetime",
                        doc.nodes[r].name,
                        listed.iter().map(|&u| doc.nodes[u].name.as_str()).collect::<Vec<_>>()
                    )));
                    break;
                }
            }
        }
        entries.push(Entry { node: n, port, offset, end, readers, until_end });
    }
    for n in model.all_nodes() {
        let gn = &model.nodes[n];
        if gn.alias_input.is_some() {
            continue;
        }
        for (p, &b) in gn.out_bytes.iter().flatten().enumerate() {
            if b > 0 && !placed.contains_key(&(n, p as u32)) {
                out.push(v8(format!(
                    "memory: tensor '{}':{p} of graph '{}' ({b} bytes) is missing from memory.tensors",
                    name(n),
                    model.graph_label(gn.graph)
                )));
            }
        }
    }
    // a is dead before b is produced.
    let ordered = |a: &Entry, b: &Entry| {
        if a.until_end || !bearing(b.node) {
            return false;
        }
        let pb = doc.node_of_model[b.node];
        let pa = doc.node_of_model[a.node];
        (!bearing(a.node) || clocks.before(pa, pb)) && a.readers.iter().all(|&r| clocks.before(r, pb))
    };
    let mut idx: Vec<usize> = (0..entries.len()).collect();
    idx.sort_by_key(|&i| (entries[i].offset, entries[i].end, i));
    let mut active: Vec<usize> = Vec::new();
    let mut tested = 0usize;
    let mut bad = 0usize;
    for &i in &idx {
        let t = &entries[i];
        active.retain(|&j| entries[j].end > t.offset);
        for &j in &active {
            let x = &entries[j];
            tested += 1;
            if !(ordered(x, t) || ordered(t, x)) {
                bad += 1;
                if bad <= 5 {
                    out.push(v8(format!(
                        "memory: tensors '{}':{} [{}, {}) and '{}':{} [{}, {}) share bytes but their lifetimes are not ordered by stream order and syncs",
                        name(x.node), x.port, x.offset, x.end, name(t.node), t.port, t.offset, t.end
                    )));
                }
            }
        }
        active.push(i);
    }
    if bad > 5 {
        out.push(v8(format!("memory: {bad} pairs of tensors share bytes with unordered lifetimes in all")));
    }
    Some(tested)
}

/// Bearing readers of output `port` of `n`, through views, and whether a `NetOutput` reads it.
fn readers_of(model: &Model, n: NodeId, port: u32, bearing: &dyn Fn(NodeId) -> bool) -> (Vec<NodeId>, bool) {
    let mut out = BTreeSet::new();
    let mut until_end = false;
    let mut seen = BTreeSet::new();
    let mut stack = vec![(n, port)];
    while let Some(t) = stack.pop() {
        if !seen.insert(t) {
            continue;
        }
        for e in model.out_edges(t.0) {
            if e.kind != EdgeKind::Data || e.src_port != t.1 {
                continue;
            }
            let v = &model.nodes[e.dst];
            until_end |= v.op_type == "NetOutput";
            if v.alias_input == Some(e.dst_port) {
                for q in 0..v.out_bytes.as_ref().map_or(1, |b| b.len().max(1)) {
                    stack.push((e.dst, q as u32));
                }
            }
            if bearing(e.dst) {
                out.insert(e.dst);
            }
        }
    }
    (out.into_iter().collect(), until_end)
}
