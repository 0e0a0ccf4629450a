"""ONNX Runtime runs the stream partitions `stream-alloc export --to ort` writes (docs/ort.md).

For every model that ONNX Runtime can run (the project's ONNX fixtures and the nine ONNX
model-zoo networks of onnx's `backend/test/data/light/`, in tests/fixtures/onnx/zoo/):

- the partition names exactly the nodes ORT's own partitioner names (ORT writes its default
  partition to the config path when the file is absent);
- ORT loads it without a warning, runs, and gives the outputs of a session without it, with
  optimisations off; a partition missing one node is refused (so ORT did read ours);
- the same for the model ORT saves at ORT_ENABLE_EXTENDED (fused `com.microsoft` operators),
  planned from that file, and for ORT_ENABLE_ALL (NCHWc operators);
- the partition has as many streams as the plan runs the model's root nodes on, so plans with
  several streams give partitions with several;
- a plan read back from an allocation file (`export MODEL ALLOC`) gives the same bytes.

Needs onnxruntime and numpy (the `.venv` that `.ci/run` makes) and the release binary
(`cargo build --release`; SA_BIN names another).
"""

import json
import os
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "onnx"
BIN = Path(os.environ.get("SA_BIN", ROOT / "target" / "release" / "stream-alloc"))
CONFIG = "session.node_partition_config_file"
LEVELS = {
    "off": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}

# (model, the import options it needs, its inputs' symbolic dims). ORT refuses cnn.onnx (two
# nodes share a name) and the fixtures whose weights are external files not shipped
# (resnet50, bert_base, external_weights); unknown_op has an operator ORT does not know.
MODELS = [
    ("ops.onnx", [], {}),
    ("if.onnx", [], {}),
    ("old_opset.onnx", [], {}),
    ("transformer.onnx", ["--input-shape", "ids=2,16", "--input-shape", "mask=2,16"], {"batch": 2, "seq": 16}),
] + [(f"zoo/{p.name}", [], {}) for p in sorted((FIXTURES / "zoo").glob("*.onnx"))]

# The default (GE's rules: mostly one stream on these) and a policy that uses several.
POLICIES = [[], ["--option", "policy=auto"]]

# ORT's optimised models are planned for every network but VGG-19, whose saved model carries
# 490 MB of weights, and ZFNet-512 (their fusions, FusedConv and FusedGemm, are those of AlexNet).
NOT_OPTIMISED = {"zoo/light_vgg19.onnx", "zoo/light_zfnet512.onnx"}


def sa(*args):
    r = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, f"stream-alloc {' '.join(map(str, args))}: {r.stderr}"
    return r.stdout


@contextmanager
def stderr_to(path):
    """ORT's C++ log goes to file descriptor 2: send it to `path` for the block."""
    saved = os.dup(2)
    with open(path, "w") as f:
        os.dup2(f.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def session(model, level="off", partition=None, save=None, log=None):
    so = ort.SessionOptions()
    so.graph_optimization_level = LEVELS[level]
    so.log_severity_level = 2
    if partition is not None:
        so.add_session_config_entry(CONFIG, str(partition))
    if save is not None:
        so.optimized_model_filepath = str(save)
    if log is None:
        return ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    with stderr_to(log):
        return ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])


def feeds(sess, dims):
    """Deterministic inputs: symbolic dims from `dims`, indices below 100 (the embedding)."""
    rng = np.random.default_rng(7)
    out = {}
    for i in sess.get_inputs():
        shape = [d if isinstance(d, int) else dims[d] for d in i.shape]
        if i.type == "tensor(float)":
            out[i.name] = rng.standard_normal(shape).astype(np.float32)
        elif i.type == "tensor(int64)":
            out[i.name] = rng.integers(0, 100, shape).astype(np.int64)
        elif i.type == "tensor(bool)":
            out[i.name] = np.asarray(rng.integers(0, 2, shape).astype(bool))
        else:
            raise AssertionError(f"input {i.name}: type {i.type} not handled")
    return out


_NAMES = {}
_BASELINE = {}


def ort_names(model, tmp):
    """The node names ORT's own partitioner gives the model (it writes them to an absent file)."""
    if model not in _NAMES:
        dump = tmp / "ort-default.json"
        if dump.exists():
            dump.unlink()
        session(model, partition=dump)
        doc = json.loads(dump.read_text())
        _NAMES[model] = [n for s in doc["streams"] for n in s]
    return _NAMES[model]


def deterministic(model, inputs):
    """The outputs two identical sessions agree on (random operators' outputs are not)."""
    if model not in _BASELINE:
        a = session(model).run(None, inputs)
        b = session(model).run(None, inputs)
        keep = [k for k, (x, y) in enumerate(zip(a, b)) if np.array_equal(x, y)]
        assert keep, f"{model}: no output is deterministic"
        _BASELINE[model] = (a, keep)
    return _BASELINE[model]


def plan_streams(alloc_path):
    doc = json.loads(alloc_path.read_text())
    return {n["stream"] for n in doc["nodes"] if not n.get("graph") and n["stream"] >= 0 and not n.get("inserted")}


