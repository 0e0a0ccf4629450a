//! Building and validating a [`Model`]. The JSON loader and the C ABI both describe a model
//! by name through these specs; [`ModelBuilder::build`] is the one place that resolves names,
//! checks every reference and computes topological orders.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::attrs::KNOWN_GE_ATTRS;
use super::engines::{EngineOverride, EngineTable};
use super::fields::NodeContext;
use super::ids::{EdgeId, EngineId, GraphId, IdVec, NodeId, StreamId};
use super::names::NameIndex;
use super::partition::EngineSubgraph;
use super::{Adjacency, Edge, EdgeKind, Graph, Model, Node, Options, Shape, topo};
use crate::error::Result;
use crate::{bail, err};

pub use super::fields::NodeSpec;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeSpec {
    pub src: String,
    pub dst: String,
    pub kind: EdgeKind,
    pub src_port: u32,
    pub dst_port: u32,
}

impl EdgeSpec {
    pub fn data(src: impl Into<String>, dst: impl Into<String>) -> Self {
        EdgeSpec { src: src.into(), dst: dst.into(), kind: EdgeKind::Data, src_port: 0, dst_port: 0 }
    }
    pub fn control(src: impl Into<String>, dst: impl Into<String>) -> Self {
        EdgeSpec { kind: EdgeKind::Control, ..Self::data(src, dst) }
    }
}

/// One graph: the root (no parent) or a nested subgraph owned by the node named `parent`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GraphSpec {
    pub name: String,
    pub parent: Option<String>,
    pub shape: Shape,
    pub nodes: Vec<NodeSpec>,
    /// Edges by name; they follow `loaded_edges` in edge order.
    pub edges: Vec<EdgeSpec>,
    /// Edges read from a graph file, their ends resolved to positions in `nodes` while reading
    /// (20 bytes each, where an [`EdgeSpec`] holds two names); they come first in edge order.
    pub(crate) loaded_edges: Vec<LoadedEdge>,
    /// Loaded edges whose ends did not name a node when read, by name (checked by `build`).
    pub(crate) unresolved_edges: Vec<EdgeSpec>,
}

/// An edge of a graph file, resolved while reading: `src` and `dst` are positions in its
/// graph's `nodes`, or `src` is [`LoadedEdge::UNRESOLVED`] and `dst` a position in
/// `unresolved_edges`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LoadedEdge {
    pub src: u32,
    pub dst: u32,
    pub src_port: u32,
    pub dst_port: u32,
    pub kind: EdgeKind,
}

impl LoadedEdge {
    pub const UNRESOLVED: u32 = u32::MAX;
}

impl GraphSpec {
    /// Edges in all, loaded and by name.
    pub fn edge_count(&self) -> usize {
        self.loaded_edges.len() + self.edges.len()
    }
}

/// A table sized by the input that the process cannot get: an error, not an abort.
pub(crate) fn no_memory(what: &str, n: usize) -> crate::Error {
    crate::Error::new(crate::error::ErrorKind::Limit, format!("cannot allocate memory for {n} {what}"))
}

/// A `partition` entry by name: engine, nested subgraph (`None` for the root) and nodes.
pub type PartitionSpec = EngineSubgraph<String, Option<String>, String>;

/// A given event by name (graph JSON `events`): record after `from`, wait before `to`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventSpec {
    pub id: u32,
    pub from: EventEnd,
    pub to: EventEnd,
}

/// One end of a given event by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventEnd {
    pub node: String,
    /// The node's graph by name; `None`, `""` or the root's name: the root.
    pub graph: Option<String>,
    /// The end sits on this attached stream of its node instead of the node's main stream.
    pub attached: Option<u32>,
}

/// Collects a model piece by piece; [`build`](Self::build) validates it.
#[derive(Clone, Debug, Default)]
pub struct ModelBuilder {
    pub source: Option<String>,
    /// `graphs[0]` is the root.
    pub graphs: Vec<GraphSpec>,
    pub options: Options,
    pub graph_attrs: BTreeMap<String, Value>,
    pub engine_overrides: BTreeMap<String, EngineOverride>,
    pub partition: Option<Vec<PartitionSpec>>,
    /// Start from an empty engine table instead of GE's (hosts that install their own).
    pub no_builtin_engines: bool,
    /// Events given with the graph (input of the steps after logical allocation).
    pub events: Vec<EventSpec>,
}

