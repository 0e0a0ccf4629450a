//! Reading an allocation document (allocation-json.md) for the checker, resolving names to
//! the graph's nodes. Problems that make the document unusable are returned as rule-0
//! violations; everything else is kept for the rules.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;

use super::Violation;
use crate::graph::{IdVec, Model, NodeId};

/// One entry of `nodes`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocNode {
    pub name: String,
    pub graph: String,
    pub stream: Option<u32>,
    pub logical_stream: Option<u32>,
    pub inserted: bool,
    /// Operator type (`type`), for the tasks of inserted nodes.
    pub op_type: String,
    pub attached: Vec<u32>,
    /// The graph node it is (`None` for inserted nodes).
    pub model: Option<NodeId>,
    pub send: Vec<u64>,
    pub recv: Vec<u64>,
    /// Device tasks of the graph node (`tasks`; 0 for inserted nodes): a node without any is
    /// transparent for rules 1 and 8.
    pub tasks: u32,
}

/// One end of a sync: a document node and the stream it runs the record/wait on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct End {
    pub node: usize,
    pub stream: u32,
}

/// One entry of `syncs`: the only synchronisation a reader may rely on (allocation-json.md:
/// one entry per Send/Recv pair, whatever its kind). Other fields a writer adds, such as an
/// old `split_events` list, are not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocSync {
    pub id: u64,
    pub from: End,
    pub to: End,
    /// Position in `syncs`, and the names as written, for messages.
    pub index: usize,
    pub from_name: String,
    pub to_name: String,
}

/// A parsed allocation document.
#[derive(Clone, Debug)]
pub struct Doc {
    pub nodes: Vec<DocNode>,
    pub syncs: Vec<DocSync>,
    pub node_of_model: IdVec<NodeId, usize>,
    pub notify: bool,
    pub event_count: u64,
    pub logical: u64,
    pub physical: u64,
    pub attached_count: u64,
    /// `streams.huge`: physical streams created as huge streams.
    pub huge: Vec<u32>,
    /// Activating node and the streams it starts.
    pub activations: Vec<(usize, Vec<u32>)>,
    /// Non-fatal problems found while reading (rules 3, 5, 6 and unresolvable ends).
    pub problems: Vec<Violation>,
}

fn v0(msg: impl Into<String>) -> Violation {
    Violation { rule: 0, message: msg.into() }
}

fn stream_of(v: Option<&Value>) -> Result<Option<u32>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(x) => match x.as_i64() {
            Some(-1) => Ok(None),
            Some(n) if (0..=i64::from(u32::MAX - 1)).contains(&n) => Ok(Some(n as u32)),
            _ => Err(format!("stream {x} is neither -1 nor a stream id")),
        },
    }
}

fn u64s(v: Option<&Value>) -> Vec<u64> {
    v.and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_u64).collect()).unwrap_or_default()
}

fn get_u64(doc: &Value, path: &[&str]) -> Option<u64> {
    let mut v = doc;
    for p in path {
        v = v.get(p)?;
    }
    v.as_u64()
}

