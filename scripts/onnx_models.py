#!/usr/bin/env python3
"""Makes the ONNX models under tests/fixtures/onnx/ that the importer's tests read: small ones
that exercise every operator with a shape rule, broadcasting, a symbolic batch, a nested If and
every bad file, and two full-size ones shaped as PyTorch's exporter writes ResNet-50 and
BERT-base (names, shape arithmetic), whose weights are external data that is not shipped.

    python3 scripts/onnx_models.py                 # rewrites tests/fixtures/onnx/*.onnx
    python3 scripts/onnx_models.py --crosscheck target/release/stream-alloc
                                                   # compares the importer's shapes with onnx's

Needs the `onnx` and `numpy` packages. The models are deterministic: the same onnx version
writes the same bytes. Tests never run this script; they read the checked-in files.
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "onnx")
F = TensorProto.FLOAT
I64 = TensorProto.INT64


def w(name, shape, dtype=np.float32):
    """A weight initializer (values are deterministic and irrelevant to the importer)."""
    n = int(np.prod(shape)) if shape else 1
    return numpy_helper.from_array((np.arange(n, dtype=np.float64) % 7 / 7).astype(dtype).reshape(shape), name)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def model(graph, opset, ir=8, domains=()):
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    m = helper.make_model(graph, opset_imports=imports, producer_name="stream-alloc-tests", producer_version="1")
    m.ir_version = ir
    return m


def sorted_copy(m):
    """The model with its nodes in topological order: some test models keep a node before its
    producer on purpose (the importer sorts), which onnx's checker refuses."""
    c = onnx.ModelProto()
    c.CopyFrom(m)
    known = {i.name for i in c.graph.input} | {t.name for t in c.graph.initializer}
    pending, done = list(c.graph.node), []
    while pending:
        for k, nd in enumerate(pending):
            if all(not i or i in known for i in nd.input):
                done.append(nd)
                known.update(nd.output)
                del pending[k]
                break
        else:
            raise ValueError("cycle")
    del c.graph.node[:]
    c.graph.node.extend(done)
    return c


def save(m, name, check=True, full=True):
    if check:
        onnx.checker.check_model(sorted_copy(m), full_check=full)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(m.SerializeToString())


def cnn():
    """A small residual CNN, symbolic batch: Conv (padded, strided, depthwise), BatchNormalization,
    Relu, MaxPool, Add, GlobalAveragePool, Flatten, Gemm, Softmax. Some nodes unnamed, two named alike."""
    n = []
    n.append(helper.make_node("Conv", ["x", "c1.w", "c1.b"], ["c1"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]))
    n.append(helper.make_node("BatchNormalization", ["c1", "bn.s", "bn.b", "bn.m", "bn.v"], ["bn"], name="bn"))
    n.append(helper.make_node("Relu", ["bn"], ["r1"]))  # unnamed
    n.append(helper.make_node("MaxPool", ["r1"], ["p1"], name="pool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    n.append(helper.make_node("Conv", ["p1", "dw.w"], ["dw"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=16))  # same name as the first
    n.append(helper.make_node("Relu", ["dw"], ["r2"], name=""))
    n.append(helper.make_node("Conv", ["r2", "pw.w"], ["pw"], name="pw", kernel_shape=[1, 1]))
    n.append(helper.make_node("Add", ["pw", "p1"], ["res"], name="residual"))
    n.append(helper.make_node("Add", ["res", "chan_bias"], ["res_b"], name="bias_bcast"))  # [N,16,8,8] + [16,1,1]
    n.append(helper.make_node("GlobalAveragePool", ["res_b"], ["gap"], name="gap"))
    n.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1))
    n.append(helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["fc"], name="fc", transB=1))
    n.append(helper.make_node("Softmax", ["fc"], ["prob"], name="softmax", axis=-1))
    inits = [w("c1.w", [16, 3, 3, 3]), w("c1.b", [16]), w("bn.s", [16]), w("bn.b", [16]), w("bn.m", [16]), w("bn.v", [16]),
             w("dw.w", [16, 1, 3, 3]), w("pw.w", [16, 16, 1, 1]), w("chan_bias", [16, 1, 1]), w("fc.w", [10, 16]), w("fc.b", [10])]
    g = helper.make_graph(n, "cnn", [helper.make_tensor_value_info("x", F, ["N", 3, 32, 32])],
                          [helper.make_tensor_value_info("prob", F, ["N", 10])], inits)
    return model(g, 13)


