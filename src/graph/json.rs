//! Graph JSON v1 (docs/graph-json.md): the one loader, reading a document into a
//! [`ModelBuilder`] in one pass over its text.
//!
//! The scanner (`json_scan.rs`) reads each node and edge in its common shape, the shape
//! exporters write for nearly every element of a large graph, without serde. Any other value
//! (an element in another shape, the open-ended parts, the top-level scalars) is handed where
//! it stands to serde and the schema's checkers (`json_check.rs`), which name the field and the
//! value at fault; the pass then goes on after it. No document is read twice, and a message
//! does not depend on which reader met the value.
//!
//! Faults are reported in the schema's order, whatever the order of the document: a syntax
//! error or a fault of a top-level value first, then the header, the required top-level
//! fields, the root's nodes and edges, the subgraphs, options, engines, partition and events.
//! So where the pass meets an element the schema refuses, it notes the element, checks only
//! the syntax of the rest, and reads the element again for its message at the end.

use std::borrow::Cow;
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::builder::{
    EdgeSpec, EventEnd, EventSpec, GraphSpec, LoadedEdge, ModelBuilder, NodeSpec, PartitionSpec, no_memory,
};
use super::engines::EngineOverride;
use super::fields::{AttrsDoc, NODE_FIELDS, NodeAttrs, NodeDoc};
use super::json_check::{
    EdgeDoc, EngineDoc, EventDoc, FAULT, Fault, HeaderProbe, MapOnly, NameProbe, PartitionDoc, Place, SubgraphDoc, at,
    field, located, parse_element, parse_raw, parse_value, probe_name, render, serde_text, short, take_fault,
};
use super::json_scan::{self, FastEdge, Scan};
use super::names::NameIndex;
use super::{EdgeKind, Model, Shape};
use crate::error::{Error, ErrorKind, Result};

pub use super::{GRAPH_FORMAT, GRAPH_VERSION};

/// Reads and validates a graph file.
pub fn load_file(path: impl AsRef<Path>) -> Result<Model> {
    let path = path.as_ref();
    let text = std::fs::read(path)
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read graph file '{}': {e}", path.display())))?;
    load_slice(&text)
}

/// Reads and validates a graph document.
pub fn load_str(text: &str) -> Result<Model> {
    load_slice(text.as_bytes())
}

/// Reads and validates a graph document held as bytes.
pub fn load_slice(bytes: &[u8]) -> Result<Model> {
    let (b, index) = read(bytes)?;
    b.build_indexed(vec![index])
}

/// Parses a graph document into a builder without validating references, so a host can add
/// to it before building.
pub fn builder_from_slice(bytes: &[u8]) -> Result<ModelBuilder> {
    read(bytes).map(|(b, _)| b)
}

/// Parses a graph document already held as a `Value` (tests and hosts that build one).
pub fn builder_from_value(doc: &Value) -> Result<ModelBuilder> {
    builder_from_slice(&serde_json::to_vec(doc)?)
}

// ---------------------------------------------------------------------------------------------
// The pass.

/// The top-level keys, in the order "unknown field" messages list them.
const TOP_KEYS: &[&str] = &[
    "format",
    "version",
    "name",
    "shape",
    "source",
    "nodes",
    "edges",
    "subgraphs",
    "options",
    "graph_attrs",
    "engines",
    "partition",
    "events",
];

/// Elements resolved together: their lookups miss the cache independently of each other, so the
/// processor overlaps them.
const BATCH: usize = 256;

/// Why the pass stopped.
enum Stop<'a> {
    /// The text is not JSON here; serde words the message.
    Syntax,
    /// A top-level value the schema refuses.
    Fault(Fault),
    /// A message already made.
    Error(Error),
    /// An element the schema refuses.
    Refused(Refused<'a>),
}

/// A node or edge the schema refused: read again for its message once the graph's label is known.
struct Refused<'a> {
    edge: bool,
    i: usize,
    raw: &'a RawValue,
}

impl Refused<'_> {
    fn error(&self, label: &str, doc: &[u8]) -> Error {
        let again = if self.edge {
            schema_edge(self.raw, self.i, label, doc).err()
        } else {
            schema_node(self.raw, self.i, label, doc).err()
        };
        let what = if self.edge { "edge" } else { "node" };
        again.unwrap_or_else(|| Error::new(ErrorKind::Field, format!("{what} {} of {label} is refused", self.i)))
    }
}

fn refused(edge: bool, i: usize, raw: &RawValue) -> Stop<'_> {
    take_fault();
    Stop::Refused(Refused { edge, i, raw })
}

/// A stop as the error it reports, for the parts read after the pass (their syntax is known good).
fn stopped(stop: Stop<'_>, label: &str, doc: &[u8]) -> Error {
    match stop {
        Stop::Syntax => syntax_error(doc),
        Stop::Fault(f) => render(f, label),
        Stop::Error(e) => e,
        Stop::Refused(r) => r.error(label, doc),
    }
}

