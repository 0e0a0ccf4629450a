"""Shared paths and helpers: the repository, its corpus, the ONNX fixtures and the command-line
tool the package is compared with (SA_BIN, else target/release/stream-alloc)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus"
ONNX = REPO / "tests" / "fixtures" / "onnx"
GRAPHS = sorted(CORPUS.glob("*.json"))


def cli_path() -> Path:
    p = Path(os.environ.get("SA_BIN", REPO / "target" / "release" / "stream-alloc"))
    if not p.exists():
        pytest.fail(f"the command-line tool {p} is missing: run `cargo build --release` first (scripts/test.sh does)")
    return p


def cli(*args, check=True) -> subprocess.CompletedProcess:
    """Runs `stream-alloc ARGS...`; with check, a non-zero exit fails the test with stderr."""
    r = subprocess.run([str(cli_path()), *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        pytest.fail(f"stream-alloc {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}")
    return r


def cli_allocate(graph, out: Path, options=(), extra=()) -> str:
    """The document `stream-alloc allocate GRAPH -o OUT --option ...` writes."""
    args = ["allocate", graph, "-o", out, "-q", *extra]
    for o in options:
        args += ["--option", o]
    cli(*args)
    return out.read_text()


def cli_json(*args):
    return json.loads(cli(*args).stdout)