def transformer():
    """One encoder layer as PyTorch's exporter writes it: Gather embedding, LayerNormalization,
    MatMul/Add projections, a Reshape target built from Shape/Gather/Unsqueeze/Concat, Transpose,
    batched MatMul, Div, Where/Equal mask, Softmax, Erf-GELU, Split, Slice, ReduceMean, Cast,
    ConstantOfShape, Expand, Dropout, Squeeze/Unsqueeze. Symbolic batch and sequence."""
    H, NH, D, FF, V = 32, 4, 8, 64, 100
    n, inits = [], []
    def node(op, ins, outs, name, **kw):
        n.append(helper.make_node(op, ins, outs, name=name, **kw))
    inits += [w("emb", [V, H]), w("ln.g", [H]), w("ln.b", [H]), w("wq", [H, H]), w("bq", [H]), w("wk", [H, H]),
              w("wv", [H, H]), w("wo", [H, H]), w("w1", [H, FF]), w("w2", [FF, H]), w("pos", [1, 16, H])]
    inits += [ints("c0", [0]), ints("c1", [1]), ints("nh", [NH]), ints("hd", [D]), ints("minus1", [-1]), ints("hsz", [H]),
              ints("axes0", [0])]
    inits.append(numpy_helper.from_array(np.array(np.sqrt(D), dtype=np.float32), "scale"))
    inits.append(numpy_helper.from_array(np.array(-1e4, dtype=np.float32), "neg"))
    node("Gather", ["emb", "ids"], ["/emb/Gather_output_0"], "/emb/Gather", axis=0)
    node("Shape", ["ids"], ["/Shape_output_0"], "/Shape")
    node("Gather", ["/Shape_output_0", "c1"], ["/Gather_1_output_0"], "/Gather_1", axis=0)  # seq, shape [1]
    node("Slice", ["pos", "c0", "/Gather_1_output_0", "c1"], ["/pos/Slice_output_0"], "/pos/Slice")  # [1,S,H]
    node("Add", ["/emb/Gather_output_0", "/pos/Slice_output_0"], ["/Add_output_0"], "/Add")
    node("LayerNormalization", ["/Add_output_0", "ln.g", "ln.b"], ["/ln/LayerNormalization_output_0"], "/ln/LayerNormalization", axis=-1)
    x = "/ln/LayerNormalization_output_0"
    node("Gather", ["/Shape_output_0", "c0"], ["/Gather_output_0"], "/Gather", axis=0)  # batch, [1]
    node("Concat", ["/Gather_output_0", "/Gather_1_output_0", "nh", "hd"], ["/Concat_output_0"], "/Concat", axis=0)
    heads = {}
    for p, wt in (("q", "wq"), ("k", "wk"), ("v", "wv")):
        node("MatMul", [x, wt], [f"/{p}/MatMul_output_0"], f"/{p}/MatMul")
        src = f"/{p}/MatMul_output_0"
        if p == "q":
            node("Add", [src, "bq"], ["/q/Add_output_0"], "/q/Add")
            src = "/q/Add_output_0"
        node("Reshape", [src, "/Concat_output_0"], [f"/{p}/Reshape_output_0"], f"/{p}/Reshape")
        perm = [0, 2, 3, 1] if p == "k" else [0, 2, 1, 3]
        node("Transpose", [f"/{p}/Reshape_output_0"], [f"/{p}/Transpose_output_0"], f"/{p}/Transpose", perm=perm)
        heads[p] = f"/{p}/Transpose_output_0"
    node("MatMul", [heads["q"], heads["k"]], ["/attn/MatMul_output_0"], "/attn/MatMul")  # [B,NH,S,S]
    node("Div", ["/attn/MatMul_output_0", "scale"], ["/attn/Div_output_0"], "/attn/Div")
    # mask: Equal(mask, 0) -> Where(-1e4) broadcast over heads
    node("Cast", ["mask"], ["/mask/Cast_output_0"], "/mask/Cast", to=I64)
    node("Unsqueeze", ["/mask/Cast_output_0", "c1"], ["/mask/Unsqueeze_output_0"], "/mask/Unsqueeze")
    node("Unsqueeze", ["/mask/Unsqueeze_output_0", "c1"], ["/mask/Unsqueeze_1_output_0"], "/mask/Unsqueeze_1")  # [B,1,1,S]
    node("ConstantOfShape", ["c1"], ["/mask/ConstantOfShape_output_0"], "/mask/ConstantOfShape",
         value=helper.make_tensor("v", I64, [1], [0]))
    node("Equal", ["/mask/Unsqueeze_1_output_0", "/mask/ConstantOfShape_output_0"], ["/mask/Equal_output_0"], "/mask/Equal")
    node("Where", ["/mask/Equal_output_0", "neg", "/attn/Div_output_0"], ["/attn/Where_output_0"], "/attn/Where")
    node("Softmax", ["/attn/Where_output_0"], ["/attn/Softmax_output_0"], "/attn/Softmax", axis=-1)
    node("Dropout", ["/attn/Softmax_output_0"], ["/attn/Dropout_output_0"], "/attn/Dropout")
    node("MatMul", ["/attn/Dropout_output_0", heads["v"]], ["/attn/MatMul_1_output_0"], "/attn/MatMul_1")
    node("Transpose", ["/attn/MatMul_1_output_0"], ["/attn/Transpose_output_0"], "/attn/Transpose", perm=[0, 2, 1, 3])
    node("Concat", ["/Gather_output_0", "/Gather_1_output_0", "hsz"], ["/Concat_1_output_0"], "/Concat_1", axis=0)
    node("Reshape", ["/attn/Transpose_output_0", "/Concat_1_output_0"], ["/attn/Reshape_output_0"], "/attn/Reshape")
    node("MatMul", ["/attn/Reshape_output_0", "wo"], ["/o/MatMul_output_0"], "/o/MatMul")
    node("Add", ["/o/MatMul_output_0", x], ["/o/Add_output_0"], "/o/Add")
    # FFN with the exporter's Erf GELU
    node("MatMul", ["/o/Add_output_0", "w1"], ["/ffn/MatMul_output_0"], "/ffn/MatMul")
    inits.append(numpy_helper.from_array(np.array(1.4142135, dtype=np.float32), "sqrt2"))
    inits.append(numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"))
    inits.append(numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half"))
    node("Div", ["/ffn/MatMul_output_0", "sqrt2"], ["/ffn/Div_output_0"], "/ffn/Div")
    node("Erf", ["/ffn/Div_output_0"], ["/ffn/Erf_output_0"], "/ffn/Erf")
    node("Add", ["/ffn/Erf_output_0", "one"], ["/ffn/Add_output_0"], "/ffn/Add")
    node("Mul", ["/ffn/MatMul_output_0", "/ffn/Add_output_0"], ["/ffn/Mul_output_0"], "/ffn/Mul")
    node("Mul", ["/ffn/Mul_output_0", "half"], ["/ffn/Mul_1_output_0"], "/ffn/Mul_1")
    node("MatMul", ["/ffn/Mul_1_output_0", "w2"], ["/ffn/MatMul_1_output_0"], "/ffn/MatMul_1")
    node("Add", ["/ffn/MatMul_1_output_0", "/o/Add_output_0"], ["hidden"], "/ffn/Add_1")
    # pooler: ReduceMean over the sequence, a Split of the hidden size and a Slice of the first token
    node("ReduceMean", ["hidden"], ["/pool/ReduceMean_output_0"], "/pool/ReduceMean", axes=[1], keepdims=0)
    node("Split", ["/pool/ReduceMean_output_0", "split_sizes"], ["/pool/Split_output_0", "/pool/Split_output_1"], "/pool/Split", axis=1)
    inits.append(ints("split_sizes", [8, 24]))
    node("Slice", ["hidden", "c0", "c1", "c1"], ["/cls/Slice_output_0"], "/cls/Slice")  # [B,1,H]
    node("Squeeze", ["/cls/Slice_output_0", "c1"], ["cls"], "/cls/Squeeze")
    node("Expand", ["/pool/Split_output_0", "/pool/expand_shape"], ["/pool/Expand_output_0"], "/pool/Expand")
    node("Concat", ["/Gather_output_0", "hd"], ["/pool/expand_shape"], "/pool/ExpandShape", axis=0)
    node("Identity", ["/pool/Expand_output_0"], ["pooled"], "/pool/Identity")
    g = helper.make_graph(
        n, "main_graph",
        [helper.make_tensor_value_info("ids", I64, ["batch", "seq"]), helper.make_tensor_value_info("mask", TensorProto.BOOL, ["batch", "seq"])],
        [helper.make_tensor_value_info("hidden", F, ["batch", "seq", H]), helper.make_tensor_value_info("cls", F, ["batch", H]),
         helper.make_tensor_value_info("pooled", F, ["batch", 8]), helper.make_tensor_value_info("/pool/Split_output_1", F, ["batch", 24])],
        inits)
    return model(g, 17)


def ops():
    """Every other operator with a shape rule, on a fixed [1,4,8,8] input (opset 18)."""
    n, inits = [], []
    def node(op, ins, outs, **kw):
        n.append(helper.make_node(op, ins, outs, name=outs[0] + "_op", **kw))
    inits += [w("ct.w", [4, 2, 3, 3]), w("p.slope", [4, 1, 1]), ints("pads", [0, 0, 1, 1, 0, 0, 1, 1]), ints("reps", [1, 1, 2, 1]),
              ints("ax1", [1]), ints("ax23", [2, 3]), ints("k3", [3]), w("in.s", [4]), w("in.b", [4])]
    inits.append(numpy_helper.from_array(np.array([1, 1, 2, 2], dtype=np.float32), "scales"))
    inits.append(numpy_helper.from_array(np.array([0.0, 6.0], dtype=np.float32)[0:1].reshape([]), "lo"))
    inits.append(numpy_helper.from_array(np.array(6.0, dtype=np.float32), "hi"))
    node("ConvTranspose", ["x", "ct.w"], ["ct"], strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1])  # [1,2,16,16]
    node("AveragePool", ["x"], ["ap"], kernel_shape=[2, 2], strides=[2, 2])  # [1,4,4,4]
    node("LRN", ["x"], ["lrn"], size=3)
    node("Resize", ["ap", "", "scales"], ["rs"], mode="nearest")  # [1,4,8,8]
    node("Pad", ["x", "pads"], ["pad"])  # [1,4,10,10]
    node("Sum", ["x", "rs", "lrn"], ["sum"])
    node("Mean", ["x", "rs"], ["mean"])
    node("Max", ["sum", "mean"], ["max"])
    node("Min", ["sum", "mean"], ["min"])
    node("Tile", ["min", "reps"], ["tile"])  # [1,4,16,8]
    node("Clip", ["max", "lo", "hi"], ["clip"])
    node("Sigmoid", ["clip"], ["sig"])
    node("Tanh", ["sig"], ["tanh"])
    node("Exp", ["tanh"], ["exp"])
    node("Log", ["exp"], ["log"])
    node("Sqrt", ["exp"], ["sqrt"])
    node("Pow", ["sqrt", "hi"], ["pow"])
    node("Sub", ["pow", "log"], ["sub"])
    node("Neg", ["sub"], ["neg"])
    node("Abs", ["neg"], ["abs"])
    node("PRelu", ["abs", "p.slope"], ["prelu"])
    node("LeakyRelu", ["prelu"], ["lrelu"], alpha=0.1)
    node("HardSigmoid", ["lrelu"], ["hsig"])
    node("HardSwish", ["hsig"], ["hswish"])
    node("InstanceNormalization", ["hswish", "in.s", "in.b"], ["inorm"])
    node("ReduceSum", ["inorm", "ax1"], ["rsum"], keepdims=1)  # [1,1,8,8]
    node("ReduceMax", ["inorm", "ax23"], ["rmax"], keepdims=0)  # [1,4]
    node("ArgMax", ["inorm"], ["amax"], axis=1, keepdims=0)  # [1,8,8]
    node("TopK", ["rmax", "k3"], ["topv", "topi"], axis=1)  # [1,3]
    node("NonZero", ["amax"], ["nz"])  # [3,64] (upper bound)
    node("DepthToSpace", ["inorm"], ["d2s"], blocksize=2)  # [1,1,16,16]
    node("SpaceToDepth", ["d2s"], ["s2d"], blocksize=2)  # [1,4,8,8]
    node("Flatten", ["s2d"], ["flat"], axis=2)  # [4,64]
    node("Transpose", ["flat"], ["tr"])  # [64,4]
    node("MatMul", ["tr", "flat"], ["mm"])  # [64,64]
    node("Range", ["r0", "r8", "r1"], ["rng"])
    inits += [ints("r0", 0), ints("r8", 8), ints("r1", 1)]
    for t in inits[-3:]:
        t.dims[:] = []
    node("Size", ["mm"], ["size"])
    node("Mul", ["rng", "size"], ["rng_scaled"])
    node("Cast", ["rng_scaled"], ["rng_f"], to=F)
    node("Not", ["nzmask"], ["notmask"])
    node("Greater", ["rsum", "hi"], ["nzmask"])
    node("Where", ["notmask", "rsum", "hi"], ["where"])
    g = helper.make_graph(
        n, "ops", [helper.make_tensor_value_info("x", F, [1, 4, 8, 8])],
        [helper.make_tensor_value_info(o, F, s) for o, s in [("ct", [1, 2, 16, 16]), ("pad", [1, 4, 10, 10]), ("tile", [1, 4, 16, 8]),
                                                               ("rsum", [1, 1, 8, 8]), ("topv", [1, 3]), ("mm", [64, 64]),
                                                               ("where", [1, 1, 8, 8]), ("rng_f", [8])]]
        + [helper.make_tensor_value_info("topi", I64, [1, 3]), helper.make_tensor_value_info("nz", I64, ["rank", "count"])],
        inits)
    return model(g, 18)


def if_model():
    """A nested If: the outer branch reads outer tensors and holds an If of its own."""
    then_inner = helper.make_graph([helper.make_node("Relu", ["a"], ["ti"], name="ti")], "then_inner", [],
                                   [helper.make_tensor_value_info("ti", F, [2, 3])])
    else_inner = helper.make_graph([helper.make_node("Neg", ["b"], ["ei"], name="ei")], "else_inner", [],
                                   [helper.make_tensor_value_info("ei", F, [2, 3])])
    then_g = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["t1"], name="t1"),
         helper.make_node("If", ["c2"], ["t2"], name="inner", then_branch=then_inner, else_branch=else_inner),
         helper.make_node("Mul", ["t1", "t2"], ["t_out"], name="t_out")],
        "then", [], [helper.make_tensor_value_info("t_out", F, [2, 3])])
    else_g = helper.make_graph([helper.make_node("Sub", ["a", "b"], ["e_out"], name="e_out")], "else", [],
                               [helper.make_tensor_value_info("e_out", F, [2, 3])])
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="a"),
             helper.make_node("Sigmoid", ["x"], ["b"], name="b"),
             helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_g, else_branch=else_g),
             helper.make_node("Tanh", ["y"], ["z"], name="z")]
    g = helper.make_graph(nodes, "if_graph",
                          [helper.make_tensor_value_info("x", F, [2, 3]), helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
                           helper.make_tensor_value_info("c2", TensorProto.BOOL, [])],
                          [helper.make_tensor_value_info("z", F, [2, 3])])
    return model(g, 16)