/// serde's words for the first syntax error of the document, read as the schema always read
/// it: the top-level values as values, the elements of its arrays as raw text.
fn syntax_error(bytes: &[u8]) -> Error {
    struct Document;
    impl<'de> Visitor<'de> for Document {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a graph document")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                match &*key {
                    "nodes" | "edges" | "subgraphs" | "partition" | "events" => map.next_value_seed(Items)?,
                    _ => drop(map.next_value::<Value>()?),
                }
            }
            Ok(())
        }
    }
    struct Items;
    impl<'de> DeserializeSeed<'de> for Items {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<(), D::Error> {
            field::raw_nodes(d).map(drop)
        }
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let read = de.deserialize_map(Document).and_then(|()| de.end());
    take_fault();
    let text = match read {
        Err(e) if !e.is_data() => e.to_string(),
        _ => match serde_json::from_slice::<IgnoredAny>(bytes) {
            Err(e) => e.to_string(),
            Ok(_) => "not a graph document".to_string(),
        },
    };
    Error::new(ErrorKind::Json, format!("malformed graph JSON: {text}"))
}

/// One graph's nodes and edges as they are read: the node names as written (a lookup reads 16
/// bytes here and the name in the document, not a whole spec) and their index; edges resolved
/// to node positions in batches.
#[derive(Default)]
struct Body<'a> {
    g: GraphSpec,
    names: Vec<&'a str>,
    index: NameIndex,
    /// Names indexed so far; `None` once a name is not in the text as written (it has an
    /// escape): the builder then resolves the edges by name.
    indexed: Option<usize>,
    batch: Vec<FastEdge<'a>>,
}

impl<'a> Body<'a> {
    fn new() -> Self {
        Body { indexed: Some(0), ..Default::default() }
    }

    /// Node `i`, in its common shape through the scanner, otherwise through the schema.
    fn node(&mut self, s: &mut Scan<'a>, i: usize, label: &str, doc: &[u8]) -> std::result::Result<(), Stop<'a>> {
        let start = s.i;
        if let Some(spec) = json_scan::object::<NodeSpec>(s) {
            return self.push_node(spec, s.name);
        }
        s.i = start;
        let raw = s.raw().ok_or(Stop::Syntax)?;
        let spec = schema_node(raw, i, label, doc).map_err(|_| refused(false, i, raw))?;
        // The name as written, for the index: any place in the element's text that reads the same.
        let text = raw.get();
        let name = text.find(spec.name.as_str()).map(|p| &text[p..p + spec.name.len()]);
        if name.is_none() {
            self.indexed = None;
        }
        self.push_node(spec, name.unwrap_or(""))
    }

    fn push_node(&mut self, spec: NodeSpec, name: &'a str) -> std::result::Result<(), Stop<'a>> {
        let nodes = &mut self.g.nodes;
        if nodes.len() == nodes.capacity() {
            let more = nodes.len().max(1024);
            nodes.try_reserve(more).map_err(|_| Stop::Error(no_memory("nodes", nodes.len() + more)))?;
            self.names
                .try_reserve(nodes.capacity() - self.names.len())
                .map_err(|_| Stop::Error(no_memory("nodes", nodes.len())))?;
        }
        nodes.push(spec);
        self.names.push(name);
        match self.indexed {
            Some(done) if self.names.len() - done == BATCH => self.index_names(),
            _ => Ok(()),
        }
    }

    /// Indexes the names not indexed yet. A name given twice keeps its first position (the
    /// builder reports it).
    fn index_names(&mut self) -> std::result::Result<(), Stop<'a>> {
        let Some(from) = self.indexed else { return Ok(()) };
        let names = &self.names;
        let memory = |_| Stop::Error(no_memory("nodes", names.len()));
        if let Some(twice) =
            self.index.insert_batch(from as u32, &names[from..], |p| names[p as usize]).map_err(memory)?
        {
            for p in twice as usize + 1..names.len() {
                self.index.insert(names[p], p as u32, |q| names[q as usize]).map_err(memory)?;
            }
        }
        self.indexed = Some(names.len());
        Ok(())
    }

    /// Edge `i` (every node read), in its common shape through the scanner, otherwise through
    /// the schema.
    fn edge(&mut self, s: &mut Scan<'a>, i: usize, label: &str, doc: &[u8]) -> std::result::Result<(), Stop<'a>> {
        let start = s.i;
        if let Some(e) = json_scan::edge_at(s) {
            self.batch.push(e);
            return if self.batch.len() == BATCH { self.resolve() } else { Ok(()) };
        }
        s.i = start;
        let raw = s.raw().ok_or(Stop::Syntax)?;
        let spec = schema_edge(raw, i, label, doc).map_err(|_| refused(true, i, raw))?;
        self.resolve()?;
        self.reserve_edges(1)?;
        let names = &self.names;
        let position = |name: &str| self.indexed.and_then(|_| self.index.get(name, |p| names[p as usize]));
        let loaded = (position(&spec.src), position(&spec.dst));
        self.push_edge(loaded, spec);
        Ok(())
    }

    fn reserve_edges(&mut self, n: usize) -> std::result::Result<(), Stop<'a>> {
        let list = &mut self.g.loaded_edges;
        if list.capacity() - list.len() < n {
            let more = list.len().max(BATCH * 4);
            list.try_reserve(more).map_err(|_| Stop::Error(no_memory("edges", list.len() + more)))?;
        }
        Ok(())
    }

    /// An edge with its ends' positions, or by name when an end names no node (the builder
    /// reports it).
    fn push_edge(&mut self, ends: (Option<u32>, Option<u32>), spec: EdgeSpec) {
        let (src_port, dst_port, kind) = (spec.src_port, spec.dst_port, spec.kind);
        let g = &mut self.g;
        let loaded = match ends {
            (Some(src), Some(dst)) => LoadedEdge { src, dst, src_port, dst_port, kind },
            _ => {
                g.unresolved_edges.push(spec);
                let dst = (g.unresolved_edges.len() - 1) as u32;
                LoadedEdge { src: LoadedEdge::UNRESOLVED, dst, src_port, dst_port, kind }
            }
        };
        g.loaded_edges.push(loaded);
    }

    /// Resolves the batch of edges read by the scanner by the node names.
    fn resolve(&mut self) -> std::result::Result<(), Stop<'a>> {
        let mut batch = std::mem::take(&mut self.batch);
        self.reserve_edges(batch.len())?;
        let mut found = Vec::with_capacity(batch.len() * 2);
        if self.indexed.is_some() {
            let keys: Vec<&str> = batch.iter().flat_map(|e| [e.src, e.dst]).collect();
            let names = &self.names;
            self.index.get_batch(&keys, |p| names[p as usize], &mut found);
        } else {
            found.resize(batch.len() * 2, None);
        }
        for (e, ends) in batch.drain(..).zip(found.chunks_exact(2)) {
            let (src_port, dst_port, kind) = (e.src_port, e.dst_port, e.kind);
            if let (Some(src), Some(dst)) = (ends[0], ends[1]) {
                self.g.loaded_edges.push(LoadedEdge { src, dst, src_port, dst_port, kind });
            } else {
                let spec = EdgeSpec { src: e.src.to_string(), dst: e.dst.to_string(), kind, src_port, dst_port };
                self.push_edge((None, None), spec);
            }
        }
        self.batch = batch;
        Ok(())
    }

