#!/usr/bin/env python3
"""A lower bound on the makespan of any stream assignment once each wait costs its latency.

The ideal schedule (docs/simulate.md) gives syncs for free. No plan can: where a node X forks
into parallel chains that meet again at one node J (a fire module, an Inception module, the
query and key projections of an attention layer), either the chains share a stream and run one
after another, or some chain lies on another stream than X or than J and crosses streams on its
way, paying the wait latency each time. For every such fork/join this script finds the least
time from X's end to J's start over every placement of the chains on streams (each chain whole
on one stream; splitting one only adds crossings), and adds "J starts no earlier than X ends
plus that time" to the graph's dependencies (the graph's start counts as a fork of the nodes
that depend on nothing). The longest path under those constraints bounds every plan's makespan
from below: each constraint holds for any plan, whatever its streams, order or syncs (units
only add to it; the simulator's own lower bound, work over units, is the other half).

Usage: scripts/sync_bound.py GRAPH.json... [--latency US] [-v]
Prints per graph: the longest path (the ideal's critical path), the bound, and the fork/joins
that raise it.
"""

import argparse
import itertools
import json
import sys


def cost(n):
    c = n.get("cost_us", 0.0) or 0.0
    return c if n.get("tasks", 1) > 0 else 0.0


def least_gap(lengths, lat):
    """Least time from the fork's end to the join's start over placements of the chains.

    Streams are labels: 0 is the fork's stream, the join is on 0 or 1, and each chain runs
    whole on one label. Chains on one label run one after another; a label other than the
    fork's pays the latency before its first chain, one other than the join's after its last.
    """
    k = len(lengths)
    best = float("inf")
    for join in (0, 1):
        for labels in itertools.product(range(k + 2), repeat=k):
            total = {}
            for c, s in zip(lengths, labels):
                total[s] = total.get(s, 0.0) + c
            gap = 0.0
            for s, t in total.items():
                gap = max(gap, (lat if s != 0 else 0.0) + t + (lat if s != join else 0.0))
            if not total:
                gap = 0.0 if join == 0 else lat
            best = min(best, gap)
    return best


START = "\0start"


def bound(graph, lat):
    nodes = {n["name"]: n for n in graph["nodes"]}
    preds = {name: [] for name in nodes}
    succs = {name: [] for name in nodes}
    for e in graph["edges"]:
        preds[e["dst"]].append(e["src"])
        succs[e["src"]].append(e["dst"])
    # Inputs and weights (no task, no producer) run on no stream: they take no part.
    def runs(name):
        return preds[name] or nodes[name].get("tasks", 1) > 0

    def real_preds(name):
        return [p for p in preds[name] if runs(p)]

    # The start: a fork into every node that runs and depends on nothing that runs.
    succs[START] = [n for n in nodes if runs(n) and not real_preds(n)]
    chain_pred = {n: real_preds(n) or [START] for n in nodes}

    # Chains leaving each fork: follow single-producer, single-consumer nodes to the first
    # node that is not one; a fork/join is two or more chains from X ending at the same J.
    joins = {}
    for x in [START] + list(nodes):
        if x != START and not runs(x) or len(succs[x]) < 2:
            continue
        ends = {}
        for s in succs[x]:
            length, at = 0.0, s
            while len(chain_pred[at]) == 1 and len(succs[at]) == 1:
                length += cost(nodes[at])
                at = succs[at][0]
            if at == s and len(chain_pred[s]) != 1:
                ends.setdefault(s, []).append(0.0)  # an edge straight into the join
                continue
            if len(chain_pred[at]) == 1:
                continue  # ends in a sink or a fork of its own: no join
            ends.setdefault(at, []).append(length)
        for j, lengths in ends.items():
            if len(lengths) >= 2 and len(lengths) <= 6:
                joins[(x, j)] = (lengths, least_gap(lengths, lat))
    order = topo(nodes, preds, succs)
    finish = {START: 0.0}
    raised = []
    for n in order:
        start = max((finish[p] for p in real_preds(n)), default=0.0)
        for (x, j), (lengths, gap) in joins.items():
            if j == n and x in finish:
                t = finish[x] + gap
                if t > start + 1e-9:
                    start = t
        finish[n] = start + cost(nodes[n])
    plain = {}
    for n in order:
        plain[n] = max((plain[p] for p in real_preds(n)), default=0.0) + cost(nodes[n])
    for (x, j), (lengths, gap) in sorted(joins.items()):
        extra = gap - max(lengths)
        if extra > 1e-9:
            raised.append((x, j, extra))
    return max(plain.values(), default=0.0), max(finish.values(), default=0.0), raised


def topo(nodes, preds, succs):
    indeg = {n: len(preds[n]) for n in nodes}
    ready = [n for n in nodes if indeg[n] == 0]
    out = []
    while ready:
        n = ready.pop()
        out.append(n)
        for s in succs[n]:
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("graphs", nargs="+")
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("-v", "--verbose", action="store_true", help="list the fork/joins that raise the bound")
    a = ap.parse_args()
    print("| graph | critical path us | bound with wait latency us | fork/joins that cost latency |")
    print("|---|---:|---:|---:|")
    for path in a.graphs:
        with open(path) as f:
            g = json.load(f)
        cp, b, raised = bound(g, a.latency)
        print(f"| {g.get('name', path)} | {cp:.3f} | {b:.3f} | {len(raised)} |")
        if a.verbose:
            for x, j, extra in raised:
                print(f"    {x} -> {j}: +{extra:.3f}", file=sys.stderr)


if __name__ == "__main__":
    main()
