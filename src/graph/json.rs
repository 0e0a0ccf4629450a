//! Graph JSON v1 (docs/graph-json.md): reading into a [`ModelBuilder`]. The document is
//! walked as a `serde_json::Value` so that every type error can name the node and field at fault.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::attrs::{AttachedFormat, AttachedStreamInfo, GeAttrs, NodeAttrs};
use super::builder::{EdgeSpec, GraphSpec, ModelBuilder, NodeSpec, PartitionSpec};
use super::engines::EngineOverride;
use super::{EdgeKind, Model, Shape};
use crate::error::{Error, ErrorKind, Result};
use crate::{bail, err};

pub const GRAPH_FORMAT: &str = "stream-graph";
pub const GRAPH_VERSION: u64 = 1;

/// Reads and validates a graph file.
pub fn load_file(path: impl AsRef<Path>) -> Result<Model> {
    let path = path.as_ref();
    let text = std::fs::read(path).map_err(|e| err!(Io, "cannot read graph file '{}': {e}", path.display()))?;
    load_slice(&text)
}

/// Reads and validates a graph document.
pub fn load_str(text: &str) -> Result<Model> {
    load_slice(text.as_bytes())
}

pub fn load_slice(bytes: &[u8]) -> Result<Model> {
    builder_from_slice(bytes)?.build()
}

/// Parses a graph document into a builder without validating references, so a host can add
/// to it before building.
pub fn builder_from_slice(bytes: &[u8]) -> Result<ModelBuilder> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| err!(Json, "malformed graph JSON: {e}"))?;
    builder_from_value(&doc)
}

/// Field access that names what it reads in its errors.
struct Obj<'a> {
    map: &'a Map<String, Value>,
    what: String,
}

impl<'a> Obj<'a> {
    fn new(v: &'a Value, what: impl Into<String>) -> Result<Self> {
        let what = what.into();
        match v.as_object() {
            Some(map) => Ok(Obj { map, what }),
            None => Err(err!(Field, "{what} must be an object, got {}", kind_of(v))),
        }
    }

    fn check_keys(&self, allowed: &[&str]) -> Result<()> {
        for k in self.map.keys() {
            if !allowed.contains(&k.as_str()) {
                bail!(Field, "{}: unknown field '{k}' (known fields: {})", self.what, allowed.join(", "));
            }
        }
        Ok(())
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn required(&self, key: &str) -> Result<&'a Value> {
        self.get(key).ok_or_else(|| err!(Field, "{}: missing required field '{key}'", self.what))
    }

    fn wrong(&self, key: &str, expected: &str, got: &Value) -> Error {
        err!(Field, "{}: field '{key}' must be {expected}, got {}", self.what, short(got))
    }

    fn str_req(&self, key: &str) -> Result<&'a str> {
        let v = self.required(key)?;
        v.as_str().ok_or_else(|| self.wrong(key, "a string", v))
    }

    fn str_opt(&self, key: &str) -> Result<Option<&'a str>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_str().map(Some).ok_or_else(|| self.wrong(key, "a string", v)),
        }
    }

    fn bool_opt(&self, key: &str) -> Result<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_bool().map(Some).ok_or_else(|| self.wrong(key, "a bool", v)),
        }
    }

    fn u32_opt(&self, key: &str) -> Result<Option<u32>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) if n <= u64::from(u32::MAX) => Ok(Some(n as u32)),
                _ => Err(self.wrong(key, "an integer in [0, 4294967295]", v)),
            },
        }
    }

    fn i64_opt(&self, key: &str) -> Result<Option<i64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| self.wrong(key, "an integer", v)),
        }
    }

    fn f64_opt(&self, key: &str) -> Result<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
                _ => Err(self.wrong(key, "a finite number >= 0", v)),
            },
        }
    }

    fn array_opt(&self, key: &str) -> Result<&'a [Value]> {
        match self.get(key) {
            None => Ok(&[]),
            Some(v) => v.as_array().map(Vec::as_slice).ok_or_else(|| self.wrong(key, "an array", v)),
        }
    }

    fn array_req(&self, key: &str) -> Result<&'a [Value]> {
        let v = self.required(key)?;
        v.as_array().map(Vec::as_slice).ok_or_else(|| self.wrong(key, "an array", v))
    }

    fn strings_opt(&self, key: &str) -> Result<Vec<String>> {
        self.array_opt(key)?
            .iter()
            .map(|v| v.as_str().map(str::to_string).ok_or_else(|| self.wrong(key, "an array of strings", v)))
            .collect()
    }

    fn u64s_opt(&self, key: &str) -> Result<Vec<u64>> {
        self.array_opt(key)?
            .iter()
            .map(|v| v.as_u64().ok_or_else(|| self.wrong(key, "an array of integers >= 0", v)))
            .collect()
    }

    fn u32s_opt(&self, key: &str) -> Result<Vec<u32>> {
        self.array_opt(key)?
            .iter()
            .map(|v| match v.as_u64() {
                Some(n) if n <= u64::from(u32::MAX) => Ok(n as u32),
                _ => Err(self.wrong(key, "an array of integers >= 0", v)),
            })
            .collect()
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A value for an error message: short ones verbatim, long ones by kind.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() <= 40 { s } else { kind_of(v).to_string() }
}

