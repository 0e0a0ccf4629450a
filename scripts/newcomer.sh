#!/usr/bin/env bash
# The newcomer's path, on a fresh clone of the committed HEAD in a temporary directory with
# nothing beside it:
#   1. the README's first command, run as written; its output must match the README's sample
#      (the time line aside) and it must leave no file behind in the clone;
#   2. the README's second command's tool check (`bash scripts/test.sh --check-tools`; the
#      suite itself is what runs this script, so it is not run again inside the clone);
#   3. the README's install: cmake -S . -B build && cmake --build build &&
#      cmake --install build --prefix PREFIX, with no build type (a release library);
#   4. a separate CMake project with find_package(StreamAlloc): the README's C example, shared
#      and static, and every C++ shim at GE's header paths together with the C header;
#   5. the same programs built with pkg-config (stream_alloc and stream_alloc_static);
#   6. the DOT of the largest corpus graph: `summary --format dot` and `dot`, rendered with
#      graphviz under a timeout when `dot` is installed.
# Prints the wall time of each step.
#
# Cargo's work is reused where that is safe: when the working tree is clean (so HEAD is what
# target/ was built from), the clone shares this repository's target/ (or $CARGO_TARGET_DIR)
# and its files are dated 2000-01-01, so cargo finds the release library and tool of the same
# commit up to date.
# Otherwise (uncommitted changes) the clone builds into target/newcomer/. NEWCOMER_FRESH=1
# builds from nothing in the temporary directory instead, as a newcomer's machine would
# (several minutes on 2 cores).
# Environment: NEWCOMER_KEEP=1 keeps the temporary directory; NEWCOMER_DOT_TIMEOUT (seconds,
# default 60) bounds graphviz on each picture: both `summary --format dot` and `dot` (which
# draws one box per stream above 700 nodes) must render in that time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

t0=$(date +%s.%N)
step_start=$t0
timings=()
step() {
  local now
  now=$(date +%s.%N)
  if [ -n "${step_name:-}" ]; then
    timings+=("$(awk -v a="$step_start" -v b="$now" -v n="$step_name" 'BEGIN { printf "%7.1f s  %s", b - a, n }')")
  fi
  step_name="$1"
  step_start=$now
  echo "-- $1"
}
fail() {
  echo "newcomer: FAILED: $*" >&2
  exit 1
}