    /// The graph read, and the index of its names when it holds every one of them.
    fn finish(mut self) -> std::result::Result<(GraphSpec, NameIndex), Stop<'a>> {
        self.resolve()?;
        Ok((self.g, self.index))
    }
}

/// The top-level values as the pass leaves them.
#[derive(Default)]
struct Top<'a> {
    format: Option<Value>,
    version: Option<Value>,
    name: Option<String>,
    shape: Option<String>,
    source: Option<String>,
    /// The root's nodes were read.
    nodes: bool,
    /// The root's edges: read (`None` inside), or kept to read after the nodes when they come
    /// first in the document.
    edges: Option<Option<Vec<&'a RawValue>>>,
    subgraphs: Option<Vec<&'a RawValue>>,
    options: Option<Map<String, Value>>,
    graph_attrs: Option<Map<String, Value>>,
    engines: Option<Map<String, Value>>,
    partition: Option<Vec<&'a RawValue>>,
    events: Option<Vec<&'a RawValue>>,
}

struct Pass<'a> {
    s: Scan<'a>,
    doc: &'a [u8],
    top: Top<'a>,
    root: Body<'a>,
    /// The first element the schema refused: the rest of the pass only checks syntax.
    refused: Option<Refused<'a>>,
}

/// Reads a document: the builder, and the index of the root's node names.
fn read(bytes: &[u8]) -> Result<(ModelBuilder, NameIndex)> {
    // Text that is not UTF-8 is read up to where it stops being so; serde words the fault there.
    let (text, utf8) = match std::str::from_utf8(bytes) {
        Ok(text) => (text, true),
        Err(e) => (std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(), false),
    };
    take_fault();
    let mut pass = Pass { s: Scan::new(text), doc: bytes, top: Top::default(), root: Body::new(), refused: None };
    match pass.document() {
        Ok(()) if utf8 => pass.finish(),
        Ok(()) => Err(syntax_error(bytes)),
        Err(Stop::Fault(fault)) => {
            take_fault();
            // A wrong format or version is reported before any other fault.
            if let Ok(h) = serde_json::from_slice::<MapOnly<HeaderProbe>>(bytes) {
                check_header(h.0.format.as_ref(), h.0.version.as_ref())?;
            }
            take_fault();
            Err(render(fault, ""))
        }
        Err(stop) => Err(stopped(stop, "", bytes)),
    }
}

type Step<'a, T = ()> = std::result::Result<T, Stop<'a>>;

