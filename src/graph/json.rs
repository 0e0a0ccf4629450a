//! Graph JSON v1 (docs/graph-json.md): reading into a [`ModelBuilder`].
//!
//! The input schema is the document structs below (`deny_unknown_fields`), deserialized straight
//! from the bytes: no `Value` tree of the document is built (at 1M nodes that tree cost more
//! time and memory than the rest of the loader). Open-ended parts (`options`, `graph_attrs`,
//! `ge_attrs`) stay free-form values. Each typed field reads through a checker that names the
//! field and the value at fault; element wrappers add which node, edge, subgraph or entry it
//! was, so a message reads `node 'a' of root graph 'g': field 'tasks' must be …, got -1`.
//!
//! A document in the common shape is read first without serde, in one pass
//! (`json_fast.rs`); only a document that it does not recognise (anything the schema
//! would reject among them) comes here, so the fast path never changes a message.

use std::cell::RefCell;
use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::attrs::{AttachedFormat, AttachedStreamInfo, GeAttrs};
use super::builder::{EdgeSpec, EventSpec, GraphSpec, LoadedEdge, ModelBuilder, NodeSpec, PartitionSpec, no_memory};
use super::engines::EngineOverride;
use super::fields::{NODE_FIELDS, NodeAttrs, attr_fields, is_required, node_fields};
use super::json_fast;
use super::names::NameIndex;
use super::{EdgeKind, Model, Shape};
use crate::error::{Error, ErrorKind, Result};

pub use super::{GRAPH_FORMAT, GRAPH_VERSION};

type DeResult<T, E> = std::result::Result<T, E>;

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

pub fn load_slice(bytes: &[u8]) -> Result<Model> {
    match json_fast::document(bytes) {
        Some((b, index)) => b.build_indexed(vec![index]),
        None => builder_from_schema(bytes)?.build(),
    }
}

/// Parses a graph document already held as a `Value` (tests and hosts that build one).
pub fn builder_from_value(doc: &Value) -> Result<ModelBuilder> {
    builder_from_slice(&serde_json::to_vec(doc)?)
}

// ---------------------------------------------------------------------------------------------
// Faults. serde errors carry only text, so a checker leaves its [`Fault`] aside; element
// wrappers add their place, innermost first, and the loader renders it as one message.

/// Where a fault lies.
#[derive(Debug)]
enum Place {
    /// Node `index` of the graph being read, with its name when it has a string one.
    Node(usize, Option<String>),
    Edge(usize),
    /// `subgraphs[i]`, named once the subgraph's name has been read.
    Subgraph(usize, Option<String>),
    /// A node's `attrs`, and `attached_streams[i]` inside them.
    Attrs,
    Attached(usize),
    Engine(String),
    Partition(usize),
    Event(usize),
}

#[derive(Debug)]
struct Fault {
    kind: ErrorKind,
    places: Vec<Place>,
    /// `field '…' must be …` and the like. A leading `\0` joins it to its place with a space
    /// (`node 0 of … must be an object`); a leading `\1` stands alone (`options must be …`).
    text: String,
}

thread_local! {
    static FAULT: RefCell<Option<Fault>> = const { RefCell::new(None) };
}

fn take_fault() -> Option<Fault> {
    FAULT.with(|f| f.borrow_mut().take())
}

fn fail<E: de::Error>(kind: ErrorKind, text: String) -> E {
    FAULT.with(|f| *f.borrow_mut() = Some(Fault { kind, places: Vec::new(), text }));
    E::custom("graph document fault")
}

/// Adds `place` to the fault behind `e`, making one from serde's own text (an unknown field,
/// say) when no checker left one.
fn at<E: de::Error>(e: serde_json::Error, place: Place) -> E {
    FAULT.with(|f| {
        let mut f = f.borrow_mut();
        let fault = f.get_or_insert_with(|| Fault { kind: ErrorKind::Field, places: Vec::new(), text: serde_text(&e) });
        fault.places.push(place);
    });
    E::custom("graph document fault")
}

/// serde's message without its position, in the loader's words.
fn serde_text(e: &serde_json::Error) -> String {
    let mut s = e.to_string();
    if e.line() > 0 {
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        if s.ends_with(&suffix) {
            s.truncate(s.len() - suffix.len());
        }
    }
    if let Some(rest) = s.strip_prefix("unknown field `") {
        let (name, known) = rest.split_once('`').unwrap_or((rest, ""));
        let known = known.trim_start_matches(", expected one of ").trim_start_matches(", expected ").replace('`', "");
        return format!("unknown field '{name}' (known fields: {known})");
    }
    if let Some(rest) = s.strip_prefix("missing field `") {
        return format!("missing required field '{}'", rest.trim_end_matches('`'));
    }
    s
}

