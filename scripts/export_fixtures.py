#!/usr/bin/env python3
"""Exports small real PyTorch models with torch's own ONNX exporters, each reproducing one class
of model a PyTorch user exports (issue 39), and strips them for the repository.

    python3 -m venv /tmp/torchenv
    /tmp/torchenv/bin/pip install torch torchvision onnx onnxscript transformers
    /tmp/torchenv/bin/python scripts/export_fixtures.py OUT_DIR [NAME...]

With no NAME every model is exported. The README's stand-in is regenerated with

    /tmp/torchenv/bin/python scripts/export_fixtures.py /tmp/fx readme_resnet50
    cp /tmp/fx/readme_resnet50.onnx tests/fixtures/docs/resnet50.onnx

and the others are copied from OUT_DIR to where their tests read them (tests/fixtures/onnx/).
Made with torch 2.15.0, torchvision 0.29.2,
transformers 5.24.0, onnx 1.23.2, onnxscript 0.7.2 (CPU); another torch version may write
other node names or operators. Weights are random (seed 0) and never read by the importer.

The models (tiny widths and depths, the operators and exporter idioms of the full ones):

- swin_t_ts.onnx: torchvision's SwinTransformer, TorchScript exporter at opset 17. F.pad's
  amounts go through the exporter's pads idiom: a 1-D constant reshaped to 2-D, reversed by a
  Slice with step -1, transposed and flattened.
- fasterrcnn_transform_ts.onnx: torchvision's GeneralizedRCNNTransform (the detection
  models' resize) before a convolution, TorchScript at opset 17. Resize's sizes come from the
  image shape through ReduceMin, ReduceMax, Reciprocal and Floor.
- maxvit_t_ts.onnx, maxvit_t_dynamo.onnx: torchvision's MaxVit (one block), both exporters
  (dynamo at opset 18). Its attention multiplies with Einsum.
- mixtral_moe_ts.onnx: transformers' Mixtral sparse mixture-of-experts block, TorchScript at
  opset 17. Routing selects tokens per expert with NonZero (a data-dependent row count).
- vit_b_16_ts.onnx, vit_b_16_dynamo.onnx: torchvision's VisionTransformer with vit_b_16's
  patch size and depth (12 layers) at a tiny width, both exporters.
- readme_resnet50.onnx: the README's export snippet, read from README.md and run as written
  (torchvision's resnet50, the dynamo exporter, a dynamic batch); copied to
  tests/fixtures/docs/resnet50.onnx, the file the README's commands on `resnet50.onnx` run on
  in the tests (tests/it/docs.rs).

Stripping: every tensor over 4,096 elements (initializers and Constant values, nested graphs
included) loses its data and is marked as external data in a file that does not exist
(STRIPPED_LOCATION), and nodes lose their metadata_props (the dynamo exporter's source
locations, which nothing reads). Shapes, types and every small tensor (the shape arithmetic the importer
evaluates) stay. onnx.load(path, load_external_data=False) still reads the stripped file.
"""

import argparse
import os
import sys
import tempfile

import onnx
import torch

MAX_KEPT = 4096
STRIPPED_LOCATION = "stripped-weights-not-shipped.data"


def strip_tensor(t):
    """Drops the data of one tensor over MAX_KEPT elements, marking it external."""
    n = 1
    for d in t.dims:
        n *= d
    if n <= MAX_KEPT:
        return False
    for field in ("raw_data", "float_data", "int32_data", "string_data", "int64_data", "double_data",
                  "uint64_data"):
        t.ClearField(field)
    del t.external_data[:]
    t.data_location = onnx.TensorProto.EXTERNAL
    for k, v in (("location", STRIPPED_LOCATION), ("offset", "0"), ("length", "0")):
        e = t.external_data.add()
        e.key, e.value = k, v
    return True


def strip_graph(g):
    """Strips a graph's initializers and Constant values, recursing into nested graphs, and
    drops the nodes' metadata (the dynamo exporter's stack traces: 90 % of its file)."""
    count = sum(strip_tensor(t) for t in g.initializer)
    for node in g.node:
        del node.metadata_props[:]
        for a in node.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                count += strip_tensor(a.t)
            elif a.type == onnx.AttributeProto.GRAPH:
                count += strip_graph(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                count += sum(strip_graph(sg) for sg in a.graphs)
    return count


def export(model, args, path, dynamo, opset, **kw):
    """Exports with one of torch's exporters into a scratch directory (the dynamo exporter
    writes a .data file beside the model), then loads it whole, strips it and saves it."""
    model.eval()
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "model.onnx")
        # Gradients stay on: under no_grad, nn.MultiheadAttention takes its fused fast path,
        # which the TorchScript exporter cannot export (aten::_native_multi_head_attention).
        torch.onnx.export(model, args, raw, dynamo=dynamo, opset_version=opset, **kw)
        m = onnx.load(raw, load_external_data=True)
    stripped = strip_graph(m.graph)
    onnx.save(m, path)
    print(f"{os.path.basename(path)}: {len(m.graph.node)} nodes, {stripped} tensors stripped, "
          f"{os.path.getsize(path)} bytes")


