//! The fields of a graph JSON node and of its `attrs` (graph-json.md "Node", "attrs"), each
//! declared once, as a row of [`node_table!`] or [`attr_table!`].
//!
//! A row gives the field, its Rust type and default, its JSON key, the checker the schema
//! reads it with (`json_check.rs` `read`) and how that value becomes the field (`via`, below),
//! the scanner's reader (`json_scan.rs` `read`; `none`: a node that has the key is read
//! through the schema), an example value for the tests, and for nodes whether the key is
//! required and what the built [`Node`] holds. The table's macro is the only reader of its
//! rows: it makes the structs, the schema's document and the scanner's key match, which the
//! loader and the setters behind the C ABI (`sa_graph_set_node_field`,
//! `sa_graph_set_node_attr`) use as they are. A new field is one new row, plus its checker or
//! reader when no existing one fits.
//!
//! Row order is the order the schema lists known keys in its "unknown field" messages.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::attrs::{AttachedFormat, AttachedStreamInfo, GeAttrs};
use super::ids::{EngineId, GraphId, StreamId};
use super::json_check::{self, AttachedDoc, DeResult, SchemaDoc};
use super::json_scan::{self, Members, Scan};
use crate::error::{Error, ErrorKind, Result};

/// One field of a table, for code that walks the table (tests, documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldInfo {
    /// The JSON key.
    pub key: &'static str,
    /// A node without it is refused.
    pub required: bool,
    /// The scanner reads it (otherwise a node that has it is read through the schema).
    pub fast: bool,
    /// A valid JSON value, not the default.
    pub example: &'static str,
}

/// `true` for the scanner's readers that read something.
macro_rules! is_fast {
    (none) => {
        false
    };
    ($other:ident) => {
        true
    };
}

macro_rules! is_required {
    (required) => {
        true
    };
    (optional) => {
        false
    };
}

/// What a built node needs besides its spec.
pub(super) struct NodeContext {
    pub engine: EngineId,
    pub graph: GraphId,
}

/// Spec value to built-node value, by the name a row's `node` gives.
mod to_node {
    use super::{NodeContext, StreamId};

    pub fn same<T>(v: T, _: &NodeContext) -> T {
        v
    }
    pub fn engine(_: String, ctx: &NodeContext) -> super::EngineId {
        ctx.engine
    }
    /// Resolved by the builder after every graph is known.
    pub fn later<T, U: Default>(_: T, _: &NodeContext) -> U {
        U::default()
    }
    /// Range-checked by the builder: -1 or a stream id.
    pub fn stream(s: Option<i64>, _: &NodeContext) -> Option<StreamId> {
        s.filter(|&s| s != -1).map(|s| StreamId(s as u32))
    }
    pub fn stream_ids(ids: Vec<u32>, _: &NodeContext) -> Vec<StreamId> {
        ids.into_iter().map(StreamId).collect()
    }
}

/// From a checked value to the field, as the tables' `via` name it; `what` names the node (or
/// its `attrs`) for the conversions that can fail.
mod via {
    use super::*;
    use serde_json::Map;

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

/// The schema's document of a table (`$doc`: one `Option` per row, each read by its row's
/// checker) and the scanner's key match for `$spec` (each key read by its row's reader), from
/// the rows' keys, checkers and readers as a table macro hands them on.
macro_rules! readers {
    ($spec:ident, $doc:ident, $table:ident, $blank:expr; $( $field:ident: $key:literal $read:ident($rty:ty) $fast:ident ),*) => {
        /// As the schema reads it: each key given, checked by its row's checker.
        #[derive(Default)]
        pub(crate) struct $doc {
            $( pub(crate) $field: Option<$rty>, )*
        }

        impl SchemaDoc for $doc {
            const KEYS: &'static [&'static str] = &[$($key),*];
            fn set(&mut self, key: &str, v: Value) -> DeResult<(), serde_json::Error> {
                match key {
                    $( $key => self.$field = json_check::read::$read(v, $key)?, )*
                    _ => {}
                }
                Ok(())
            }
        }

        impl<'de> Deserialize<'de> for $doc {
            fn deserialize<D: Deserializer<'de>>(d: D) -> DeResult<Self, D::Error> {
                json_check::read_doc(d)
            }
        }

