#!/usr/bin/env bash
# Runs the C ABI tests (tests_c, the non-sanitized builds) under valgrind memcheck: any invalid
# access, use of uninitialised memory or leak (definite, indirect or possible) fails the run.
# Builds the suite first with scripts/test-c.sh's defaults (BUILD_DIR, default build/tests_c).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build/tests_c}"
cmake -S "$root/tests_c" -B "$build" >/dev/null
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
vg=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --show-leak-kinds=all
    --errors-for-leak-kinds=definite,indirect,possible --track-origins=yes --quiet)
fixtures="$root/tests/fixtures/bad_input"
status=0
run() {
  local name="$1"; shift
  local start=$SECONDS
  if "${vg[@]}" "$@" >"$build/valgrind-$name.log" 2>&1; then
    echo "valgrind ok   $name ($((SECONDS - start))s)"
  else
    echo "valgrind FAIL $name (see $build/valgrind-$name.log)"; tail -n 30 "$build/valgrind-$name.log"; status=1
  fi
}
for t in test_status test_graph_build test_load test_allocation test_threads; do
  run "$t" "$build/$t" "$build"
done
run test_allocation_static "$build/test_allocation_static"
run test_bad_input "$build/test_bad_input" "$fixtures"
# GE's allocator tests built against GE's declarations: the holders GE's inline constructors
# allocate with new[] must be freed by the library (docs/drop-in.md).
FAKE_RT_FAIL_AT=0 run runtime_ge_decl "$build/runtime/sa_rt_ge_decl"
exit "$status"
