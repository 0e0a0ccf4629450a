//! stream-alloc: the stream allocator of the Ascend Graph Engine (GE), in Rust, with a C ABI.
//!
//! The compile-time half ([`compile`]) assigns a graph's operators to logical streams the way
//! GE's pass chain does, synchronises the streams with events or notifies, and splits streams
//! that exceed the device's task limit. The input is a [`graph::Model`] (graph JSON, or built
//! through [`graph::ModelBuilder`] / the C ABI); the output is an [`compile::Allocation`],
//! written as allocation JSON.
//!
//! `unsafe` is confined to `capi` (the C boundary) and `runtime` (device-runtime calls): the crate
//! denies it, those two modules allow it, and every other module forbids it.

#![deny(unsafe_code)]

pub mod capi;
pub mod compile;
pub mod error;
pub mod graph;
pub mod memory;
pub mod runtime;
pub mod simulate;
pub mod verify;

pub use compile::{Allocation, Stage, allocate};
pub use error::{Error, ErrorKind, Result};
pub use graph::Model;
