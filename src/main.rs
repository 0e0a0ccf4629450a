//! The `stream-alloc` command-line tool.

#![forbid(unsafe_code)]

mod cli;

fn main() {
    std::process::exit(cli::main());
}
