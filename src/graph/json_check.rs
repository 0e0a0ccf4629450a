//! The schema of graph JSON (docs/graph-json.md): a checker per kind of field, each naming the
//! field and the value at fault, and the document structs of the parts the scanner leaves to
//! serde (edges in another shape, subgraphs, engines, partition entries, events). The loader
//! (`json.rs`) hands a value here where the scanner gives up on it, so a message reads
//! `node 'a' of root graph 'g': field 'tasks' must be …, got -1` whichever reader met the node.
//!
//! Open-ended parts (`options`, `graph_attrs`, `ge_attrs`) stay free-form values. Element
//! wrappers add which node, edge, subgraph or entry a fault was in.

use std::cell::RefCell;
use std::fmt;

use serde::Deserialize;
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind};

pub(crate) type DeResult<T, E> = std::result::Result<T, E>;

// ---------------------------------------------------------------------------------------------
// Faults. serde errors carry only text, so a checker leaves its [`Fault`] aside; element
// wrappers add their place, innermost first, and the loader renders it as one message.

/// Where a fault lies.
#[derive(Debug)]
pub(crate) enum Place {
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
pub(crate) struct Fault {
    pub(crate) kind: ErrorKind,
    pub(crate) places: Vec<Place>,
    /// `field '…' must be …` and the like. A leading `\0` joins it to its place with a space
    /// (`node 0 of … must be an object`); a leading `\1` stands alone (`options must be …`).
    pub(crate) text: String,
}

thread_local! {
    pub(crate) static FAULT: RefCell<Option<Fault>> = const { RefCell::new(None) };
}

pub(crate) fn take_fault() -> Option<Fault> {
    FAULT.with(|f| f.borrow_mut().take())
}

pub(crate) fn fail<E: de::Error>(kind: ErrorKind, text: String) -> E {
    FAULT.with(|f| *f.borrow_mut() = Some(Fault { kind, places: Vec::new(), text }));
    E::custom("graph document fault")
}

/// Adds `place` to the fault behind `e`, making one from serde's own text (an unknown field,
/// say) when no checker left one.
pub(crate) fn at<E: de::Error>(e: serde_json::Error, place: Place) -> E {
    FAULT.with(|f| {
        let mut f = f.borrow_mut();
        let fault = f.get_or_insert_with(|| Fault { kind: ErrorKind::Field, places: Vec::new(), text: serde_text(&e) });
        fault.places.push(place);
    });
    E::custom("graph document fault")
}

/// serde's message without its position, in the loader's words.
pub(crate) fn serde_text(e: &serde_json::Error) -> String {
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
pub(crate) fn located(e: serde_json::Error, place: Place, graph: &str, raw: Option<(&RawValue, &[u8])>) -> Error {
    if !e.is_data() {
        take_fault();
        return Error::new(ErrorKind::Json, format!("malformed graph JSON: {}", position_in_document(&e, raw)));
    }
    let _: serde_json::Error = at(e, place);
    render(take_fault().expect("at() leaves a fault"), graph)
}

/// A syntax error inside an element (a number out of range: elements are checked for syntax
/// before they are read) with its line and column in the whole document.
pub(crate) fn position_in_document(e: &serde_json::Error, raw: Option<(&RawValue, &[u8])>) -> String {
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
pub(crate) fn render(fault: Fault, graph: &str) -> Error {
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

pub(crate) fn kind_of(v: &Value) -> &'static str {
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
pub(crate) fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() <= 40 { s } else { kind_of(v).to_string() }
}

// ---------------------------------------------------------------------------------------------
// Field checkers: each reads one field's value (a scalar or a short list, never the document)
// and names the field in its error. A null value is the field left out.

pub(crate) fn wrong<E: de::Error>(field: &str, expected: &str, got: &Value) -> E {
    fail(ErrorKind::Field, format!("field '{field}' must be {expected}, got {}", short(got)))
}

pub(crate) fn value_of<'de, D: Deserializer<'de>>(d: D) -> DeResult<Option<Value>, D::Error> {
    Ok(Some(Value::deserialize(d)?).filter(|v| !v.is_null()))
}

pub(crate) fn string<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<String>, D::Error> {
    match value_of(d)? {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(wrong(field, "a string", &v)),
    }
}

pub(crate) fn boolean<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<bool>, D::Error> {
    match value_of(d)? {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(b)),
        Some(v) => Err(wrong(field, "a bool", &v)),
    }
}

pub(crate) fn uint32<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<u32>, D::Error> {
    match value_of(d)? {
        None => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n <= u64::from(u32::MAX) => Ok(Some(n as u32)),
            _ => Err(wrong(field, "an integer in [0, 4294967295]", &v)),
        },
    }
}

pub(crate) fn int64<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<i64>, D::Error> {
    match value_of(d)? {
        None => Ok(None),
        Some(v) => v.as_i64().map(Some).ok_or_else(|| wrong(field, "an integer", &v)),
    }
}

pub(crate) fn non_negative<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<f64>, D::Error> {
    match value_of(d)? {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
            _ => Err(wrong(field, "a finite number >= 0", &v)),
        },
    }
}