/// An element's fault as an error: `place` within the graph labelled `graph`. `raw` is the
/// element's text within the document `doc`, for the position of a syntax error.
fn located(e: serde_json::Error, place: Place, graph: &str, raw: Option<(&RawValue, &[u8])>) -> Error {
    if !e.is_data() {
        take_fault();
        return Error::new(ErrorKind::Json, format!("malformed graph JSON: {}", position_in_document(&e, raw)));
    }
    let _: serde_json::Error = at(e, place);
    render(take_fault().expect("at() leaves a fault"), graph)
}

/// A syntax error inside an element (a number out of range: elements are checked for syntax
/// before they are read) with its line and column in the whole document.
fn position_in_document(e: &serde_json::Error, raw: Option<(&RawValue, &[u8])>) -> String {
    let text = e.to_string();
    let Some((raw, doc)) = raw else { return text };
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let (Some(bare), Some(offset)) =
        (text.strip_suffix(&suffix), (raw.get().as_ptr() as usize).checked_sub(doc.as_ptr() as usize))
    else {
        return text;
    };
    let before = &doc[..offset.min(doc.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column0 = before.iter().rev().take_while(|&&b| b != b'\n').count();
    let (l, c) = if e.line() == 1 { (line, column0 + e.column()) } else { (line + e.line() - 1, e.column()) };
    format!("{bare} at line {l} column {c}")
}

/// A fault's message: its places, outermost first, then its text.
fn render(fault: Fault, graph: &str) -> Error {
    let mut graph = graph.to_string();
    let mut what = String::from("graph document");
    for place in fault.places.iter().rev() {
        what = match place {
            Place::Subgraph(i, None) => format!("subgraphs[{i}]"),
            Place::Subgraph(_, Some(name)) => {
                graph = format!("subgraph '{name}'");
                graph.clone()
            }
            Place::Node(_, Some(name)) => format!("node '{name}' of {graph}"),
            Place::Node(i, None) => format!("node {i} of {graph}"),
            Place::Edge(i) => format!("edge {i} of {graph}"),
            Place::Attrs => format!("{what}: attrs"),
            Place::Attached(i) => format!("{what}.attached_streams[{i}]"),
            Place::Engine(name) => format!("engines.{name}"),
            Place::Partition(i) => format!("partition[{i}]"),
            Place::Event(i) => format!("events[{i}]"),
        };
    }
    let text = fault.text;
    let message = if let Some(rest) = text.strip_prefix('\u{0}') {
        format!("{what} {rest}")
    } else if let Some(rest) = text.strip_prefix('\u{1}') {
        rest.to_string()
    } else {
        format!("{what}: {text}")
    };
    Error::new(fault.kind, message)
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

// ---------------------------------------------------------------------------------------------
// Field checkers: each reads one field's value (a scalar or a short list, never the document)
// and names the field in its error. A null value is the field left out.

fn wrong<E: de::Error>(field: &str, expected: &str, got: &Value) -> E {
    fail(ErrorKind::Field, format!("field '{field}' must be {expected}, got {}", short(got)))
}

fn value_of<'de, D: Deserializer<'de>>(d: D) -> DeResult<Option<Value>, D::Error> {
    Ok(Some(Value::deserialize(d)?).filter(|v| !v.is_null()))
}

fn string<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<String>, D::Error> {
    match value_of(d)? {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(wrong(field, "a string", &v)),
    }
}

fn boolean<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<bool>, D::Error> {
    match value_of(d)? {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(v) => Err(wrong(field, "a bool", &v)),
    }
}

fn uint32<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<u32>, D::Error> {
    match value_of(d)? {
        None => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n <= u64::from(u32::MAX) => Ok(Some(n as u32)),
            _ => Err(wrong(field, "an integer in [0, 4294967295]", &v)),
        },
    }
}

fn int64<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<i64>, D::Error> {
    match value_of(d)? {
        None => Ok(None),
        Some(v) => v.as_i64().map(Some).ok_or_else(|| wrong(field, "an integer", &v)),
    }
}

fn non_negative<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<f64>, D::Error> {
    match value_of(d)? {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
            _ => Err(wrong(field, "a finite number >= 0", &v)),
        },
    }
}

fn array<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<Vec<Value>>, D::Error> {
    match value_of(d)? {
        None => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(v) => Err(wrong(field, "an array", &v)),
    }
}

fn strings<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<Vec<String>>, D::Error> {
    let Some(a) = array(d, field)? else { return Ok(None) };
    a.into_iter()
        .map(|v| match v {
            Value::String(s) => Ok(s),
            v => Err(wrong(field, "an array of strings", &v)),
        })
        .collect::<DeResult<_, _>>()
        .map(Some)
}

fn uint64s<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<Vec<u64>>, D::Error> {
    let Some(a) = array(d, field)? else { return Ok(None) };
    a.iter()
        .map(|v| v.as_u64().ok_or_else(|| wrong(field, "an array of integers >= 0", v)))
        .collect::<DeResult<_, _>>()
        .map(Some)
}

fn uint32s<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<Vec<u32>>, D::Error> {
    let Some(a) = array(d, field)? else { return Ok(None) };
    a.iter()
        .map(|v| match v.as_u64() {
            Some(n) if n <= u64::from(u32::MAX) => Ok(n as u32),
            _ => Err(wrong(field, "an array of integers >= 0", v)),
        })
        .collect::<DeResult<_, _>>()
        .map(Some)
}

/// An object whose keys are open (`options`, `graph_attrs`, `ge_attrs`, `engines`).
fn object<'de, D: Deserializer<'de>>(d: D, what: &str) -> DeResult<Option<Map<String, Value>>, D::Error> {
    match value_of(d)? {
        None => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(v) => Err(fail(ErrorKind::Field, format!("{what} must be an object, got {}", kind_of(&v)))),
    }
}

/// One checker per field, named after it, so that the struct attributes stay short.
macro_rules! checkers {
    ($($name:ident: $check:ident -> $t:ty;)*) => {
        $(
            pub fn $name<'de, D: Deserializer<'de>>(d: D) -> DeResult<Option<$t>, D::Error> {
                const NAME: &str = stringify!($name);
                $check(d, match NAME.strip_prefix("r#") { Some(bare) => bare, None => NAME })
            }
        )*
    };
}

mod field {
    use super::*;

    checkers! {
        name: string -> String;
        engine: string -> String;
        shape: string -> String;
        source: string -> String;
        parent: string -> String;
        src: string -> String;
        dst: string -> String;
        kind: string -> String;
        src_port: uint32 -> u32;
        dst_port: uint32 -> u32;
        stream_label: string -> String;
        user_stream_label: string -> String;
        reuse_key: string -> String;
        stream_num: uint32 -> u32;
        ge_format: string -> String;
        required: boolean -> bool;
        force_reuse: boolean -> bool;
        depend_value_inputs: uint32s -> Vec<u32>;
        policy: string -> String;
        group: string -> String;
        independent: boolean -> bool;
        attach: boolean -> bool;
        skip_assign_stream: boolean -> bool;
        scheduler: string -> String;
        graph: string -> String;
        nodes: strings -> Vec<String>;
        id: uint32 -> u32;
        from: string -> String;
        to: string -> String;
        from_graph: string -> String;
        to_graph: string -> String;
        from_attached: uint32 -> u32;
        to_attached: uint32 -> u32;
    }

    pub fn options<'de, D: Deserializer<'de>>(d: D) -> DeResult<Option<Map<String, Value>>, D::Error> {
        object(d, "\u{1}options")
    }
    pub fn graph_attrs<'de, D: Deserializer<'de>>(d: D) -> DeResult<Option<Map<String, Value>>, D::Error> {
        object(d, "\u{1}graph_attrs")
    }
    pub fn engines<'de, D: Deserializer<'de>>(d: D) -> DeResult<Option<Map<String, Value>>, D::Error> {
        object(d, "\u{1}engines")
    }
    /// `priority`: absent, null (no priority) or an i32.
    pub fn priority<'de, D: Deserializer<'de>>(d: D) -> DeResult<Option<Option<i32>>, D::Error> {
        let v = Value::deserialize(d)?;
        match v.as_i64() {
            _ if v.is_null() => Ok(Some(None)),
            Some(n) if i32::try_from(n).is_ok() => Ok(Some(Some(n as i32))),
            _ => Err(wrong("priority", "an integer or null", &v)),
        }
    }
    /// `format` and `version`: checked first, with messages of their own.
    pub fn any<'de, D: Deserializer<'de>>(d: D) -> DeResult<Option<Value>, D::Error> {
        Ok(Some(Value::deserialize(d)?))
    }
    pub fn raw_nodes<'de, D: Deserializer<'de>>(d: D) -> DeResult<Option<Vec<&'de RawValue>>, D::Error> {
        raw_items(d, "nodes")
    }
    pub fn raw_edges<'de, D: Deserializer<'de>>(d: D) -> DeResult<Option<Vec<&'de RawValue>>, D::Error> {
        raw_items(d, "edges")
    }
    pub fn raw_subgraphs<'de, D: Deserializer<'de>>(d: D) -> DeResult<Option<Vec<&'de RawValue>>, D::Error> {
        raw_items(d, "subgraphs")
    }
    pub fn raw_partition<'de, D: Deserializer<'de>>(d: D) -> DeResult<Option<Vec<&'de RawValue>>, D::Error> {
        raw_items(d, "partition")
    }
    pub fn raw_events<'de, D: Deserializer<'de>>(d: D) -> DeResult<Option<Vec<&'de RawValue>>, D::Error> {
        raw_items(d, "events")
    }
}

