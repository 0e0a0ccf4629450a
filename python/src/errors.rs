//! The library's errors as Python exceptions. The classes are defined in Python
//! (`stream_alloc/_errors.py`, so that `help()` and pickling see ordinary classes); each
//! error kind picks the subclass, and the exception carries the code the C ABI and the
//! command line give (`.code`) and the message naming what is wrong (`.message`).

use std::panic::{AssertUnwindSafe, catch_unwind};

use pyo3::prelude::*;
use stream_alloc::{Error, ErrorKind};

/// The Python class an error kind raises.
fn class_of(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Io => "FileError",
        ErrorKind::Json
        | ErrorKind::Format
        | ErrorKind::Field
        | ErrorKind::DuplicateName
        | ErrorKind::UnknownNode
        | ErrorKind::UnknownEngine
        | ErrorKind::Attribute
        | ErrorKind::Subgraph
        | ErrorKind::Partition => "GraphError",
        ErrorKind::Cycle => "CycleError",
        ErrorKind::InvalidOption
        | ErrorKind::InvalidHcomParallel
        | ErrorKind::SingleStreamLabel
        | ErrorKind::SingleStreamAutoMode => "OptionError",
        ErrorKind::Limit => "LimitError",
        ErrorKind::NotImplemented => "UnsupportedError",
        ErrorKind::Failed | ErrorKind::Stage | ErrorKind::Internal => "AllocationError",
    }
}

/// The exception for `e`: its class by kind, `.code` and `.message` set.
pub fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let built = py.import("stream_alloc._errors").and_then(|m| {
        let class = m.getattr(class_of(e.kind))?;
        class.call1((e.message.clone(), e.code()))
    });
    match built {
        Ok(exc) => PyErr::from_value(exc),
        // The package is broken (its Python half missing): still an exception, never a crash.
        Err(import_error) => import_error,
    }
}

/// Converts a library result for Python.
pub fn py_result<T>(py: Python<'_>, r: Result<T, Error>) -> PyResult<T> {
    r.map_err(|e| to_py(py, e))
}

/// Runs `f` with the GIL released; a panic becomes an internal error (E19999) naming it.
pub fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, Error> + Send) -> PyResult<T> {
    let r = py.detach(|| catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(panic_error(p))));
    py_result(py, r)
}

/// Runs `f` holding the GIL (short calls); a panic becomes an internal error.
pub fn guarded<T>(py: Python<'_>, f: impl FnOnce() -> Result<T, Error>) -> PyResult<T> {
    py_result(py, catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(panic_error(p))))
}

fn panic_error(payload: Box<dyn std::any::Any + Send>) -> Error {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string());
    Error::new(ErrorKind::Internal, format!("internal error (a bug of stream-alloc, please report it): {what}"))
}

/// A bad argument of a Python call (a value of the wrong range or form): GE's E10001.
pub fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::InvalidOption, message)
}
