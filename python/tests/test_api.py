"""Every function and property of the package against the command-line tool or the document."""

import json
import pydoc
from pathlib import Path

import pytest

import stream_alloc as sa
from conftest import CORPUS, ONNX, cli, cli_allocate, cli_json

RESNET = CORPUS / "resnet50_train.json"
SQUEEZE = CORPUS / "squeezenet1_1.json"


@pytest.fixture(scope="module")
def resnet():
    return sa.Graph.load(RESNET)


@pytest.fixture(scope="module")
def squeeze():
    return sa.Graph.load(SQUEEZE)


def test_graph_exposes_its_name_count_and_nodes(resnet):
    doc = json.loads(RESNET.read_text())
    assert resnet.name == doc["name"] == "resnet50_train"
    assert resnet.node_count == len(doc["nodes"]) == len(resnet) == 1055
    assert resnet.edge_count == len(doc["edges"])
    assert Path(resnet.path) == RESNET
    nodes = resnet.nodes
    assert [n.name for n in nodes] == [n["name"] for n in doc["nodes"]]
    for n, d in zip(nodes, doc["nodes"]):
        assert (n.type, n.engine, n.graph) == (d["type"], d["engine"], "")
        assert n.cost == d.get("cost_us", 0.0)
        assert n.tasks == d.get("tasks", 1)
    assert "Graph(name=\"resnet50_train\", nodes=1055" in repr(resnet)
    assert nodes[0].name in repr(nodes[0])


def test_onnx_graph_with_import_options():
    g = sa.Graph.load(ONNX / "cnn.onnx", batch=2)
    assert g.name == "cnn"
    same = sa.Graph.load(ONNX / "cnn.onnx", input_shapes={"x": [2, 3, 32, 32]})
    assert [(n.name, n.cost) for n in g.nodes] == [(n.name, n.cost) for n in same.nodes]
    bigger = sa.Graph.load(ONNX / "cnn.onnx", batch=8)
    cost = {n.name: n.cost for n in g.nodes}
    assert sum(n.cost for n in bigger.nodes) > sum(cost.values())
    # The import as the command line makes it: same engines and costs as `import --batch 2`.
    imported = json.loads(cli("import", ONNX / "cnn.onnx", "--batch", "2", "-q").stdout)
    assert {n["name"]: n.get("cost_us", 0.0) for n in imported["nodes"]} == cost


def test_onnx_device_profile_and_measured_costs(tmp_path):
    device = tmp_path / "slow.json"
    device.write_text('{"name": "slow", "launch_us": 10, "units": 8, "memory_bandwidth": 1e11}')
    base = {n.name: n.cost for n in sa.Graph.load(ONNX / "cnn.onnx", batch=1).nodes}
    slow = {n.name: n.cost for n in sa.Graph.load(ONNX / "cnn.onnx", batch=1, device=device).nodes}
    assert slow["c1"] > 10.0 > base["c1"]
    csv = tmp_path / "op_summary.csv"
    csv.write_text(
        "Model ID,Op Name,OP Type,Task Type,Task Duration(us),Block Dim\n"
        "1,/ffn/MatMul,MatMul,AI_CORE,41.5,20\n1,/ffn/MatMul,MatMul,AI_CORE,42.5,20\n"
    )
    shapes = {"ids": [2, 16], "mask": [2, 16]}
    g = sa.Graph.load(ONNX / "transformer.onnx", input_shapes=shapes, costs=csv)
    assert {n.name: n.cost for n in g.nodes}["/ffn/MatMul_output_0"] == 42.0
    out = tmp_path / "o.json"
    flags = ["--input-shape", "ids=2,16", "--input-shape", "mask=2,16", "--costs", csv]
    assert sa.allocate(g).to_json() == cli_allocate(ONNX / "transformer.onnx", out, [], flags)
    unknown = sa.Graph.load(ONNX / "unknown_op_undeclared.onnx", unknown_op_cost=7.5)
    assert 7.5 in [n.cost for n in unknown.nodes]


