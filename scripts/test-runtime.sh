#!/usr/bin/env bash
# Runs the runtime half's C/C++ tests only (ctest label "runtime" of the C suite, ASan variants
# included), through scripts/test-c.sh. Extra arguments go to ctest. BENCH=1 then runs the full
# benchmark (built with the suite; a release library gives meaningful numbers:
# STREAM_ALLOC_CARGO_PROFILE=release).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build/tests_c}"
BUILD_DIR="$build" bash "$root/scripts/test-c.sh" -L runtime "$@"
if [ "${BENCH:-0}" = 1 ]; then
  echo "== benchmark"
  "$build/runtime/sa_rt_bench"
fi
