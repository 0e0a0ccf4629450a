//! Every write of the command-line tool goes through here. A closed standard output (the reader
//! of a pipe went away: `stream-alloc dot big.json | head -1`) is not an error of the command:
//! the first `EPIPE` silences standard output for the rest of the run and the command finishes
//! with the exit code its result gives. Any other failure to write standard output (a full
//! disk) is reported and exits 1. Standard error is best effort: a failure to write there is
//! ignored, since there is nowhere left to report it.

use std::io::{ErrorKind, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::EXIT_ALLOC_ERROR;

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to standard output and flushes it. `Err(code)` is the exit code to return
/// when the write failed for another reason than a closed pipe (already reported).
pub fn print(text: &str) -> Result<(), i32> {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => {
            error(format_args!("cannot write to standard output: {e}"));
            Err(EXIT_ALLOC_ERROR)
        }
    }
}

/// Writes `text` to the file `path`; `Err(code)` when it cannot (already reported).
pub fn write_file(path: &Path, text: &str) -> Result<(), i32> {
    std::fs::write(path, text).map_err(|e| {
        error(format_args!("cannot write '{}': {e}", path.display()));
        EXIT_ALLOC_ERROR
    })
}

/// Writes `text` to the file `output` names, else to standard output (`--output`'s rule).
pub fn emit(output: Option<&Path>, text: &str) -> Result<(), i32> {
    match output {
        Some(path) => write_file(path, text),
        None => print(text),
    }
}

/// Writes `text` to standard error, ignoring failures.
pub fn eprint(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// `error: MESSAGE` on standard error.
pub fn error(message: impl std::fmt::Display) {
    eprint(&format!("error: {message}\n"));
}