/// Upper bound on nodes and edges: ids are `u32`.
const MAX_ITEMS: usize = u32::MAX as usize - 1;

impl ModelBuilder {
    pub fn new(name: impl Into<String>) -> Self {
        ModelBuilder { graphs: vec![GraphSpec { name: name.into(), ..Default::default() }], ..Default::default() }
    }

    pub fn root_mut(&mut self) -> &mut GraphSpec {
        &mut self.graphs[0]
    }

    /// The graph named `name` (the root's own name, or `""`, means the root).
    pub fn graph_mut(&mut self, name: &str) -> Option<&mut GraphSpec> {
        if name.is_empty() {
            return self.graphs.first_mut();
        }
        self.graphs.iter_mut().find(|g| g.name == name)
    }

    pub fn add_node(&mut self, node: NodeSpec) {
        self.graphs[0].nodes.push(node);
    }

    pub fn add_edge(&mut self, edge: EdgeSpec) {
        self.graphs[0].edges.push(edge);
    }

    /// Adds an empty nested subgraph owned by the node named `parent`.
    pub fn add_subgraph(&mut self, name: impl Into<String>, parent: impl Into<String>, shape: Shape) {
        self.graphs.push(GraphSpec { name: name.into(), parent: Some(parent.into()), shape, ..Default::default() });
    }

    /// Resolves every name, checks every reference and builds the immutable model.
    pub fn build(self) -> Result<Model> {
        self.build_indexed(Vec::new())
    }

    /// [`build`](Self::build) with the name index of the first graphs already made (node
    /// positions by name, every name once: what the loader makes while reading).
    /// The checks run in a fixed order (graphs, nodes, parents, edges, orders, partition,
    /// events), so a model with several faults always reports the same one first.
    pub(crate) fn build_indexed(self, mut indexes: Vec<NameIndex>) -> Result<Model> {
        let ModelBuilder {
            source,
            graphs: specs,
            options,
            graph_attrs,
            engine_overrides,
            partition,
            no_builtin_engines,
            events,
        } = self;
        if specs.is_empty() {
            bail!(Field, "the model has no root graph");
        }
        if specs[0].name.is_empty() {
            bail!(Field, "the root graph has no name");
        }
        let engines = engine_table(no_builtin_engines, &engine_overrides)?;
        let graph_by_name = index_graph_names(&specs)?;
        let total_nodes: usize = specs.iter().map(|g| g.nodes.len()).sum();
        let total_edges: usize = specs.iter().map(GraphSpec::edge_count).sum();
        if total_nodes > MAX_ITEMS || total_edges > MAX_ITEMS {
            bail!(
                Limit,
                "the model has {total_nodes} nodes and {total_edges} edges; at most {MAX_ITEMS} of each are supported"
            );
        }
        let (name_maps, engine_ids) = check_nodes(&specs, &mut indexes, &engines, total_nodes)?;
        let mut specs = specs;
        let mut owned_names = OwnedSubgraphs::new();
        let (mut nodes, mut graphs) = move_nodes(&mut specs, engine_ids, total_nodes, &mut owned_names)?;
        check_continuous_labels(&nodes, &graphs)?;
        let claimed = claim_subgraphs(&owned_names, &graph_by_name, &nodes)?;
        assign_parents(&specs, &claimed, &name_maps, &mut nodes, &mut graphs)?;
        order_owned_subgraphs(&owned_names, &graph_by_name, &mut nodes);
        check_nesting(&nodes, &graphs)?;
        let edges = resolve_edges(&specs, &nodes, &name_maps, &mut graphs, total_edges)?;
        check_aliases(&nodes, &edges, &graphs)?;
        let topo_index = order_graphs(&nodes, &edges, &mut graphs)?;

        let by_name = ByName { nodes: &nodes, graphs: &graphs, graph_by_name: &graph_by_name, name_maps: &name_maps };
        let partition = match partition {
            None => None,
            Some(entries) => Some(resolve_partition(&entries, &by_name, &engines)?),
        };
        let given = resolve_events(&events, &by_name)?;
        let adjacency = Adjacency::build(nodes.len(), &edges);
        let model = Model {
            name: specs[0].name.clone(),
            source,
            graphs,
            nodes,
            edges,
            adjacency,
            topo_index,
            engines,
            options,
            graph_attrs,
            partition,
            engine_overrides,
            events: given,
        };
        check_event_order(&model)?;
        Ok(model)
    }
}

