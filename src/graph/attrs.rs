//! Node attributes that the allocator reads (graph-json.md "attrs"), typed, plus the raw GE
//! attributes (`ge_attrs`) with typed accessors.

use std::collections::BTreeMap;

use serde_json::Value;

/// Which GE attribute form an attached-stream entry came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AttachedFormat {
    /// `_attached_stream_info` as one NamedAttrs with policy `group` (the node's `group` attr).
    V1,
    /// `_attached_stream_info` as a list: default group, key + `_stream_<main>`.
    V1List,
    /// `_attached_stream_info_list` (v2).
    #[default]
    V2,
}

impl AttachedFormat {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "v1" => Some(AttachedFormat::V1),
            "v1_list" => Some(AttachedFormat::V1List),
            "v2" => Some(AttachedFormat::V2),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            AttachedFormat::V1 => "v1",
            AttachedFormat::V1List => "v1_list",
            AttachedFormat::V2 => "v2",
        }
    }
}

/// One attached ("从流") stream request of a node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AttachedStreamInfo {
    /// `_attached_resource_name` (v2: required).
    pub name: String,
    /// `_attached_stream_key` / `_attached_resource_reuse_key`.
    pub reuse_key: String,
    /// Number of streams (GE requires 1).
    pub stream_num: u32,
    pub ge_format: AttachedFormat,
    /// `_attached_resource_required_flag` (v2 default false: not assigned).
    pub required: Option<bool>,
    /// `_attached_resource_force_reuse`.
    pub force_reuse: bool,
    /// `_attached_stream_depend_value_list` / `_attached_resource_depend_value_list_int`.
    pub depend_value_inputs: Vec<u32>,
    /// `_attached_stream_policy` (v1: must be `group`).
    pub policy: Option<String>,
    /// The node's `group` attribute (v1 group form).
    pub group: Option<String>,
}

/// Raw GE attributes by GE name. Known names are type-checked on load ([`KNOWN_GE_ATTRS`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GeAttrs(pub BTreeMap<String, Value>);

/// The JSON type a known GE attribute must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeAttrType {
    Bool,
    Int,
    String,
    ListString,
    ListInt,
    /// Anything (NamedAttrs and the like, read by the pass that owns them).
    Any,
}

impl GeAttrType {
    pub fn accepts(self, v: &Value) -> bool {
        match self {
            GeAttrType::Bool => v.is_boolean(),
            GeAttrType::Int => v.is_i64() || v.is_u64(),
            GeAttrType::String => v.is_string(),
            GeAttrType::ListString => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
            GeAttrType::ListInt => v.as_array().is_some_and(|a| a.iter().all(|x| x.is_i64() || x.is_u64())),
            GeAttrType::Any => true,
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            GeAttrType::Bool => "a bool",
            GeAttrType::Int => "an integer",
            GeAttrType::String => "a string",
            GeAttrType::ListString => "an array of strings",
            GeAttrType::ListInt => "an array of integers",
            GeAttrType::Any => "any value",
        }
    }
}

/// GE attributes the pipeline reads, with their types.
pub const KNOWN_GE_ATTRS: &[(&str, GeAttrType)] = &[
    ("_force_attach_stream", GeAttrType::Bool),
    ("_hccl_task_num", GeAttrType::Int),
    ("_hccl_attached_task_num", GeAttrType::Int),
    ("_node_sqe_num", GeAttrType::Int),
    ("_batch_num", GeAttrType::Int),
    ("_disable_attached_resource", GeAttrType::Bool),
    ("_thread_scope_id", GeAttrType::Int),
    ("_ffts_sub_graph", GeAttrType::String),
    ("_ffts_plus_sub_graph", GeAttrType::String),
    ("subgraph_first_active", GeAttrType::Bool),
    ("_subgraph_end_node", GeAttrType::Bool),
    ("is_loop_active", GeAttrType::Bool),
    ("fusion", GeAttrType::Int),
    ("_enable_inner_parallel", GeAttrType::Bool),
    ("_enable_cv_parallel", GeAttrType::Bool),
    ("active_stream_list", GeAttrType::ListInt),
    ("group", GeAttrType::String),
    ("_attached_sync_res_info_list", GeAttrType::Any),
    ("_attached_sync_res_info", GeAttrType::Any),
];

impl GeAttrs {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }
    /// A bool attribute; absent is `false`.
    pub fn flag(&self, name: &str) -> bool {
        self.0.get(name).and_then(Value::as_bool).unwrap_or(false)
    }
    pub fn int(&self, name: &str) -> Option<i64> {
        self.0.get(name).and_then(Value::as_i64)
    }
    pub fn string(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }
    pub fn contains(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
