"""Threads: long calls release the GIL; eight threads get the single-threaded answer; objects
outlive the graph that made them."""

import gc
import threading
from concurrent.futures import ThreadPoolExecutor

import stream_alloc as sa
from conftest import CORPUS, ONNX

RESNET = CORPUS / "resnet50_train.json"


def test_eight_threads_get_the_single_threaded_answer():
    g = sa.Graph.load(RESNET)
    policies = ["auto", "ge", "min-streams", "budget:4", "list", "per-operator", "auto", "ge"]
    single = {p: sa.allocate(g, policy=p).to_json() for p in set(policies)}
    barrier = threading.Barrier(8)

    def work(p):
        barrier.wait()
        return p, sa.allocate(g, policy=p).to_json()

    with ThreadPoolExecutor(8) as pool:
        for _ in range(2):
            for p, text in pool.map(work, policies):
                assert text == single[p], p


def test_threads_check_simulate_compare_at_once():
    g = sa.Graph.load(CORPUS / "squeezenet1_1.json")
    a = sa.allocate(g, policy="auto")
    want = (sa.check(g, a).to_dict(), sa.simulate(g, a).to_dict(), sa.compare(g, ["ge", "auto"]))
    barrier = threading.Barrier(8)

    def work(_):
        barrier.wait()
        return sa.check(g, a).to_dict(), sa.simulate(g, a).to_dict(), sa.compare(g, ["ge", "auto"])

    with ThreadPoolExecutor(8) as pool:
        assert all(r == want for r in pool.map(work, range(8)))


def run_while_counting(call):
    """Runs `call` in a thread while this thread counts: a call holding the GIL lets the counter
    advance only at the interpreter's switch interval, one released lets it run freely."""
    done = threading.Event()
    result = []

    def body():
        result.append(call())
        done.set()

    t = threading.Thread(target=body)
    t.start()
    count = 0
    while not done.is_set():
        count += 1
    t.join()
    return count, result[0]


def test_long_calls_release_the_gil():
    g = sa.Graph.load(RESNET)
    # Several auto runs back to back, so the call lasts long enough to count during it.
    count, _ = run_while_counting(lambda: [sa.allocate(g, policy="auto") for _ in range(3)])
    assert count > 10_000, count
    count, _ = run_while_counting(lambda: sa.compare(g, ["ge", "auto"]))
    assert count > 10_000, count
    count, _ = run_while_counting(lambda: [sa.Graph.load(ONNX / "bert_base.onnx",
                                                         input_shapes={"input_ids": [1, 128],
                                                                       "attention_mask": [1, 128]})
                                           for _ in range(5)])
    assert count > 10_000, count


def test_objects_outlive_their_graph(tmp_path):
    g = sa.Graph.load(CORPUS / "squeezenet1_1.json")
    a = sa.allocate(g, policy="auto")
    text = a.to_json()
    nodes = g.nodes
    name = nodes[10].name
    stream = a.stream_of(name)
    del g
    gc.collect()
    assert a.to_json() == text and a.stream_of(name) == stream and a.summary()
    assert nodes[10].name == name
    g2 = sa.Graph.load(CORPUS / "squeezenet1_1.json")
    s = sa.simulate(g2, a)
    r = sa.check(g2, a)
    del a, g2
    gc.collect()
    s.save_trace(tmp_path / "t.json")
    assert s.makespan_us > 0 and r.ok