def swin_t():
    from torchvision.models.swin_transformer import SwinTransformer
    return SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[1, 1], num_heads=[1, 2],
                           window_size=[7, 7], stochastic_depth_prob=0.0, num_classes=10)


class RcnnTransform(torch.nn.Module):
    """The detection models' input transform (normalise, resize so that the short side is
    min_size unless the long side passes max_size), then one convolution on its output."""

    def __init__(self):
        super().__init__()
        from torchvision.models.detection.transform import GeneralizedRCNNTransform
        self.transform = GeneralizedRCNNTransform(min_size=64, max_size=96,
                                                  image_mean=[0.485, 0.456, 0.406],
                                                  image_std=[0.229, 0.224, 0.225])
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        images, _ = self.transform([x[0]])
        return self.conv(images.tensors)


def maxvit_t():
    from torchvision.models.maxvit import MaxVit
    return MaxVit(input_size=(32, 32), stem_channels=8, partition_size=4, block_channels=[16],
                  block_layers=[1], head_dim=8, stochastic_depth_prob=0.0, num_classes=10)


def mixtral_moe():
    from transformers import MixtralConfig
    from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock
    cfg = MixtralConfig(hidden_size=16, intermediate_size=32, num_local_experts=4,
                        num_experts_per_tok=2)
    return MixtralSparseMoeBlock(cfg)


class MoeOut(torch.nn.Module):
    """The MoE block's hidden states (it also returns the router logits)."""

    def __init__(self):
        super().__init__()
        self.moe = mixtral_moe()
        # transformers leaves a module made outside from_pretrained uninitialised (torch.empty):
        # seeded values make the routing, and with it the traced graph, reproducible.
        with torch.no_grad():
            for p in self.moe.parameters():
                p.normal_(0.0, 0.5)

    def forward(self, x):
        out = self.moe(x)
        return out[0] if isinstance(out, tuple) else out


def vit_b_16():
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=32, patch_size=16, num_layers=12, num_heads=2,
                             hidden_dim=16, mlp_dim=32, num_classes=10)


def readme_resnet50(path):
    """Runs the README's export snippet ("Your own model", its ```python block) as written, in a
    scratch directory, and strips the resnet50.onnx it writes."""
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")
    text = open(readme, encoding="utf-8").read()
    snippet = text.split("## Your own model", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            exec(compile(snippet, "README.md (Your own model)", "exec"), {})
            m = onnx.load("resnet50.onnx", load_external_data=True)
        finally:
            os.chdir(cwd)
    stripped = strip_graph(m.graph)
    onnx.save(m, path)
    print(f"{os.path.basename(path)}: {len(m.graph.node)} nodes, {stripped} tensors stripped, "
          f"{os.path.getsize(path)} bytes")


MODELS = {
    "swin_t_ts": lambda p: export(swin_t(), (torch.randn(1, 3, 56, 56),), p, False, 17,
                                  input_names=["input"]),
    "fasterrcnn_transform_ts": lambda p: export(RcnnTransform(), (torch.rand(1, 3, 48, 80),), p,
                                                False, 17, input_names=["input"]),
    "maxvit_t_ts": lambda p: export(maxvit_t(), (torch.randn(1, 3, 32, 32),), p, False, 17,
                                    input_names=["input"]),
    "maxvit_t_dynamo": lambda p: export(maxvit_t(), (torch.randn(1, 3, 32, 32),), p, True, 18,
                                        input_names=["input"]),
    "mixtral_moe_ts": lambda p: export(MoeOut(), (torch.randn(1, 5, 16),), p, False, 17,
                                       input_names=["hidden_states"]),
    "vit_b_16_ts": lambda p: export(vit_b_16(), (torch.randn(1, 3, 32, 32),), p, False, 17,
                                    input_names=["input"]),
    "vit_b_16_dynamo": lambda p: export(vit_b_16(), (torch.randn(1, 3, 32, 32),), p, True, 18,
                                        input_names=["input"]),
    "readme_resnet50": readme_resnet50,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="directory the stripped .onnx files go to")
    ap.add_argument("names", nargs="*", help=f"models to export (default all: {', '.join(MODELS)})")
    a = ap.parse_args()
    unknown = [n for n in a.names if n not in MODELS]
    if unknown:
        sys.exit(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    os.makedirs(a.out, exist_ok=True)
    for name in a.names or MODELS:
        torch.manual_seed(0)
        MODELS[name](os.path.join(a.out, name + ".onnx"))


if __name__ == "__main__":
    main()
