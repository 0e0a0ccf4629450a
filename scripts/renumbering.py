#!/usr/bin/env python3
"""The makespan of each corpus graph's allocation under its streams renumbered.

usage: renumbering.py [--bin BIN] [--checker CHECK_ALLOC] [--option KEY=VALUE ...] [CORPUS_DIR]

Allocates every graph of CORPUS_DIR (default corpus/) with BIN (default
target/release/stream-alloc, `--option policy=auto` unless options are given), then renumbers
the physical streams of the allocation 8 ways (identity, reversed, six seeded shuffles) and
has the independent checker (default ../shared/tools/check_alloc.py) simulate each under both
arbitration rules. Prints, per graph, the physical streams and sync pairs, makespan / ideal of
the allocation as written and the
spread (max / min - 1) over the 8 numberings, under `stream-id` and under `ready`. The ideal is
`stream-alloc simulate --json`'s `ideal_us`. A renumbering changes stream ids only: nodes,
order and syncs stay as they are.
"""
import json
import os
import random
import subprocess
import sys
import tempfile


def permuted(doc, perm):
    d = json.loads(json.dumps(doc))
    for n in d["nodes"]:
        if n.get("stream", -1) >= 0:
            n["stream"] = perm[n["stream"]]
        if "attached_streams" in n:
            n["attached_streams"] = [perm[s] for s in n["attached_streams"]]
    for key in ("activations", "attached"):
        for a in d.get(key, []):
            a["streams"] = [perm[s] for s in a["streams"]]
    st = d.get("streams", {})
    if "huge" in st:
        st["huge"] = sorted(perm[s] for s in st["huge"])
    if "split_to_logic" in st:
        st["split_to_logic"] = {str(perm[int(k)]): v for k, v in st["split_to_logic"].items()}
    return d


def main():
    argv = sys.argv[1:]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    bin_ = os.path.join(root, "target", "release", "stream-alloc")
    checker = os.path.join(root, "..", "shared", "tools", "check_alloc.py")
    options = []
    corpus = os.path.join(root, "corpus")
    while argv:
        a = argv.pop(0)
        if a == "--bin":
            bin_ = argv.pop(0)
        elif a == "--checker":
            checker = argv.pop(0)
        elif a == "--option":
            options += ["--option", argv.pop(0)]
        else:
            corpus = a
    if not os.path.isfile(checker):
        sys.exit(f"renumbering.py: no checker at {checker} (pass --checker)")
    options = options or ["--option", "policy=auto"]
    print("| graph | streams | syncs | stream-id: ratio | spread | ready: ratio | spread |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    tmp = tempfile.mkdtemp(prefix="renumber_")
    spreads = {"stream-id": [], "ready": []}
    for name in sorted(os.listdir(corpus)):
        if not name.endswith(".json"):
            continue
        graph = os.path.join(corpus, name)
        out = os.path.join(tmp, "a.json")
        subprocess.run([bin_, "allocate", graph, "-q", "-o", out] + options, check=True)
        sim = json.loads(subprocess.run([bin_, "simulate", graph, "--json"] + options, check=True,
                                        capture_output=True, text=True).stdout)
        ideal = sim["ideal_us"]
        doc = json.load(open(out))
        doc.pop("memory", None)
        k = doc["streams"]["physical"]
        perms = [list(range(k)), list(reversed(range(k)))]
        rng = random.Random(7)
        while len(perms) < 8:
            p = list(range(k))
            rng.shuffle(p)
            perms.append(p)
        row = [name[:-5], str(k), str(len(doc.get("syncs", [])))]
        for rule in ("stream-id", "ready"):
            ms = []
            for i, p in enumerate(perms):
                f = os.path.join(tmp, f"p{i}.json")
                json.dump(permuted(doc, p), open(f, "w"))
                r = subprocess.run([sys.executable, checker, graph, f, "--json", "--arbitration", rule],
                                   capture_output=True, text=True)
                rep = json.loads(r.stdout)
                if not rep["ok"]:
                    sys.exit(f"{name} numbering {i}: the checker rejects it: {rep['errors'][:3]}")
                ms.append(rep["makespan_us"])
            spread = max(ms) / min(ms) - 1 if min(ms) > 0 else 0.0
            spreads[rule].append(spread)
            row += [f"{ms[0] / ideal:.3f}", f"{100 * spread:.2f} %"]
        print("| " + " | ".join(row) + " |", flush=True)
    for rule, v in spreads.items():
        print(f"\nlargest spread under {rule}: {100 * max(v):.2f} %", end="")
    print()


if __name__ == "__main__":
    main()
