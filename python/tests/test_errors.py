"""Every error class, raised by bad inputs, with the code the command line gives."""

import pickle

import pytest

import stream_alloc as sa
from conftest import CORPUS, ONNX, REPO, cli

SQUEEZE = CORPUS / "squeezenet1_1.json"


def cli_code(*args):
    """The error code the command line prints for the same input."""
    r = cli(*args, check=False)
    assert r.returncode == 1, r.stderr
    return r.stderr.split("error: ", 1)[1].split(":", 1)[0]


@pytest.fixture(scope="module")
def squeeze():
    return sa.Graph.load(SQUEEZE)


def test_hierarchy():
    for cls in (sa.FileError, sa.GraphError, sa.CycleError, sa.OptionError, sa.LimitError, sa.AllocationError,
                sa.UnsupportedError):
        assert issubclass(cls, sa.StreamAllocError) and issubclass(cls, Exception)
    assert issubclass(sa.CycleError, sa.GraphError)
    assert issubclass(sa.UnsupportedError, sa.AllocationError)


def test_missing_file(tmp_path):
    with pytest.raises(sa.FileError) as e:
        sa.Graph.load(tmp_path / "nope.json")
    assert e.value.code == "SA1000" == cli_code("allocate", tmp_path / "nope.json")
    assert "nope.json" in e.value.message and str(e.value).startswith("SA1000: ")


@pytest.mark.parametrize(
    "text,code",
    [
        ("{ not json", "SA1001"),
        ('{"format": "other", "version": 1, "name": "g", "nodes": [], "edges": []}', "SA1002"),
        ('{"format": "stream-graph", "version": 1, "name": "g", "nodes": "x", "edges": []}', None),
    ],
)
def test_bad_graph_json(tmp_path, text, code):
    p = tmp_path / "g.json"
    p.write_text(text)
    with pytest.raises(sa.GraphError) as e:
        sa.Graph.load(p)
    assert e.value.code == cli_code("allocate", p)
    if code:
        assert e.value.code == code


@pytest.mark.parametrize("name", ["bad_not_onnx", "bad_truncated", "bad_opset6", "bad_dangling", "bad_broadcast"])
def test_bad_onnx(name):
    with pytest.raises(sa.GraphError) as e:
        sa.Graph.load(ONNX / f"{name}.onnx", batch=1)
    assert e.value.code == cli_code("allocate", ONNX / f"{name}.onnx", "--batch", "1")


def test_symbolic_dims_need_import_options():
    with pytest.raises(sa.GraphError) as e:
        sa.Graph.load(ONNX / "cnn.onnx")
    assert e.value.code == "SA1003" and "'x'" in e.value.message and "batch" in e.value.message
    with pytest.raises(sa.OptionError) as e:
        sa.Graph.load(ONNX / "cnn.onnx", input_shapes={"nope": [1, 3, 32, 32]})
    assert "nope" in e.value.message
    with pytest.raises(sa.OptionError):
        sa.Graph.load(ONNX / "cnn.onnx", input_shapes={"x": [-1, 3, 32, 32]})
    with pytest.raises(sa.OptionError):
        sa.Graph.load(ONNX / "cnn.onnx", batch=0)
    with pytest.raises(sa.OptionError):
        sa.Graph.load(ONNX / "unknown_op_undeclared.onnx", unknown_op_cost=-1.0)
    with pytest.raises(sa.FileError):
        sa.Graph.load(ONNX / "cnn.onnx", batch=1, costs=ONNX / "no-such-costs.csv")


def test_cycle():
    p = REPO / "tests" / "fixtures" / "bad_input" / "cycle.json"
    with pytest.raises(sa.CycleError) as e:
        sa.Graph.load(p)
    assert e.value.code == "SA1006" == cli_code("allocate", p)
    assert "cycle" in e.value.message
    with pytest.raises(sa.CycleError):
        sa.Graph.load(ONNX / "bad_cycle.onnx")


def test_unsupported_onnx():
    with pytest.raises(sa.UnsupportedError) as e:
        sa.Graph.load(ONNX / "unknown_op_undeclared.onnx")
    assert e.value.code == "SA2000" and "FancyOp" in e.value.message
    with pytest.raises(sa.AllocationError):
        sa.Graph.load(ONNX / "bad_loop.onnx")


@pytest.mark.parametrize(
    "kwargs,code,words",
    [
        ({"options": {"verfy": True}}, "E10001", ["verfy", "'verify'"]),
        ({"options": {"no_such_option": 1}}, "E10001", ["no_such_option", "known options"]),
        ({"options": {"max_task_count": 0}}, "E10001", ["max_task_count", "0"]),
        ({"options": {"event": "smoke"}}, "E10001", ["event", "smoke"]),
        ({"options": {"hcom_parallel": 2}}, "E10006", ["hcom_parallel"]),
        ({"options": {"max_parallel_num": [1, 2]}}, "E10001", ["max_parallel_num", "list"]),
        ({"policy": "nope"}, "E10001", ["nope", "min-streams"]),
        ({"policy": "budget:0"}, "E10001", ["budget"]),
        ({"stage": "everything"}, "E10001", ["everything", "logical"]),
    ],
)
def test_bad_options(squeeze, kwargs, code, words):
    with pytest.raises(sa.OptionError) as e:
        sa.allocate(squeeze, **kwargs)
    assert e.value.code == code
    for w in words:
        assert w in e.value.message, (w, e.value.message)
    opts = kwargs.get("options", {})
    if kwargs.get("policy"):
        opts = {"policy": kwargs["policy"]}
    if opts and "verfy" not in opts and "no_such_option" not in opts and not isinstance(
            list(opts.values())[0], list):
        k, v = list(opts.items())[0]
        assert cli_code("allocate", SQUEEZE, "-q", "--option", f"{k}={v}") == code


def test_single_stream_conflicts_are_ge_codes(tmp_path):
    with pytest.raises(sa.OptionError) as e:
        sa.allocate(sa.Graph.load(SQUEEZE),
                    options={"enable_single_stream": True, "auto_multistream_parallel_mode": "cv"})
    assert e.value.code == cli_code("allocate", SQUEEZE, "-q", "--option", "enable_single_stream=true",
                                    "--option", "auto_multistream_parallel_mode=cv")


def test_budget_that_cannot_be_met(squeeze):
    with pytest.raises(sa.LimitError) as e:
        sa.allocate(squeeze, policy="auto", options={"max_memory": 1})
    assert e.value.code == "SA2003" and "memory_limit=1" in e.value.message
    with pytest.raises(sa.LimitError) as e:
        sa.allocate(squeeze, policy="auto", options={"memory_limit": 1})
    assert e.value.code == "SA2003" and "memory_limit=1" in e.value.message
    assert cli_code("allocate", SQUEEZE, "-q", "--option", "policy=auto", "--option", "max_memory=1") == "SA2003"


def test_compare_bad_policies(squeeze):
    with pytest.raises(sa.OptionError) as e:
        sa.compare(squeeze, ["ge", "nope"])
    assert "nope" in e.value.message and "xla" in e.value.message
    with pytest.raises(sa.OptionError):
        sa.compare(squeeze, [])
    with pytest.raises(sa.OptionError):
        sa.compare(squeeze, ["ge"], options={"verfy": "true"})


def test_errors_pickle_and_keep_their_fields():
    e = sa.LimitError("too many", "SA2003")
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is sa.LimitError and (back.code, back.message) == ("SA2003", "too many")