impl<'a> Pass<'a> {
    /// The top-level object, member by member, in one pass.
    fn document(&mut self) -> Step<'a> {
        if self.s.peek() != Some(b'{') {
            return Err(self.not_an_object());
        }
        self.s.i += 1;
        let mut seen = 0u64;
        if self.s.peek() == Some(b'}') {
            self.s.i += 1;
        } else {
            loop {
                // As serde reads a struct: an unknown or repeated key is refused before its `:`.
                let key = self.key()?;
                let Some(k) = TOP_KEYS.iter().position(|k| *k == key) else {
                    return Err(serde_fault(de::Error::unknown_field(&key, TOP_KEYS)));
                };
                if seen & (1 << k) != 0 {
                    return Err(serde_fault(de::Error::duplicate_field(TOP_KEYS[k])));
                }
                seen |= 1 << k;
                self.s.eat(b':').ok_or(Stop::Syntax)?;
                self.member(TOP_KEYS[k])?;
                if !self.s.next_member().ok_or(Stop::Syntax)? {
                    break;
                }
            }
        }
        self.s.end().ok_or(Stop::Syntax)
    }

    /// A document whose top value is not an object: what serde finds in it first.
    fn not_an_object(&mut self) -> Stop<'a> {
        take_fault();
        match MapOnly::<IgnoredAny>::deserialize(&mut serde_json::Deserializer::from_slice(self.doc)) {
            Err(e) if e.is_data() => serde_fault(e),
            Err(e) => {
                take_fault();
                Stop::Error(Error::new(ErrorKind::Json, format!("malformed graph JSON: {e}")))
            }
            Ok(_) => Stop::Syntax,
        }
    }

    /// A member's key, escapes and all (not its `:`).
    fn key(&mut self) -> Step<'a, Cow<'a, str>> {
        let start = self.s.i;
        if let Some(k) = self.s.str() {
            return Ok(Cow::Borrowed(k));
        }
        self.s.i = start;
        if self.s.peek() != Some(b'"') {
            return Err(Stop::Syntax);
        }
        let raw = self.s.raw().ok_or(Stop::Syntax)?;
        let key: String = serde_json::from_str(raw.get()).map_err(|_| Stop::Syntax)?;
        Ok(Cow::Owned(key))
    }

    fn member(&mut self, key: &'static str) -> Step<'a> {
        match key {
            "format" => self.top.format = self.value(|d| field::any(d))?,
            "version" => self.top.version = self.value(|d| field::any(d))?,
            "name" => self.top.name = self.value(|d| field::name(d))?,
            "shape" => self.top.shape = self.value(|d| field::shape(d))?,
            "source" => self.top.source = self.value(|d| field::source(d))?,
            "nodes" => self.nodes()?,
            "edges" => self.edges()?,
            "subgraphs" => self.top.subgraphs = self.value(|d| field::raw_subgraphs(d))?,
            "options" => self.top.options = self.value(|d| field::options(d))?,
            "graph_attrs" => self.top.graph_attrs = self.value(|d| field::graph_attrs(d))?,
            "engines" => self.top.engines = self.value(|d| field::engines(d))?,
            "partition" => self.top.partition = self.value(|d| field::raw_partition(d))?,
            _ => self.top.events = self.value(|d| field::raw_events(d))?,
        }
        Ok(())
    }

    /// A top-level value through its checker.
    fn value<T>(
        &mut self,
        check: impl FnOnce(&mut serde_json::Deserializer<serde_json::de::StrRead<'a>>) -> serde_json::Result<Option<T>>,
    ) -> Step<'a, Option<T>> {
        let raw = self.s.raw().ok_or(Stop::Syntax)?;
        take_fault();
        // A value serde cannot read (a number out of range, nesting too deep) is a syntax
        // error, worded where the whole document's reading meets it.
        check(&mut serde_json::Deserializer::from_str(raw.get()))
            .map_err(|e| if e.is_data() { serde_fault(e) } else { Stop::Syntax })
    }

    /// The root's nodes, each where it stands.
    fn nodes(&mut self) -> Step<'a> {
        if self.s.peek() != Some(b'[') {
            // null (no nodes) or not an array: the schema's words.
            self.value(|d| field::raw_nodes(d))?;
            return Ok(());
        }
        self.top.nodes = true;
        self.elements(false)?;
        self.root.index_names()
    }

    /// The root's edges: each where it stands when the nodes came before them, otherwise kept
    /// for when they have been read.
    fn edges(&mut self) -> Step<'a> {
        if self.s.peek() != Some(b'[') || !self.top.nodes {
            self.top.edges = self.value(|d| field::raw_edges(d))?.map(Some);
            return Ok(());
        }
        self.top.edges = Some(None);
        self.elements(true)
    }

    /// The elements of an array of nodes or edges.
    fn elements(&mut self, edges: bool) -> Step<'a> {
        self.s.i += 1;
        if self.s.peek() == Some(b']') {
            self.s.i += 1;
            return Ok(());
        }
        for i in 0.. {
            let read = if self.refused.is_some() {
                // Only the syntax of the rest counts now.
                self.s.raw().map(drop).ok_or(Stop::Syntax)
            } else if edges {
                self.root.edge(&mut self.s, i, "", self.doc)
            } else {
                self.root.node(&mut self.s, i, "", self.doc)
            };
            match read {
                Err(Stop::Refused(r)) => self.refused = Some(r),
                other => other?,
            }
            match self.s.peek() {
                Some(b',') => self.s.i += 1,
                Some(b']') => break,
                _ => return Err(Stop::Syntax),
            }
        }
        self.s.i += 1;
        Ok(())
    }

    /// The builder from what the pass read, each remaining check in the schema's order.
    fn finish(self) -> Result<(ModelBuilder, NameIndex)> {
        let Pass { top, mut root, refused, doc, .. } = self;
        check_header(top.format.as_ref(), top.version.as_ref())?;
        let t = "graph document";
        let name = top.name.clone().ok_or_else(|| missing(t, "name"))?;
        let shape = parse_shape(top.shape.as_deref(), t)?;
        if !top.nodes {
            return Err(missing(t, "nodes"));
        }
        let Some(edges) = &top.edges else { return Err(missing(t, "edges")) };
        let label = format!("root graph '{name}'");
        if let Some(r) = refused {
            return Err(r.error(&label, doc));
        }
        for (i, raw) in edges.iter().flatten().enumerate() {
            root.edge(&mut Scan::new(raw.get()), i, &label, doc).map_err(|s| stopped(s, &label, doc))?;
        }
        let (g, index) = root.finish().map_err(|s| stopped(s, &label, doc))?;
        let mut b = ModelBuilder::new(name);
        b.source = top.source.clone();
        let r = b.root_mut();
        r.shape = shape;
        (r.nodes, r.loaded_edges, r.unresolved_edges) = (g.nodes, g.loaded_edges, g.unresolved_edges);
        read_parts(&mut b, top, doc)?;
        Ok((b, index))
    }
}

