#!/usr/bin/env bash
# Configures, builds and runs the C/C++ test suite of the C ABI (tests_c/, ctest).
# The Rust library is built by cargo into the repository's target/ (or $CARGO_TARGET_DIR), so
# a prior `cargo build` is reused. Extra arguments go to ctest (e.g. -R consume, -j1).
# Environment: BUILD_DIR (default build/tests_c), STREAM_ALLOC_CARGO_PROFILE (debug|release,
# default debug), CTEST_PARALLEL_LEVEL (default: one test per core; tests that share files or
# the install tree hold a RESOURCE_LOCK).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build/tests_c}"
profile="${STREAM_ALLOC_CARGO_PROFILE:-debug}"
cmake -S "$root/tests_c" -B "$build" -DSTREAM_ALLOC_CARGO_PROFILE="$profile" >/dev/null
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)"
export CTEST_PARALLEL_LEVEL="${CTEST_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}"
ctest --test-dir "$build" --output-on-failure "$@"
