"""Byte identity with the command-line tool: `Allocation.to_json()` is what `stream-alloc
allocate GRAPH -o OUT` writes with the same options, on every corpus graph."""

import pytest

import stream_alloc as sa
from conftest import GRAPHS, ONNX, cli_allocate

# policy=ge and policy=auto on every graph (the floor), and GE's default without options.
POLICIES = ["ge", "auto"]


@pytest.fixture(scope="module")
def graphs():
    return {p.name: sa.Graph.load(p) for p in GRAPHS}


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("path", GRAPHS, ids=[p.stem for p in GRAPHS])
def test_every_corpus_graph_is_the_command_lines_byte_for_byte(graphs, path, policy, tmp_path):
    expected = cli_allocate(path, tmp_path / "out.json", [f"policy={policy}"])
    got = sa.allocate(graphs[path.name], policy=policy).to_json()
    assert got == expected


@pytest.mark.parametrize(
    "options,stage",
    [
        ({}, "all"),
        ({"compat": "ge", "event": "notify"}, "all"),
        ({"max_parallel_num": "AIcoreEngine:4", "verify": True}, "all"),
        ({"policy": "budget:4", "max_events": 16}, "all"),
        ({"max_task_count": 64}, "split"),
        ({"policy": "min-streams"}, "sync"),
        ({}, "logical"),
    ],
    ids=["default", "ge-notify", "parallel4-verify", "budget4-events16", "tasks64-split", "min-streams-sync", "logical"],
)
def test_options_and_stages_match_the_command_line(options, stage, tmp_path):
    path = GRAPHS[[p.stem for p in GRAPHS].index("resnet50_train")]
    cli_options = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in options.items()]
    expected = cli_allocate(path, tmp_path / "out.json", cli_options, ["--stage", stage])
    got = sa.allocate(sa.Graph.load(path), options=options, stage=stage)
    assert got.to_json() == expected
    assert got.stage == stage


def test_policy_argument_is_the_policy_option():
    g = sa.Graph.load(GRAPHS[0])
    assert sa.allocate(g, policy="min-streams").to_json() == sa.allocate(g, options={"policy": "min-streams"}).to_json()


def test_ge_option_names_are_accepted(tmp_path):
    g = sa.Graph.load(GRAPHS[0])
    a = sa.allocate(g, options={"ge.enableSingleStream": "true"})
    assert a.to_json() == cli_allocate(GRAPHS[0], tmp_path / "o.json", ["ge.enableSingleStream=true"])
    assert a.logical_streams == 1


@pytest.mark.parametrize(
    "model,kwargs,flags",
    [
        ("cnn.onnx", {"batch": 2}, ["--batch", "2"]),
        ("cnn.onnx", {"input_shapes": {"x": [3, 3, 32, 32]}}, ["--input-shape", "x=3,3,32,32"]),
        ("transformer.onnx", {"input_shapes": {"ids": [2, 16], "mask": [2, 16]}},
         ["--input-shape", "ids=2,16", "--input-shape", "mask=2,16"]),
        ("bert_base.onnx", {"input_shapes": {"input_ids": [1, 128], "attention_mask": [1, 128]}},
         ["--input-shape", "input_ids=1,128", "--input-shape", "attention_mask=1,128"]),
        ("if.onnx", {}, []),
        ("unknown_op_undeclared.onnx", {"unknown_op_cost": 7.5}, ["--unknown-op-cost", "7.5"]),
        ("unknown_op.onnx", {}, []),
    ],
    ids=["cnn-batch", "cnn-shapes", "transformer-shapes", "bert-shapes", "if", "unknown-op-cost", "declared-shapes"],
)
@pytest.mark.parametrize("policy", POLICIES)
def test_onnx_models_match_the_command_line(model, kwargs, flags, policy, tmp_path):
    g = sa.Graph.load(ONNX / model, **kwargs)
    expected = cli_allocate(ONNX / model, tmp_path / "out.json", [f"policy={policy}"], flags)
    assert sa.allocate(g, policy=policy).to_json() == expected