/// A fault that serde words (an unknown or repeated key), or that a checker left aside.
fn serde_fault<'a>(e: serde_json::Error) -> Stop<'a> {
    let fault =
        take_fault().unwrap_or_else(|| Fault { kind: ErrorKind::Field, places: Vec::new(), text: serde_text(&e) });
    Stop::Fault(fault)
}

/// A node read by the scanner alone: `None` where it leaves the node to the schema.
#[cfg(test)]
pub(crate) fn node_by_scanner(text: &str) -> Option<NodeSpec> {
    let mut s = Scan::new(text);
    let spec = json_scan::object::<NodeSpec>(&mut s)?;
    s.end()?;
    Some(spec)
}

/// A node read by the schema alone, as a node of root graph 'g'.
#[cfg(test)]
pub(crate) fn node_by_schema(text: &str) -> Result<NodeSpec> {
    let raw: &RawValue = serde_json::from_str(text)?;
    schema_node(raw, 0, "root graph 'g'", text.as_bytes())
}

// ---------------------------------------------------------------------------------------------
// From the document to the builder: required fields, enumerations, defaults.

fn check_header(format: Option<&Value>, version: Option<&Value>) -> Result<()> {
    match format.filter(|v| !v.is_null()) {
        Some(Value::String(f)) if f == GRAPH_FORMAT => {}
        Some(v) => {
            return Err(Error::new(ErrorKind::Format, format!("format is {}, expected \"{GRAPH_FORMAT}\"", short(v))));
        }
        None => return Err(Error::new(ErrorKind::Format, format!("missing \"format\": \"{GRAPH_FORMAT}\""))),
    }
    match version.filter(|v| !v.is_null()) {
        Some(v) if v.as_u64() == Some(GRAPH_VERSION) => Ok(()),
        Some(v) => Err(Error::new(
            ErrorKind::Format,
            format!("version {} is not supported (this build reads version {GRAPH_VERSION})", short(v)),
        )),
        None => Err(Error::new(ErrorKind::Format, format!("missing \"version\": {GRAPH_VERSION}"))),
    }
}

fn missing(what: &str, field: &str) -> Error {
    Error::new(ErrorKind::Field, format!("{what}: missing required field '{field}'"))
}

/// The parts after the root graph, in the order their faults are reported: subgraphs,
/// options, graph attributes, engines, partition, events.
fn read_parts(b: &mut ModelBuilder, top: Top<'_>, bytes: &[u8]) -> Result<()> {
    for (i, raw) in top.subgraphs.unwrap_or_default().into_iter().enumerate() {
        let s: SubgraphDoc<'_> = parse_raw(raw).map_err(|e| {
            // Unknown keys and the name itself are reported before the name is known.
            let early = !e.is_data()
                || serde_text(&e).starts_with("unknown field")
                || FAULT.with(|f| f.borrow().as_ref().is_some_and(|f| f.text.starts_with("field 'name'")));
            let named = if early { None } else { probe_name(raw) };
            located(e, Place::Subgraph(i, named), "", Some((raw, bytes)))
        })?;
        let sname = s.name.ok_or_else(|| missing(&format!("subgraphs[{i}]"), "name"))?;
        let label = format!("subgraph '{sname}'");
        let parent = s.parent.ok_or_else(|| missing(&label, "parent"))?;
        let mut g = GraphSpec {
            name: sname,
            parent: Some(parent),
            shape: parse_shape(s.shape.as_deref(), &label)?,
            ..Default::default()
        };
        let nodes = s.nodes.ok_or_else(|| missing(&label, "nodes"))?;
        let edges = s.edges.ok_or_else(|| missing(&label, "edges"))?;
        read_raw_body(&mut g, &nodes, &edges, &label, bytes)?;
        b.graphs.push(g);
    }
    for (k, v) in &top.options.unwrap_or_default() {
        b.options.set(k, v)?;
    }
    if let Some(attrs) = top.graph_attrs {
        b.graph_attrs = attrs.into_iter().collect();
    }
    for (ename, v) in top.engines.unwrap_or_default() {
        let e: EngineDoc = parse_value(v).map_err(|e| located(e, Place::Engine(ename.clone()), "", None))?;
        b.engine_overrides.insert(
            ename,
            EngineOverride {
                independent: e.independent,
                attach: e.attach,
                skip_assign_stream: e.skip_assign_stream,
                priority: e.priority,
                scheduler: e.scheduler,
            },
        );
    }
    if let Some(entries) = top.partition {
        let mut out = Vec::with_capacity(entries.len());
        for (i, raw) in entries.into_iter().enumerate() {
            let p: PartitionDoc =
                parse_element(raw).map_err(|e| located(e, Place::Partition(i), "", Some((raw, bytes))))?;
            let what = format!("partition[{i}]");
            out.push(PartitionSpec {
                name: p.name.ok_or_else(|| missing(&what, "name"))?,
                engine: p.engine.ok_or_else(|| missing(&what, "engine"))?,
                graph: p.graph,
                stream_label: p.stream_label,
                user_stream_label: p.user_stream_label,
                nodes: p.nodes.ok_or_else(|| missing(&what, "nodes"))?,
            });
        }
        b.partition = Some(out);
    }
    for (i, raw) in top.events.unwrap_or_default().into_iter().enumerate() {
        let e: EventDoc = parse_element(raw).map_err(|e| located(e, Place::Event(i), "", Some((raw, bytes))))?;
        let what = format!("events[{i}]");
        b.events.push(EventSpec {
            id: e.id.ok_or_else(|| missing(&what, "id"))?,
            from: EventEnd {
                node: e.from.ok_or_else(|| missing(&what, "from"))?,
                graph: e.from_graph,
                attached: e.from_attached,
            },
            to: EventEnd {
                node: e.to.ok_or_else(|| missing(&what, "to"))?,
                graph: e.to_graph,
                attached: e.to_attached,
            },
        });
    }
    Ok(())
}

