#!/usr/bin/env bash
# Runs every test: Rust (unit, integration, doc), lint, then the C/C++ suite through ctest
# (which includes the header checks and the CMake install-and-consume test).
set -euo pipefail
cd "$(dirname "$0")/.."

# The repository carries its own corpus; beside the workspace's shared one it must be identical.
if [ -d ../shared/corpus ]; then
  echo "== corpus/ matches ../shared/corpus"
  diff -r corpus ../shared/corpus
fi
echo "== cargo fmt --check"
cargo fmt --check
echo "== cargo clippy"
cargo clippy --all-targets -q -- -D warnings
echo "== cargo test"
cargo test --release -q 2>&1 | tee target/cargo-test.log
if [ -f scripts/test-c.sh ]; then
  echo "== C and C++ tests (ctest)"
  STREAM_ALLOC_CARGO_PROFILE=release bash scripts/test-c.sh
fi
