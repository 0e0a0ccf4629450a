"""What other runtimes load: ONNX Runtime's stream partition (``Allocation.to_ort_partition``,
byte for byte what ``stream-alloc export --to ort`` writes) and the pluggable allocator's
statistics read from ``libstream_alloc.so`` (``pluggable_stats``)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import stream_alloc as sa
from conftest import CORPUS, ONNX, REPO, cli

LIB = REPO / "target" / "release" / "libstream_alloc.so"


@pytest.mark.parametrize("policy", ["ge", "auto", "per-operator"])
def test_ort_partition_is_the_export(policy):
    g = sa.Graph.load(ONNX / "cnn.onnx", batch=2)
    a = sa.allocate(g, policy=policy)
    text = a.to_ort_partition()
    shown = cli("export", ONNX / "cnn.onnx", "--to", "ort", "--batch", "2", "--option", f"policy={policy}").stdout
    assert text == shown
    doc = json.loads(text)
    assert doc["type"] == "DeviceBasedPartitioner"
    assert len(doc["streams"]) == len(doc["devices"]) >= 1
    assert set(doc["devices"]) == {"0"}


def test_ort_partition_cuda_and_streams():
    g = sa.Graph.load(ONNX / "cnn.onnx", batch=1)
    a = sa.allocate(g, policy="per-operator")
    doc = json.loads(a.to_ort_partition(ep="cuda"))
    assert set(doc["devices"]) == {"1"}
    shown = cli("export", ONNX / "cnn.onnx", "--to", "ort", "--batch", "1", "--ep", "cuda",
                "--option", "policy=per-operator").stdout
    assert json.loads(shown) == doc
    # every node of the plan's streams appears once
    names = [n for s in doc["streams"] for n in s]
    assert len(names) == len(set(names))


def test_ort_partition_errors():
    a = sa.allocate(sa.Graph.load(CORPUS / "googlenet.json"))
    with pytest.raises(sa.UnsupportedError) as e:
        a.to_ort_partition()
    assert e.value.code == "SA2000" and "not loaded from an ONNX model" in e.value.message
    b = sa.allocate(sa.Graph.load(ONNX / "cnn.onnx", batch=1))
    with pytest.raises(sa.OptionError) as e:
        b.to_ort_partition(ep="tpu")
    assert "ep 'tpu'" in e.value.message


def test_pluggable_stats_bad_library(tmp_path):
    with pytest.raises(sa.FileError) as e:
        sa.pluggable_stats(tmp_path / "missing.so")
    assert e.value.code == "SA1000" and "missing.so" in e.value.message
    with pytest.raises(sa.StreamAllocError) as e:
        sa.pluggable_stats(LIB, device="0")
    assert e.value.code == "E10001"


def test_pluggable_stats_before_any_allocation():
    """A device nothing was allocated on has no pool yet: every counter is zero, under torch's
    names, in a fresh interpreter (no runtime loaded there)."""
    code = (
        "import json, stream_alloc as sa\n"
        f"print(json.dumps(sa.pluggable_stats({str(LIB)!r}, 3)))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    for key in ("allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.current",
                "allocation.all.allocated", "num_ooms"):
        assert s[key] == 0, (key, s)


def test_pluggable_stats_on_the_fake_runtime():
    """Through the fake Ascend runtime the C tests build (scripts/test.sh passes it as
    SA_FAKE_RT): allocations move the counters under torch's names, reset empties the pool."""
    fake = os.environ.get("SA_FAKE_RT")
    if not fake:
        pytest.skip("SA_FAKE_RT (the fake Ascend runtime of tests_c) is not set; scripts/test.sh sets it")
    code = f"""
import ctypes, stream_alloc as sa
ctypes.CDLL({fake!r}, mode=ctypes.RTLD_GLOBAL)
lib = ctypes.CDLL({str(LIB)!r})
lib.sa_pluggable_malloc.restype = ctypes.c_void_p
lib.sa_pluggable_malloc.argtypes = [ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
lib.sa_pluggable_free.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_int, ctypes.c_void_p]
lib.sa_pluggable_init.argtypes = [ctypes.c_int]
lib.sa_pluggable_init(1)
p = lib.sa_pluggable_malloc(4096, 0, None)
assert p
s = sa.pluggable_stats({str(LIB)!r}, 0)
assert s["allocated_bytes.all.current"] >= 4096, s
assert s["allocation.all.current"] == 1, s
lib.sa_pluggable_free(p, 4096, 0, None)
lib.sa_pluggable_reset()
s = sa.pluggable_stats({str(LIB)!r}, 0)
assert s["allocated_bytes.all.current"] == 0 and s["reserved_bytes.all.current"] == 0, s
assert s["allocated_bytes.all.peak"] >= 4096, s
print("ok")
"""
    env = dict(os.environ, FAKE_RT_FAIL_AT="0")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
