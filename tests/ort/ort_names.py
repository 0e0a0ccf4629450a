#!/usr/bin/env python3
"""Writes tests/fixtures/onnx/ort/NAME.json: the partition ONNX Runtime's own partitioner makes
for each model ORT runs (ORT writes it to `session.node_partition_config_file` when that file is
absent), with optimisations off. tests/it/ort_export.rs holds `stream-alloc export --to ort` to
these names without needing ORT.

    .venv/bin/python tests/ort/ort_names.py      # needs onnxruntime; records its version
"""

import json
import os
import tempfile
from pathlib import Path

import onnxruntime as ort

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "onnx"
MODELS = ["ops.onnx", "if.onnx", "old_opset.onnx", "transformer.onnx"] + [
    f"zoo/{p.name}" for p in sorted((FIXTURES / "zoo").glob("*.onnx"))
]


def main():
    out = FIXTURES / "ort"
    out.mkdir(exist_ok=True)
    for name in MODELS:
        with tempfile.TemporaryDirectory() as d:
            dump = Path(d) / "p.json"
            so = ort.SessionOptions()
            so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            so.add_session_config_entry("session.node_partition_config_file", str(dump))
            ort.InferenceSession(str(FIXTURES / name), so, providers=["CPUExecutionProvider"])
            doc = json.loads(dump.read_text())
        doc["onnxruntime"] = ort.__version__
        target = out / (Path(name).stem + ".json")
        target.write_text(json.dumps(doc, sort_keys=True) + "\n")
        print(target.relative_to(ROOT), sum(len(s) for s in doc["streams"]), "nodes")


if __name__ == "__main__":
    main()
