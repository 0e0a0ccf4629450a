//! ONNX import: shapes against values worked out here, engines, tasks and costs against
//! docs/cost-model.md, measured times, byte-identical output, every bad file, and imported
//! models under every policy passing the checker. The models are tests/fixtures/onnx/, made by
//! scripts/onnx_models.py.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::common;

use stream_alloc::compile::{Stage, TaskLimits};
use stream_alloc::graph::device::DeviceProfile;
use stream_alloc::graph::json as gjson;
use stream_alloc::import::onnx::measured::Measured;
use stream_alloc::import::onnx::{ImportOptions, Imported, import_file};
use stream_alloc::memory::AllocationDocument;
use stream_alloc::simulate::SimConfig;
use stream_alloc::{ErrorKind, search, verify};

fn model(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/onnx").join(name)
}

fn opts(shapes: &[&str], batch: Option<u64>) -> ImportOptions {
    let mut o = ImportOptions { batch, ..Default::default() };
    for s in shapes {
        o.add_input_shape(s).unwrap();
    }
    o
}

fn import(name: &str, o: &ImportOptions) -> Imported {
    import_file(&model(name), o).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The nodes of the root graph (or of the subgraph `graph`) by name.
fn nodes(doc: &Value, graph: Option<&str>) -> HashMap<String, Value> {
    let list = match graph {
        None => &doc["nodes"],
        Some(g) => {
            let sub = doc["subgraphs"].as_array().unwrap().iter().find(|s| s["name"] == g);
            &sub.unwrap_or_else(|| panic!("no subgraph {g}"))["nodes"]
        }
    };
    list.as_array().unwrap().iter().map(|n| (n["name"].as_str().unwrap().to_string(), n.clone())).collect()
}

fn doc(i: &Imported) -> Value {
    serde_json::from_str(&i.json()).unwrap()
}

/// fp16 bytes of a shape.
fn b(dims: &[u64]) -> u64 {
    dims.iter().product::<u64>() * 2
}

fn out_bytes(n: &HashMap<String, Value>, name: &str) -> Vec<u64> {
    let node = n.get(name).unwrap_or_else(|| panic!("no node {name}"));
    node["out_bytes"]
        .as_array()
        .unwrap_or_else(|| panic!("{name} has no out_bytes"))
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

#[test]
fn cnn_shapes_with_a_symbolic_batch() {
    let i = import("cnn.onnx", &opts(&[], Some(2)));
    let n = nodes(&doc(&i), None);
    assert_eq!(out_bytes(&n, "x"), [b(&[2, 3, 32, 32])]);
    // 3x3 conv, pad 1, stride 2: (32 + 2 - 3) / 2 + 1 = 16.
    assert_eq!(out_bytes(&n, "c1"), [b(&[2, 16, 16, 16])]);
    // 3x3 max pool, pad 1, stride 2: (16 + 2 - 3) / 2 + 1 = 8.
    assert_eq!(out_bytes(&n, "p1"), [b(&[2, 16, 8, 8])]);
    assert_eq!(out_bytes(&n, "dw"), [b(&[2, 16, 8, 8])]);
    // [2,16,8,8] + [16,1,1] broadcasts to [2,16,8,8].
    assert_eq!(out_bytes(&n, "res_b"), [b(&[2, 16, 8, 8])]);
    assert_eq!(out_bytes(&n, "gap"), [b(&[2, 16, 1, 1])]);
    assert_eq!(out_bytes(&n, "fc"), [b(&[2, 10])]);
    assert_eq!(out_bytes(&n, "prob"), [b(&[2, 10])]);
    // --input-shape gives the same as --batch.
    let j = import("cnn.onnx", &opts(&["x=2,3,32,32"], None));
    assert_eq!(i.json(), j.json());
}

#[test]
fn transformer_shapes_through_the_exporters_shape_arithmetic() {
    let (bs, s, h, nh, d, ff) = (2u64, 16u64, 32u64, 4u64, 8u64, 64u64);
    let i = import("transformer.onnx", &opts(&["ids=2,16", "mask=2,16"], None));
    let n = nodes(&doc(&i), None);
    assert_eq!(out_bytes(&n, "/emb/Gather_output_0"), [b(&[bs, s, h])]);
    // Slice of pos [1,16,32] (a weight small enough to be read) to the sequence length read from
    // Shape(ids): the evaluator knows every input, so it folds to a constant.
    assert_eq!(n["/pos/Slice_output_0"]["type"], "Const");
    assert_eq!(n["/pos/Slice_output_0"]["tasks"], 0);
    // Reshape to Concat(batch, seq, 4, 8) computed from Shape: a view.
    assert_eq!(out_bytes(&n, "/q/Reshape_output_0"), [0]);
    assert_eq!(n["/q/Reshape_output_0"]["alias_input"], 0);
    assert_eq!(out_bytes(&n, "/q/Transpose_output_0"), [b(&[bs, nh, s, d])]);
    assert_eq!(out_bytes(&n, "/k/Transpose_output_0"), [b(&[bs, nh, d, s])]);
    assert_eq!(out_bytes(&n, "/attn/MatMul_output_0"), [b(&[bs, nh, s, s])]);
    // Where broadcasts the [B,1,1,S] mask, a scalar and the scores.
    assert_eq!(out_bytes(&n, "/attn/Where_output_0"), [b(&[bs, nh, s, s])]);
    assert_eq!(out_bytes(&n, "/attn/MatMul_1_output_0"), [b(&[bs, nh, s, d])]);
    assert_eq!(out_bytes(&n, "/ffn/MatMul_output_0"), [b(&[bs, s, ff])]);
    assert_eq!(out_bytes(&n, "hidden"), [b(&[bs, s, h])]);
    assert_eq!(out_bytes(&n, "/pool/ReduceMean_output_0"), [b(&[bs, h])]);
    assert_eq!(out_bytes(&n, "/pool/Split_output_0"), [b(&[bs, 8]), b(&[bs, 24])]);
    assert_eq!(out_bytes(&n, "/cls/Slice_output_0"), [b(&[bs, 1, h])]);
    // The shape computations fold into constants: Shape, Gather on it, Concat, ConstantOfShape.
    for c in [
        "/Shape_output_0",
        "/Gather_1_output_0",
        "/Concat_output_0",
        "/mask/ConstantOfShape_output_0",
        "/pool/expand_shape",
    ] {
        assert_eq!(n[c]["type"], "Const", "{c}");
        assert_eq!(n[c]["tasks"], 0, "{c}");
    }
    // The node written before its producer in the file is imported after it.
    let d = doc(&i);
    let order: Vec<&str> = d["nodes"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap()).collect();
    let at = |x: &str| order.iter().position(|n| *n == x).unwrap();
    assert!(at("/pool/expand_shape") < at("/pool/Expand_output_0"));
}

#[test]
fn every_other_operator_and_the_old_attribute_forms() {
    let i = import("ops.onnx", &ImportOptions::default());
    let n = nodes(&doc(&i), None);
    // ConvTranspose stride 2, pads 1, output_padding 1, 3x3: 2 * 7 + 1 + 3 - 2 = 16.
    assert_eq!(out_bytes(&n, "ct"), [b(&[1, 2, 16, 16])]);
    assert_eq!(out_bytes(&n, "ap"), [b(&[1, 4, 4, 4])]);
    assert_eq!(out_bytes(&n, "rs"), [b(&[1, 4, 8, 8])]);
    assert_eq!(out_bytes(&n, "pad"), [b(&[1, 4, 10, 10])]);
    assert_eq!(out_bytes(&n, "tile"), [b(&[1, 4, 16, 8])]);
    assert_eq!(out_bytes(&n, "rsum"), [b(&[1, 1, 8, 8])]);
    assert_eq!(out_bytes(&n, "rmax"), [b(&[1, 4])]);
    assert_eq!(out_bytes(&n, "amax"), [b(&[1, 8, 8])]);
    assert_eq!(out_bytes(&n, "topv"), [b(&[1, 3]), b(&[1, 3])]);
    // NonZero's size depends on data: the importer takes the largest, [rank, elements].
    assert_eq!(out_bytes(&n, "nz"), [b(&[3, 64])]);
    assert_eq!(out_bytes(&n, "d2s"), [b(&[1, 1, 16, 16])]);
    assert_eq!(out_bytes(&n, "s2d"), [b(&[1, 4, 8, 8])]);
    assert_eq!(out_bytes(&n, "tr"), [b(&[64, 4])]);
    assert_eq!(out_bytes(&n, "mm"), [b(&[64, 64])]);
    assert_eq!(out_bytes(&n, "where"), [b(&[1, 1, 8, 8])]);
    // Range(0, 8, 1) * Size(mm) and its Cast fold to constants.
    for c in ["rng", "size", "rng_scaled", "rng_f"] {
        assert_eq!(n[c]["type"], "Const", "{c}");
    }
    let old = import("old_opset.onnx", &ImportOptions::default());
    let n = nodes(&doc(&old), None);
    assert_eq!(out_bytes(&n, "s"), [b(&[1, 2, 4])]);
    assert_eq!(out_bytes(&n, "up"), [b(&[1, 1, 4, 8])]);
    assert_eq!(out_bytes(&n, "p"), [b(&[1, 1, 6, 10])]);
    assert_eq!(out_bytes(&n, "q1"), [b(&[6, 4]), b(&[6, 6])]);
    assert_eq!(out_bytes(&n, "m"), [b(&[6, 1])]);
    assert_eq!(out_bytes(&n, "d"), [0, 0]);
}

/// cost-model.md's roofline, worked out here.
fn ai_core(dev: &DeviceProfile, flops: f64, bytes: f64) -> (f64, u64) {
    let t = (flops / dev.peak_flops).max(bytes / dev.memory_bandwidth) * 1e6 + dev.launch_us;
    let c = ((flops / dev.flops_per_unit).max(bytes / dev.bytes_per_unit).ceil() as u64).clamp(1, dev.units as u64);
    ((t * 1000.0).round() / 1000.0, c)
}

fn cost(n: &HashMap<String, Value>, name: &str) -> (f64, u64) {
    (n[name]["cost_us"].as_f64().unwrap(), n[name]["cores"].as_u64().unwrap())
}

#[test]
fn engines_tasks_and_costs_follow_the_cost_model() {
    let dev = DeviceProfile::default();
    let i = import("cnn.onnx", &opts(&[], Some(1)));
    let n = nodes(&doc(&i), None);
    for (name, ty, engine, tasks) in [
        ("x", "Data", "DNN_VM_GE_LOCAL", 0),
        ("c1.w", "Const", "DNN_VM_GE_LOCAL", 0),
        ("c1", "Conv2D", "AIcoreEngine", 1),
        ("bn", "BatchNorm", "AIcoreEngine", 1),
        ("dw", "DepthwiseConv2D", "AIcoreEngine", 1),
        ("flat", "Flatten", "DNN_VM_GE_LOCAL", 0),
        ("fc", "MatMul", "AIcoreEngine", 1),
        ("NetOutput", "NetOutput", "DNN_VM_GE_LOCAL", 0),
    ] {
        assert_eq!(
            (n[name]["type"].as_str(), n[name]["engine"].as_str(), n[name]["tasks"].as_u64()),
            (Some(ty), Some(engine), Some(tasks)),
            "{name}"
        );
    }
    assert_eq!(n["flat"]["alias_input"], 0);
    assert!(n["c1.w"].get("out_bytes").is_none(), "weights carry no out_bytes");
    // Conv: 2 * N*Cout*Ho*Wo * Cin*Kh*Kw flops; bytes = input + weight + bias + output.
    let flops = 2.0 * (16 * 16 * 16) as f64 * 27.0;
    let bytes = 2.0 * (3 * 32 * 32 + 16 * 3 * 3 * 3 + 16 + 16 * 16 * 16) as f64;
    assert_eq!(cost(&n, "c1"), ai_core(&dev, flops, bytes));
    // Gemm 1x16 by 16x10 (+ bias 10): 2*M*N*K.
    assert_eq!(cost(&n, "fc"), ai_core(&dev, 2.0 * 10.0 * 16.0, 2.0 * (16 + 160 + 10 + 10) as f64));
    // Softmax: 5 flops per element.
    assert_eq!(cost(&n, "prob"), ai_core(&dev, 50.0, 40.0));

    // AI CPU and a compute-bound kernel, in the larger models.
    let o = import("ops.onnx", &ImportOptions::default());
    let n = nodes(&doc(&o), None);
    assert_eq!(n["nz"]["engine"], "aicpu_ascend_kernel");
    assert_eq!(n["topv"]["engine"], "aicpu_ascend_kernel");
    assert_eq!(n["nz"]["cores"], 0);
    // NonZero on [1,8,8]: bytes = (64 + 3*64) * 2, flops = 3*64.
    let t = (192.0f64 / dev.aicpu_flops).max(512.0 / dev.aicpu_bandwidth) * 1e6 + dev.aicpu_launch_us;
    assert_eq!(n["nz"]["cost_us"].as_f64().unwrap(), (t * 1000.0).round() / 1000.0);
    let r = import("resnet50.onnx", &opts(&[], Some(1)));
    let n = nodes(&doc(&r), None);
    // layer1 3x3 conv: 1x64x56x56 out, 64x64x3x3 weights: compute-bound, cores from the flops.
    let name = "/layer1/layer1.0/conv2/Conv_output_0";
    let flops = 2.0 * (64 * 56 * 56) as f64 * (64 * 9) as f64;
    let bytes = 2.0 * (64 * 56 * 56 + 64 * 64 * 9 + 64 + 64 * 56 * 56) as f64;
    assert!(flops / dev.peak_flops > bytes / dev.memory_bandwidth);
    assert_eq!(cost(&n, name), ai_core(&dev, flops, bytes));
    assert_eq!(cost(&n, name).1, (flops / dev.flops_per_unit).ceil() as u64);
    // layer4's 3x3 conv at batch 1 is memory-bound: its 4.7 MB of weights dominate.
    let name = "/layer4/layer4.1/conv2/Conv_output_0";
    let flops = 2.0 * (512 * 7 * 7) as f64 * (512 * 9) as f64;
    let bytes = 2.0 * (512 * 7 * 7 + 512 * 512 * 9 + 512 + 512 * 7 * 7) as f64;
    assert!(flops / dev.peak_flops < bytes / dev.memory_bandwidth);
    assert_eq!(cost(&n, name), ai_core(&dev, flops, bytes));
    assert_eq!(cost(&n, name).1, (bytes / dev.bytes_per_unit).ceil() as u64);
}

#[test]
fn a_device_profile_replaces_the_constants() {
    let mut o = opts(&[], Some(1));
    o.device =
        DeviceProfile::from_json_str(r#"{"name": "slow", "launch_us": 10, "units": 8, "memory_bandwidth": 1e11}"#, "t")
            .unwrap();
    let i = import("cnn.onnx", &o);
    let n = nodes(&doc(&i), None);
    let bytes = 2.0 * (3 * 32 * 32 + 16 * 3 * 3 * 3 + 16 + 16 * 16 * 16) as f64;
    assert_eq!(cost(&n, "c1"), ai_core(&o.device, 2.0 * 4096.0 * 27.0, bytes));
    assert!(cost(&n, "c1").0 > 10.0);
    assert!(doc(&i)["source"].as_str().unwrap().contains("slow"));
}

#[test]
fn measured_costs_replace_the_estimates() {
    let csv = "Model ID,Op Name,OP Type,Task Type,Task Duration(us),Block Dim\n\
               1,/ffn/MatMul,MatMul,AI_CORE,41.5,20\n\
               1,/ffn/MatMul,MatMul,AI_CORE,42.5,20\n\
               1,/attn/Softmax_output_0:0,SoftmaxV2,AI_VECTOR_CORE,7.25,30\n\
               1,hidden,Add,AI_VECTOR_CORE,5.0,4\n\
               1,not_in_the_model,Relu,AI_CORE,1.0,1\n";
    let mut o = opts(&["ids=2,16", "mask=2,16"], None);
    o.measured = Some(Measured::parse(csv, "op_summary.csv").unwrap());
    let i = import("transformer.onnx", &o);
    let n = nodes(&doc(&i), None);
    // By the ONNX node name, averaged over rows, Block Dim as cores.
    assert_eq!(cost(&n, "/ffn/MatMul_output_0"), (42.0, 20));
    // Suffixes stripped; Block Dim capped at the device's 24 units.
    assert_eq!(cost(&n, "/attn/Softmax_output_0"), (7.25, 24));
    // By the imported name.
    assert_eq!(cost(&n, "hidden"), (5.0, 4));
    let m = i.stats.measured.as_ref().unwrap();
    assert_eq!(m.matched, 3);
    assert_eq!(m.unused, ["not_in_the_model"]);
    assert_eq!(m.unmatched_nodes.len(), i.stats.task_nodes - 3);
    assert!(m.unmatched_nodes.contains(&"/q/MatMul_output_0".to_string()));
    // The rest keep their estimates.
    let plain = nodes(&doc(&import("transformer.onnx", &opts(&["ids=2,16", "mask=2,16"], None))), None);
    assert_eq!(n["/q/MatMul_output_0"], plain["/q/MatMul_output_0"]);

    // A Chrome trace does the same.
    let trace =
        r#"{"traceEvents": [{"ph": "X", "name": "/ffn/MatMul", "ts": 0, "dur": 30}, {"ph": "i", "name": "hidden"}]}"#;
    o.measured = Some(Measured::parse(trace, "trace.json").unwrap());
    let i = import("transformer.onnx", &o);
    let n = nodes(&doc(&i), None);
    assert_eq!(n["/ffn/MatMul_output_0"]["cost_us"].as_f64(), Some(30.0));
    assert_eq!(n["hidden"], plain["hidden"]);
}

#[test]
fn node_names_are_unique_and_stable() {
    let i = import("cnn.onnx", &opts(&[], Some(1)));
    let d = doc(&i);
    let names: Vec<&str> = d["nodes"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "unique names");
    // Two ONNX nodes named "conv" and two unnamed ones: named after their outputs.
    for n in ["c1", "dw", "r1", "r2"] {
        assert!(names.contains(&n), "{n}");
    }
}

#[test]
fn the_output_is_byte_identical_on_every_run() {
    for (m, o) in [
        ("cnn.onnx", opts(&[], Some(4))),
        ("transformer.onnx", opts(&["ids=1,8", "mask=1,8"], None)),
        ("ops.onnx", ImportOptions::default()),
        ("if.onnx", ImportOptions::default()),
        ("bert_base.onnx", opts(&["input_ids=1,128", "attention_mask=1,128"], None)),
    ] {
        let first = import(m, &o).json();
        for _ in 0..3 {
            assert_eq!(import(m, &o).json(), first, "{m}");
        }
        // And it loads through the graph JSON loader.
        gjson::load_str(&first).unwrap_or_else(|e| panic!("{m}: {e}"));
    }
}

#[test]
fn weights_in_absent_external_files_are_not_needed() {
    let a = import("external_weights.onnx", &opts(&[], Some(1)));
    let b = import("cnn.onnx", &opts(&[], Some(1)));
    let (da, db) = (doc(&a), doc(&b));
    assert_eq!(da["nodes"], db["nodes"]);
}

#[test]
fn if_becomes_ges_if_with_two_subgraphs() {
    let i = import("if.onnx", &ImportOptions::default());
    let d = doc(&i);
    let n = nodes(&d, None);
    assert_eq!(n["y"]["type"], "If");
    assert_eq!(n["y"]["engine"], "DNN_VM_RTS");
    assert_eq!(n["y"]["subgraphs"], serde_json::json!(["if/y/then_branch", "if/y/else_branch"]));
    // The If reads its condition and every outer tensor its branches read (a, b, c2).
    let into_if: Vec<&str> =
        d["edges"].as_array().unwrap().iter().filter(|e| e["dst"] == "y").map(|e| e["src"].as_str().unwrap()).collect();
    assert_eq!(into_if, ["cond", "a", "b", "c2"]);
    let then = nodes(&d, Some("if/y/then_branch"));
    for (name, ty) in [
        ("a", "Data"),
        ("b", "Data"),
        ("c2", "Data"),
        ("t1", "Add"),
        ("t2", "If"),
        ("t_out", "Mul"),
        ("NetOutput", "NetOutput"),
    ] {
        assert_eq!(then[name]["type"], ty, "{name}");
    }
    // The nested If's branches are subgraphs of the branch.
    assert!(nodes(&d, Some("if/y/then_branch/t2/then_branch")).contains_key("ti"));
    let sub: Vec<(&str, &str)> = d["subgraphs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["parent"].as_str().unwrap()))
        .collect();
    assert!(sub.contains(&("if/y/then_branch/t2/else_branch", "t2")));
    assert_eq!(out_bytes(&n, "y"), [b(&[2, 3])]);
    let m = gjson::load_str(&i.json()).unwrap();
    stream_alloc::allocate(&m, Stage::All).unwrap();
}

fn expect_error(name: &str, o: &ImportOptions, kind: ErrorKind, parts: &[&str]) {
    let e = import_file(&model(name), o).err().unwrap_or_else(|| panic!("{name} imported"));
    assert_eq!(e.kind, kind, "{name}: {e}");
    for p in parts {
        assert!(e.message.contains(p), "{name}: '{p}' not in: {e}");
    }
}

#[test]
fn every_bad_file_is_refused_with_a_clear_error() {
    let none = ImportOptions::default();
    expect_error("bad_truncated.onnx", &none, ErrorKind::Format, &["bad_truncated.onnx", "truncated"]);
    expect_error("bad_not_onnx.onnx", &none, ErrorKind::Format, &["not a binary ONNX model"]);
    expect_error("bad_cycle.onnx", &none, ErrorKind::Cycle, &["cycle", "'A' (Add)", "'B' (Relu)"]);
    expect_error("bad_dangling.onnx", &none, ErrorKind::UnknownNode, &["'add' (Add)", "'missing'", "dangling"]);
    expect_error("bad_opset6.onnx", &none, ErrorKind::Format, &["unsupported opset 6", "7 to 21"]);
    expect_error("bad_opset22.onnx", &none, ErrorKind::Format, &["unsupported opset 22"]);
    expect_error(
        "bad_broadcast.onnx",
        &none,
        ErrorKind::Attribute,
        &["'add_mismatch' (Add)", "shape conflict", "[1,4]", "[1,5]"],
    );
    expect_error(
        "bad_declared_shape.onnx",
        &none,
        ErrorKind::Attribute,
        &["'relu' (Relu)", "shape conflict", "inferred [1,4]", "declares [1,5]"],
    );
    expect_error("bad_loop.onnx", &none, ErrorKind::NotImplemented, &["'the_loop' (Loop)", "If only"]);
    expect_error(
        "unknown_op_undeclared.onnx",
        &none,
        ErrorKind::NotImplemented,
        &["'fancy' (FancyOp)", "com.example", "opset", "declares no shape", "--unknown-op-cost"],
    );
    expect_error(
        "bad_string_indices.onnx",
        &none,
        ErrorKind::Attribute,
        &["'gather' (Gather)", "input 1 (indices)", "STRING", "INT32 or INT64"],
    );
    // Symbolic dimensions without their sizes name the input and the dimension.
    expect_error("cnn.onnx", &none, ErrorKind::Field, &["'x'", "dimension 0", "'N'", "--batch"]);
    expect_error("transformer.onnx", &opts(&[], Some(1)), ErrorKind::Field, &["'ids'", "dimension 1", "'seq'"]);
    expect_error(
        "cnn.onnx",
        &opts(&["x=1,4,32,32"], None),
        ErrorKind::InvalidOption,
        &["'x'", "dimension 1", "fixed at 3"],
    );
    expect_error("cnn.onnx", &opts(&["y=1"], Some(1)), ErrorKind::InvalidOption, &["no input 'y'"]);
    let mut bad = ImportOptions::default();
    assert!(bad.add_input_shape("x=1,a").unwrap_err().message.contains("'a'"));
    assert!(bad.add_input_shape("x1,2").is_err());
    let e = stream_alloc::import::onnx::import_bytes(b"", "e", "empty.onnx", &none).unwrap_err();
    assert!(e.message.contains("empty"), "{e}");
    let e = stream_alloc::import::onnx::import_bytes(b"{\"format\": 1}", "j", "j.onnx", &none).unwrap_err();
    assert!(e.message.contains("JSON"), "{e}");
}

#[test]
fn unknown_op_cost_runs_an_operator_without_a_rule() {
    let o = ImportOptions { unknown_op_cost_us: Some(12.5), ..Default::default() };
    let i = import("unknown_op.onnx", &o);
    let n = nodes(&doc(&i), None);
    assert_eq!(n["y"]["type"], "FancyOp");
    assert_eq!(n["y"]["cost_us"].as_f64(), Some(12.5));
    // The declared output shape [1,4].
    assert_eq!(out_bytes(&n, "y"), [b(&[1, 4])]);
    assert_eq!(i.stats.unknown_ops, ["y (FancyOp)"]);
    // Without --unknown-op-cost the declared shape imports it at the estimated cost, and the
    // summary names it.
    let i = import("unknown_op.onnx", &ImportOptions::default());
    let n = nodes(&doc(&i), None);
    assert_eq!(out_bytes(&n, "y"), [b(&[1, 4])]);
    let dev = DeviceProfile::default();
    assert_eq!(cost(&n, "y"), ai_core(&dev, 4.0, b(&[1, 4]) as f64 * 2.0));
    assert_eq!((i.stats.unknown_ops.len(), &i.stats.declared_ops[..]), (0, &["y (FancyOp)".to_string()][..]));
    let out = bin().arg("import").arg(model("unknown_op.onnx")).output().unwrap();
    let summary = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{summary}");
    assert!(
        summary.contains("1 node(s) take the output shapes the model declares") && summary.contains("y (FancyOp)"),
        "{summary}"
    );
}

#[test]
fn the_exporters_constant_arithmetic_is_evaluated() {
    // swin_t's Pad amounts: Reshape [-1,2], Slice with step -1, Transpose, Reshape, Cast.
    let i = import("pad_through_transpose.onnx", &ImportOptions::default());
    let n = nodes(&doc(&i), None);
    assert_eq!(out_bytes(&n, "padded"), [b(&[1, 8, 8, 96])]);
    for c in ["pad_pairs", "pad_rev", "pad_t", "pad_flat", "pads"] {
        assert_eq!(n[c]["type"], "Const", "{c}");
    }
    // fasterrcnn's Resize sizes: Shape, Gather, Cast, ReduceMin/Max, Reciprocal, Div, Min, Mul,
    // Floor, Cast, Concat: 480x640 scaled by min(320/480, 640/640) is 320x426.
    let i = import("resize_through_reductions.onnx", &ImportOptions::default());
    let n = nodes(&doc(&i), None);
    assert_eq!(out_bytes(&n, "resized"), [b(&[1, 3, 320, 426])]);
    assert_eq!(i.stats.folded, 14);
    assert_eq!(n["sizes"]["type"], "Const");
}

#[test]
fn einsum_has_a_shape_rule_and_a_cost() {
    let dev = DeviceProfile::default();
    let i = import("einsum.onnx", &ImportOptions::default());
    let n = nodes(&doc(&i), None);
    let (bt, h, l, d) = (2u64, 4u64, 49u64, 32u64);
    assert_eq!(out_bytes(&n, "scores"), [b(&[bt, h, l, l])]);
    assert_eq!(out_bytes(&n, "ctx"), [b(&[bt, h, l, d])]);
    // Implicit output: the letters used once, in alphabetical order (b, e, h, i).
    assert_eq!(out_bytes(&n, "out"), [b(&[bt, 64, h, l])]);
    // 2 flops for every combination of the letters' sizes, as MatMul.
    let flops = 2.0 * (bt * h * l * l * d) as f64;
    let bytes = (2 * b(&[bt, h, l, d]) + b(&[bt, h, l, l])) as f64;
    assert_eq!(cost(&n, "scores"), ai_core(&dev, flops, bytes));
    assert_eq!(n["scores"]["type"], "Einsum");
}

#[test]
fn data_dependent_dimensions_are_bounded_and_yield_to_fixed_sizes() {
    // Mixtral's MoE: NonZero over 5 experts (at most 5 rows) meets the exporter's Split into the 4
    // experts hit at trace time; the Split's sizes fix the dimension.
    let i = import("nonzero_split.onnx", &ImportOptions::default());
    let n = nodes(&doc(&i), None);
    assert_eq!(out_bytes(&n, "nz"), [b(&[1, 5])]);
    assert_eq!(out_bytes(&n, "e0"), [b(&[1, 1]); 4]);
    assert_eq!(out_bytes(&n, "o3"), [b(&[6, 16])]);
    assert_eq!(out_bytes(&n, "moe"), [b(&[6, 16])]);
    // A TopK whose k is read from data, a Reshape to a target computed from it, an operator
    // without a rule: the declared shapes stand in, and the summary names the nodes that took
    // them. Unique's bound (64) yields to the declared 12; TopK's indices, undeclared, keep the
    // bound (the memory planned for them).
    let i = import("declared_shapes.onnx", &ImportOptions::default());
    let n = nodes(&doc(&i), None);
    assert_eq!(out_bytes(&n, "top"), [b(&[2, 10]), b(&[2, 100])]);
    assert_eq!(out_bytes(&n, "uniq"), [b(&[12])]);
    assert_eq!(out_bytes(&n, "fancy"), [b(&[2, 10])]);
    assert_eq!(i.stats.declared_ops, ["top2 (Reshape)", "fancy (FancyOp)"]);
}

const POLICIES: &[&str] = &["ge", "single", "per-backend", "per-operator", "min-streams", "budget:4", "list", "auto"];

#[test]
fn imported_cnns_and_transformers_pass_the_checker_under_every_policy() {
    let mut files: Vec<common::TempFile> = Vec::new();
    let mut runs: Vec<Vec<String>> = Vec::new();
    for (m, o) in [
        ("cnn.onnx", opts(&[], Some(2))),
        ("resnet50.onnx", opts(&[], Some(1))),
        ("transformer.onnx", opts(&["ids=2,16", "mask=2,16"], None)),
        ("bert_base.onnx", opts(&["input_ids=1,128", "attention_mask=1,128"], None)),
    ] {
        let json = import(m, &o).json();
        let graph_file = common::TempFile::new(&format!("onnx_{}", m.replace('.', "_")), &json);
        for p in POLICIES {
            let mut b = gjson::builder_from_slice(json.as_bytes()).unwrap();
            b.options.set_str("policy", p).unwrap();
            let model = b.build().unwrap();
            let limits = TaskLimits::from_options(&model.options);
            let (alloc, _) = search::run(&model, model.options.clone(), limits, Stage::All, SimConfig::default())
                .unwrap_or_else(|e| panic!("{m} {p}: {e}"));
            let doc = alloc.to_json_new_plan(&model);
            let report = verify::check(&model, &doc);
            assert!(report.ok(), "{m} {p}: {:?}", report.violations.first());
            let alloc_file = common::TempFile::new(
                &format!("onnx_{}_{}", m.replace('.', "_"), p.replace(':', "_")),
                &doc.to_string(),
            );
            runs.push(vec![graph_file.0.display().to_string(), alloc_file.0.display().to_string(), "--json".into()]);
            files.push(alloc_file);
        }
        files.push(graph_file);
    }
    if let Some(tool) = common::check_alloc_tool("check_alloc.py on the imported models") {
        for (args, (code, report)) in runs.iter().zip(common::run_python(&tool, &runs)) {
            assert!(code == 0 && report["ok"] == true, "check_alloc.py {}: {}", args[1], report["errors"]);
        }
    }
}

/// Allocating an ONNX model reads the importer's graph without its JSON text: the builder is the
/// one reading the text back gives, and the allocation documents of the model and of its
/// imported JSON are the same bytes, for every fixture that imports.
#[test]
fn allocating_an_onnx_model_is_allocating_its_imported_json() {
    use stream_alloc::frontend::{self, Inputs, OnnxOptions};
    let dir = model("");
    let mut paths: Vec<PathBuf> = Vec::new();
    for d in [dir.clone(), dir.join("zoo")] {
        paths.extend(
            std::fs::read_dir(&d)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "onnx")),
        );
    }
    paths.sort();
    let mut checked = 0;
    for path in &paths {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let input_shapes: Vec<String> = match file.as_str() {
            "transformer.onnx" => vec!["ids=2,16".into(), "mask=2,16".into()],
            "bert_base.onnx" => vec!["input_ids=1,128".into(), "attention_mask=1,128".into()],
            _ => Vec::new(),
        };
        let onnx = OnnxOptions { input_shapes, batch: Some(1), ..Default::default() };
        let imported = match frontend::import(path, std::fs::read(path).unwrap(), &onnx) {
            Ok(i) => i,
            Err(e) => {
                assert!(file.starts_with("bad_") || file == "unknown_op_undeclared.onnx", "{file}: {e}");
                continue;
            }
        };
        let json = imported.json();
        let read = gjson::builder_from_slice(json.as_bytes()).unwrap();
        let direct = imported.into_builder().unwrap();
        assert_eq!(format!("{direct:?}"), format!("{read:?}"), "{file}");
        for options in [&[][..], &["compat=ge".to_string()][..]] {
            let document = |inputs: Inputs| {
                let compiled = inputs.compile(Stage::All, SimConfig::default(), false).unwrap();
                frontend::allocation_document(&inputs, &compiled, None).0
            };
            let from_onnx = document(Inputs::load(path, options, &onnx).unwrap());
            let from_json = document(Inputs::of(frontend::model_from_json(json.as_bytes(), options).unwrap()).unwrap());
            assert!(from_onnx == from_json, "{file} {options:?}: the allocations differ");
        }
        checked += 1;
    }
    assert!(checked >= 25, "only {checked} fixtures imported");
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stream-alloc"))
}

#[test]
fn the_command_line_imports_and_reads_onnx_everywhere() {
    let dir = std::env::temp_dir().join(format!("sa_onnx_cli_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("cnn.json");
    let cnn = model("cnn.onnx");
    let st = bin().arg("import").arg(&cnn).args(["--batch", "1", "-o"]).arg(&out).output().unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    assert!(String::from_utf8_lossy(&st.stderr).contains("13 ONNX nodes"));
    let written = std::fs::read_to_string(&out).unwrap();
    assert_eq!(written, import("cnn.onnx", &opts(&[], Some(1))).json());
    // Every command that takes a graph takes the model itself.
    for args in [
        vec!["allocate", "-q"],
        vec!["simulate"],
        vec!["compare", "--policies", "ge,list"],
        vec!["dot"],
        vec!["summary"],
        vec!["pass", "single_stream"],
    ] {
        let st = bin().args(&args).arg(&cnn).args(["--batch", "1"]).output().unwrap();
        assert!(st.status.success(), "{args:?}: {}", String::from_utf8_lossy(&st.stderr));
        let json = bin().args(&args).arg(&out).output().unwrap();
        assert_eq!(st.stdout, json.stdout, "{args:?}: the model and its graph JSON give the same result");
    }
    // Errors exit 1 and say why.
    let st = bin().arg("allocate").arg(&cnn).output().unwrap();
    assert_eq!(st.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&st.stderr).contains("--batch"));
    let st = bin().arg("import").arg(model("bad_cycle.onnx")).output().unwrap();
    assert_eq!(st.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&st.stderr).contains("cycle"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Real exports (torch 2.15, random weights, stripped: tensors over 4,096 elements are external
/// data in a file that is not shipped), made by scripts/export_fixtures.py: each failure class of
/// the exporters imports, allocates under every policy and passes the checker.
fn real(name: &str) -> (Imported, HashMap<String, Value>) {
    let i = import(name, &ImportOptions::default());
    for p in POLICIES {
        let mut b = gjson::builder_from_slice(i.json().as_bytes()).unwrap();
        b.options.set_str("policy", p).unwrap();
        let model = b.build().unwrap();
        let limits = TaskLimits::from_options(&model.options);
        let (alloc, _) = search::run(&model, model.options.clone(), limits, Stage::All, SimConfig::default())
            .unwrap_or_else(|e| panic!("{name} {p}: {e}"));
        let report = verify::check(&model, &alloc.to_json_new_plan(&model));
        assert!(report.ok(), "{name} {p}: {:?}", report.violations.first());
    }
    let n = nodes(&doc(&i), None);
    (i, n)
}

#[test]
fn real_swin_t_pads_through_transpose_and_slice() {
    let (i, n) = real("swin_t_ts.onnx");
    // The window attention pads [1,14,14,16] to a multiple of the window (7): no padding.
    assert_eq!(out_bytes(&n, "/features/features.1/features.1.0/attn/Pad_output_0"), [b(&[1, 14, 14, 16])]);
    assert_eq!(out_bytes(&n, "/features/features.3/features.3.0/attn/Pad_output_0"), [b(&[1, 7, 7, 32])]);
    assert_eq!(i.stats.folded, 170);
}

#[test]
fn real_fasterrcnn_resize_sizes_through_reductions() {
    let (_, n) = real("fasterrcnn_transform_ts.onnx");
    // 48x80 scaled by min(64 / 48, 96 / 80) = 1.2 and floored: 57x96.
    assert_eq!(out_bytes(&n, "/transform/Resize_output_0"), [b(&[1, 3, 57, 96])]);
}

#[test]
fn real_maxvit_einsum_from_both_exporters() {
    for f in ["maxvit_t_ts.onnx", "maxvit_t_dynamo.onnx"] {
        let (_, n) = real(f);
        let mut einsums: Vec<u64> =
            n.values().filter(|v| v["type"] == "Einsum").map(|v| v["out_bytes"][0].as_u64().unwrap()).collect();
        einsums.sort_unstable();
        // Attention scores and context of the window and the grid attention.
        assert_eq!(einsums, [2048, 2048, 4096, 4096], "{f}");
    }
}

#[test]
fn real_mixtral_moe_nonzero_meets_the_split_into_four() {
    let (_, n) = real("mixtral_moe_ts.onnx");
    // The experts hit (NonZero's bound: 5 rows, as the importer reads the exporter's graph) meet
    // the Split into the 4 experts traced: [1,1] each, fixed.
    assert_eq!(out_bytes(&n, "/moe/experts/Split_output_0"), [b(&[1, 1]); 4]);
    // Each expert's token selection stays bounded by top-2 x 5 tokens.
    assert_eq!(out_bytes(&n, "/moe/experts/NonZero_1_output_0"), [b(&[2, 10])]);
    assert_eq!(out_bytes(&n, "/moe/experts/Split_1_output_0"), [b(&[1, 10]); 2]);
}