def old_opset():
    """Opset 9 attribute forms: Slice/Squeeze/Unsqueeze/Split/ReduceMean axes as attributes,
    Upsample with a scales input, Pad with pads attribute, Dropout with a ratio attribute."""
    n = [helper.make_node("Slice", ["x"], ["s"], name="s", starts=[0, 1], ends=[1, 3], axes=[0, 1]),  # [1,2,4]
         helper.make_node("Unsqueeze", ["s"], ["u"], name="u", axes=[0]),  # [1,1,2,4]
         helper.make_node("Upsample", ["u", "sc"], ["up"], name="up"),  # [1,1,4,8]
         helper.make_node("Pad", ["up"], ["p"], name="p", pads=[0, 0, 1, 1, 0, 0, 1, 1]),  # [1,1,6,10]
         helper.make_node("Squeeze", ["p"], ["q"], name="q", axes=[0, 1]),  # [6,10]
         helper.make_node("Split", ["q"], ["q1", "q2"], name="sp", axis=1, split=[4, 6]),
         helper.make_node("ReduceMean", ["q2"], ["m"], name="m", axes=[1], keepdims=1),  # [6,1]
         helper.make_node("Dropout", ["q1"], ["d", "dmask"], name="d", ratio=0.1)]
    g = helper.make_graph(n, "old", [helper.make_tensor_value_info("x", F, [2, 3, 4])],
                          [helper.make_tensor_value_info("m", F, [6, 1]), helper.make_tensor_value_info("d", F, [6, 4])],
                          [numpy_helper.from_array(np.array([1, 1, 2, 2], dtype=np.float32), "sc")])
    return model(g, 9, ir=4)