fn parse_shape(s: Option<&str>, what: &str) -> Result<Shape> {
    match s {
        None | Some("static") => Ok(Shape::Static),
        Some("dynamic") => Ok(Shape::Dynamic),
        Some(other) => {
            Err(Error::new(ErrorKind::Field, format!("{what}: shape \"{other}\" must be \"static\" or \"dynamic\"")))
        }
    }
}

/// Reads one graph's nodes and edges, kept as raw elements; `label` names the graph in
/// messages. Each element is read as the pass reads the root's.
fn read_raw_body(g: &mut GraphSpec, nodes: &[&RawValue], edges: &[&RawValue], label: &str, doc: &[u8]) -> Result<()> {
    let mut body = Body::new();
    let fail = |s| stopped(s, label, doc);
    for (i, raw) in nodes.iter().enumerate() {
        body.node(&mut Scan::new(raw.get()), i, label, doc).map_err(fail)?;
    }
    body.index_names().map_err(fail)?;
    for (i, raw) in edges.iter().enumerate() {
        body.edge(&mut Scan::new(raw.get()), i, label, doc).map_err(fail)?;
    }
    let (read, _) = body.finish().map_err(fail)?;
    (g.nodes, g.loaded_edges, g.unresolved_edges) = (read.nodes, read.loaded_edges, read.unresolved_edges);
    Ok(())
}

/// An edge through the schema.
fn schema_edge(raw: &RawValue, i: usize, label: &str, doc: &[u8]) -> Result<EdgeSpec> {
    let e: EdgeDoc = parse_element(raw).map_err(|e| located(e, Place::Edge(i), label, Some((raw, doc))))?;
    let kind = match e.kind.as_deref() {
        None | Some("data") => EdgeKind::Data,
        Some("control") => EdgeKind::Control,
        Some(other) => {
            return Err(Error::new(
                ErrorKind::Field,
                format!("edge {i} of {label}: kind \"{other}\" must be \"data\" or \"control\""),
            ));
        }
    };
    let need = |v: Option<String>, f: &str| v.ok_or_else(|| missing(&format!("edge {i} of {label}"), f));
    Ok(EdgeSpec {
        src: need(e.src, "src")?,
        dst: need(e.dst, "dst")?,
        kind,
        src_port: e.src_port.unwrap_or(0),
        dst_port: e.dst_port.unwrap_or(0),
    })
}

/// A node through the schema: its spec, or the message of its fault.
fn schema_node(raw: &RawValue, i: usize, label: &str, doc: &[u8]) -> Result<NodeSpec> {
    node_spec(read_node(raw, i, label, doc)?, i, label)
}

/// A node through the schema, its fault placed.
fn read_node(raw: &RawValue, i: usize, label: &str, doc: &[u8]) -> Result<NodeDoc> {
    parse_element(raw).map_err(|e| {
        // A node's name is checked before anything else in it.
        if e.is_data() {
            let saved = take_fault();
            let name = parse_raw::<NameProbe>(raw).ok().map(|p| p.name.filter(|v| !v.is_null()));
            take_fault();
            FAULT.with(|f| *f.borrow_mut() = saved);
            match name {
                Some(None) => return missing(&format!("node {i} of {label}"), "name"),
                Some(Some(v)) if !v.is_string() => {
                    return Error::new(
                        ErrorKind::Field,
                        format!("node {i} of {label}: field 'name' must be a string, got {}", short(&v)),
                    );
                }
                _ => {}
            }
        }
        located(e, Place::Node(i, probe_name(raw)), label, Some((raw, doc)))
    })
}