def test_allocation_properties_agree_with_its_document(resnet):
    a = sa.allocate(resnet, options={"max_parallel_num": "AIcoreEngine:4"})
    doc = json.loads(a.to_json())
    assert a.to_dict() == doc
    assert (a.logical_streams, a.physical_streams, a.events) == (6, 6, 13)  # the README's numbers
    assert a.events == doc["events"]["count"]
    assert a.sync_kind == doc["events"]["kind"] == "event"
    assert (a.mode, a.stage, a.graph_name) == ("static-multi", "all", "resnet50_train")
    assert any(n.get("inserted") for n in doc["nodes"])  # Send/Recv nodes are found too
    for n in doc["nodes"]:
        s = a.stream_of(n["name"])
        assert s == (None if n["stream"] < 0 else n["stream"])
        ls = a.logical_stream_of(n["name"], graph=n["graph"] or None)
        assert ls == (None if n["logical_stream"] < 0 else n["logical_stream"])
    assert a.syncs == [(s["from"], s["to"], "event", s["id"]) for s in doc["syncs"]]
    assert len(a.syncs) == 13
    assert a.memory_peak_bytes == doc["memory"]["peak_bytes"]
    assert a.policy is None
    assert "logical_streams=6" in repr(a)


def test_allocation_policy_report_and_memory(squeeze):
    a = sa.allocate(squeeze, policy="auto")
    assert a.policy["name"] == "auto" and a.policy["chosen"]
    assert a.policy == json.loads(a.to_json())["policy"]
    assert isinstance(a.memory_peak_bytes, int) and a.memory_peak_bytes > 0
    n = sa.allocate(squeeze, options={"event": "notify"})
    assert n.sync_kind == "notify" and all(k == "notify" for _, _, k, _ in n.syncs)


def test_summary_is_the_command_lines(resnet):
    a = sa.allocate(resnet, options={"max_parallel_num": "AIcoreEngine:4"})
    expected = cli_json("summary", RESNET, "--format", "json", "--option", "max_parallel_num=AIcoreEngine:4")
    assert a.summary() == expected


def test_save_writes_the_document(squeeze, tmp_path):
    a = sa.allocate(squeeze)
    a.save(tmp_path / "a.json")
    assert (tmp_path / "a.json").read_text() == a.to_json()
    with pytest.raises(sa.FileError) as e:
        a.save(tmp_path / "no" / "such" / "dir.json")
    assert e.value.code == "SA1000" and "dir.json" in e.value.message


def test_stream_of_unknown_node(squeeze):
    a = sa.allocate(squeeze)
    with pytest.raises(sa.GraphError) as e:
        a.stream_of("no-such-node")
    assert e.value.code == "SA1005" and "no-such-node" in str(e.value)
    data = [n.name for n in squeeze.nodes if n.type == "Data"][0]
    assert a.stream_of(data) is None


def test_check_proves_an_allocation_and_finds_broken_rules(resnet, tmp_path):
    a = sa.allocate(resnet, policy="min-streams")
    r = sa.check(resnet, a)
    assert r.ok and bool(r) and r.errors == []
    path = tmp_path / "a.json"
    a.save(path)
    expected = json.loads(cli("check", RESNET, path).stdout)
    assert sa.check(resnet, path).to_dict() == expected == r.to_dict()
    assert r.edges_checked == expected["edges_checked"] > 0
    assert r.width == expected["width"]["value"] and r.edge_sync_minimum == expected["syncs"]["edge_minimum"]
    # Drop every sync: dependencies across streams are no longer ordered.
    doc = json.loads(a.to_json())
    doc["syncs"] = []
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(doc))
    r = sa.check(resnet, broken)
    assert not r.ok and r.errors and all(e.startswith("rule ") for e in r.errors)
    cli_report = json.loads(cli("check", RESNET, broken, check=False).stdout)
    assert len(r.errors) == len(cli_report["violations"])
    # Another graph's allocation: one plain error.
    other = sa.check(sa.Graph.load(SQUEEZE), a)
    assert not other.ok and len(other.errors) == 1 and "resnet50_train" in other.errors[0]


