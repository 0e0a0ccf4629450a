#!/usr/bin/env bash
# Runs every test: Rust (unit, integration, doc), lint, then the C/C++ suite through ctest
# (which includes the header checks and the CMake install-and-consume test), then the Python
# package (python/: built with maturin into .venv, its pytest suite), then ONNX Runtime running
# the exported stream partitions (tests/ort), then the newcomer's path on a fresh clone
# (scripts/newcomer.sh).
#
# Needs: the Rust toolchain with the rustfmt and clippy components, a C and C++ compiler,
# cmake (3.16 or later), pkg-config and git; graphviz (`dot`) is used when present; a Python
# venv at .venv/ with maturin, pytest, onnxruntime and numpy (.ci/run makes it). They are
# checked first, before the long Rust stage. `bash scripts/test.sh --check-tools` only checks.
# Environment: SA_SKIP_NEWCOMER=1 leaves out the newcomer stage (for quick local runs).
set -euo pipefail
cd "$(dirname "$0")/.."

# What the stages below need, checked before any of them runs.
check_tools() {
  local missing=()
  command -v cargo >/dev/null 2>&1 || missing+=("cargo (the Rust toolchain: https://rustup.rs)")
  cargo fmt --version >/dev/null 2>&1 || missing+=("rustfmt (rustup component add rustfmt)")
  cargo clippy --version >/dev/null 2>&1 || missing+=("clippy (rustup component add clippy)")
  command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 || missing+=("a C compiler (apt-get install -y gcc)")
  command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 || missing+=("a C++ compiler (apt-get install -y g++)")
  if ! command -v cmake >/dev/null 2>&1; then
    missing+=("cmake 3.16 or later (apt-get install -y cmake)")
  elif ! cmake --version | awk 'NR == 1 { split($3, v, "."); exit !(v[1] > 3 || (v[1] == 3 && v[2] >= 16)) }'; then
    missing+=("cmake 3.16 or later; found $(cmake --version | head -1) (apt-get install -y cmake)")
  fi
  command -v pkg-config >/dev/null 2>&1 || missing+=("pkg-config (apt-get install -y pkg-config)")
  command -v git >/dev/null 2>&1 || missing+=("git (apt-get install -y git)")
  if [ ! -x .venv/bin/python ]; then
    missing+=("the Python venv .venv/ (python3 -m venv .venv && .venv/bin/pip install maturin pytest onnxruntime numpy; .ci/run makes it)")
  else
    local mod
    for mod in maturin pytest onnxruntime numpy; do
      .venv/bin/python -c "import $mod" >/dev/null 2>&1 ||
        missing+=("$mod in .venv (.venv/bin/pip install $mod)")
    done
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    echo "scripts/test.sh: missing what the tests need:" >&2
    printf '  - %s\n' "${missing[@]}" >&2
    echo "Install them and run again (README.md, 'Two commands', lists them)." >&2
    return 1
  fi
  command -v dot >/dev/null 2>&1 || echo "note: graphviz (dot) is not installed; the newcomer stage will not render DOT (apt-get install -y graphviz)"
  return 0
}

echo "== tools"
check_tools
if [ "${1:-}" = "--check-tools" ]; then
  exit 0
fi

# The repository carries its own corpus; beside the workspace's shared one it must be identical.
if [ -d ../shared/corpus ]; then
  echo "== corpus/ matches ../shared/corpus"
  diff -r corpus ../shared/corpus
fi
echo "== cargo fmt --check"
cargo fmt --check
echo "== cargo clippy"
cargo clippy --all-targets -q -- -D warnings
# The workspace's independent checker, where it sits beside the clone, cross-checks task limits.
if [ -f ../shared/tools/check_alloc.py ]; then
  export SA_CHECK_ALLOC="$PWD/../shared/tools/check_alloc.py"
fi
echo "== cargo test"
mkdir -p target
# SA_DOCS_STRICT: a shown command of README.md or docs/ that needs a program not installed here
# fails instead of being skipped (tests/it/docs.rs).
SA_DOCS_STRICT=1 cargo test --release -q 2>&1 | tee target/cargo-test.log
# The CMake build (ctest, the install, the newcomer stage) runs `cargo build --lib`, without the
# dev-dependencies: it must find the library and tool that cargo test built up to date. It
# rebuilds them when a dev-dependency turns on a feature of a shared crate that [dependencies]
# does not name (Cargo.toml says which), and the suite then compiles the library twice.
# (The output is read whole: `grep -q` in a pipe could end cargo early and, under pipefail, hide
# the match.)
built="$(cargo build --release --lib --bins --message-format=json 2>/dev/null)"
if grep -q '"fresh":false' <<<"$built"; then
  echo "scripts/test.sh: cargo build --release --lib rebuilt what cargo test --release built:" >&2
  echo "  a dev-dependency turns on a feature that [dependencies] in Cargo.toml does not name" >&2
  echo "  (compare cargo tree -e features -i CRATE with cargo tree -e features,no-dev -i CRATE)" >&2
  exit 1
fi
if [ -f scripts/test-c.sh ]; then
  echo "== C and C++ tests (ctest)"
  STREAM_ALLOC_CARGO_PROFILE=release bash scripts/test-c.sh
fi
# The Python package: maturin builds it against the library cargo built above (one workspace,
# one target/, the same release profile: only PyO3 and the binding crate compile), then the
# wheel is installed into .venv and its suite runs against the tool built above.
# PyO3 is configured for the venv's interpreter in both builds, so neither rebuilds it.
echo "== Python package (maturin build, pytest)"
export PYO3_PYTHON="$PWD/.venv/bin/python"
cargo clippy -q -p stream-alloc-python -- -D warnings
rm -rf target/wheels
.venv/bin/maturin build --release -q -m python/Cargo.toml -i "$PYO3_PYTHON"
.venv/bin/pip install -q --force-reinstall --no-deps target/wheels/stream_alloc-*.whl
# The fake Ascend runtime the C tests built: the package's pluggable_stats reads the pools of
# libstream_alloc.so through it.
fake_rt="$(find build/tests_c -name 'libfake_ascend_rt.so' -print -quit 2>/dev/null || true)"
if [ -z "$fake_rt" ]; then
  echo "scripts/test.sh: the fake Ascend runtime (build/tests_c, libfake_ascend_rt.so) is missing: the C stage builds it" >&2
  exit 1
fi
SA_FAKE_RT="$PWD/$fake_rt" SA_BIN="$PWD/target/release/stream-alloc" .venv/bin/pytest -q -p no:cacheprovider python/tests
# ONNX Runtime (the CPU wheel in .venv) loads the partitions `export --to ort` writes and runs
# the models with them (tests/ort, docs/ort.md), against the tool built above.
echo "== ONNX Runtime runs the exported stream partitions (tests/ort)"
SA_BIN="$PWD/target/release/stream-alloc" .venv/bin/python -m pytest -q -p no:cacheprovider tests/ort
if [ "${SA_SKIP_NEWCOMER:-0}" != "1" ]; then
  echo "== newcomer's path on a fresh clone (scripts/newcomer.sh)"
  bash scripts/newcomer.sh
fi