/// GE's engine table (or an empty one) with the graph's `engines` overrides applied.
fn engine_table(no_builtin: bool, overrides: &BTreeMap<String, EngineOverride>) -> Result<EngineTable> {
    let mut engines = if no_builtin { EngineTable::empty() } else { EngineTable::builtin() };
    for (name, o) in overrides {
        if name.is_empty() {
            bail!(Field, "engines: an engine has an empty name");
        }
        engines.apply_override(name, o)?;
    }
    Ok(engines)
}

/// Subgraphs by name: each named, owned by a parent node, and named once (never as the root).
fn index_graph_names(specs: &[GraphSpec]) -> Result<HashMap<String, GraphId>> {
    let mut graph_by_name: HashMap<String, GraphId> = HashMap::new();
    for (i, g) in specs.iter().enumerate().skip(1) {
        if g.name.is_empty() {
            bail!(Subgraph, "subgraph {i} has no name");
        }
        if g.parent.as_deref().is_none_or(str::is_empty) {
            bail!(Subgraph, "subgraph '{}' has no parent node", g.name);
        }
        if g.name == specs[0].name {
            bail!(DuplicateName, "subgraph '{}' has the root graph's name", g.name);
        }
        if graph_by_name.insert(g.name.clone(), GraphId::new(i)).is_some() {
            bail!(DuplicateName, "two subgraphs are named '{}'", g.name);
        }
    }
    Ok(graph_by_name)
}

/// Checks everything about each node that can fail, graph by graph, while the nodes are still
/// specs: names (unique within their graph), types, engines, attributes, streams. Returns each
/// graph's name index (the given one where it covers the graph) and each node's engine.
fn check_nodes(
    specs: &[GraphSpec],
    indexes: &mut [NameIndex],
    engines: &EngineTable,
    total_nodes: usize,
) -> Result<(Vec<GraphNames>, Vec<EngineId>)> {
    let mut name_maps: Vec<GraphNames> = Vec::with_capacity(specs.len());
    let mut engine_ids: Vec<EngineId> = Vec::new();
    engine_ids.try_reserve_exact(total_nodes).map_err(|_| no_memory("nodes", total_nodes))?;
    let mut base = 0u32;
    for (gi, g) in specs.iter().enumerate() {
        let where_ = graph_where(&g.name, gi);
        let given = indexes.get_mut(gi).map(std::mem::take).filter(|i| i.len() == g.nodes.len());
        let indexed = given.is_some();
        let mut index = match given {
            Some(index) => index,
            None => NameIndex::with_capacity(g.nodes.len()).map_err(|_| no_memory("nodes", g.nodes.len()))?,
        };
        let name_of = |p: u32| g.nodes[p as usize].name.as_str();
        let mut last_engine: Option<(&str, EngineId)> = None;
        for (k, spec) in g.nodes.iter().enumerate() {
            if spec.name.is_empty() {
                bail!(Field, "a node of {where_} has an empty name");
            }
            if spec.op_type.is_empty() {
                bail!(Field, "node '{}' of {where_}: empty type", spec.name);
            }
            let engine = match last_engine {
                Some((name, id)) if name == spec.engine => Some(id),
                _ => engines.lookup(&spec.engine),
            };
            let engine = engine.ok_or_else(|| {
                err!(
                    UnknownEngine,
                    "node '{}' of {where_}: unknown engine '{}' (known engines: {}; a graph's `engines` field can add one)",
                    spec.name,
                    spec.engine,
                    engines.names()
                )
            })?;
            last_engine = Some((spec.engine.as_str(), engine));
            check_node_attrs(spec, &where_)?;
            if let Some(s) = spec.stream {
                if s != -1 && !(0..=i64::from(u32::MAX - 1)).contains(&s) {
                    bail!(Field, "node '{}' of {where_}: stream {s} is out of range (-1 or a stream id)", spec.name)
                }
            }
            engine_ids.push(engine);
            if indexed {
                continue;
            }
            let known = index.insert(&spec.name, k as u32, name_of).map_err(|_| no_memory("nodes", g.nodes.len()))?;
            if known.is_some() {
                bail!(DuplicateName, "duplicate node name '{}' in {where_}", spec.name);
            }
        }
        name_maps.push(GraphNames { index, base });
        base += g.nodes.len() as u32;
    }
    Ok((name_maps, engine_ids))
}

