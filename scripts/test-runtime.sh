#!/usr/bin/env bash
# Builds and runs the runtime half's C/C++ suite (ctest), then again under AddressSanitizer.
# Builds the Rust library with `cargo build --release --lib` first. BENCH=1 also runs the benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${JOBS:-2}"
echo "== runtime C/C++ tests"
cmake -S tests_c/runtime -B build/rt -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/rt -j "$jobs"
ctest --test-dir build/rt --output-on-failure
echo "== runtime C/C++ tests under AddressSanitizer"
cmake -S tests_c/runtime -B build/rt-asan -DSA_RT_ASAN=ON -DSA_RT_CARGO_BUILD=OFF >/dev/null
cmake --build build/rt-asan -j "$jobs"
ctest --test-dir build/rt-asan --output-on-failure -E bench
if [ "${BENCH:-0}" = 1 ]; then
  echo "== benchmark"
  build/rt/sa_rt_bench
fi