impl Doc {
    pub fn parse(model: &Model, doc: &Value) -> Result<Doc, Vec<Violation>> {
        if doc.get("format").and_then(Value::as_str) != Some("stream-allocation") {
            return Err(vec![v0("not an allocation document: 'format' is not \"stream-allocation\"")]);
        }
        if doc.get("version").and_then(Value::as_u64) != Some(1) {
            return Err(vec![v0("allocation document 'version' is not 1")]);
        }
        if let Some(e) = doc.get("error") {
            return Err(vec![v0(format!("the document is an allocation error: {e}"))]);
        }
        let Some(raw_nodes) = doc.get("nodes").and_then(Value::as_array) else {
            return Err(vec![v0("'nodes' is missing or not an array")]);
        };
        let mut by_key: HashMap<(&str, &str), NodeId> = HashMap::with_capacity(model.nodes.len());
        for (id, n) in model.nodes.enumerate() {
            by_key.insert((model.graph_label(n.graph), n.name.as_str()), id);
        }
        let mut fatal = Vec::new();
        let mut nodes = Vec::with_capacity(raw_nodes.len());
        let mut node_of_model: IdVec<NodeId, usize> = IdVec::filled(model.nodes.len(), usize::MAX);
        for (i, v) in raw_nodes.iter().enumerate() {
            let name = v.get("name").and_then(Value::as_str).unwrap_or("");
            let graph = v.get("graph").and_then(Value::as_str).unwrap_or("");
            let inserted = v.get("inserted").and_then(Value::as_bool).unwrap_or(false);
            let stream = stream_of(v.get("stream"));
            let logical = stream_of(v.get("logical_stream"));
            let (stream, logical_stream) = match (stream, logical) {
                (Ok(s), Ok(l)) => (s, l),
                (Err(e), _) | (_, Err(e)) => {
                    fatal.push(v0(format!("nodes[{i}] '{name}': {e}")));
                    continue;
                }
            };
            let model_id = if inserted {
                None
            } else {
                match by_key.get(&(graph, name)) {
                    Some(&id) => {
                        if node_of_model[id] != usize::MAX {
                            fatal.push(v0(format!("node '{name}' of graph '{graph}' is listed twice in 'nodes'")));
                        }
                        node_of_model[id] = nodes.len();
                        Some(id)
                    }
                    None => {
                        fatal.push(v0(format!("nodes[{i}] '{name}' (graph '{graph}') is not a node of the graph")));
                        continue;
                    }
                }
            };
            nodes.push(DocNode {
                name: name.to_string(),
                graph: graph.to_string(),
                stream,
                logical_stream,
                inserted,
                op_type: v.get("type").and_then(Value::as_str).unwrap_or("").to_string(),
                attached: u64s(v.get("attached_streams")).into_iter().map(|s| s as u32).collect(),
                model: model_id,
                send: u64s(v.get("send")),
                recv: u64s(v.get("recv")),
                tasks: model_id.map_or(0, |id| model.nodes[id].tasks),
            });
        }
        for (id, n) in model.nodes.enumerate() {
            if node_of_model[id] == usize::MAX {
                fatal.push(v0(format!(
                    "node '{}' of graph '{}' is missing from 'nodes'",
                    n.name,
                    model.graph_label(n.graph)
                )));
            }
        }
        if !fatal.is_empty() {
            return Err(fatal);
        }
        let mut d = Doc {
            nodes,
            syncs: Vec::new(),
            node_of_model,
            notify: doc.pointer("/events/kind").and_then(Value::as_str) == Some("notify"),
            event_count: get_u64(doc, &["events", "count"]).unwrap_or(0),
            logical: get_u64(doc, &["streams", "logical"]).unwrap_or(0),
            physical: get_u64(doc, &["streams", "physical"]).unwrap_or(0),
            attached_count: get_u64(doc, &["streams", "attached"]).unwrap_or(0),
            huge: u64s(doc.pointer("/streams/huge")).into_iter().map(|s| s as u32).collect(),
            activations: Vec::new(),
            problems: Vec::new(),
        };
        d.read_syncs(doc);
        d.read_activations(doc);
        Ok(d)
    }

    /// Graph nodes by name (inserted nodes are never sync ends).
    fn by_name(&self) -> HashMap<&str, Vec<usize>> {
        // Graph nodes, then inserted ones: a sync end names an inserted Send/Recv node where
        // the split put it on another piece than its node (allocation-json.md, `syncs`), and a
        // graph node of the same name comes first.
        let mut m: HashMap<&str, Vec<usize>> = HashMap::new();
        for inserted in [false, true] {
            for (i, n) in self.nodes.iter().enumerate().filter(|(_, n)| n.inserted == inserted) {
                let entry = m.entry(n.name.as_str()).or_default();
                if !inserted || entry.is_empty() {
                    entry.push(i);
                }
            }
        }
        m
    }