/// The subgraph names each node lists in its own `subgraphs`, in its order.
type OwnedSubgraphs = Vec<(NodeId, Vec<String>)>;

/// Each node spec that checked out, moved into its node in place (the node table reuses the
/// spec table's memory: a million nodes are not held twice), and one graph per spec. The
/// `subgraphs` each node lists are taken from its spec into `owned_names`.
fn move_nodes(
    specs: &mut [GraphSpec],
    engine_ids: Vec<EngineId>,
    total_nodes: usize,
    owned_names: &mut OwnedSubgraphs,
) -> Result<(IdVec<NodeId, Node>, IdVec<GraphId, Graph>)> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut graphs: IdVec<GraphId, Graph> = IdVec::new();
    let mut engine_of = engine_ids.into_iter();
    for (gi, g) in specs.iter_mut().enumerate() {
        let gid = GraphId::new(gi);
        let first = nodes.len();
        let mut next = first as u32;
        let taken = std::mem::take(&mut g.nodes);
        let count = taken.len();
        let converted = taken.into_iter().map(|mut spec| {
            let id = NodeId(next);
            next += 1;
            if !spec.subgraphs.is_empty() {
                owned_names.push((id, std::mem::take(&mut spec.subgraphs)));
            }
            Node::from_spec(spec, &NodeContext { engine: engine_of.next().unwrap_or_default(), graph: gid })
        });
        if first == 0 {
            nodes = converted.collect();
        } else {
            nodes.try_reserve(count).map_err(|_| no_memory("nodes", total_nodes))?;
            nodes.extend(converted);
        }
        graphs.push(Graph {
            name: g.name.clone(),
            shape: g.shape,
            parent: None,
            nodes: (first..nodes.len()).map(NodeId::new).collect(),
            order: Vec::new(),
            edges: Vec::new(),
        });
    }
    Ok((IdVec::from_vec(nodes), graphs))
}

/// The subgraphs nodes list in their own `subgraphs`: each exists and has one owner.
fn claim_subgraphs(
    owned_names: &[(NodeId, Vec<String>)],
    graph_by_name: &HashMap<String, GraphId>,
    nodes: &IdVec<NodeId, Node>,
) -> Result<HashMap<GraphId, NodeId>> {
    let mut claimed: HashMap<GraphId, NodeId> = HashMap::new();
    for (owner, names) in owned_names {
        let owner = *owner;
        for name in names {
            let g = *graph_by_name.get(name.as_str()).ok_or_else(|| {
                err!(Subgraph, "node '{}' owns subgraph '{name}', which does not exist", nodes[owner].name)
            })?;
            if let Some(prev) = claimed.insert(g, owner) {
                if prev != owner {
                    bail!(
                        Subgraph,
                        "subgraph '{name}' is owned by both '{}' and '{}'",
                        nodes[prev].name,
                        nodes[owner].name
                    );
                }
                bail!(DuplicateName, "node '{}' lists subgraph '{name}' twice", nodes[owner].name);
            }
        }
    }
    Ok(claimed)
}

/// Parents: a subgraph's `parent` names a node of some other graph. A node's own `subgraphs`
/// list settles which one when the name occurs in several graphs.
fn assign_parents(
    specs: &[GraphSpec],
    claimed: &HashMap<GraphId, NodeId>,
    name_maps: &[GraphNames],
    nodes: &mut IdVec<NodeId, Node>,
    graphs: &mut IdVec<GraphId, Graph>,
) -> Result<()> {
    for (gi, g) in specs.iter().enumerate().skip(1) {
        let gid = GraphId::new(gi);
        let parent_name = g.parent.as_deref().unwrap_or_default();
        let candidates: Vec<NodeId> = name_maps
            .iter()
            .enumerate()
            .filter(|&(other, _)| other != gi)
            .filter_map(|(_, m)| m.find(nodes, parent_name))
            .collect();
        let parent = match claimed.get(&gid) {
            Some(&owner) => {
                if nodes[owner].name != parent_name {
                    bail!(
                        Subgraph,
                        "subgraph '{}' names parent '{parent_name}' but node '{}' lists it",
                        g.name,
                        nodes[owner].name
                    );
                }
                owner
            }
            None => match candidates.as_slice() {
                [] => bail!(Subgraph, "subgraph '{}': parent node '{parent_name}' does not exist", g.name),
                [one] => *one,
                _ => bail!(
                    Subgraph,
                    "subgraph '{}': parent name '{parent_name}' is ambiguous (a node of {} graphs); list the subgraph in the parent's `subgraphs`",
                    g.name,
                    candidates.len()
                ),
            },
        };
        graphs[gid].parent = Some(parent);
        nodes[parent].subgraphs.push(gid);
    }
    Ok(())
}

