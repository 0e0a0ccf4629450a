//! Importers: model files from other tools in, graph JSON (docs/graph-json.md) out. They sit
//! just above the graph layer: what they write loads through [`crate::graph::json`] like any
//! other graph file, so every command and the C ABI read an imported model the same way.

#![forbid(unsafe_code)]

pub mod onnx;