fn node_spec(n: NodeDoc, index: usize, graph: &str) -> Result<NodeSpec> {
    if let Some(key) = n.missing_key() {
        let what = match &n.name {
            Some(name) => format!("node '{name}' of {graph}"),
            None => format!("node {index} of {graph}"),
        };
        return Err(missing(&what, key));
    }
    let mut s = NodeSpec::blank();
    n.apply(&mut s, &|s| format!("node '{}' of {graph}", s.name))?;
    Ok(s)
}

/// Sets one field of a node from a JSON value, checked and converted as a graph file's node is
/// (the C ABI sets fields one key at a time); `graph` names the node's graph in messages
/// (`root graph 'g'`). A null resets an optional field to its default.
pub fn set_node_field(spec: &mut NodeSpec, key: &str, value: Value, graph: &str) -> Result<()> {
    let name = spec.name.clone();
    if value.is_null() && NODE_FIELDS.iter().any(|f| f.key == key && f.required) {
        return Err(missing(&format!("node '{name}' of {graph}"), key));
    }
    take_fault();
    let doc = parse_value::<NodeDoc>(Value::Object(Map::from_iter([(key.to_string(), value)]))).map_err(|e| {
        let _: serde_json::Error = at(e, Place::Node(0, Some(name.clone())));
        render(take_fault().expect("at() leaves a fault"), graph)
    })?;
    let mut fresh = NodeSpec::blank();
    doc.apply(&mut fresh, &|_| format!("node '{name}' of {graph}"))?;
    spec.take_field(key, fresh);
    Ok(())
}