/// Keeps each owner's subgraphs in the order the owner declared them.
fn order_owned_subgraphs(
    owned_names: &[(NodeId, Vec<String>)],
    graph_by_name: &HashMap<String, GraphId>,
    nodes: &mut IdVec<NodeId, Node>,
) {
    for (owner, names) in owned_names {
        let owner = *owner;
        let order: Vec<GraphId> = names.iter().map(|n| graph_by_name[n.as_str()]).collect();
        let mut rest: Vec<GraphId> = nodes[owner].subgraphs.iter().copied().filter(|g| !order.contains(g)).collect();
        let mut all = order;
        all.append(&mut rest);
        nodes[owner].subgraphs = all;
    }
}

/// Nesting must be a tree rooted at the root graph.
fn check_nesting(nodes: &IdVec<NodeId, Node>, graphs: &IdVec<GraphId, Graph>) -> Result<()> {
    for gid in graphs.ids().skip(1) {
        let mut cur = gid;
        let mut steps = 0usize;
        while let Some(p) = graphs[cur].parent {
            cur = nodes[p].graph;
            steps += 1;
            if cur == gid || steps > graphs.len() {
                bail!(Subgraph, "subgraph '{}' is nested inside itself through its parent nodes", graphs[gid].name);
            }
        }
    }
    Ok(())
}

/// Edges within each graph, loaded ones (already positions) first, then those by name; each
/// end must name a node of the edge's own graph.
fn resolve_edges(
    specs: &[GraphSpec],
    nodes: &IdVec<NodeId, Node>,
    name_maps: &[GraphNames],
    graphs: &mut IdVec<GraphId, Graph>,
    total_edges: usize,
) -> Result<IdVec<EdgeId, Edge>> {
    let mut edges: Vec<Edge> = Vec::new();
    edges.try_reserve_exact(total_edges).map_err(|_| no_memory("edges", total_edges))?;
    for (gi, g) in specs.iter().enumerate() {
        let gid = GraphId::new(gi);
        let where_ = graph_where(&g.name, gi);
        let names = &name_maps[gi];
        let resolve = |k: usize, e: &EdgeSpec| {
            let end = |end: &str, role: &str| {
                names.find(nodes, end).ok_or_else(|| {
                    err!(
                        UnknownNode,
                        "edge {k} ('{}' -> '{}') of {where_}: {role} '{end}' is not a node of that graph",
                        e.src,
                        e.dst
                    )
                })
            };
            Ok::<_, crate::Error>(Edge {
                src: end(&e.src, "source")?,
                dst: end(&e.dst, "destination")?,
                kind: e.kind,
                src_port: e.src_port,
                dst_port: e.dst_port,
            })
        };
        let first = edges.len();
        for (k, e) in g.loaded_edges.iter().enumerate() {
            edges.push(if e.src == LoadedEdge::UNRESOLVED {
                resolve(k, &g.unresolved_edges[e.dst as usize])?
            } else {
                Edge {
                    src: NodeId(names.base + e.src),
                    dst: NodeId(names.base + e.dst),
                    kind: e.kind,
                    src_port: e.src_port,
                    dst_port: e.dst_port,
                }
            });
        }
        for (k, e) in g.edges.iter().enumerate() {
            edges.push(resolve(g.loaded_edges.len() + k, e)?);
        }
        graphs[gid].edges = (first..edges.len()).map(EdgeId::new).collect();
    }
    Ok(IdVec::from_vec(edges))
}