// ---------------------------------------------------------------------------------------------
// The document structs: the input schema (docs/graph-json.md). Field order is the order that
// "unknown field" messages list them in. Arrays of nodes, edges, subgraphs and partition
// entries are kept as borrowed raw slices and read one element at a time, so a fault names
// the element it is in.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TopDoc<'a> {
    #[serde(default, deserialize_with = "field::any")]
    format: Option<Value>,
    #[serde(default, deserialize_with = "field::any")]
    version: Option<Value>,
    #[serde(default, deserialize_with = "field::name")]
    name: Option<String>,
    #[serde(default, deserialize_with = "field::shape")]
    shape: Option<String>,
    #[serde(default, deserialize_with = "field::source")]
    source: Option<String>,
    #[serde(default, borrow, deserialize_with = "field::raw_nodes")]
    nodes: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow, deserialize_with = "field::raw_edges")]
    edges: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow, deserialize_with = "field::raw_subgraphs")]
    subgraphs: Option<Vec<&'a RawValue>>,
    #[serde(default, deserialize_with = "field::options")]
    options: Option<Map<String, Value>>,
    #[serde(default, deserialize_with = "field::graph_attrs")]
    graph_attrs: Option<Map<String, Value>>,
    #[serde(default, deserialize_with = "field::engines")]
    engines: Option<Map<String, Value>>,
    #[serde(default, borrow, deserialize_with = "field::raw_partition")]
    partition: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow, deserialize_with = "field::raw_events")]
    events: Option<Vec<&'a RawValue>>,
}

