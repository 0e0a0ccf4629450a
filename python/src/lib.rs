//! `stream_alloc._native`: the Python face of the library. Every call goes through the library's
//! public API (`stream_alloc::frontend`, the one the command line uses, so a Python allocation
//! is the command line's byte for byte). Long calls run with the GIL released
//! ([`Python::detach`]), with a panic caught and turned into `StreamAllocError` (E19999) so that
//! nothing unwinds into the interpreter. Objects own what they read (`Arc<Model>`): an
//! allocation outlives the graph that made it.

#![forbid(unsafe_code)]

mod allocation;
mod errors;
mod graph;
mod ops;
mod value;

use pyo3::prelude::*;

/// The native half of the `stream_alloc` package; import `stream_alloc` instead.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<graph::Graph>()?;
    m.add_class::<graph::Node>()?;
    m.add_class::<allocation::Allocation>()?;
    m.add_class::<allocation::Report>()?;
    m.add_class::<allocation::Simulation>()?;
    m.add_function(wrap_pyfunction!(ops::allocate, m)?)?;
    m.add_function(wrap_pyfunction!(ops::check, m)?)?;
    m.add_function(wrap_pyfunction!(ops::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(ops::compare, m)?)?;
    m.add_function(wrap_pyfunction!(ops::option_names, m)?)?;
    m.add_function(wrap_pyfunction!(ops::policy_names, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