pub(crate) fn array<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<Vec<Value>>, D::Error> {
    match value_of(d)? {
        None => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(v) => Err(wrong(field, "an array", &v)),
    }
}

pub(crate) fn strings<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<Vec<String>>, D::Error> {
    let Some(a) = array(d, field)? else { return Ok(None) };
    a.into_iter()
        .map(|v| match v {
            Value::String(s) => Ok(s),
            v => Err(wrong(field, "an array of strings", &v)),
        })
        .collect::<DeResult<_, _>>()
        .map(Some)
}

pub(crate) fn uint64s<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<Vec<u64>>, D::Error> {
    let Some(a) = array(d, field)? else { return Ok(None) };
    a.iter()
        .map(|v| v.as_u64().ok_or_else(|| wrong(field, "an array of integers >= 0", v)))
        .collect::<DeResult<_, _>>()
        .map(Some)
}

pub(crate) fn uint32s<'de, D: Deserializer<'de>>(d: D, field: &str) -> DeResult<Option<Vec<u32>>, D::Error> {
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
pub(crate) fn object<'de, D: Deserializer<'de>>(d: D, what: &str) -> DeResult<Option<Map<String, Value>>, D::Error> {
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

pub(crate) mod field {
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
// the element it is in. The node and its `attrs` are documents of the field tables
// (fields.rs), read through [`read_doc`].

/// A document struct made from a field table: each key's value is handed to its row's checker.
pub(crate) trait SchemaDoc: Default {
    /// The keys, in row order.
    const KEYS: &'static [&'static str];
    /// Reads the value of `key` (one of [`KEYS`](Self::KEYS)) through its checker.
    fn set(&mut self, key: &str, v: Value) -> DeResult<(), serde_json::Error>;
}

/// What derived `deny_unknown_fields` structs do (unknown and duplicate keys refused in
/// serde's words, keys listed in row order), with each value read as a `Value` and handed to
/// the row's checker under its key.
pub(crate) fn read_doc<'de, T: SchemaDoc, D: Deserializer<'de>>(d: D) -> DeResult<T, D::Error> {
    struct V<T>(std::marker::PhantomData<T>);
    impl<'de, T: SchemaDoc> Visitor<'de> for V<T> {
        type Value = T;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a document of a field table")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> DeResult<T, A::Error> {
            let mut doc = T::default();
            let mut seen = 0u64;
            while let Some(i) = map.next_key_seed(Key(T::KEYS))? {
                if seen & (1 << i) != 0 {
                    return Err(de::Error::duplicate_field(T::KEYS[i]));
                }
                seen |= 1 << i;
                let v: Value = map.next_value()?;
                doc.set(T::KEYS[i], v).map_err(de::Error::custom)?;
            }
            Ok(doc)
        }
    }
    d.deserialize_map(V(std::marker::PhantomData))
}

/// A key of a document struct, as its position in `KEYS`.
pub(crate) struct Key(&'static [&'static str]);

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
/// The checkers the field tables name, each `(value, key)`.
pub(crate) mod read {
    use super::*;
    pub(crate) use super::{boolean, int64, non_negative, string, strings, uint32, uint32s, uint64s};

