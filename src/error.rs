//! One error type for the whole crate. Every error carries a stable code (GE's own where GE
//! has one) and a message that names the node, edge, field, option or value at fault.

#![forbid(unsafe_code)]

/// What went wrong, coarse enough for the C status enum and stable across releases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A file could not be read or written.
    Io,
    /// The input is not well-formed JSON.
    Json,
    /// `format` / `version` is not one this crate reads.
    Format,
    /// A required field is missing or has the wrong type or range.
    Field,
    /// Two nodes of one graph (or two graphs) share a name.
    DuplicateName,
    /// An edge, partition entry or reference names a node that does not exist.
    UnknownNode,
    /// The graph has a cycle.
    Cycle,
    /// A node or option names an engine that is not in the engine table.
    UnknownEngine,
    /// A node attribute has the wrong type or an invalid value.
    Attribute,
    /// A subgraph names a parent node that does not exist or that it cannot belong to.
    Subgraph,
    /// The `partition` given with the graph is inconsistent.
    Partition,
    /// An option has an invalid value (GE: E10001).
    InvalidOption,
    /// `ge.hcomParallel` is neither 0 nor 1 (GE: E10006).
    InvalidHcomParallel,
    /// Single-stream mode meets a stream label (GE: E10055).
    SingleStreamLabel,
    /// Single-stream mode meets an auto multi-stream mode (GE: E10056).
    SingleStreamAutoMode,
    /// The requested mode, policy or stage is not implemented yet.
    NotImplemented,
    /// A pipeline step failed on the given graph (GE's FAILED / PARAM_INVALID cases).
    Failed,
    /// A stage was called out of order.
    Stage,
    /// A limit was exceeded (notify count, task limits, stream count).
    Limit,
    /// An internal invariant broke (GE: E19999). Always a bug.
    Internal,
}

impl ErrorKind {
    /// The stable code written into error documents: GE's code where GE has one.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::Io => "SA1000",
            ErrorKind::Json => "SA1001",
            ErrorKind::Format => "SA1002",
            ErrorKind::Field => "SA1003",
            ErrorKind::DuplicateName => "SA1004",
            ErrorKind::UnknownNode => "SA1005",
            ErrorKind::Cycle => "SA1006",
            ErrorKind::UnknownEngine => "SA1007",
            ErrorKind::Attribute => "SA1008",
            ErrorKind::Subgraph => "SA1009",
            ErrorKind::Partition => "SA1010",
            ErrorKind::NotImplemented => "SA2000",
            ErrorKind::Failed => "SA2001",
            ErrorKind::Stage => "SA2002",
            ErrorKind::Limit => "SA2003",
            ErrorKind::InvalidOption => "E10001",
            ErrorKind::InvalidHcomParallel => "E10006",
            ErrorKind::SingleStreamLabel => "E10055",
            ErrorKind::SingleStreamAutoMode => "E10056",
            ErrorKind::Internal => "E19999",
        }
    }
}

/// An allocation error: a kind (and so a code) plus a message naming what is at fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", kind.code())]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { kind, message: message.into() }
    }
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Shorthand: `err!(Kind, "fmt", args)` builds an `Error`.
#[macro_export]
macro_rules! err {
    ($kind:ident, $($arg:tt)*) => {
        $crate::error::Error::new($crate::error::ErrorKind::$kind, format!($($arg)*))
    };
}

/// Shorthand: `bail!(Kind, "fmt", args)` returns an `Err`.
#[macro_export]
macro_rules! bail {
    ($kind:ident, $($arg:tt)*) => {
        return Err($crate::err!($kind, $($arg)*))
    };
}