/// A stable topological order per graph (a cycle is an error naming its nodes); returns each
/// node's position in its graph's order.
fn order_graphs(
    nodes: &IdVec<NodeId, Node>,
    edges: &IdVec<EdgeId, Edge>,
    graphs: &mut IdVec<GraphId, Graph>,
) -> Result<IdVec<NodeId, u32>> {
    let mut topo_index = IdVec::filled(nodes.len(), 0u32);
    for gid in graphs.ids() {
        let ids = &graphs[gid].nodes;
        let base = ids.first().map_or(0, |n| n.0);
        let local: Vec<(u32, u32)> =
            graphs[gid].edges.iter().map(|&e| (edges[e].src.0 - base, edges[e].dst.0 - base)).collect();
        let order = topo::stable_order(ids.len(), &local).map_err(|cycle| {
            let names: Vec<&str> = cycle.iter().map(|&i| nodes[NodeId(base + i)].name.as_str()).collect();
            err!(
                Cycle,
                "{} has a cycle through {}: {} -> {}",
                graph_where(&graphs[gid].name, gid.index()),
                if names.len() == 1 { "a self-loop on node" } else { "nodes" },
                names.join(" -> "),
                names[0]
            )
        })?;
        let order: Vec<NodeId> = order.into_iter().map(|i| NodeId(base + i)).collect();
        for (pos, &n) in order.iter().enumerate() {
            topo_index[n] = pos as u32;
        }
        graphs[gid].order = order;
    }
    Ok(topo_index)
}

/// The built model's graphs and nodes by name, for the parts of a document that name them
/// (given events, `partition`).
#[derive(Clone, Copy)]
struct ByName<'a> {
    nodes: &'a IdVec<NodeId, Node>,
    graphs: &'a IdVec<GraphId, Graph>,
    graph_by_name: &'a HashMap<String, GraphId>,
    name_maps: &'a [GraphNames],
}

impl ByName<'_> {
    /// A graph by name: `None`, `""` or the root's name is the root; `Err` gives back a name
    /// that is no graph's.
    fn graph<'n>(&self, name: Option<&'n str>) -> std::result::Result<GraphId, &'n str> {
        match name {
            None | Some("") => Ok(GraphId::ROOT),
            Some(name) if name == self.graphs[GraphId::ROOT].name => Ok(GraphId::ROOT),
            Some(name) => self.graph_by_name.get(name).copied().ok_or(name),
        }
    }

    /// A node of graph `g` by name.
    fn node(&self, g: GraphId, name: &str) -> Option<NodeId> {
        self.name_maps[g.index()].find(self.nodes, name)
    }
}

/// Resolves the given events to node ids. Each end must be a node with a stream (its main one,
/// or the attached one named), and the two ends must sit on different streams: what GE's event
/// maps can hold.
fn resolve_events(specs: &[EventSpec], by_name: &ByName<'_>) -> Result<Vec<super::GivenEvent>> {
    let ByName { nodes, graphs, .. } = *by_name;
    let mut out = Vec::with_capacity(specs.len());
    for (i, e) in specs.iter().enumerate() {
        if e.id > super::MAX_GIVEN_EVENT_ID {
            bail!(
                Field,
                "events[{i}]: id {} is beyond the largest supported event id {}",
                e.id,
                super::MAX_GIVEN_EVENT_ID
            );
        }
        let end = |side: &str, at: &EventEnd| {
            let (name, attached) = (at.node.as_str(), at.attached);
            let g = by_name
                .graph(at.graph.as_deref())
                .map_err(|g| err!(UnknownNode, "events[{i}]: {side}_graph '{g}' is not a graph of the model"))?;
            let where_ = graph_where(&graphs[g].name, g.index());
            let n = by_name
                .node(g, name)
                .ok_or_else(|| err!(UnknownNode, "events[{i}]: {side} '{name}' is not a node of {where_}"))?;
            let stream = match attached {
                None => nodes[n].stream.ok_or_else(|| {
                    err!(
                        Field,
                        "events[{i}]: {side} node '{name}' of {where_} has no stream (-1); an event joins nodes on streams"
                    )
                })?,
                Some(a) => {
                    if !nodes[n].attached_stream_ids.contains(&StreamId(a)) {
                        bail!(
                            Field,
                            "events[{i}]: {side}_attached {a} is not an attached stream of node '{name}' of {where_} \
                             (its attached_stream_ids: {:?})",
                            nodes[n].attached_stream_ids.iter().map(|s| s.0).collect::<Vec<_>>()
                        );
                    }
                    StreamId(a)
                }
            };
            Ok::<_, crate::Error>((n, attached.map(StreamId), stream))
        };
        let (from, from_attached, from_stream) = end("from", &e.from)?;
        let (to, to_attached, to_stream) = end("to", &e.to)?;
        if from_stream == to_stream {
            bail!(
                Field,
                "events[{i}]: '{}' and '{}' are both on stream {from_stream}; an event joins two different streams",
                e.from.node,
                e.to.node
            );
        }
        out.push(super::GivenEvent { id: e.id, from, from_attached, to, to_attached });
    }
    Ok(out)
}

