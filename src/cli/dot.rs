//! `stream-alloc dot`: Graphviz DOT of a graph coloured by stream.

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::allocate::PlanArgs;
use super::{EXIT_ALLOC_ERROR, EXIT_OK, out};
use stream_alloc::compile::Stage;
use stream_alloc::graph::{IdVec, Model, NodeId, StreamId};
use stream_alloc::simulate::SimConfig;
use stream_alloc::simulate::dot::{dot, stream_dot};
use stream_alloc::{Error, ErrorKind};

/// The picture's granularity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum View {
    /// Every node up to AUTO_NODES nodes, one box per stream above.
    Auto,
    /// Every node, coloured by stream; engine subgraphs as clusters, syncs dashed.
    Nodes,
    /// One box per stream, one edge per pair of streams with the number of syncs.
    Streams,
}

/// Above this many nodes `--view auto` draws streams: the corpus's inference graphs (up to 603
/// nodes) render in under a second node by node, its training graphs (over 1,000 nodes, long
/// edges from the forward to the backward pass) take Graphviz many minutes.
pub const AUTO_NODES: usize = 700;

/// Write Graphviz DOT of an assignment: every node coloured by stream (syncs dashed, engine
/// subgraphs as clusters), or, for large graphs, one box per stream with the syncs between
/// streams counted.
#[derive(Args, Debug)]
#[command(after_help = "Render with Graphviz: stream-alloc dot GRAPH | dot -Tsvg -o graph.svg\n\
--view auto draws every node up to 700 nodes and one box per stream above (a node-level picture of a \
training graph takes Graphviz many minutes); `stream-alloc summary GRAPH --format dot` draws GE's \
logical streams with their physical ids.")]
pub struct DotArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Output file (default: standard output).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Every node, one box per stream, or the one that suits the graph's size.
    #[arg(long, value_enum, default_value = "auto")]
    pub view: View,
}

type Picture = (IdVec<NodeId, Option<StreamId>>, Vec<(NodeId, NodeId)>);

/// Streams and waits from an allocation JSON document, by node name.
fn from_document(model: &Model, path: &PathBuf) -> Result<Picture, Error> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read allocation file '{}': {e}", path.display())))?;
    let doc: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| Error::new(ErrorKind::Json, format!("allocation file '{}': {e}", path.display())))?;
    let mut by_name: BTreeMap<(&str, &str), NodeId> = BTreeMap::new();
    for (id, n) in model.nodes.enumerate() {
        by_name.entry((model.graph_label(n.graph), n.name.as_str())).or_insert(id);
    }
    let mut first: BTreeMap<&str, NodeId> = BTreeMap::new();
    for (id, n) in model.nodes.enumerate().rev() {
        first.insert(n.name.as_str(), id);
    }
    let field = |what: &str| Error::new(ErrorKind::Field, format!("allocation file '{}': {what}", path.display()));
    let nodes = doc.get("nodes").and_then(|v| v.as_array()).ok_or_else(|| field("missing array 'nodes'"))?;
    let mut stream = IdVec::filled(model.nodes.len(), None);
    for (i, v) in nodes.iter().enumerate() {
        if v.get("inserted").and_then(|x| x.as_bool()) == Some(true) {
            continue;
        }
        let name = v.get("name").and_then(|x| x.as_str()).ok_or_else(|| field(&format!("nodes[{i}].name missing")))?;
        let graph = v.get("graph").and_then(|x| x.as_str()).unwrap_or("");
        let id = *by_name
            .get(&(graph, name))
            .ok_or_else(|| field(&format!("nodes[{i}]: node '{name}' is not in the graph")))?;
        let s = v.get("stream").and_then(|x| x.as_i64()).ok_or_else(|| field(&format!("nodes[{i}].stream missing")))?;
        stream[id] = u32::try_from(s).ok().map(StreamId);
    }
    let mut waits = Vec::new();
    for (i, p) in doc.get("syncs").and_then(|v| v.as_array()).into_iter().flatten().enumerate() {
        let end = |k: &str| -> Result<NodeId, Error> {
            let name = p.get(k).and_then(|x| x.as_str()).ok_or_else(|| field(&format!("syncs[{i}].{k} missing")))?;
            let base = name.split('@').next().unwrap_or(name);
            first.get(base).copied().ok_or_else(|| field(&format!("syncs[{i}].{k}: node '{base}' is not in the graph")))
        };
        waits.push((end("from")?, end("to")?));
    }
    Ok((stream, waits))
}

pub fn run(args: DotArgs) -> i32 {
    let result = args.plan.load().and_then(|inputs| {
        let model = &inputs.model;
        let (stream, waits) = match &args.plan.allocation {
            Some(p) => from_document(model, p)?,
            None => {
                let a = inputs.compile(Stage::All, SimConfig::default(), false)?.alloc;
                let waits = a.syncs().iter().map(|p| (p.from.node, p.to.node)).collect();
                (a.stream().clone(), waits)
            }
        };
        let streams = match args.view {
            View::Nodes => false,
            View::Streams => true,
            View::Auto => model.nodes.len() > AUTO_NODES,
        };
        if streams && args.view == View::Auto {
            out::eprint(&format!(
                "note: {} has {} nodes (more than {AUTO_NODES}): one box per stream; --view nodes draws every node\n",
                model.name,
                model.nodes.len()
            ));
        }
        Ok(if streams { stream_dot(model, &stream, &waits) } else { dot(model, &stream, &waits) })
    });
    match result {
        Ok(text) => match out::emit(args.output.as_deref(), &text) {
            Ok(()) => EXIT_OK,
            Err(c) => c,
        },
        Err(e) => {
            out::error(e);
            EXIT_ALLOC_ERROR
        }
    }
}
