//! The C ABI.
pub mod runtime;
