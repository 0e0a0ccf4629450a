#!/usr/bin/env python3
"""Writes an ONNX model that is one long chain of element-wise operators (Relu, Sigmoid, Tanh,
Neg, repeated) on a [1,64,56,56] FLOAT tensor, ending in an Identity: the import-and-allocate
benchmark of docs/onnx-import.md ("Measured"). Standard library only: the protobuf is written
by hand (field numbers from onnx/onnx.proto3: ModelProto ir_version 1, opset_import 8, graph 7;
GraphProto node 1, name 2, input 11, output 12; NodeProto input 1, output 2, name 3, op_type 4;
ValueInfoProto name 1, type 2; TypeProto tensor_type 1; Tensor elem_type 1, shape 2;
TensorShapeProto dim 1; Dimension dim_value 1; OperatorSetIdProto domain 1, version 2).

    python3 scripts/onnx_chain.py 200000 chain.onnx
    python3 scripts/onnx_chain.py --bench 100000,200000 OLD_BIN NEW_BIN
                                  # times `import -o`, `allocate` and `allocate -o` of each size
                                  # with each binary: best of 3 by wall time, with its CPU time
                                  # (user + system, what a shared machine does not inflate) and
                                  # peak resident memory
    python3 scripts/onnx_chain.py --bench 100000,200000 --realtime OLD_BIN NEW_BIN
                                  # the same under `chrt -f 50` (root): a busy machine's other
                                  # processes then cannot stretch the wall time

The same N writes the same bytes.
"""

import os
import re
import subprocess
import sys
import tempfile
import time

OPS = ["Relu", "Sigmoid", "Tanh", "Neg"]
SHAPE = [1, 64, 56, 56]
FLOAT = 1


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, payload):
    """A length-delimited field (wire type 2)."""
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def int_field(num, v):
    """A varint field (wire type 0)."""
    return varint(num << 3) + varint(v)


def value_info(name):
    dims = b"".join(field(1, int_field(1, d)) for d in SHAPE)
    tensor = int_field(1, FLOAT) + field(2, dims)
    return field(1, name) + field(2, field(1, tensor))


def node(op, inp, out, name):
    return field(1, inp) + field(2, out) + field(3, name) + field(4, op)


def chain(n):
    """The ModelProto bytes of an `n`-operator chain."""
    parts = []
    prev = "x"
    for i in range(n):
        parts.append(field(1, node(OPS[i % 4], prev, f"t{i}", f"n{i}")))
        prev = f"t{i}"
    parts.append(field(1, node("Identity", prev, "y", "out")))
    graph = b"".join(parts) + field(2, "chain") + field(11, value_info("x")) + field(12, value_info("y"))
    return int_field(1, 8) + field(7, graph) + field(8, field(1, "") + int_field(2, 17))


PREFIX = []


def run(cmd):
    """Wall seconds, CPU seconds of the child and its peak resident MB (from /usr/bin/time -v
    when present)."""
    timed = PREFIX + (["/usr/bin/time", "-v"] + cmd if os.path.exists("/usr/bin/time") else cmd)
    before = os.times()
    t = time.perf_counter()
    p = subprocess.run(timed, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = os.times()
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {p.stderr[-2000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    return wall, cpu, int(rss.group(1)) / 1024 if rss else float("nan")


def bench(sizes, binaries, runs=3):
    with tempfile.TemporaryDirectory() as d:
        print("| binary | N | command | wall s | CPU s | peak MB |")
        print("|---|---:|---|---:|---:|---:|")
        for n in sizes:
            path = os.path.join(d, f"chain{n}.onnx")
            with open(path, "wb") as f:
                f.write(chain(n))
            out = os.path.join(d, "out.json")
            commands = [
                ("import -o", ["import", path, "-o", out]),
                ("allocate", ["allocate", path]),
                ("allocate -o", ["allocate", path, "-o", out]),
            ]
            for b in binaries:
                for what, args in commands:
                    wall, cpu, mb = min((run([b] + args) for _ in range(runs)), key=lambda r: r[0])
                    print(f"| {b} | {n} | {what} | {wall:.2f} | {cpu:.2f} | {mb:.0f} |", flush=True)


def main():
    args = sys.argv[1:]
    if len(args) >= 3 and args[0] == "--bench":
        if args[2] == "--realtime":
            PREFIX.extend(["chrt", "-f", "50"])
            args = args[:2] + args[3:]
        bench([int(s) for s in args[1].split(",")], args[2:])
    elif len(args) == 2:
        with open(args[1], "wb") as f:
            f.write(chain(int(args[0])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