// The node and its `attrs` come from the field tables (fields.rs): one `Option` per row, read
// by the row's checker, then set on the spec through the row's `via`.

/// A document struct from table rows: what derived `deny_unknown_fields` structs do (unknown
/// and duplicate keys refused in serde's words, keys in row order), with each value read as a
/// `Value` and handed to the row's checker under its key.
macro_rules! doc_struct {
    ($doc:ident: $( $field:ident: $key:literal $read:ident($rty:ty) ),*) => {
        #[derive(Default)]
        struct $doc {
            $( $field: Option<$rty>, )*
        }

        impl<'de> Deserialize<'de> for $doc {
            fn deserialize<D: Deserializer<'de>>(d: D) -> DeResult<Self, D::Error> {
                const KEYS: &[&str] = &[$($key),*];
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $doc;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str(concat!("struct ", stringify!($doc)))
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> DeResult<$doc, A::Error> {
                        let mut doc = $doc::default();
                        let mut seen = 0u64;
                        while let Some(i) = map.next_key_seed(Key(KEYS))? {
                            if seen & (1 << i) != 0 {
                                return Err(de::Error::duplicate_field(KEYS[i]));
                            }
                            seen |= 1 << i;
                            let v: Value = map.next_value()?;
                            match KEYS[i] {
                                $( $key => doc.$field = read::$read(v, $key).map_err(de::Error::custom)?, )*
                                _ => {}
                            }
                        }
                        Ok(doc)
                    }
                }
                d.deserialize_map(V)
            }
        }
    };
}

/// A key of a document struct, as its position in `KEYS`.
struct Key(&'static [&'static str]);

impl<'de> de::DeserializeSeed<'de> for Key {
    type Value = usize;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> DeResult<usize, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = usize;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field identifier")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> DeResult<usize, E> {
        self.0.iter().position(|k| *k == v).ok_or_else(|| E::unknown_field(v, self.0))
    }
}

macro_rules! node_doc {
    ($(
        $(#[$doc:meta])*
        $field:ident: $ty:ty = $default:expr;
        $key:literal $presence:ident, schema $read:ident($rty:ty) via $via:ident, fast $fast:ident,
        node $to_node:ident($nty:ty), e.g. $ex:literal;
    )*) => {
        doc_struct!(NodeDoc: $( $field: $key $read($rty) ),*);

        impl NodeDoc {
            /// The first required key the node lacks.
            fn missing_key(&self) -> Option<&'static str> {
                $( if is_required!($presence) && self.$field.is_none() { return Some($key); } )*
                None
            }

            /// Sets each field given; `what` names the node in messages.
            fn apply(self, spec: &mut NodeSpec, what: &dyn Fn(&NodeSpec) -> String) -> Result<()> {
                $(
                    if let Some(v) = self.$field {
                        let v = via::$via(v, &|| what(spec))?;
                        spec.$field = v;
                    }
                )*
                Ok(())
            }
        }
    };
}
node_fields!(node_doc);