def test_check_bad_allocation_files(resnet, tmp_path):
    with pytest.raises(sa.FileError):
        sa.check(resnet, tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    with pytest.raises(sa.GraphError) as e:
        sa.check(resnet, bad)
    assert e.value.code == "SA1001"
    with pytest.raises(sa.OptionError):
        sa.check(resnet, 42)


@pytest.mark.parametrize("policy", ["ge", "auto", "budget:2"])
def test_simulate_is_the_command_lines(squeeze, policy, tmp_path):
    a = sa.allocate(squeeze, policy=policy)
    s = sa.simulate(squeeze, a)
    expected = cli_json("simulate", SQUEEZE, "--json", "--option", f"policy={policy}")
    assert s.makespan_us == expected["makespan_us"]
    assert s.to_dict() == expected
    assert (s.lower_bound_us, s.ideal_us, s.utilisation) == (
        expected["lower_bound_us"], expected["ideal_us"], expected["utilisation"])
    trace = tmp_path / "t.json"
    s.save_trace(trace)
    cli("simulate", SQUEEZE, "--option", f"policy={policy}", "--trace", tmp_path / "cli.json")
    assert trace.read_text() == (tmp_path / "cli.json").read_text()
    assert json.loads(trace.read_text())["traceEvents"]
    assert "makespan_us=" in repr(s)


def test_simulate_device_arguments(squeeze):
    a = sa.allocate(squeeze, policy="auto")
    one = sa.simulate(squeeze, a, units=1, wait_latency_us=5.0)
    expected = cli_json("simulate", SQUEEZE, "--json", "--option", "policy=auto", "--units", "1", "--wait-latency", "5")
    assert one.makespan_us == expected["makespan_us"]
    assert one.makespan_us > sa.simulate(squeeze, a).makespan_us
    with pytest.raises(sa.OptionError):
        sa.simulate(squeeze, a, units=0)
    with pytest.raises(sa.AllocationError) as e:
        sa.simulate(sa.Graph.load(CORPUS / "resnet50.json"), a)
    assert e.value.code == "SA2001" and "squeezenet1_1" in e.value.message


def test_compare_rows_are_the_command_lines(squeeze):
    policies = ["ge", "per-operator", "budget:8", "auto", "xla"]
    rows = sa.compare(squeeze, policies)
    expected = cli_json("compare", SQUEEZE, "--policies", ",".join(policies), "--format", "json")
    assert rows == expected
    assert [r["policy"] for r in rows] == policies
    for r in rows:
        assert {"policy", "streams", "syncs", "makespan_us"} <= r.keys()
    # The default list is the command line's.
    assert [r["policy"] for r in sa.compare(squeeze)] == ["ge", "per-operator", "min-streams", "budget:8", "list", "auto"]


def test_compare_with_options(squeeze):
    rows = sa.compare(squeeze, ["ge", "auto"], options={"event": "notify"})
    expected = cli_json("compare", SQUEEZE, "--policies", "ge,auto", "--format", "json", "--option", "event=notify")
    assert rows == expected


def test_names_and_version():
    assert "policy" in sa.option_names() and "max_parallel_num" in sa.option_names()
    assert {"ge", "auto", "budget", "min-streams", "xla", "ort"} <= set(sa.policy_names())
    assert sa.__version__ == "0.1.0"


def test_help_shows_the_docstrings():
    assert "GIL released" in pydoc.render_doc(sa.allocate)
    assert "ONNX" in pydoc.render_doc(sa.Graph.load)
    assert "byte for byte" in pydoc.render_doc(sa.Allocation)
    assert "StreamAllocationSummary" in pydoc.render_doc(sa.Allocation.summary)
    for f in (sa.check, sa.simulate, sa.compare, sa.Simulation.save_trace, sa.Report):
        assert f.__doc__ and len(f.__doc__) > 20, f


def test_the_package_is_typed():
    root = Path(sa.__file__).parent
    assert (root / "py.typed").exists()
    stub = (root / "_native.pyi").read_text()
    for name in ["def allocate", "def check", "def simulate", "def compare", "class Graph", "class Allocation",
                 "def stream_of", "def syncs", "def memory_peak_bytes", "def save_trace", "def makespan_us"]:
        assert name in stub, name