/// Sets one field of a node's `attrs` from a JSON value, through the same schema as a graph
/// file; `what` names the node in messages. A null resets the field to its default.
pub fn set_node_attr(attrs: &mut NodeAttrs, key: &str, value: Value, what: &str) -> Result<()> {
    take_fault();
    let doc = parse_value::<AttrsDoc>(Value::Object(Map::from_iter([(key.to_string(), value)]))).map_err(|e| {
        let _: serde_json::Error = at(e, Place::Attrs);
        let fault = take_fault().expect("at() leaves a fault");
        let kind = fault.kind;
        let inner = render(fault, "").message;
        Error::new(kind, format!("{what}{}", inner.strip_prefix("graph document").unwrap_or(&inner)))
    })?;
    let mut fresh = NodeAttrs::default();
    doc.apply(&mut fresh, &|| format!("{what}: attrs"))?;
    attrs.take_field(key, fresh);
    Ok(())
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::new(ErrorKind::Json, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = r#"{"format":"stream-graph","version":1,"name":"g","#;
    const NODES: &str = r#""nodes":[{"name":"a","type":"Data","engine":"DNN_VM_GE_LOCAL","tasks":0},
        {"name":"b","type":"Add","engine":"AIcoreEngine","cost_us":2.5,"cores":1,"attrs":{"stream_label":"s"}},
        {"name":"c","type":"Add","engine":"AIcoreEngine","cost_us":0.1000000000000000055511151231257827}]"#;
    const EDGES: &str = r#""edges":[{"src":"a","dst":"b"},{"src":"b","dst":"c","kind":"control","dst_port":1}]"#;

    fn built(doc: &str) -> Model {
        load_str(doc).unwrap_or_else(|e| panic!("{e}\n{doc}"))
    }

    fn same_model(a: &Model, b: &Model) {
        assert_eq!((&a.nodes, &a.edges, &a.graphs), (&b.nodes, &b.edges, &b.graphs));
        assert_eq!((&a.name, &a.source), (&b.name, &b.source));
    }

    #[test]
    fn a_document_reads_alike_whichever_reader_meets_each_element() {
        let common = built(&format!("{HEAD}{NODES},{EDGES}}}"));
        // Escaped names: every node and edge goes through the schema, and edges resolve by name.
        let escaped = format!("{HEAD}{NODES},{EDGES}}}").replace("\"b\"", "\"\\u0062\"");
        assert!(escaped.contains("\\u0062"));
        same_model(&common, &built(&escaped));
        // Keys the scanner does not read, edges before nodes, the header last.
        same_model(&common, &built(&format!("{HEAD}{EDGES},{NODES},\"options\":{{}},\"subgraphs\":[]}}")));
        let late = format!("{{{NODES},{EDGES},\"name\":\"g\",\"version\":1,\"format\":\"stream-graph\"}}");
        same_model(&common, &built(&late));
        // One node in another shape among common ones.
        let mixed = NODES.replace(r#""tasks":0}"#, r#""tasks":0,"stream":-1}"#);
        same_model(&common, &built(&format!("{HEAD}{mixed},{EDGES}}}")));
    }

    #[test]
    fn faults_come_in_the_schema_order_whatever_the_document_order() {
        let bad = NODES.replace(r#""tasks":0"#, r#""tasks":-1"#);
        let node_fault = "node 'a' of root graph 'g': field 'tasks' must be an integer in [0, 4294967295], got -1";
        assert_eq!(load_str(&format!("{HEAD}{bad},{EDGES}}}")).unwrap_err().message, node_fault);
        // The root's name after its nodes still names the graph.
        let late = format!("{{\"format\":\"stream-graph\",\"version\":1,{bad},{EDGES},\"name\":\"g\"}}");
        assert_eq!(load_str(&late).unwrap_err().message, node_fault);
        // A top-level fault, a syntax error or a missing field after the node comes first.
        let e = load_str(&format!("{HEAD}{bad},{EDGES},\"bogus\":1}}")).unwrap_err();
        assert!(e.message.starts_with("graph document: unknown field 'bogus'"), "{e}");
        let e = load_str(&format!("{HEAD}{bad},{EDGES},}}")).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Json, "{e}");
        assert_eq!(
            load_str(&format!("{HEAD}{bad}}}")).unwrap_err().message,
            "graph document: missing required field 'edges'"
        );
        let e = load_str(&format!("{},{bad},{EDGES}}}", HEAD.replace("1,", "2,").trim_end_matches(','))).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Format, "{e}");
        // A bad edge after a bad node: the node.
        let edges = EDGES.replace(r#""kind":"control""#, r#""kind":"sideways""#);
        assert_eq!(load_str(&format!("{HEAD}{bad},{edges}}}")).unwrap_err().message, node_fault);
        let e = load_str(&format!("{HEAD}{NODES},{edges}}}")).unwrap_err();
        assert_eq!(e.message, "edge 1 of root graph 'g': kind \"sideways\" must be \"data\" or \"control\"");
    }

    #[test]
    fn syntax_errors_name_their_place_in_the_document() {
        let doc = format!("{HEAD}{NODES},\n{EDGES}}}").replace(r#""tasks":0}"#, r#""tasks":0 "cost_us":1}"#);
        let e = load_str(&doc).unwrap_err();
        assert_eq!(e.message, "malformed graph JSON: expected `,` or `}` at line 1 column 121", "{doc}");
        let e = load_str(&format!("{HEAD}{NODES},\n{EDGES}")).unwrap_err();
        assert_eq!(e.message, "malformed graph JSON: EOF while parsing an object at line 4 column 83");
        let e = load_str(&format!("{HEAD}{NODES},{EDGES}}} x")).unwrap_err();
        assert!(e.message.starts_with("malformed graph JSON: trailing characters"), "{e}");
        let e = builder_from_slice(
            b"{\"format\":\"stream-graph\",\"version\":1,\"name\":\"\xff\",\"nodes\":[],\"edges\":[]}",
        );
        assert!(e.unwrap_err().message.starts_with("malformed graph JSON: invalid unicode code point"));
        let e = load_str("[1, 2]").unwrap_err();
        assert_eq!(e.message, "graph document must be an object, got an array");
    }

    #[test]
    fn the_scanner_reads_the_common_node_shape() {
        let n = node_by_scanner(r#"{"name":"a","type":"Add","engine":"AIcoreEngine","tasks":2,"cost_us":1.5,"cores":3,"attrs":{"stream_label":"s","parallel_group":""}}"#).unwrap();
        assert_eq!((n.name.as_str(), n.op_type.as_str(), n.engine.as_str()), ("a", "Add", "AIcoreEngine"));
        assert_eq!((n.tasks, n.cost_us, n.cores), (2, 1.5, 3));
        assert_eq!(n.attrs.stream_label.as_deref(), Some("s"));
        assert_eq!(n.attrs.parallel_group, None);
        let d =
            node_by_scanner(" { \"name\" : \"b\" ,\n \"type\":\"Const\", \"engine\":\"DNN_VM_GE_LOCAL\" } ").unwrap();
        assert_eq!((d.tasks, d.cost_us, d.cores), (1, 0.0, 0));
    }

    #[test]
    fn the_scanner_leaves_every_other_node_to_the_schema() {
        for raw in [
            r#"{"name":"a","type":"Add"}"#,
            r#"{"name":"a","type":"Add","engine":"E","name":"b"}"#,
            r#"{"name":"a\n","type":"Add","engine":"E"}"#,
            r#"{"name":"a","type":"Add","engine":"E","tasks":-1}"#,
            r#"{"name":"a","type":"Add","engine":"E","tasks":1.0}"#,
            r#"{"name":"a","type":"Add","engine":"E","tasks":4294967296}"#,
            r#"{"name":"a","type":"Add","engine":"E","cost_us":-0}"#,
            r#"{"name":"a","type":"Add","engine":"E","cost_us":null}"#,
            r#"{"name":"a","type":"Add","engine":"E","stream":1}"#,
            r#"{"name":"a","type":"Add","engine":"E","attrs":{"dims":1}}"#,
            r#"{"name":1,"type":"Add","engine":"E"}"#,
            r#"{}"#,
            r#"[]"#,
        ] {
            assert!(node_by_scanner(raw).is_none(), "{raw}");
        }
        // What the schema makes of a node the scanner also reads is the same node.
        let raw = r#"{"name":"a","type":"Add","engine":"E","tasks":7,"cost_us":0.5,"attrs":{"user_stream_label":"u"}}"#;
        assert_eq!(node_by_scanner(raw).unwrap(), node_by_schema(raw).unwrap());
    }
}