    /// A node's `attrs`: a document of their own table, its faults placed in them.
    pub fn attrs<T: DeserializeOwned>(v: Value, _: &str) -> DeResult<Option<T>, serde_json::Error> {
        match value_of(v)? {
            None => Ok(None),
            Some(v) => parse_value::<T>(v).map(Some).map_err(|e| at(e, Place::Attrs)),
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AttachedDoc {
    #[serde(default, deserialize_with = "field::name")]
    pub(crate) name: Option<String>,
    #[serde(default, deserialize_with = "field::reuse_key")]
    pub(crate) reuse_key: Option<String>,
    #[serde(default, deserialize_with = "field::stream_num")]
    pub(crate) stream_num: Option<u32>,
    #[serde(default, deserialize_with = "field::ge_format")]
    pub(crate) ge_format: Option<String>,
    #[serde(default, deserialize_with = "field::required")]
    pub(crate) required: Option<bool>,
    #[serde(default, deserialize_with = "field::force_reuse")]
    pub(crate) force_reuse: Option<bool>,
    #[serde(default, deserialize_with = "field::depend_value_inputs")]
    pub(crate) depend_value_inputs: Option<Vec<u32>>,
    #[serde(default, deserialize_with = "field::policy")]
    pub(crate) policy: Option<String>,
    #[serde(default, deserialize_with = "field::group")]
    pub(crate) group: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EdgeDoc {
    #[serde(default, deserialize_with = "field::src")]
    pub(crate) src: Option<String>,
    #[serde(default, deserialize_with = "field::dst")]
    pub(crate) dst: Option<String>,
    #[serde(default, deserialize_with = "field::kind")]
    pub(crate) kind: Option<String>,
    #[serde(default, deserialize_with = "field::src_port")]
    pub(crate) src_port: Option<u32>,
    #[serde(default, deserialize_with = "field::dst_port")]
    pub(crate) dst_port: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SubgraphDoc<'a> {
    #[serde(default, deserialize_with = "field::name")]
    pub(crate) name: Option<String>,
    #[serde(default, deserialize_with = "field::parent")]
    pub(crate) parent: Option<String>,
    #[serde(default, borrow, deserialize_with = "field::raw_nodes")]
    pub(crate) nodes: Option<Vec<&'a RawValue>>,
    #[serde(default, borrow, deserialize_with = "field::raw_edges")]
    pub(crate) edges: Option<Vec<&'a RawValue>>,
    #[serde(default, deserialize_with = "field::shape")]
    pub(crate) shape: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EngineDoc {
    #[serde(default, deserialize_with = "field::independent")]
    pub(crate) independent: Option<bool>,
    #[serde(default, deserialize_with = "field::attach")]
    pub(crate) attach: Option<bool>,
    #[serde(default, deserialize_with = "field::skip_assign_stream")]
    pub(crate) skip_assign_stream: Option<bool>,
    #[serde(default, deserialize_with = "field::priority")]
    pub(crate) priority: Option<Option<i32>>,
    #[serde(default, deserialize_with = "field::scheduler")]
    pub(crate) scheduler: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PartitionDoc {
    #[serde(default, deserialize_with = "field::name")]
    pub(crate) name: Option<String>,
    #[serde(default, deserialize_with = "field::engine")]
    pub(crate) engine: Option<String>,
    #[serde(default, deserialize_with = "field::graph")]
    pub(crate) graph: Option<String>,
    #[serde(default, deserialize_with = "field::stream_label")]
    pub(crate) stream_label: Option<String>,
    #[serde(default, deserialize_with = "field::user_stream_label")]
    pub(crate) user_stream_label: Option<String>,
    #[serde(default, deserialize_with = "field::nodes")]
    pub(crate) nodes: Option<Vec<String>>,
}

/// A given event (graph-json.md "Event").
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventDoc {
    #[serde(default, deserialize_with = "field::id")]
    pub(crate) id: Option<u32>,
    #[serde(default, deserialize_with = "field::from")]
    pub(crate) from: Option<String>,
    #[serde(default, deserialize_with = "field::to")]
    pub(crate) to: Option<String>,
    #[serde(default, deserialize_with = "field::from_graph")]
    pub(crate) from_graph: Option<String>,
    #[serde(default, deserialize_with = "field::to_graph")]
    pub(crate) to_graph: Option<String>,
    #[serde(default, deserialize_with = "field::from_attached")]
    pub(crate) from_attached: Option<u32>,
    #[serde(default, deserialize_with = "field::to_attached")]
    pub(crate) to_attached: Option<u32>,
}

/// Only the name, to say which node or subgraph a fault is in.
#[derive(Deserialize)]
pub(crate) struct NameProbe {
    #[serde(default)]
    pub(crate) name: Option<Value>,
}

/// Only the header: a wrong format or version is reported before any other fault.
#[derive(Deserialize)]
pub(crate) struct HeaderProbe {
    #[serde(default)]
    pub(crate) format: Option<Value>,
    #[serde(default)]
    pub(crate) version: Option<Value>,
}

/// An array field whose items are read one at a time later, each with its place.
pub(crate) fn raw_items<'de, D: Deserializer<'de>>(
    d: D,
    field: &'static str,
) -> DeResult<Option<Vec<&'de RawValue>>, D::Error> {
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
pub(crate) struct MapOnly<T>(pub(crate) T);

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

pub(crate) fn not_object<E: de::Error>(kind: &str) -> E {
    fail(ErrorKind::Field, format!("\u{0}must be an object, got {kind}"))
}

pub(crate) fn parse_value<T: DeserializeOwned>(v: Value) -> DeResult<T, serde_json::Error> {
    MapOnly::<T>::deserialize(v).map(|m| m.0)
}

pub(crate) fn parse_raw<'a, T: Deserialize<'a>>(raw: &'a RawValue) -> DeResult<T, serde_json::Error> {
    serde_json::from_str::<MapOnly<T>>(raw.get()).map(|m| m.0)
}

/// An element read owned. A key given twice was always allowed, the last one counting (as in
/// a JSON object read into a map); derived structs refuse it, so such an element is read again
/// through a map.
pub(crate) fn parse_element<T: DeserializeOwned>(raw: &RawValue) -> DeResult<T, serde_json::Error> {
    match parse_raw::<T>(raw) {
        Err(e) if e.is_data() && e.to_string().starts_with("duplicate field `") => {
            take_fault();
            parse_value(serde_json::from_str::<Value>(raw.get())?)
        }
        other => other,
    }
}

pub(crate) fn probe_name(raw: &RawValue) -> Option<String> {
    let saved = take_fault();
    let name = parse_raw::<NameProbe>(raw).ok().and_then(|p| p.name).and_then(|v| v.as_str().map(str::to_string));
    take_fault();
    FAULT.with(|f| *f.borrow_mut() = saved);
    name
}