def check_partition(model, import_args, policy, dims, tmp, tag):
    """Export, compare with ORT's names, run with it; returns the partition."""
    part_path = tmp / f"{tag}.partition.json"
    alloc_path = tmp / f"{tag}.alloc.json"
    sa("export", model, "--to", "ort", "-o", part_path, *import_args, *policy)
    part = json.loads(part_path.read_text())
    assert part["type"] == "DeviceBasedPartitioner"
    names = [n for s in part["streams"] for n in s]
    assert len(names) == len(set(names)), f"{tag}: a name twice"
    expected = ort_names(model, tmp)
    assert sorted(names) == sorted(expected), f"{tag}: ORT names {sorted(set(expected) ^ set(names))} differently"
    assert part["devices"] == ["0"] * len(part["streams"])
    assert all(part["streams"]), f"{tag}: an empty stream"

    # The plan's streams, and the same partition from the allocation file.
    sa("allocate", model, "-o", alloc_path, "-q", *import_args, *policy)
    assert len(part["streams"]) == max(1, len(plan_streams(alloc_path))), tag
    again = tmp / f"{tag}.from-alloc.json"
    sa("export", model, alloc_path, "--to", "ort", "-o", again, *import_args, *policy)
    assert again.read_bytes() == part_path.read_bytes(), f"{tag}: export from ALLOC differs"

    # ORT runs it, quietly, with the outputs of a session without it.
    log = tmp / f"{tag}.log"
    sess = session(model, partition=part_path, log=log)
    assert "Partitioner" not in log.read_text(), f"{tag}: ORT warned: {log.read_text()}"
    inputs = feeds(sess, dims)
    want, keep = deterministic(model, inputs)
    got = sess.run(None, inputs)
    for k in keep:
        np.testing.assert_array_equal(got[k], want[k], err_msg=f"{tag}: output {k}")

    # A partition without one of the nodes is refused: ORT reads ours.
    cut = dict(part, streams=[list(s) for s in part["streams"]])
    dropped = cut["streams"][-1].pop()
    cut["streams"] = [s for s in cut["streams"] if s]
    cut["devices"] = ["0"] * len(cut["streams"])
    cut_path = tmp / f"{tag}.cut.json"
    cut_path.write_text(json.dumps(cut))
    with pytest.raises(Exception, match="Failed to find node"):
        session(model, partition=cut_path, log=tmp / f"{tag}.cut.log")
    return part, want, keep, inputs


@pytest.mark.parametrize("name,import_args,dims", MODELS, ids=[m[0] for m in MODELS])
def test_ort_runs_the_partition(name, import_args, dims):
    model = FIXTURES / name

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for policy in POLICIES:
            tag = "plain" + "-".join(policy).replace("--option", "").replace("=", "-")
            part, want, keep, inputs = check_partition(model, import_args, policy, dims, tmp, tag)

        # ORT's optimised models, planned from the file ORT saves, served with optimisations off.
        for level in () if name in NOT_OPTIMISED else ("extended", "all"):
            opt = tmp / f"{level}.onnx"
            session(model, level=level, save=opt)
            for policy in POLICIES[1:]:
                tag = f"{level}-auto"
                _, opt_want, opt_keep, _ = check_partition(opt, import_args, policy, dims, tmp, tag)
                for k in set(keep) & set(opt_keep):
                    np.testing.assert_allclose(opt_want[k], want[k], rtol=1e-3, atol=1e-4, err_msg=f"{tag}: output {k}")



def test_plans_with_several_streams_give_partitions_with_several():
    """The branchy networks under policy=auto: several streams in the plan and the partition."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name in ("zoo/light_inception_v1.onnx", "zoo/light_inception_v2.onnx", "zoo/light_squeezenet.onnx"):
            model = FIXTURES / name
            alloc = tmp / "a.json"
            sa("allocate", model, "-o", alloc, "-q", "--option", "policy=auto")
            part = json.loads(sa("export", model, "--to", "ort", "--option", "policy=auto"))
            assert len(plan_streams(alloc)) > 1, name
            assert len(part["streams"]) == len(plan_streams(alloc)) > 1, name


def test_unnamed_nodes_get_ort_names():
    """The zoo networks leave their weights' ConstantOfShape nodes unnamed: ORT's OpType and counter."""
    model = FIXTURES / "zoo" / "light_squeezenet.onnx"
    part = json.loads(sa("export", model, "--to", "ort"))
    names = [n for s in part["streams"] for n in s]
    assert "ConstantOfShape0" in names and "ConstantOfShape1" in names
    with tempfile.TemporaryDirectory() as d:
        assert sorted(names) == sorted(ort_names(model, Path(d)))


def test_cuda_devices_and_errors():
    """--ep cuda marks every stream as a GPU stream; a graph JSON is refused with a reason."""
    model = FIXTURES / "zoo" / "light_inception_v1.onnx"
    part = json.loads(sa("export", model, "--to", "ort", "--ep", "cuda", "--option", "policy=auto"))
    assert part["devices"] == ["1"] * len(part["streams"])
    r = subprocess.run([str(BIN), "export", str(ROOT / "corpus" / "resnet50_train.json"), "--to", "ort"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "not an ONNX model" in r.stderr
    r = subprocess.run([str(BIN), "export", str(model), "--to", "tensorrt"], capture_output=True, text=True)
    assert r.returncode == 2