/// A given event records before it is waited for: `from` precedes `to` in execution order.
fn check_event_order(model: &Model) -> Result<()> {
    if model.events.is_empty() {
        return Ok(());
    }
    let mut pos = IdVec::filled(model.nodes.len(), 0usize);
    for (i, n) in model.all_nodes().into_iter().enumerate() {
        pos[n] = i;
    }
    for (i, e) in model.events.iter().enumerate() {
        if pos[e.from] >= pos[e.to] {
            bail!(
                Field,
                "events[{i}]: 'from' node '{}' does not run before 'to' node '{}'; an event is recorded before it is waited for",
                model.nodes[e.from].name,
                model.nodes[e.to].name
            );
        }
    }
    Ok(())
}

/// Memory facts must agree with the edges: a view's `alias_input` names an input port that a
/// data edge feeds (the planner follows it to the tensor whose life the view extends), and a
/// data edge leaves from a port that `out_bytes` sizes when the node gives sizes at all.
fn check_aliases(
    nodes: &IdVec<NodeId, Node>,
    edges: &IdVec<EdgeId, Edge>,
    graphs: &IdVec<GraphId, Graph>,
) -> Result<()> {
    let (sized, aliases) =
        nodes.iter().fold((false, false), |(s, a), n| (s || n.out_bytes.is_some(), a || n.alias_input.is_some()));
    let where_ = |n: &Node| graph_where(&graphs[n.graph].name, n.graph.index());
    for e in edges.iter().filter(|e| sized && e.kind == EdgeKind::Data) {
        let src = &nodes[e.src];
        if let Some(sizes) = &src.out_bytes {
            if e.src_port as usize >= sizes.len() {
                bail!(
                    Field,
                    "node '{}' of {}: a data edge to '{}' leaves output port {} but out_bytes sizes {} output(s)",
                    src.name,
                    where_(src),
                    nodes[e.dst].name,
                    e.src_port,
                    sizes.len()
                );
            }
        }
    }
    if !aliases {
        return Ok(());
    }
    let mut fed: Vec<(NodeId, u32)> =
        edges.iter().filter(|e| e.kind == EdgeKind::Data).map(|e| (e.dst, e.dst_port)).collect();
    fed.sort_unstable();
    for (id, n) in nodes.enumerate() {
        if let Some(port) = n.alias_input {
            if fed.binary_search(&(id, port)).is_err() {
                bail!(
                    Field,
                    "node '{}' of {}: alias_input {port} names an input port that no data edge feeds",
                    n.name,
                    where_(n)
                );
            }
        }
    }
    Ok(())
}

/// A graph's node names: positions in its spec list, the graph's first node id added.
struct GraphNames {
    index: NameIndex,
    base: u32,
}

impl GraphNames {
    fn find(&self, nodes: &IdVec<NodeId, Node>, name: &str) -> Option<NodeId> {
        let base = self.base;
        self.index.get(name, |p| nodes[NodeId(base + p)].name.as_str()).map(|p| NodeId(base + p))
    }
}

fn graph_where(name: &str, index: usize) -> String {
    if index == 0 { format!("root graph '{name}'") } else { format!("subgraph '{name}'") }
}