    /// Resolves `NAME`, `NAME@attached` or `NAME@attached:ID`; among same-named nodes of
    /// different graphs, the one of `graph` (`from_graph` / `to_graph`) when given, else the
    /// one whose per-node `send` / `recv` lists the id.
    fn resolve(
        &self,
        names: &HashMap<&str, Vec<usize>>,
        text: &str,
        graph: Option<&str>,
        id: u64,
        sending: bool,
    ) -> Result<End, String> {
        let (name, att): (&str, Option<Option<u32>>) = if names.contains_key(text) {
            (text, None)
        } else if let Some((n, rest)) = text.rsplit_once("@attached") {
            match rest.strip_prefix(':') {
                None if rest.is_empty() => (n, Some(None)),
                Some(x) => (n, Some(Some(x.parse().map_err(|_| format!("bad attached stream in '{text}'"))?))),
                None => (text, None),
            }
        } else {
            (text, None)
        };
        let all = names.get(name).ok_or_else(|| format!("'{name}' names no node"))?;
        let in_graph: Vec<usize>;
        let cands = match graph {
            Some(g) => {
                in_graph = all.iter().copied().filter(|&c| self.nodes[c].graph == g).collect();
                if in_graph.is_empty() {
                    return Err(format!("'{name}' names no node of graph '{g}'"));
                }
                &in_graph
            }
            None => all,
        };
        let node = if cands.len() == 1 {
            cands[0]
        } else {
            let listed: Vec<usize> = cands
                .iter()
                .copied()
                .filter(|&c| {
                    let n = &self.nodes[c];
                    if sending { n.send.contains(&id) } else { n.recv.contains(&id) }
                })
                .collect();
            match listed.as_slice() {
                [one] => *one,
                _ => return Err(format!("'{name}' is ambiguous: {} nodes of different graphs share it", cands.len())),
            }
        };
        let n = &self.nodes[node];
        let stream = match att {
            None => n.stream.ok_or_else(|| format!("'{name}' runs on no stream (-1)"))?,
            Some(None) => match n.attached.as_slice() {
                [s] => *s,
                [] => return Err(format!("'{name}' has no attached stream")),
                _ => return Err(format!("'{name}' has several attached streams; the end must name one")),
            },
            Some(Some(s)) => {
                if !n.attached.contains(&s) {
                    return Err(format!("'{name}' has no attached stream {s}"));
                }
                s
            }
        };
        Ok(End { node, stream })
    }

    fn read_syncs(&mut self, doc: &Value) {
        let key = "syncs";
        let Some(raw) = doc.get(key).and_then(Value::as_array) else {
            self.problems.push(v0(format!("'{key}' is missing or not an array")));
            return;
        };
        let names = self.by_name();
        let mut syncs = Vec::with_capacity(raw.len());
        let mut problems = Vec::new();
        for (i, s) in raw.iter().enumerate() {
            let id = s.get("id").and_then(Value::as_u64);
            let from = s.get("from").and_then(Value::as_str);
            let to = s.get("to").and_then(Value::as_str);
            let (Some(id), Some(from), Some(to)) = (id, from, to) else {
                problems.push(v0(format!("{key}[{i}] needs an integer 'id' and string 'from' and 'to'")));
                continue;
            };
            let graph = |k: &str| s.get(k).and_then(Value::as_str);
            let f = self.resolve(&names, from, graph("from_graph"), id, true);
            let t = self.resolve(&names, to, graph("to_graph"), id, false);
            match (f, t) {
                (Ok(f), Ok(t)) => {
                    syncs.push(DocSync { id, from: f, to: t, index: i, from_name: from.into(), to_name: to.into() })
                }
                (Err(e), _) | (_, Err(e)) => problems.push(v0(format!("{key}[{i}] (id {id}, {from} -> {to}): {e}"))),
            }
        }
        self.syncs.extend(syncs);
        self.problems.extend(problems);
    }