def bad_models():
    x = helper.make_tensor_value_info("x", F, [1, 4])
    y = helper.make_tensor_value_info("y", F, [1, 4])
    # A cycle: a -> b -> a.
    g = helper.make_graph([helper.make_node("Add", ["x", "b"], ["a"], name="A"), helper.make_node("Relu", ["a"], ["b"], name="B"),
                           helper.make_node("Identity", ["b"], ["y"], name="C")], "cycle", [x], [y])
    save(model(g, 13), "bad_cycle.onnx", check=False)
    # A dangling tensor name.
    g = helper.make_graph([helper.make_node("Add", ["x", "missing"], ["y"], name="add")], "dangling", [x], [y])
    save(model(g, 13), "bad_dangling.onnx", check=False)
    # Opset 6 and 22.
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="r")], "old", [x], [y])
    save(model(g, 6, ir=3), "bad_opset6.onnx", check=False)
    save(model(g, 22, ir=10), "bad_opset22.onnx", check=False)
    # Shape conflicts: operands that do not broadcast; an output whose declared shape disagrees.
    g = helper.make_graph([helper.make_node("Add", ["x", "z"], ["y"], name="add_mismatch")], "conflict",
                          [x, helper.make_tensor_value_info("z", F, [1, 5])], [y])
    save(model(g, 13), "bad_broadcast.onnx", check=False)
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"], name="relu"), helper.make_node("Identity", ["r"], ["y"], name="id")],
                          "declared", [x], [y], value_info=[helper.make_tensor_value_info("r", F, [1, 5])])
    save(model(g, 13), "bad_declared_shape.onnx", check=False)
    # An operator with no shape rule, and a Loop.
    g = helper.make_graph([helper.make_node("FancyOp", ["x"], ["y"], name="fancy", domain="com.example")], "custom", [x], [y])
    save(model(g, 13, domains=["com.example"]), "unknown_op.onnx", check=False)
    body = helper.make_graph([helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Relu", ["v_in"], ["v_out"])], "body",
                             [helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
                              helper.make_tensor_value_info("v_in", F, [1, 4])],
                             [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), helper.make_tensor_value_info("v_out", F, [1, 4])])
    g = helper.make_graph([helper.make_node("Loop", ["trip", "", "x"], ["y"], name="the_loop", body=body)], "loop", [x], [y],
                          [ints("trip", 3)])
    g.initializer[0].dims[:] = []
    save(model(g, 13), "bad_loop.onnx", check=False)
    # Truncated and non-ONNX files.
    good = cnn().SerializeToString()
    with open(os.path.join(OUT, "bad_truncated.onnx"), "wb") as f:
        f.write(good[: len(good) // 2])
    with open(os.path.join(OUT, "bad_not_onnx.onnx"), "wb") as f:
        f.write(b"PK\x03\x04 this is a zip archive, not a model\n" * 4)


def exporter_arithmetic():
    """The failure classes of real exports, as the exporters write them (stand-ins for the real
    exports under tests/fixtures/onnx/real/ where those exist): constant arithmetic in front of a
    shape (swin_t's Pad, fasterrcnn's Resize sizes), Einsum (maxvit), a data-dependent NonZero
    meeting the TorchScript exporter's Split of the traced count (Mixtral's MoE), declared shapes
    standing in where inference cannot decide, and operand types the schema refuses."""
    B = TensorProto.BOOL
    # swin_t (TorchScript): F.pad's list, reversed pairwise by Reshape [-1,2], Slice step -1 and
    # Transpose, flattened, Cast, then Pad.
    n = [helper.make_node("Constant", [], ["pad_list"], value=numpy_helper.from_array(np.array([0, 0, 0, 1, 0, 1, 0, 0], dtype=np.int64))),
         helper.make_node("Reshape", ["pad_list", "pairs"], ["pad_pairs"]),
         helper.make_node("Slice", ["pad_pairs", "m1", "big_neg", "c0", "m1"], ["pad_rev"]),
         helper.make_node("Transpose", ["pad_rev"], ["pad_t"], perm=[1, 0]),
         helper.make_node("Reshape", ["pad_t", "m1"], ["pad_flat"]),
         helper.make_node("Cast", ["pad_flat"], ["pads"], to=I64),
         helper.make_node("Pad", ["x", "pads", "zero"], ["padded"], mode="constant"),
         helper.make_node("Relu", ["padded"], ["y"])]
    g = helper.make_graph(n, "swin_pad", [helper.make_tensor_value_info("x", F, [1, 7, 7, 96])],
                          [helper.make_tensor_value_info("y", F, [1, 8, 8, 96])],
                          [ints("pairs", [-1, 2]), ints("m1", [-1]), ints("big_neg", [-(2 ** 63) + 1]), ints("c0", [0]),
                           numpy_helper.from_array(np.array(0, dtype=np.float32), "zero")])
    save(model(g, 17), "pad_through_transpose.onnx")
    # fasterrcnn (TorchScript): the transform's scale min(min_size / min(h, w), max_size / max(h, w)),
    # with a Reciprocal, times (h, w), floored, as Resize's sizes.
    n = [helper.make_node("Shape", ["img"], ["shape"]),
         helper.make_node("Gather", ["shape", "hw_idx"], ["hw_i"], axis=0),
         helper.make_node("Cast", ["hw_i"], ["hw"], to=F),
         helper.make_node("ReduceMin", ["hw"], ["lo"], keepdims=0),
         helper.make_node("ReduceMax", ["hw"], ["hi"], keepdims=0),
         helper.make_node("Reciprocal", ["lo"], ["inv_lo"]),
         helper.make_node("Mul", ["min_size", "inv_lo"], ["s1"]),
         helper.make_node("Div", ["max_size", "hi"], ["s2"]),
         helper.make_node("Min", ["s1", "s2"], ["scale"]),
         helper.make_node("Mul", ["hw", "scale"], ["scaled"]),
         helper.make_node("Floor", ["scaled"], ["floored"]),
         helper.make_node("Cast", ["floored"], ["hw_out"], to=I64),
         helper.make_node("Slice", ["shape", "c0", "c2"], ["nc"]),
         helper.make_node("Concat", ["nc", "hw_out"], ["sizes"], axis=0),
         helper.make_node("Resize", ["img", "", "", "sizes"], ["resized"], mode="linear"),
         helper.make_node("Relu", ["resized"], ["out"])]
    g = helper.make_graph(n, "rcnn_resize", [helper.make_tensor_value_info("img", F, [1, 3, 480, 640])],
                          [helper.make_tensor_value_info("out", F, [1, 3, 320, 426])],
                          [ints("hw_idx", [2, 3]), ints("c0", [0]), ints("c2", [2]),
                           numpy_helper.from_array(np.array(320, dtype=np.float32), "min_size"),
                           numpy_helper.from_array(np.array(640, dtype=np.float32), "max_size")])
    save(model(g, 17), "resize_through_reductions.onnx", full=False)
    # maxvit: Einsum in attention (explicit and implicit outputs, an ellipsis).
    n = [helper.make_node("Einsum", ["q", "k"], ["scores"], equation="bhid,bhjd->bhij"),
         helper.make_node("Softmax", ["scores"], ["attn"], axis=-1),
         helper.make_node("Einsum", ["attn", "v"], ["ctx"], equation="...ij,...jd->...id"),
         helper.make_node("Einsum", ["ctx", "proj"], ["out"], equation="bhid,de")]
    g = helper.make_graph(n, "einsum_attention", [helper.make_tensor_value_info(t, F, [2, 4, 49, 32]) for t in ("q", "k", "v")],
                          [helper.make_tensor_value_info("out", F, [2, 64, 4, 49])], [w("proj", [32, 64])])
    save(model(g, 17), "einsum.onnx", full=False)
    # Mixtral's MoE (TorchScript): the experts hit, NonZero over 5 experts (a bound of 5 rows), and the
    # loop over them traced as a Split into the 4 hit at trace time; each expert's weights gathered.
    n = [helper.make_node("ReduceSum", ["expert_mask", "axes1"], ["per_expert"], keepdims=0),
         helper.make_node("Greater", ["per_expert", "zero_i"], ["hit"]),
         helper.make_node("NonZero", ["hit"], ["nz"]),
         helper.make_node("Transpose", ["nz"], ["expert_hit"], perm=[1, 0]),
         helper.make_node("Split", ["expert_hit", "ones4"], ["e0", "e1", "e2", "e3"], axis=0)]
    outs = []
    for k in range(4):
        n += [helper.make_node("Squeeze", [f"e{k}", "axes01"], [f"i{k}"]),
              helper.make_node("Gather", ["experts", f"i{k}"], [f"w{k}"], axis=0),
              helper.make_node("MatMul", ["h", f"w{k}"], [f"o{k}"])]
        outs.append(f"o{k}")
    n.append(helper.make_node("Sum", outs, ["moe"]))
    g = helper.make_graph(n, "moe_nonzero_split",
                          [helper.make_tensor_value_info("expert_mask", I64, [5, 6]), helper.make_tensor_value_info("h", F, [6, 16])],
                          [helper.make_tensor_value_info("moe", F, [6, 16])],
                          [ints("axes1", [1]), ints("axes01", [0, 1]), ints("ones4", [1, 1, 1, 1]),
                           numpy_helper.from_array(np.array(0, dtype=np.int64), "zero_i"), w("experts", [5, 16, 16])])
    save(model(g, 13), "nonzero_split.onnx")
    # Declared shapes where inference cannot decide: a Reshape target and a TopK k read from the
    # input's data, an operator without a rule; the Unique's bound meeting a declared size.
    n = [helper.make_node("ReduceMax", ["counts"], ["kmax"], keepdims=1),
         helper.make_node("TopK", ["scores", "kmax"], ["top", "top_i"], axis=-1),
         helper.make_node("Concat", ["minus1", "kmax"], ["target"], axis=0),
         helper.make_node("Reshape", ["top", "target"], ["top2"]),
         helper.make_node("FancyOp", ["top2"], ["fancy"], domain="com.example"),
         helper.make_node("Unique", ["ids"], ["uniq"], sorted=1),
         helper.make_node("Relu", ["fancy"], ["y"])]
    g = helper.make_graph(n, "declared", [helper.make_tensor_value_info("scores", F, [2, 100]),
                                          helper.make_tensor_value_info("counts", I64, [1]),
                                          helper.make_tensor_value_info("ids", I64, [64])],
                          [helper.make_tensor_value_info("y", F, [2, 10]), helper.make_tensor_value_info("uniq", I64, [12])],
                          [ints("minus1", [-1])],
                          value_info=[helper.make_tensor_value_info("top", F, [2, 10]), helper.make_tensor_value_info("top2", F, [2, 10]),
                                      helper.make_tensor_value_info("fancy", F, [2, 10])])
    save(model(g, 13, domains=["com.example"]), "declared_shapes.onnx", check=False)
    # Refused: an operator without a rule nor a declared shape; Gather with STRING indices.
    x = helper.make_tensor_value_info("x", F, [1, 4])
    g = helper.make_graph([helper.make_node("FancyOp", ["x"], ["f"], name="fancy", domain="com.example"),
                           helper.make_node("Relu", ["f"], ["y"], name="r")], "custom", [x], [helper.make_tensor_value_info("y", F, ["n", "m"])])
    save(model(g, 13, domains=["com.example"]), "unknown_op_undeclared.onnx", check=False)
    idx = helper.make_tensor("idx", TensorProto.STRING, [2], [b"0", b"1"])
    g = helper.make_graph([helper.make_node("Gather", ["x", "idx"], ["y"], name="gather", axis=1)], "string_indices", [x],
                          [helper.make_tensor_value_info("y", F, [1, 2])], [idx])
    save(model(g, 13), "bad_string_indices.onnx", check=False)


def external_weights():
    """Weights in an external data file that is not shipped: imports all the same."""
    m = cnn()
    for t in m.graph.initializer:
        if t.name in ("c1.w", "fc.w"):
            t.ClearField("raw_data")
            t.ClearField("float_data")
            t.data_location = TensorProto.EXTERNAL
            t.external_data.add(key="location", value="weights.bin")
    save(m, "external_weights.onnx", check=False)


# -------------------------------------------------------------------------------------------
# Larger models for the measurements: weights as external data (absent), names as PyTorch's
# exporter writes them.

def ext(name, shape):
    t = TensorProto(name=name, data_type=F, dims=shape)
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value="weights.bin")
    return t


def path(scope):
    """PyTorch's exporter's node scope for a module path: layer1.0.conv2 -> /layer1/layer1.0/conv2."""
    comps = []
    for p in scope.split("."):
        comps.append(comps[-1] + "." + p if p.isdigit() and comps else p)
    return "/" + "/".join(comps)


def resnet50():
    n, inits = [], []
    def conv(x, cin, cout, k, s, scope):
        wname = f"{scope}.weight"
        inits.append(ext(wname, [cout, cin, k, k]))
        inits.append(ext(f"{scope}.bias", [cout]))
        out = f"{path(scope)}/Conv_output_0"
        n.append(helper.make_node("Conv", [x, wname, f"{scope}.bias"], [out], name=f"{path(scope)}/Conv",
                                  kernel_shape=[k, k], strides=[s, s], pads=[k // 2] * 4))
        return out
    def relu(x, scope, k=0):
        name = f"{path(scope)}{'_' + str(k) if k else ''}/Relu"
        n.append(helper.make_node("Relu", [x], [name + "_output_0"], name=name))
        return name + "_output_0"
    x = conv("input", 3, 64, 7, 2, "conv1")
    x = relu(x, "relu")
    n.append(helper.make_node("MaxPool", [x], ["/maxpool/MaxPool_output_0"], name="/maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x, cin = "/maxpool/MaxPool_output_0", 64
    for li, (blocks, width, stride) in enumerate([(3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)], 1):
        for b in range(blocks):
            s = stride if b == 0 else 1
            sc = f"layer{li}.{b}"
            y = relu(conv(x, cin, width, 1, 1, f"{sc}.conv1"), f"{sc}.relu")
            y = relu(conv(y, width, width, 3, s, f"{sc}.conv2"), f"{sc}.relu", 1)
            y = conv(y, width, width * 4, 1, 1, f"{sc}.conv3")
            idn = conv(x, cin, width * 4, 1, s, f"{sc}.downsample.0") if b == 0 else x
            out = f"/layer{li}/layer{li}.{b}/Add_output_0"
            n.append(helper.make_node("Add", [y, idn], [out], name=f"/layer{li}/layer{li}.{b}/Add"))
            x = relu(out, f"{sc}.relu", 2)
            cin = width * 4
    n.append(helper.make_node("GlobalAveragePool", [x], ["/avgpool/GlobalAveragePool_output_0"], name="/avgpool/GlobalAveragePool"))
    n.append(helper.make_node("Flatten", ["/avgpool/GlobalAveragePool_output_0"], ["/Flatten_output_0"], name="/Flatten", axis=1))
    inits += [ext("fc.weight", [1000, 2048]), ext("fc.bias", [1000])]
    n.append(helper.make_node("Gemm", ["/Flatten_output_0", "fc.weight", "fc.bias"], ["output"], name="/fc/Gemm", transB=1))
    g = helper.make_graph(n, "main_graph", [helper.make_tensor_value_info("input", F, ["batch_size", 3, 224, 224])],
                          [helper.make_tensor_value_info("output", F, ["batch_size", 1000])], inits)
    return model(g, 17)


def bert_base(layers=12, H=768, NH=12, FF=3072, V=30522, S=512):
    D = H // NH
    n, inits = [], []
    def node(op, ins, outs, name, **kw):
        n.append(helper.make_node(op, ins, outs, name=name, **kw))
    inits += [ext("embeddings.word_embeddings.weight", [V, H]), ext("embeddings.position_embeddings.weight", [S, H]),
              ext("embeddings.LayerNorm.weight", [H]), ext("embeddings.LayerNorm.bias", [H])]
    inits += [ints("c0", [0]), ints("c1", [1]), ints("nh", [NH]), ints("hd", [D]), ints("hsz", [H])]
    inits.append(numpy_helper.from_array(np.array(np.sqrt(D), dtype=np.float32), "scale"))
    inits.append(numpy_helper.from_array(np.array(-3.4e38, dtype=np.float32), "neg"))
    inits.append(numpy_helper.from_array(np.array(1.4142135, dtype=np.float32), "sqrt2"))
    inits.append(numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"))
    inits.append(numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half"))
    node("Shape", ["input_ids"], ["/embeddings/Shape_output_0"], "/embeddings/Shape")
    node("Gather", ["/embeddings/Shape_output_0", "c0"], ["/embeddings/Gather_output_0"], "/embeddings/Gather", axis=0)
    node("Gather", ["/embeddings/Shape_output_0", "c1"], ["/embeddings/Gather_1_output_0"], "/embeddings/Gather_1", axis=0)
    node("Gather", ["embeddings.word_embeddings.weight", "input_ids"], ["/embeddings/word_embeddings/Gather_output_0"], "/embeddings/word_embeddings/Gather")
    node("Slice", ["embeddings.position_embeddings.weight", "c0", "/embeddings/Gather_1_output_0", "c0"], ["/embeddings/Slice_output_0"], "/embeddings/Slice")
    node("Add", ["/embeddings/word_embeddings/Gather_output_0", "/embeddings/Slice_output_0"], ["/embeddings/Add_output_0"], "/embeddings/Add")
    node("LayerNormalization", ["/embeddings/Add_output_0", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"],
         ["/embeddings/LayerNorm/LayerNormalization_output_0"], "/embeddings/LayerNorm/LayerNormalization", axis=-1, epsilon=1e-12)
    node("Concat", ["/embeddings/Gather_output_0", "/embeddings/Gather_1_output_0", "nh", "hd"], ["/Concat_output_0"], "/Concat", axis=0)
    node("Concat", ["/embeddings/Gather_output_0", "/embeddings/Gather_1_output_0", "hsz"], ["/Concat_1_output_0"], "/Concat_1", axis=0)
    # Extended attention mask: (1 - mask) * min.
    node("Unsqueeze", ["attention_mask", "c1"], ["/Unsqueeze_output_0"], "/Unsqueeze")
    node("Unsqueeze", ["/Unsqueeze_output_0", "c1"], ["/Unsqueeze_1_output_0"], "/Unsqueeze_1")
    node("Cast", ["/Unsqueeze_1_output_0"], ["/Cast_output_0"], "/Cast", to=F)
    node("Sub", ["one", "/Cast_output_0"], ["/Sub_output_0"], "/Sub")
    node("Mul", ["/Sub_output_0", "neg"], ["/Mul_output_0"], "/Mul")
    x = "/embeddings/LayerNorm/LayerNormalization_output_0"
    for l in range(layers):
        p = f"/encoder/layer.{l}"
        q = f"encoder.layer.{l}"
        heads = {}
        for name in ("query", "key", "value"):
            inits += [ext(f"{q}.attention.self.{name}.weight_t", [H, H]), ext(f"{q}.attention.self.{name}.bias", [H])]
            s = f"{p}/attention/self/{name}"
            node("MatMul", [x, f"{q}.attention.self.{name}.weight_t"], [f"{s}/MatMul_output_0"], f"{s}/MatMul")
            node("Add", [f"{q}.attention.self.{name}.bias", f"{s}/MatMul_output_0"], [f"{s}/Add_output_0"], f"{s}/Add")
            node("Reshape", [f"{s}/Add_output_0", "/Concat_output_0"], [f"{s}/Reshape_output_0"], f"{s}/Reshape")
            perm = [0, 2, 3, 1] if name == "key" else [0, 2, 1, 3]
            node("Transpose", [f"{s}/Reshape_output_0"], [f"{s}/Transpose_output_0"], f"{s}/Transpose", perm=perm)
            heads[name] = f"{s}/Transpose_output_0"
        s = f"{p}/attention/self"
        node("MatMul", [heads["query"], heads["key"]], [f"{s}/MatMul_output_0"], f"{s}/MatMul")
        node("Div", [f"{s}/MatMul_output_0", "scale"], [f"{s}/Div_output_0"], f"{s}/Div")
        node("Add", [f"{s}/Div_output_0", "/Mul_output_0"], [f"{s}/Add_output_0"], f"{s}/Add")
        node("Softmax", [f"{s}/Add_output_0"], [f"{s}/Softmax_output_0"], f"{s}/Softmax", axis=-1)
        node("MatMul", [f"{s}/Softmax_output_0", heads["value"]], [f"{s}/MatMul_1_output_0"], f"{s}/MatMul_1")
        node("Transpose", [f"{s}/MatMul_1_output_0"], [f"{s}/Transpose_3_output_0"], f"{s}/Transpose_3", perm=[0, 2, 1, 3])
        node("Reshape", [f"{s}/Transpose_3_output_0", "/Concat_1_output_0"], [f"{s}/Reshape_3_output_0"], f"{s}/Reshape_3")
        def dense(inp, scope, wname, din, dout, res=None):
            inits.extend([ext(f"{wname}.weight_t", [din, dout]), ext(f"{wname}.bias", [dout])])
            node("MatMul", [inp, f"{wname}.weight_t"], [f"{scope}/MatMul_output_0"], f"{scope}/MatMul")
            node("Add", [f"{wname}.bias", f"{scope}/MatMul_output_0"], [f"{scope}/Add_output_0"], f"{scope}/Add")
            out = f"{scope}/Add_output_0"
            if res:
                node("Add", [out, res], [f"{scope}/Add_1_output_0"], f"{scope}/Add_1")
                out = f"{scope}/Add_1_output_0"
            return out
        def ln(inp, scope, wname):
            inits.extend([ext(f"{wname}.weight", [H]), ext(f"{wname}.bias", [H])])
            node("LayerNormalization", [inp, f"{wname}.weight", f"{wname}.bias"], [f"{scope}/LayerNormalization_output_0"],
                 f"{scope}/LayerNormalization", axis=-1, epsilon=1e-12)
            return f"{scope}/LayerNormalization_output_0"
        a = dense(f"{s}/Reshape_3_output_0", f"{p}/attention/output/dense", f"{q}.attention.output.dense", H, H, res=x)
        a = ln(a, f"{p}/attention/output/LayerNorm", f"{q}.attention.output.LayerNorm")
        h = dense(a, f"{p}/intermediate/dense", f"{q}.intermediate.dense", H, FF)
        g = f"{p}/intermediate/intermediate_act_fn"
        node("Div", [h, "sqrt2"], [f"{g}/Div_output_0"], f"{g}/Div")
        node("Erf", [f"{g}/Div_output_0"], [f"{g}/Erf_output_0"], f"{g}/Erf")
        node("Add", [f"{g}/Erf_output_0", "one"], [f"{g}/Add_output_0"], f"{g}/Add")
        node("Mul", [h, f"{g}/Add_output_0"], [f"{g}/Mul_output_0"], f"{g}/Mul")
        node("Mul", [f"{g}/Mul_output_0", "half"], [f"{g}/Mul_1_output_0"], f"{g}/Mul_1")
        o = dense(f"{g}/Mul_1_output_0", f"{p}/output/dense", f"{q}.output.dense", FF, H, res=a)
        x = ln(o, f"{p}/output/LayerNorm", f"{q}.output.LayerNorm")
    node("Identity", [x], ["last_hidden_state"], "/Identity")
    g = helper.make_graph(n, "main_graph",
                          [helper.make_tensor_value_info("input_ids", I64, ["batch_size", "sequence"]),
                           helper.make_tensor_value_info("attention_mask", I64, ["batch_size", "sequence"])],
                          [helper.make_tensor_value_info("last_hidden_state", F, ["batch_size", "sequence", H])], inits)
    return model(g, 17)


CROSSCHECK = [("cnn.onnx", {"x": [2, 3, 32, 32]}), ("transformer.onnx", {"ids": [2, 16], "mask": [2, 16]}), ("ops.onnx", {}),
              ("old_opset.onnx", {}), ("if.onnx", {}), ("resnet50.onnx", {"input": [1, 3, 224, 224]}),
              ("bert_base.onnx", {"input_ids": [1, 128], "attention_mask": [1, 128]})]


def crosscheck(binary):
    """Every tensor whose shape onnx's own shape inference (with data propagation) fixes must have
    the size the importer writes as its producer's out_bytes (views and constants aside)."""
    import json
    import subprocess
    from onnx import shape_inference
    failed = 0
    for f, shapes in CROSSCHECK:
        m = onnx.load(os.path.join(OUT, f), load_external_data=False)
        for i in m.graph.input:
            for d, v in zip(i.type.tensor_type.shape.dim, shapes.get(i.name, [])):
                d.ClearField("dim_param")
                d.dim_value = v
        inferred = shape_inference.infer_shapes(m, data_prop=True)
        size = {}
        for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
            tt = vi.type.tensor_type
            dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
            if tt.HasField("shape") and None not in dims:
                size[vi.name] = int(np.prod(dims, dtype=np.int64)) * 2
        args = [binary, "import", os.path.join(OUT, f), "-q"]
        for k, v in shapes.items():
            args += ["--input-shape", k + "=" + ",".join(map(str, v))]
        doc = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
        nodes = {n["name"]: n for n in doc["nodes"]}
        producer = {o: (nd.output[0], k) for nd in m.graph.node for k, o in enumerate(nd.output)}
        compared = 0
        for t, want in sorted(size.items()):
            node = nodes.get(producer.get(t, (None, 0))[0])
            if node is None or node["type"] == "Const" or not node.get("out_bytes"):
                continue
            got = node["out_bytes"][producer[t][1]]
            if got == 0:
                continue
            compared += 1
            if got != want:
                failed += 1
                print(f"{f}: {t}: importer {got} bytes, onnx {want}")
        print(f"{f}: {compared} tensors agree with onnx's shape inference" if not failed else f"{f}: compared {compared}")
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--crosscheck", metavar="STREAM_ALLOC", help="compare the importer's shapes with onnx's instead")
    args = ap.parse_args()
    if args.crosscheck:
        raise SystemExit(1 if crosscheck(args.crosscheck) else 0)
    os.makedirs(OUT, exist_ok=True)
    save(cnn(), "cnn.onnx")
    save(transformer(), "transformer.onnx")
    save(ops(), "ops.onnx", full=False)
    save(if_model(), "if.onnx")
    save(old_opset(), "old_opset.onnx")
    external_weights()
    bad_models()
    exporter_arithmetic()
    # The larger models' weights are external data that is not shipped.
    save(resnet50(), "resnet50.onnx", check=False)
    save(bert_base(), "bert_base.onnx", check=False)


if __name__ == "__main__":
    main()