        impl Members for $spec {
            const REQUIRED: u64 = $spec::REQUIRED;
            fn blank() -> Self {
                $blank
            }
            fn read_member(&mut self, key: &str, s: &mut Scan<'_>) -> Option<u64> {
                match key {
                    $( $key => {
                        const BIT: u64 = 1 << position($table, $key);
                        self.$field = json_scan::read::$fast(s)?;
                        Some(BIT)
                    } )*
                    _ => None,
                }
            }
        }
    };
}

/// The node table: its rows are read here and nowhere else. Makes [`NodeSpec`], [`Node`],
/// [`NODE_FIELDS`], the schema's `NodeDoc` and the scanner's key match for a node.
macro_rules! node_table {
    ($(
        $(#[$doc:meta])*
        $field:ident: $ty:ty = $default:expr;
        $key:literal $presence:ident, schema $read:ident($rty:ty) via $via:ident, fast $fast:ident,
        node $to_node:ident($nty:ty), e.g. $ex:literal;
    )*) => {
        /// A node as a graph file or a host describes it.
        #[derive(Clone, Debug, PartialEq)]
        pub struct NodeSpec {
            $( $(#[$doc])* pub $field: $ty, )*
        }

        impl NodeSpec {
            /// Every field at its default, the required ones empty.
            pub(crate) fn blank() -> Self {
                NodeSpec { $( $field: $default, )* }
            }

            /// Moves the field named by JSON `key` from `from`; `false` for an unknown key.
            pub(crate) fn take_field(&mut self, key: &str, from: NodeSpec) -> bool {
                match key {
                    $( $key => self.$field = from.$field, )*
                    _ => return false,
                }
                true
            }
        }

        /// A node of a built model.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Node {
            $( $(#[$doc])* pub $field: $nty, )*
            /// The graph the node belongs to.
            pub graph: GraphId,
        }

        impl Node {
            pub(super) fn from_spec(spec: NodeSpec, ctx: &NodeContext) -> Node {
                Node { $( $field: to_node::$to_node(spec.$field, ctx), )* graph: ctx.graph }
            }
        }

        /// Every node field, in table order.
        pub const NODE_FIELDS: &[FieldInfo] = &[$(
            FieldInfo { key: $key, required: is_required!($presence), fast: is_fast!($fast), example: $ex },
        )*];

        readers!(NodeSpec, NodeDoc, NODE_FIELDS, NodeSpec::blank(); $( $field: $key $read($rty) $fast ),*);

        impl NodeSpec {
            /// The keys a node must have, as bits of their rows.
            const REQUIRED: u64 = 0 $( | if is_required!($presence) { 1 << position(NODE_FIELDS, $key) } else { 0 } )*;
        }

        impl NodeDoc {
            /// The first required key the node lacks.
            pub(crate) fn missing_key(&self) -> Option<&'static str> {
                $( if is_required!($presence) && self.$field.is_none() { return Some($key); } )*
                None
            }

            /// Sets each field given; `what` names the node in messages.
            pub(crate) fn apply(self, spec: &mut NodeSpec, what: &dyn Fn(&NodeSpec) -> String) -> Result<()> {
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

/// The `attrs` table: its rows are read here and nowhere else. Makes [`NodeAttrs`],
/// [`ATTR_FIELDS`], the schema's `AttrsDoc` and the scanner's key match for `attrs`.
macro_rules! attr_table {
    ($(
        $(#[$doc:meta])*
        $field:ident: $ty:ty = $default:expr;
        $key:literal, schema $read:ident($rty:ty) via $via:ident, fast $fast:ident, e.g. $ex:literal;
    )*) => {
        /// The allocation attributes of a node (graph-json.md "attrs").
        #[derive(Clone, Debug, PartialEq)]
        pub struct NodeAttrs {
            $( $(#[$doc])* pub $field: $ty, )*
        }

        impl Default for NodeAttrs {
            fn default() -> Self {
                NodeAttrs { $( $field: $default, )* }
            }
        }

        impl NodeAttrs {
            /// Moves the field named by JSON `key` from `from`; `false` for an unknown key.
            pub(crate) fn take_field(&mut self, key: &str, from: NodeAttrs) -> bool {
                match key {
                    $( $key => self.$field = from.$field, )*
                    _ => return false,
                }
                true
            }
        }

        /// Every field of `attrs`, in table order.
        pub const ATTR_FIELDS: &[FieldInfo] = &[$(
            FieldInfo { key: $key, required: false, fast: is_fast!($fast), example: $ex },
        )*];

        readers!(NodeAttrs, AttrsDoc, ATTR_FIELDS, NodeAttrs::default(); $( $field: $key $read($rty) $fast ),*);

        impl NodeAttrs {
            /// No key is required in `attrs`.
            const REQUIRED: u64 = 0;
        }

        impl AttrsDoc {
            /// Sets each field given; `what` names the `attrs` object in messages.
            pub(crate) fn apply(self, attrs: &mut NodeAttrs, what: &dyn Fn() -> String) -> Result<()> {
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

node_table! {
    /// Node name, unique within its graph.
    name: String = String::new();
        "name" required, schema string(String) via same, fast name, node same(String), e.g. "\"x\"";
    /// Operator type, GE spelling.
    op_type: String = String::new();
        "type" required, schema string(String) via same, fast str, node same(String), e.g. "\"Relu\"";
    /// Engine by GE name (`AIcoreEngine`, `DNN_VM_GE_LOCAL`, ...); a built node holds its id.
    engine: String = String::new();
        "engine" required, schema string(String) via same, fast str, node engine(EngineId),
        e.g. "\"DNN_VM_AICPU\"";
    /// Device tasks the node generates (GE's default: one).
    tasks: u32 = 1;
        "tasks" optional, schema uint32(u32) via same, fast uint32, node same(u32), e.g. "3";
    /// Estimated time on the device.
    cost_us: f64 = 0.0;
        "cost_us" optional, schema non_negative(f64) via same, fast non_negative, node same(f64),
        e.g. "2.5";
    /// Compute units the node occupies (0: unknown).
    cores: u32 = 0;
        "cores" optional, schema uint32(u32) via same, fast uint32, node same(u32), e.g. "8";
    /// The allocation attributes ([`attr_table!`]).
    attrs: NodeAttrs = NodeAttrs::default();
        "attrs" optional, schema attrs(AttrsDoc) via attrs, fast object, node same(NodeAttrs),
        e.g. "{\"stream_label\": \"s\", \"parallel_group\": \"pg\"}";
    /// Subgraphs this node owns, by name; a built node holds their ids, in this order.
    subgraphs: Vec<String> = Vec::new();
        "subgraphs" optional, schema strings(Vec<String>) via same, fast none, node later(Vec<GraphId>),
        e.g. "[\"then\", \"else\"]";
    /// Pre-assigned logical stream (input of the stages after logical allocation); -1 or
    /// absent: none.
    stream: Option<i64> = None;
        "stream" optional, schema int64(i64) via some, fast none, node stream(Option<StreamId>),
        e.g. "4";
    /// Pre-assigned attached streams.
    attached_stream_ids: Vec<u32> = Vec::new();
        "attached_stream_ids" optional, schema uint32s(Vec<u32>) via same, fast none,
        node stream_ids(Vec<StreamId>), e.g. "[5, 6]";
    /// Tasks put on each attached stream.
    attached_tasks: Vec<u32> = Vec::new();
        "attached_tasks" optional, schema uint32s(Vec<u32>) via same, fast none, node same(Vec<u32>),
        e.g. "[2, 1]";
    /// Raw GE attributes by GE name; known names are type-checked when built.
    ge_attrs: GeAttrs = GeAttrs::default();
        "ge_attrs" optional, schema ge_attrs(serde_json::Map<String, serde_json::Value>) via ge_attrs,
        fast none, node same(GeAttrs), e.g. "{\"_hccl_task_num\": 2}";
    /// Bytes of each output tensor, per output port; `None` when the graph does not say.
    out_bytes: Option<Vec<u64>> = None;
        "out_bytes" optional, schema uint64s(Vec<u64>) via some, fast none, node same(Option<Vec<u64>>),
        e.g. "[1024, 0]";
    /// The input port whose memory this node's output reuses (a view allocates nothing).
    alias_input: Option<u32> = None;
        "alias_input" optional, schema uint32(u32) via some, fast none, node same(Option<u32>),
        e.g. "1";
}

attr_table! {
    /// `_stream_label`: nodes with one label share a stream. Empty: none.
    stream_label: Option<String> = None;
        "stream_label", schema string(String) via label, fast label, e.g. "\"s1\"";
    /// `_user_stream_label`. Empty: none.
    user_stream_label: Option<String> = None;
        "user_stream_label", schema string(String) via label, fast label, e.g. "\"u\"";
    /// `_parallel_group`. Empty: none.
    parallel_group: Option<String> = None;
        "parallel_group", schema string(String) via label, fast label, e.g. "\"pg\"";
    /// MDE `NewStreamId`.
    new_stream_id: Option<i64> = None;
        "new_stream_id", schema int64(i64) via some, fast none, e.g. "2";
    /// Attached ("从流") stream requests.
    attached_streams: Vec<AttachedStreamInfo> = Vec::new();
        "attached_streams", schema attached_streams(Vec<AttachedDoc>) via attached, fast none,
        e.g. "[{\"name\": \"r\", \"reuse_key\": \"k\", \"ge_format\": \"v1\", \"required\": true}]";
    /// `_continuous_stream_label`. Empty: none.
    continuous_stream_label: Option<String> = None;
        "continuous_stream_label", schema string(String) via label, fast none, e.g. "\"c\"";
    /// `_event_multiplexing`.
    event_multiplexing: Vec<String> = Vec::new();
        "event_multiplexing", schema strings(Vec<String>) via same, fast none, e.g. "[\"SendTo;peer;3\"]";
    /// `_active_label_list`.
    active_label_list: Vec<String> = Vec::new();
        "active_label_list", schema strings(Vec<String>) via same, fast none, e.g. "[\"l1\", \"l2\"]";
    /// `_rts_label_node`.
    rts_label_node: bool = false;
        "rts_label_node", schema boolean(bool) via same, fast none, e.g. "true";
    /// The dim (gear) of a multi-dims model the node belongs to.
    dims: Option<i64> = None;
        "dims", schema int64(i64) via some, fast none, e.g. "1";
}

/// Position of `key` in `fields`, at compile time: a row's bit in the scanner's "seen" mask.
pub(crate) const fn position(fields: &[FieldInfo], key: &str) -> usize {
    let mut i = 0;
    while i < fields.len() {
        let (a, b) = (fields[i].key.as_bytes(), key.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("not a key of the table")
}

const _: () = assert!(NODE_FIELDS.len() <= 64 && ATTR_FIELDS.len() <= 64, "the scanner's masks are u64");

impl NodeSpec {
    /// A node with GE's defaults: one task, no cost, no attributes.
    pub fn new(name: impl Into<String>, op_type: impl Into<String>, engine: impl Into<String>) -> Self {
        NodeSpec { name: name.into(), op_type: op_type.into(), engine: engine.into(), ..NodeSpec::blank() }
    }
}