fn parse_shape(o: &Obj<'_>) -> Result<Shape> {
    match o.str_opt("shape")? {
        None | Some("static") => Ok(Shape::Static),
        Some("dynamic") => Ok(Shape::Dynamic),
        Some(other) => Err(err!(Field, "{}: shape \"{other}\" must be \"static\" or \"dynamic\"", o.what)),
    }
}

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
];
const NODE_KEYS: &[&str] = &[
    "name",
    "type",
    "engine",
    "tasks",
    "cost_us",
    "cores",
    "attrs",
    "subgraphs",
    "stream",
    "attached_stream_ids",
    "attached_tasks",
    "ge_attrs",
    "out_bytes",
    "alias_input",
];
const ATTR_KEYS: &[&str] = &[
    "stream_label",
    "user_stream_label",
    "parallel_group",
    "new_stream_id",
    "attached_streams",
    "continuous_stream_label",
    "event_multiplexing",
    "active_label_list",
    "rts_label_node",
    "dims",
];
const ATTACHED_KEYS: &[&str] = &[
    "name",
    "reuse_key",
    "stream_num",
    "ge_format",
    "required",
    "force_reuse",
    "depend_value_inputs",
    "policy",
    "group",
];
const EDGE_KEYS: &[&str] = &["src", "dst", "kind", "src_port", "dst_port"];
const SUBGRAPH_KEYS: &[&str] = &["name", "parent", "nodes", "edges", "shape"];
const ENGINE_KEYS: &[&str] = &["independent", "attach", "skip_assign_stream", "priority", "scheduler"];
const PARTITION_KEYS: &[&str] = &["name", "engine", "graph", "stream_label", "user_stream_label", "nodes"];