work="$(mktemp -d "${TMPDIR:-/tmp}/stream-alloc-newcomer.XXXXXX")"
cleanup() {
  local rc=$?
  if [ "${NEWCOMER_KEEP:-0}" = "1" ] || [ $rc -ne 0 ]; then
    echo "newcomer: the clone, build and prefix are kept in $work"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
# Layout: the clone is alone in $work/src (no sibling folders such as ../shared); the build
# trees and the install prefix live elsewhere under $work.
clone="$work/src/stream-alloc"
prefix="$work/prefix"

head=$(git rev-parse HEAD)
if [ "${NEWCOMER_FRESH:-0}" = "1" ]; then
  target="$work/cargo-target"
  reuse=fresh
elif [ -z "$(git status --porcelain)" ]; then
  target="${CARGO_TARGET_DIR:-$root/target}"
  case $target in /*) ;; *) target="$root/$target" ;; esac
  reuse=shared
else
  echo "newcomer: the working tree has uncommitted changes; the clone tests HEAD ($head) and builds it in target/newcomer"
  target="$root/target/newcomer"
  reuse=separate
fi

if [ "$reuse" = shared ]; then
  # target/ must hold the release build of exactly this commit: build it here first (little
  # to do after scripts/test.sh's cargo test --release).
  step "release build of HEAD in target/, for the clone to reuse"
  cargo build --release --lib --bins --quiet
fi
step "clone HEAD ($head) into $clone"
git clone --quiet --no-checkout "$root" "$clone"
git -C "$clone" checkout --quiet --detach "$head"
[ -z "$(ls -A "$work/src" | grep -v '^stream-alloc$' || true)" ] || fail "$work/src has more than the clone"
if [ "$reuse" = shared ]; then
  # Dated before target/'s build of the same commit, so cargo finds that build up to date.
  find "$clone" -path "$clone/.git" -prune -o -exec touch -h -d '2000-01-01 00:00:00' {} +
fi
export CARGO_TARGET_DIR="$target"

# The README's "Two commands": the first ```sh block holds the first command, the ```text
# block after it the output it prints.
readme="$clone/README.md"
first_cmd=$(awk '/^```sh$/ { getline; print; exit }' "$readme")
expected=$(awk '/^```sh$/ { seen = 1 } seen && /^```text$/ { inside = 1; next } inside && /^```$/ { exit } inside { print }' "$readme")
[ -n "$first_cmd" ] || fail "no \`\`\`sh block in README.md"
[ -n "$expected" ] || fail "no \`\`\`text sample output after the README's first command"

step "README's first command: $first_cmd"
actual=$(cd "$clone" && bash -c "$first_cmd" 2>"$work/first-cmd.err") || {
  cat "$work/first-cmd.err" >&2
  fail "the README's first command failed"
}
printf '%s\n' "$actual"
normalise() { sed -E 's/time: [0-9.]+ ms/time: N ms/'; }
if [ "$(printf '%s\n' "$expected" | normalise)" != "$(printf '%s\n' "$actual" | normalise)" ]; then
  diff <(printf '%s\n' "$expected" | normalise) <(printf '%s\n' "$actual" | normalise) >&2 || true
  fail "the README's sample output (< above) differs from what its first command prints (>)"
fi
leftovers=$(git -C "$clone" status --porcelain --ignored)
[ -z "$leftovers" ] || fail "the README's first command left files in the clone: $leftovers"

step "README's second command, its tool check: bash scripts/test.sh --check-tools"
# The Python venv is made by hand (README) or by .ci/run, never by git: the clone borrows this
# checkout's, as it borrows its target/.
[ -e "$clone/.venv" ] || [ ! -d "$root/.venv" ] || ln -s "$root/.venv" "$clone/.venv"
(cd "$clone" && bash scripts/test.sh --check-tools)

step "README's install: cmake -S . -B build && cmake --build build && cmake --install build --prefix PREFIX"
(
  cd "$clone"
  cmake -S . -B build >"$work/cmake-configure.log"
  cmake --build build >"$work/cmake-build.log"
  cmake --install build --prefix "$prefix" >"$work/cmake-install.log"
) || { tail -30 "$work"/cmake-*.log >&2; fail "the README's install failed"; }
grep -q '^STREAM_ALLOC_CARGO_PROFILE:STRING=release$' "$clone/build/CMakeCache.txt" ||
  fail "with no build type, the install did not build the release library"
for d in framework graph ge; do
  [ ! -e "$prefix/include/$d" ] || fail "the install put GE's folder include/$d in the prefix"
done
for f in bin/stream-alloc include/stream_alloc.h include/stream_alloc/ge_compat/framework/runtime/stream_allocator.h \
  lib/libstream_alloc.a lib/libstream_alloc.so.0 lib/cmake/StreamAlloc/StreamAllocConfig.cmake \
  lib/pkgconfig/stream_alloc.pc lib/pkgconfig/stream_alloc_static.pc; do
  [ -e "$prefix/$f" ] || fail "the install has no $f"
done
"$prefix/bin/stream-alloc" --version >/dev/null || fail "the installed bin/stream-alloc does not run"

# The README's C example, as a newcomer would copy it.
app="$work/app"
mkdir -p "$app"
awk '/^```c$/ { inside = 1; next } inside && /^```$/ { exit } inside { print }' "$readme" >"$app/readme_example.c"
[ -s "$app/readme_example.c" ] || fail "no \`\`\`c example in README.md"
cp "$clone/tests_c/shims/order_a.cpp" "$clone/tests_c/shims/order_b.cpp" "$app/"

step "a separate CMake project: find_package(StreamAlloc), shared and static, every shim header together"
cat >"$app/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(NewcomerApp LANGUAGES C CXX)
find_package(StreamAlloc CONFIG REQUIRED)
add_executable(example readme_example.c)
target_link_libraries(example PRIVATE StreamAlloc::stream_alloc)
add_executable(example_static readme_example.c)
target_link_libraries(example_static PRIVATE StreamAlloc::stream_alloc_static)
foreach(std 11 17)
  add_executable(shims_cxx${std} order_a.cpp order_b.cpp)
  target_link_libraries(shims_cxx${std} PRIVATE StreamAlloc::stream_alloc)
  set_target_properties(shims_cxx${std} PROPERTIES CXX_STANDARD ${std} CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
  target_compile_options(shims_cxx${std} PRIVATE -Wall -Wextra -Wpedantic -Werror)
endforeach()
EOF
cmake -S "$app" -B "$app/build-cmake" -DCMAKE_PREFIX_PATH="$prefix" >"$work/app-configure.log" ||
  { cat "$work/app-configure.log" >&2; fail "find_package(StreamAlloc) failed"; }
cmake --build "$app/build-cmake" --parallel "$(nproc 2>/dev/null || echo 2)" >"$work/app-build.log" || { cat "$work/app-build.log" >&2; fail "the consumer did not build"; }
for exe in example example_static; do
  out=$(cd "$clone" && "$app/build-cmake/$exe") || fail "$exe (find_package) failed"
  grep -q -- '-> stream' <<<"$out" || fail "$exe printed no stream assignment"
done
readelf -d "$app/build-cmake/example_static" | grep -q libstream_alloc && fail "example_static needs the shared library"
"$app/build-cmake/shims_cxx11" && "$app/build-cmake/shims_cxx17"

step "pkg-config: stream_alloc (shared) and stream_alloc_static"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cc=${CC:-cc}
cxx=${CXX:-c++}
mkdir -p "$app/build-pc"
# The three programs compile side by side; each must succeed.
# shellcheck disable=SC2046 # pkg-config's output is a list of flags
"$cc" -std=c99 -Wall -Wextra -Werror $(pkg-config --cflags stream_alloc) "$app/readme_example.c" \
  -o "$app/build-pc/example" $(pkg-config --libs stream_alloc) -Wl,-rpath,"$prefix/lib" &
pc_example=$!
# shellcheck disable=SC2046
"$cc" -std=c99 -Wall -Wextra -Werror $(pkg-config --cflags stream_alloc_static) "$app/readme_example.c" \
  -o "$app/build-pc/example_static" $(pkg-config --libs stream_alloc_static) &
pc_static=$!
# shellcheck disable=SC2046
"$cxx" -std=c++14 -Wall -Wextra -Wpedantic -Werror $(pkg-config --cflags stream_alloc) \
  "$app/order_a.cpp" "$app/order_b.cpp" -o "$app/build-pc/shims" $(pkg-config --libs stream_alloc) -Wl,-rpath,"$prefix/lib" &
pc_shims=$!
wait "$pc_example" || fail "the README example did not build with pkg-config stream_alloc"
wait "$pc_static" || fail "the README example did not build with pkg-config stream_alloc_static"
wait "$pc_shims" || fail "the shims did not build with pkg-config stream_alloc"
for exe in example example_static; do
  out=$(cd "$clone" && "$app/build-pc/$exe") || fail "$exe (pkg-config) failed"
  grep -q -- '-> stream' <<<"$out" || fail "$exe (pkg-config) printed no stream assignment"
done
readelf -d "$app/build-pc/example" | grep -q 'NEEDED.*libstream_alloc\.so\.0' || fail "example (pkg-config) does not need libstream_alloc.so.0"
readelf -d "$app/build-pc/example_static" | grep -q libstream_alloc && fail "example_static (pkg-config) needs the shared library"
"$app/build-pc/shims"

largest=$(cd "$clone/corpus" && ls -S ./*.json | head -1)
largest=${largest#./}
tool="$CARGO_TARGET_DIR/release/stream-alloc"
step "DOT of the largest corpus graph, corpus/$largest"
(cd "$clone" && "$tool" summary "corpus/$largest" --format dot) >"$work/streams.dot"
(cd "$clone" && "$tool" dot "corpus/$largest") >"$work/nodes.dot"
for f in streams nodes; do
  head -1 "$work/$f.dot" | grep -q '^digraph' || fail "$f.dot is not a DOT digraph"
done
if command -v dot >/dev/null 2>&1; then
  timeout "${NEWCOMER_DOT_TIMEOUT:-60}" dot -Tsvg "$work/streams.dot" -o "$work/streams.svg" || fail "graphviz did not render the stream graph of $largest"
  grep -q '<svg' "$work/streams.svg" || fail "no SVG from the stream graph"
  echo "stream graph: $(wc -c <"$work/streams.dot") bytes of DOT, $(wc -c <"$work/streams.svg") bytes of SVG"
  limit=${NEWCOMER_DOT_TIMEOUT:-60}
  timeout "$limit" dot -Tsvg "$work/nodes.dot" -o "$work/nodes.svg" ||
    fail "graphviz did not render the picture of $largest (stream-alloc dot) within $limit s"
  grep -q '<svg' "$work/nodes.svg" || fail "no SVG from stream-alloc dot"
  echo "dot picture: $(wc -c <"$work/nodes.dot") bytes of DOT, $(wc -c <"$work/nodes.svg") bytes of SVG"
else
  echo "graphviz (dot) is not installed: DOT written, not rendered (apt-get install -y graphviz)"
fi

step done
echo "newcomer: wall time per step (cargo target: $reuse, $CARGO_TARGET_DIR):"
printf '  %s\n' "${timings[@]}"
awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "  %7.1f s  total\n", b - a }'
echo "newcomer: 1 passed, 0 failed"
