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
                                  # times `import` and `allocate` of each size with both binaries

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


def run(cmd):
    """Wall seconds, max RSS (MB, from /usr/bin/time -v when present) and the tool's own time line."""
    timed = ["/usr/bin/time", "-v"] + cmd if os.path.exists("/usr/bin/time") else cmd
    t = time.perf_counter()
    p = subprocess.run(timed, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {p.stderr[-2000:]}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    return wall, int(rss.group(1)) / 1024 if rss else float("nan")


def bench(sizes, binaries, runs=3):
    with tempfile.TemporaryDirectory() as d:
        print("| binary | N | import -o json (s) | import MB | allocate chain.onnx (s) | allocate MB |")
        print("|---|---:|---:|---:|---:|---:|")
        for n in sizes:
            path = os.path.join(d, f"chain{n}.onnx")
            with open(path, "wb") as f:
                f.write(chain(n))
            for b in binaries:
                out = os.path.join(d, "out.json")
                imp = min((run([b, "import", path, "-o", out]) for _ in range(runs)), key=lambda r: r[0])
                alloc = min((run([b, "allocate", path]) for _ in range(runs)), key=lambda r: r[0])
                print(f"| {b} | {n} | {imp[0]:.2f} | {imp[1]:.0f} | {alloc[0]:.2f} | {alloc[1]:.0f} |", flush=True)


def main():
    args = sys.argv[1:]
    if len(args) >= 3 and args[0] == "--bench":
        bench([int(s) for s in args[1].split(",")], args[2:])
    elif len(args) == 2:
        with open(args[1], "wb") as f:
            f.write(chain(int(args[0])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