macro_rules! attrs_doc {
    ($(
        $(#[$doc:meta])*
        $field:ident: $ty:ty = $default:expr;
        $key:literal, schema $read:ident($rty:ty) via $via:ident, fast $fast:ident, e.g. $ex:literal;
    )*) => {
        doc_struct!(AttrsDoc: $( $field: $key $read($rty) ),*);

        impl AttrsDoc {
            /// Sets each field given; `what` names the `attrs` object in messages.
            fn apply(self, attrs: &mut NodeAttrs, what: &dyn Fn() -> String) -> Result<()> {
                $(
                    if let Some(v) = self.$field {
                        attrs.$field = via::$via(v, what)?;
                    }
                )*
                Ok(())
            }
        }
    };
}
attr_fields!(attrs_doc);

/// The checkers the field tables name, each `(value, key)`.
mod read {
    use super::*;
    pub(super) use super::{boolean, int64, non_negative, string, strings, uint32, uint32s, uint64s};

    pub fn attrs<'de, D: Deserializer<'de>>(d: D, _: &str) -> DeResult<Option<AttrsDoc>, D::Error> {
        match value_of(d)? {
            None => Ok(None),
            Some(v) => parse_value::<AttrsDoc>(v).map(Some).map_err(|e| at(e, Place::Attrs)),
        }
    }
    pub fn attached_streams<'de, D: Deserializer<'de>>(
        d: D,
        key: &str,
    ) -> DeResult<Option<Vec<AttachedDoc>>, D::Error> {
        let Some(items) = array(d, key)? else { return Ok(None) };
        items
            .into_iter()
            .enumerate()
            .map(|(i, v)| parse_value::<AttachedDoc>(v).map_err(|e| at(e, Place::Attached(i))))
            .collect::<DeResult<_, _>>()
            .map(Some)
    }
    pub fn ge_attrs<'de, D: Deserializer<'de>>(d: D, key: &str) -> DeResult<Option<Map<String, Value>>, D::Error> {
        object(d, key)
    }
}

/// From a checked value to the field, as the tables' `via` name it; `what` names the node (or
/// its `attrs`) for the conversions that can fail.
mod via {
    use super::*;

    pub fn same<T>(v: T, _: &dyn Fn() -> String) -> Result<T> {
        Ok(v)
    }
    pub fn some<T>(v: T, _: &dyn Fn() -> String) -> Result<Option<T>> {
        Ok(Some(v))
    }
    /// An empty label is no label.
    pub fn label(v: String, _: &dyn Fn() -> String) -> Result<Option<String>> {
        Ok(Some(v).filter(|s| !s.is_empty()))
    }
    pub fn attrs(doc: AttrsDoc, what: &dyn Fn() -> String) -> Result<NodeAttrs> {
        let mut a = NodeAttrs::default();
        doc.apply(&mut a, &|| format!("{}: attrs", what()))?;
        Ok(a)
    }
    pub fn ge_attrs(m: Map<String, Value>, _: &dyn Fn() -> String) -> Result<GeAttrs> {
        Ok(GeAttrs(m.into_iter().collect()))
    }
    pub fn attached(docs: Vec<AttachedDoc>, what: &dyn Fn() -> String) -> Result<Vec<AttachedStreamInfo>> {
        let mut attached = Vec::with_capacity(docs.len());
        for (i, d) in docs.into_iter().enumerate() {
            let ge_format = match d.ge_format.as_deref() {
                None => AttachedFormat::default(),
                Some(s) => AttachedFormat::parse(s).ok_or_else(|| {
                    Error::new(
                        ErrorKind::Attribute,
                        format!(
                            "{}.attached_streams[{i}]: ge_format \"{s}\" must be \"v1\", \"v1_list\" or \"v2\"",
                            what()
                        ),
                    )
                })?,
            };
            attached.push(AttachedStreamInfo {
                name: d.name.unwrap_or_default(),
                reuse_key: d.reuse_key.unwrap_or_default(),
                stream_num: d.stream_num.unwrap_or(1),
                ge_format,
                required: d.required,
                force_reuse: d.force_reuse.unwrap_or(false),
                depend_value_inputs: d.depend_value_inputs.unwrap_or_default(),
                policy: d.policy,
                group: d.group,
            });
        }
        Ok(attached)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AttachedDoc {
    #[serde(default, deserialize_with = "field::name")]
    name: Option<String>,
    #[serde(default, deserialize_with = "field::reuse_key")]
    reuse_key: Option<String>,
    #[serde(default, deserialize_with = "field::stream_num")]
    stream_num: Option<u32>,
    #[serde(default, deserialize_with = "field::ge_format")]
    ge_format: Option<String>,
    #[serde(default, deserialize_with = "field::required")]
    required: Option<bool>,
    #[serde(default, deserialize_with = "field::force_reuse")]
    force_reuse: Option<bool>,
    #[serde(default, deserialize_with = "field::depend_value_inputs")]
    depend_value_inputs: Option<Vec<u32>>,
    #[serde(default, deserialize_with = "field::policy")]
    policy: Option<String>,
    #[serde(default, deserialize_with = "field::group")]
    group: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EdgeDoc {
    #[serde(default, deserialize_with = "field::src")]
    src: Option<String>,
    #[serde(default, deserialize_with = "field::dst")]
    dst: Option<String>,
    #[serde(default, deserialize_with = "field::kind")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "field::src_port")]
    src_port: Option<u32>,
    #[serde(default, deserialize_with = "field::dst_port")]
    dst_port: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubgraphDoc<'a> {
    #[serde(default, deserialize_with = "field::name")]
    name: Option<String>,
    #[serde(default, deserialize_with = "field::parent")]
    parent: Option<String>,
    #[serde(default, borrow, deserialize_with = "field::raw_nodes")]
    nodes: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow, deserialize_with = "field::raw_edges")]
    edges: Option<Vec<&'a RawValue>>,
    #[serde(default, deserialize_with = "field::shape")]
    shape: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EngineDoc {
    #[serde(default, deserialize_with = "field::independent")]
    independent: Option<bool>,
    #[serde(default, deserialize_with = "field::attach")]
    attach: Option<bool>,
    #[serde(default, deserialize_with = "field::skip_assign_stream")]
    skip_assign_stream: Option<bool>,
    #[serde(default, deserialize_with = "field::priority")]
    priority: Option<Option<i32>>,
    #[serde(default, deserialize_with = "field::scheduler")]
    scheduler: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PartitionDoc {
    #[serde(default, deserialize_with = "field::name")]
    name: Option<String>,
    #[serde(default, deserialize_with = "field::engine")]
    engine: Option<String>,
    #[serde(default, deserialize_with = "field::graph")]
    graph: Option<String>,
    #[serde(default, deserialize_with = "field::stream_label")]
    stream_label: Option<String>,
    #[serde(default, deserialize_with = "field::user_stream_label")]
    user_stream_label: Option<String>,
    #[serde(default, deserialize_with = "field::nodes")]
    nodes: Option<Vec<String>>,
}

/// A given event (graph-json.md "Event").
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EventDoc {
    #[serde(default, deserialize_with = "field::id")]
    id: Option<u32>,
    #[serde(default, deserialize_with = "field::from")]
    from: Option<String>,
    #[serde(default, deserialize_with = "field::to")]
    to: Option<String>,
    #[serde(default, deserialize_with = "field::from_graph")]
    from_graph: Option<String>,
    #[serde(default, deserialize_with = "field::to_graph")]
    to_graph: Option<String>,
    #[serde(default, deserialize_with = "field::from_attached")]
    from_attached: Option<u32>,
    #[serde(default, deserialize_with = "field::to_attached")]
    to_attached: Option<u32>,
}

/// Only the name, to say which node or subgraph a fault is in.
#[derive(Deserialize)]
struct NameProbe {
    #[serde(default)]
    name: Option<Value>,
}

/// Only the header: a wrong format or version is reported before any other fault.
#[derive(Deserialize)]
struct HeaderProbe {
    #[serde(default)]
    format: Option<Value>,
    #[serde(default)]
    version: Option<Value>,
}

/// An array field whose items are read one at a time later, each with its place.
fn raw_items<'de, D: Deserializer<'de>>(d: D, field: &'static str) -> DeResult<Option<Vec<&'de RawValue>>, D::Error> {
    struct Items(&'static str);
    impl<'de> Visitor<'de> for Items {
        type Value = Option<Vec<&'de RawValue>>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an array")
        }
        fn visit_unit<E: de::Error>(self) -> DeResult<Self::Value, E> {
            Ok(None)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> DeResult<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(item) = seq.next_element()? {
                if out.len() == out.capacity() {
                    // The one table here sized by the input: an error, not an abort, when the
                    // process cannot get it.
                    out.try_reserve(out.len().max(1024)).map_err(|_| {
                        fail::<A::Error>(
                            ErrorKind::Limit,
                            format!("\u{1}cannot allocate memory for {} {}", out.len() * 2, self.0),
                        )
                    })?;
                }
                out.push(item);
            }
            Ok(Some(out))
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> DeResult<Self::Value, E> {
            Err(wrong(self.0, "an array", &Value::Bool(v)))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> DeResult<Self::Value, E> {
            Err(wrong(self.0, "an array", &Value::from(v)))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> DeResult<Self::Value, E> {
            Err(wrong(self.0, "an array", &Value::from(v)))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> DeResult<Self::Value, E> {
            Err(wrong(self.0, "an array", &Value::from(v)))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> DeResult<Self::Value, E> {
            Err(wrong(self.0, "an array", &Value::from(v)))
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> DeResult<Self::Value, A::Error> {
            let v = Value::deserialize(MapAccessDeserializer::new(map))?;
            Err(wrong(self.0, "an array", &v))
        }
    }
    d.deserialize_any(Items(field))
}

/// An object, never an array (serde would read a struct from one by position).
struct MapOnly<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for MapOnly<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> DeResult<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> DeResult<T, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> DeResult<T, E> {
                Err(not_object("a bool"))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> DeResult<T, E> {
                Err(not_object("a number"))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> DeResult<T, E> {
                Err(not_object("a number"))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> DeResult<T, E> {
                Err(not_object("a number"))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> DeResult<T, E> {
                Err(not_object("a string"))
            }
            fn visit_unit<E: de::Error>(self) -> DeResult<T, E> {
                Err(not_object("null"))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> DeResult<T, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Err(not_object("an array"))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData)).map(MapOnly)
    }
}

fn not_object<E: de::Error>(kind: &str) -> E {
    fail(ErrorKind::Field, format!("\u{0}must be an object, got {kind}"))
}

fn parse_value<T: DeserializeOwned>(v: Value) -> DeResult<T, serde_json::Error> {
    MapOnly::<T>::deserialize(v).map(|m| m.0)
}

fn parse_raw<'a, T: Deserialize<'a>>(raw: &'a RawValue) -> DeResult<T, serde_json::Error> {
    serde_json::from_str::<MapOnly<T>>(raw.get()).map(|m| m.0)
}

/// An element read owned. A key given twice was always allowed, the last one counting (as in
/// a JSON object read into a map); derived structs refuse it, so such an element is read again
/// through a map.
fn parse_element<T: DeserializeOwned>(raw: &RawValue) -> DeResult<T, serde_json::Error> {
    match parse_raw::<T>(raw) {
        Err(e) if e.is_data() && e.to_string().starts_with("duplicate field `") => {
            take_fault();
            parse_value(serde_json::from_str::<Value>(raw.get())?)
        }
        other => other,
    }
}

fn probe_name(raw: &RawValue) -> Option<String> {
    let saved = take_fault();
    let name = parse_raw::<NameProbe>(raw).ok().and_then(|p| p.name).and_then(|v| v.as_str().map(str::to_string));
    take_fault();
    FAULT.with(|f| *f.borrow_mut() = saved);
    name
}

// ---------------------------------------------------------------------------------------------
// From the document to the builder: required fields, enumerations, defaults.

/// Parses a graph document into a builder without validating references, so a host can add
/// to it before building.
pub fn builder_from_slice(bytes: &[u8]) -> Result<ModelBuilder> {
    match json_fast::document(bytes) {
        Some((b, _)) => Ok(b),
        None => builder_from_schema(bytes),
    }
}

/// [`builder_from_slice`] through the fast path alone: `None` for a document not in its shape.
#[cfg(test)]
pub(crate) fn builder_from_fast_path(bytes: &[u8]) -> Option<ModelBuilder> {
    json_fast::document(bytes).map(|(b, _)| b)
}

/// [`builder_from_slice`] through the schema alone (every document; every message).
pub(crate) fn builder_from_schema(bytes: &[u8]) -> Result<ModelBuilder> {
    take_fault();
    let doc: TopDoc<'_> = match serde_json::from_slice::<MapOnly<TopDoc<'_>>>(bytes) {
        Ok(d) => d.0,
        Err(e) if e.is_data() => {
            let fault = take_fault().unwrap_or_else(|| Fault {
                kind: ErrorKind::Field,
                places: Vec::new(),
                text: serde_text(&e),
            });
            if let Ok(h) = serde_json::from_slice::<MapOnly<HeaderProbe>>(bytes) {
                check_header(h.0.format.as_ref(), h.0.version.as_ref())?;
            }
            take_fault();
            return Err(render(fault, ""));
        }
        Err(e) => {
            take_fault();
            return Err(Error::new(ErrorKind::Json, format!("malformed graph JSON: {e}")));
        }
    };
    read_document(doc, bytes)
}

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

fn read_document(doc: TopDoc<'_>, bytes: &[u8]) -> Result<ModelBuilder> {
    check_header(doc.format.as_ref(), doc.version.as_ref())?;
    let top = "graph document";
    let name = doc.name.ok_or_else(|| missing(top, "name"))?;
    let mut b = ModelBuilder::new(name.clone());
    b.source = doc.source;
    let root = b.root_mut();
    root.shape = parse_shape(doc.shape.as_deref(), top)?;
    let nodes = doc.nodes.ok_or_else(|| missing(top, "nodes"))?;
    let edges = doc.edges.ok_or_else(|| missing(top, "edges"))?;
    read_body(root, &nodes, &edges, &format!("root graph '{name}'"), bytes)?;
    drop((nodes, edges));

    for (i, raw) in doc.subgraphs.unwrap_or_default().into_iter().enumerate() {
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
        read_body(&mut g, &nodes, &edges, &label, bytes)?;
        b.graphs.push(g);
    }
    for (k, v) in &doc.options.unwrap_or_default() {
        b.options.set(k, v)?;
    }
    if let Some(attrs) = doc.graph_attrs {
        b.graph_attrs = attrs.into_iter().collect();
    }
    for (ename, v) in doc.engines.unwrap_or_default() {
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
    if let Some(entries) = doc.partition {
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
    for (i, raw) in doc.events.unwrap_or_default().into_iter().enumerate() {
        let e: EventDoc = parse_element(raw).map_err(|e| located(e, Place::Event(i), "", Some((raw, bytes))))?;
        let what = format!("events[{i}]");
        b.events.push(EventSpec {
            id: e.id.ok_or_else(|| missing(&what, "id"))?,
            from: e.from.ok_or_else(|| missing(&what, "from"))?,
            to: e.to.ok_or_else(|| missing(&what, "to"))?,
            from_graph: e.from_graph,
            to_graph: e.to_graph,
            from_attached: e.from_attached,
            to_attached: e.to_attached,
        });
    }
    Ok(b)
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

/// Reads one graph's nodes and edges; `label` names the graph in messages. Each element is
/// read in its common shape without serde when it has it ([`json_fast`]), through the schema
/// otherwise. Edges are resolved to node positions as they are read, through a name index of
/// the graph's nodes.
fn read_body(g: &mut GraphSpec, nodes: &[&RawValue], edges: &[&RawValue], label: &str, doc: &[u8]) -> Result<()> {
    g.nodes.try_reserve_exact(nodes.len()).map_err(|_| no_memory("nodes", nodes.len()))?;
    let mut index = NameIndex::with_capacity(nodes.len()).map_err(|_| no_memory("nodes", nodes.len()))?;
    for (i, raw) in nodes.iter().enumerate() {
        let spec = match json_fast::node(raw.get()) {
            Some(spec) => spec,
            None => node_spec(read_node(raw, i, label, doc)?, i, label)?,
        };
        g.nodes.push(spec);
        let specs = &g.nodes;
        index
            .insert(&specs[i].name, i as u32, |p| specs[p as usize].name.as_str())
            .map_err(|_| no_memory("nodes", nodes.len()))?;
    }
    g.loaded_edges.try_reserve_exact(edges.len()).map_err(|_| no_memory("edges", edges.len()))?;
    let specs = &g.nodes;
    let position = |name: &str| index.get(name, |p| specs[p as usize].name.as_str());
    for (i, raw) in edges.iter().enumerate() {
        if let Some(e) = json_fast::edge(raw.get()) {
            if let (Some(src), Some(dst)) = (position(e.src), position(e.dst)) {
                let (kind, src_port, dst_port) = (e.kind, e.src_port, e.dst_port);
                g.loaded_edges.push(LoadedEdge { src, dst, src_port, dst_port, kind });
                continue;
            }
        }
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
        let spec = EdgeSpec {
            src: need(e.src, "src")?,
            dst: need(e.dst, "dst")?,
            kind,
            src_port: e.src_port.unwrap_or(0),
            dst_port: e.dst_port.unwrap_or(0),
        };
        let (src_port, dst_port) = (spec.src_port, spec.dst_port);
        let loaded = match (position(&spec.src), position(&spec.dst)) {
            (Some(src), Some(dst)) => LoadedEdge { src, dst, src_port, dst_port, kind },
            _ => {
                g.unresolved_edges.push(spec);
                let dst = (g.unresolved_edges.len() - 1) as u32;
                LoadedEdge { src: LoadedEdge::UNRESOLVED, dst, src_port, dst_port, kind }
            }
        };
        g.loaded_edges.push(loaded);
    }
    Ok(())
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