pub fn builder_from_value(doc: &Value) -> Result<ModelBuilder> {
    let top = Obj::new(doc, "graph document")?;
    match top.get("format") {
        Some(Value::String(f)) if f == GRAPH_FORMAT => {}
        Some(v) => bail!(Format, "format is {}, expected \"{GRAPH_FORMAT}\"", short(v)),
        None => bail!(Format, "missing \"format\": \"{GRAPH_FORMAT}\""),
    }
    match top.get("version") {
        Some(v) if v.as_u64() == Some(GRAPH_VERSION) => {}
        Some(v) => bail!(Format, "version {} is not supported (this build reads version {GRAPH_VERSION})", short(v)),
        None => bail!(Format, "missing \"version\": {GRAPH_VERSION}"),
    }
    top.check_keys(TOP_KEYS)?;
    let name = top.str_req("name")?;
    let mut b = ModelBuilder::new(name);
    b.source = top.str_opt("source")?.map(str::to_string);
    let root = b.root_mut();
    root.shape = parse_shape(&top)?;
    read_graph_body(&top, root, &format!("root graph '{name}'"))?;

    for (i, sv) in top.array_opt("subgraphs")?.iter().enumerate() {
        let so = Obj::new(sv, format!("subgraphs[{i}]"))?;
        so.check_keys(SUBGRAPH_KEYS)?;
        let sname = so.str_req("name")?;
        let so = Obj { map: so.map, what: format!("subgraph '{sname}'") };
        let mut g = GraphSpec {
            name: sname.to_string(),
            parent: Some(so.str_req("parent")?.to_string()),
            shape: parse_shape(&so)?,
            ..Default::default()
        };
        let what = so.what.clone();
        read_graph_body(&so, &mut g, &what)?;
        b.graphs.push(g);
    }

    if let Some(v) = top.get("options") {
        let o = Obj::new(v, "options")?;
        for (k, val) in o.map {
            b.options.set(k, val)?;
        }
    }
    if let Some(v) = top.get("graph_attrs") {
        let o = Obj::new(v, "graph_attrs")?;
        b.graph_attrs = o.map.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<BTreeMap<_, _>>();
    }
    if let Some(v) = top.get("engines") {
        let o = Obj::new(v, "engines")?;
        for (ename, ev) in o.map {
            let eo = Obj::new(ev, format!("engines.{ename}"))?;
            eo.check_keys(ENGINE_KEYS)?;
            let priority = match eo.map.get("priority") {
                None => None,
                Some(Value::Null) => Some(None),
                Some(p) => match p.as_i64() {
                    Some(n) if i32::try_from(n).is_ok() => Some(Some(n as i32)),
                    _ => return Err(eo.wrong("priority", "an integer or null", p)),
                },
            };
            b.engine_overrides.insert(
                ename.clone(),
                EngineOverride {
                    independent: eo.bool_opt("independent")?,
                    attach: eo.bool_opt("attach")?,
                    skip_assign_stream: eo.bool_opt("skip_assign_stream")?,
                    priority,
                    scheduler: eo.str_opt("scheduler")?.map(str::to_string),
                },
            );
        }
    }
    if top.get("partition").is_some() {
        let mut entries = Vec::new();
        for (i, pv) in top.array_req("partition")?.iter().enumerate() {
            let po = Obj::new(pv, format!("partition[{i}]"))?;
            po.check_keys(PARTITION_KEYS)?;
            entries.push(PartitionSpec {
                name: po.str_req("name")?.to_string(),
                engine: po.str_req("engine")?.to_string(),
                graph: po.str_opt("graph")?.map(str::to_string),
                stream_label: po.str_opt("stream_label")?.map(str::to_string),
                user_stream_label: po.str_opt("user_stream_label")?.map(str::to_string),
                nodes: {
                    let names = po.strings_opt("nodes")?;
                    if po.get("nodes").is_none() {
                        return Err(err!(Field, "partition[{i}]: missing required field 'nodes'"));
                    }
                    names
                },
            });
        }
        b.partition = Some(entries);
    }
    Ok(b)
}

fn read_graph_body(o: &Obj<'_>, g: &mut GraphSpec, what: &str) -> Result<()> {
    let nodes = o.array_req("nodes")?;
    g.nodes.reserve(nodes.len());
    for (i, nv) in nodes.iter().enumerate() {
        g.nodes.push(read_node(nv, i, what)?);
    }
    let edges = o.array_req("edges")?;
    g.edges.reserve(edges.len());
    for (i, ev) in edges.iter().enumerate() {
        let eo = Obj::new(ev, format!("edge {i} of {what}"))?;
        eo.check_keys(EDGE_KEYS)?;
        let kind = match eo.str_opt("kind")? {
            None | Some("data") => EdgeKind::Data,
            Some("control") => EdgeKind::Control,
            Some(other) => bail!(Field, "edge {i} of {what}: kind \"{other}\" must be \"data\" or \"control\""),
        };
        g.edges.push(EdgeSpec {
            src: eo.str_req("src")?.to_string(),
            dst: eo.str_req("dst")?.to_string(),
            kind,
            src_port: eo.u32_opt("src_port")?.unwrap_or(0),
            dst_port: eo.u32_opt("dst_port")?.unwrap_or(0),
        });
    }
    Ok(())
}

