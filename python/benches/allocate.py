"""Times `allocate` through the binding: the steps `cargo bench --bench frontend` times in
Rust (load the graph; options applied, pipeline compiled, document written), median of runs.
Usage: .venv/bin/python python/benches/allocate.py [GRAPH] [POLICIES] [RUNS] (not from python/, where the
source tree would shadow the installed package)"""

import statistics
import sys
import time

import stream_alloc as sa

graph = sys.argv[1] if len(sys.argv) > 1 else "corpus/resnet50_train.json"
policies = (sys.argv[2] if len(sys.argv) > 2 else "ge,auto").split(",")
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 20
g = sa.Graph.load(graph)
print(f"{'policy':<8} {'load_ms':>12} {'allocate_ms':>12} {'bytes':>10}")
for policy in policies:
    load, alloc, size = [], [], 0
    for _ in range(runs):
        t = time.perf_counter()
        sa.Graph.load(graph)
        load.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        size = len(sa.allocate(g, policy=policy).to_json().encode())
        alloc.append((time.perf_counter() - t) * 1e3)
    print(f"{policy:<8} {statistics.median(load):>12.3f} {statistics.median(alloc):>12.3f} {size:>10}")