/// A continuous stream label keeps nodes together on one physical stream when the split cuts
/// it; nodes of different graphs run on different streams, so one label across graphs cannot
/// be honoured (GE's split would move nodes of another graph's stream).
fn check_continuous_labels(nodes: &IdVec<NodeId, Node>, graphs: &IdVec<GraphId, Graph>) -> Result<()> {
    let mut first: BTreeMap<&str, &Node> = BTreeMap::new();
    for n in nodes.iter() {
        let Some(label) = n.attrs.continuous_stream_label.as_deref() else { continue };
        let f = *first.entry(label).or_insert(n);
        if f.graph != n.graph {
            let (fg, ng) = (f.graph.index(), n.graph.index());
            bail!(
                Attribute,
                "continuous_stream_label '{label}' is on node '{}' of {} and on node '{}' of {}; a continuous label must stay within one graph",
                f.name,
                graph_where(&graphs[f.graph].name, fg),
                n.name,
                graph_where(&graphs[n.graph].name, ng)
            );
        }
    }
    Ok(())
}

fn check_node_attrs(spec: &NodeSpec, where_: &str) -> Result<()> {
    let node = &spec.name;
    if !spec.cost_us.is_finite() || spec.cost_us < 0.0 {
        bail!(Field, "node '{node}' of {where_}: cost_us {} must be a finite number >= 0", spec.cost_us);
    }
    for (i, a) in spec.attrs.attached_streams.iter().enumerate() {
        if a.name.is_empty() {
            bail!(Attribute, "node '{node}' of {where_}: attrs.attached_streams[{i}] has no name");
        }
        if a.stream_num == 0 {
            bail!(Attribute, "node '{node}' of {where_}: attrs.attached_streams[{i}] ('{}') has stream_num 0", a.name);
        }
    }
    for (name, ty) in KNOWN_GE_ATTRS.iter().filter(|_| !spec.ge_attrs.is_empty()) {
        if let Some(v) = spec.ge_attrs.get(name) {
            if !ty.accepts(v) {
                bail!(Attribute, "node '{node}' of {where_}: ge_attrs.{name} must be {}, got {v}", ty.describe());
            }
        }
    }
    for entry in &spec.attrs.event_multiplexing {
        let parts: Vec<&str> = entry.split(';').collect();
        let ok = parts.len() == 3
            && matches!(parts[0], "SendTo" | "RecvFrom")
            && !parts[1].is_empty()
            && parts[2].parse::<u32>().is_ok();
        if !ok {
            bail!(
                Attribute,
                "node '{node}' of {where_}: attrs.event_multiplexing entry \"{entry}\" is not \"SendTo;PEER;ID\" or \"RecvFrom;PEER;ID\" with ID >= 0"
            );
        }
    }
    Ok(())
}

fn resolve_partition(
    entries: &[PartitionSpec],
    by_name: &ByName<'_>,
    engines: &EngineTable,
) -> Result<Vec<EngineSubgraph>> {
    let graphs = by_name.graphs;
    let mut seen: HashMap<NodeId, usize> = HashMap::new();
    let mut out = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter().enumerate() {
        let graph = by_name
            .graph(e.graph.as_deref())
            .map_err(|name| err!(Partition, "partition[{i}] ('{}'): graph '{name}' does not exist", e.name))?;
        let engine = engines.lookup(&e.engine).ok_or_else(|| {
            err!(
                UnknownEngine,
                "partition[{i}] ('{}'): unknown engine '{}' (known engines: {})",
                e.name,
                e.engine,
                engines.names()
            )
        })?;
        if e.nodes.is_empty() {
            bail!(Partition, "partition[{i}] ('{}') lists no nodes", e.name);
        }
        let mut ids = Vec::with_capacity(e.nodes.len());
        for n in &e.nodes {
            let id = by_name.node(graph, n).ok_or_else(|| {
                err!(
                    Partition,
                    "partition[{i}] ('{}'): node '{n}' is not a node of {}",
                    e.name,
                    graph_where(&graphs[graph].name, graph.index())
                )
            })?;
            if let Some(prev) = seen.insert(id, i) {
                bail!(
                    Partition,
                    "node '{n}' is listed in partition[{prev}] ('{}') and again in partition[{i}] ('{}')",
                    entries[prev].name,
                    e.name
                );
            }
            ids.push(id);
        }
        out.push(EngineSubgraph {
            name: e.name.clone(),
            engine,
            graph,
            stream_label: e.stream_label.clone().filter(|s| !s.is_empty()),
            user_stream_label: e.user_stream_label.clone().filter(|s| !s.is_empty()),
            nodes: ids,
        });
    }
    Ok(out)
}