fn read_node(v: &Value, index: usize, graph: &str) -> Result<NodeSpec> {
    let o = Obj::new(v, format!("node {index} of {graph}"))?;
    let name = o.str_req("name")?;
    let o = Obj { map: o.map, what: format!("node '{name}' of {graph}") };
    o.check_keys(NODE_KEYS)?;
    let mut n = NodeSpec::new(name, o.str_req("type")?, o.str_req("engine")?);
    if let Some(v) = o.get("tasks") {
        // Negative and fractional counts get their own message: they are a common export bug.
        n.tasks = match v.as_u64() {
            Some(t) if t <= u64::from(u32::MAX) => t as u32,
            _ => return Err(o.wrong("tasks", "an integer in [0, 4294967295]", v)),
        };
    }
    n.cost_us = o.f64_opt("cost_us")?.unwrap_or(0.0);
    n.cores = o.u32_opt("cores")?.unwrap_or(0);
    n.subgraphs = o.strings_opt("subgraphs")?;
    n.stream = o.i64_opt("stream")?;
    n.attached_stream_ids = o.u32s_opt("attached_stream_ids")?;
    n.attached_tasks = o.u32s_opt("attached_tasks")?;
    if o.get("out_bytes").is_some() {
        n.out_bytes = Some(o.u64s_opt("out_bytes")?);
    }
    n.alias_input = o.u32_opt("alias_input")?;
    if let Some(av) = o.get("attrs") {
        n.attrs = read_attrs(&Obj::new(av, format!("{}: attrs", o.what))?)?;
    }
    if let Some(gv) = o.get("ge_attrs") {
        let go = Obj::new(gv, format!("{}: ge_attrs", o.what))?;
        n.ge_attrs = GeAttrs(go.map.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
    }
    Ok(n)
}

/// Reads a node's `attrs` object on its own (the C ABI sets attributes one key at a time);
/// `what` names the node in error messages.
pub fn node_attrs_from_value(v: &Value, what: &str) -> Result<NodeAttrs> {
    read_attrs(&Obj::new(v, format!("{what}: attrs"))?)
}

fn read_attrs(a: &Obj<'_>) -> Result<NodeAttrs> {
    a.check_keys(ATTR_KEYS)?;
    let mut attached = Vec::new();
    for (i, v) in a.array_opt("attached_streams")?.iter().enumerate() {
        let o = Obj::new(v, format!("{}.attached_streams[{i}]", a.what))?;
        o.check_keys(ATTACHED_KEYS)?;
        let ge_format = match o.str_opt("ge_format")? {
            None => AttachedFormat::default(),
            Some(s) => AttachedFormat::parse(s).ok_or_else(|| {
                err!(Attribute, "{}: ge_format \"{s}\" must be \"v1\", \"v1_list\" or \"v2\"", o.what)
            })?,
        };
        let name = o.get("name").map(|v| v.as_str().ok_or_else(|| o.wrong("name", "a string", v))).transpose()?;
        attached.push(AttachedStreamInfo {
            name: name.unwrap_or_default().to_string(),
            reuse_key: o.str_opt("reuse_key")?.unwrap_or_default().to_string(),
            stream_num: o.u32_opt("stream_num")?.unwrap_or(1),
            ge_format,
            required: o.bool_opt("required")?,
            force_reuse: o.bool_opt("force_reuse")?.unwrap_or(false),
            depend_value_inputs: o.u32s_opt("depend_value_inputs")?,
            policy: o.str_opt("policy")?.map(str::to_string),
            group: o.str_opt("group")?.map(str::to_string),
        });
    }
    let non_empty = |s: Option<&str>| s.filter(|s| !s.is_empty()).map(str::to_string);
    Ok(NodeAttrs {
        stream_label: non_empty(a.str_opt("stream_label")?),
        user_stream_label: non_empty(a.str_opt("user_stream_label")?),
        parallel_group: non_empty(a.str_opt("parallel_group")?),
        new_stream_id: a.i64_opt("new_stream_id")?,
        attached_streams: attached,
        continuous_stream_label: non_empty(a.str_opt("continuous_stream_label")?),
        event_multiplexing: a.strings_opt("event_multiplexing")?,
        active_label_list: a.strings_opt("active_label_list")?,
        rts_label_node: a.bool_opt("rts_label_node")?.unwrap_or(false),
        dims: a.i64_opt("dims")?,
    })
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::new(ErrorKind::Json, e.to_string())
    }
}