    fn read_activations(&mut self, doc: &Value) {
        let Some(raw) = doc.get("activations").and_then(Value::as_array) else { return };
        let names = self.by_name();
        let mut acts = Vec::new();
        let mut problems = Vec::new();
        for a in raw {
            let node = a.get("node").and_then(Value::as_str).unwrap_or("");
            let streams: Vec<u32> = u64s(a.get("streams")).into_iter().map(|s| s as u32).collect();
            match names.get(node).map(Vec::as_slice) {
                Some([one]) => acts.push((*one, streams)),
                _ => problems.push(v0(format!("activation node '{node}' does not name exactly one node"))),
            }
        }
        self.activations = acts;
        self.problems.extend(problems);
    }

    /// Distinct streams carrying a node (main or attached).
    pub fn streams_used(&self) -> usize {
        let mut main = BTreeSet::new();
        let mut att = BTreeSet::new();
        for n in &self.nodes {
            main.extend(n.stream);
            att.extend(n.attached.iter().copied());
        }
        main.len() + att.difference(&main).count()
    }

    /// Ids and the pairs using them, in document order.
    pub fn by_id(&self) -> BTreeMap<u64, Vec<usize>> {
        let mut m: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
        for (i, s) in self.syncs.iter().enumerate() {
            m.entry(s.id).or_default().push(i);
        }
        m
    }

    /// Whether document node `i` is a graph node with device tasks placed on a stream: the
    /// nodes rules 1 and 8 order. Task-less and unplaced nodes are transparent.
    pub fn bearing(&self, i: usize) -> bool {
        let n = &self.nodes[i];
        n.model.is_some() && n.tasks > 0 && n.stream.is_some()
    }
}

/// One dependency rules 1 and 8 order: graph node `from` before graph node `to` (document
/// node indexes), both with device tasks and a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Dep {
    pub from: usize,
    pub to: usize,
    /// `None`: an edge of the graph; `Some(x)`: the edge into `to` starts at the task-less (or
    /// unplaced) node `x`, through which `from` reaches it.
    pub via: Option<NodeId>,
}

impl Doc {
    /// The graph's edges with task-less nodes contracted (allocation-json.md, rules 1 and 8):
    /// `a -> view -> b` becomes `a -> b`. Nodes without device tasks, or without a stream, run
    /// nothing, so only the task-bearing nodes on either side of them need an order. Sorted
    /// and without repeats; a direct edge wins over a path through task-less nodes.
    pub fn dependencies(&self, model: &Model) -> Vec<Dep> {
        let bearing = |n: NodeId| self.bearing(self.node_of_model[n]);
        // Nearest bearing ancestors of every non-bearing node, in each graph's topological order.
        let mut providers: IdVec<NodeId, Vec<usize>> = IdVec::filled(model.nodes.len(), Vec::new());
        let mut deps: Vec<Dep> = Vec::new();
        for g in model.graphs.iter() {
            for &n in &g.order {
                let to = self.node_of_model[n];
                let mut mine: BTreeSet<usize> = BTreeSet::new();
                for e in model.in_edges(n) {
                    if e.src == n {
                        continue;
                    }
                    let from = self.node_of_model[e.src];
                    match (bearing(e.src), bearing(n)) {
                        (true, true) => deps.push(Dep { from, to, via: None }),
                        (false, true) => {
                            deps.extend(providers[e.src].iter().map(|&p| Dep { from: p, to, via: Some(e.src) }))
                        }
                        (true, false) => {
                            mine.insert(from);
                        }
                        (false, false) => mine.extend(providers[e.src].iter().copied()),
                    }
                }
                if !bearing(n) {
                    providers[n] = mine.into_iter().collect();
                }
            }
        }
        deps.sort_unstable();
        deps.dedup_by(|b, a| a.from == b.from && a.to == b.to);
        deps
    }
}
