//! The evaluator ([`super::eval`]) against values worked out by ONNX's reference semantics,
//! through [`super::shapes::infer`] (each operator's rule, then its evaluation): beside both,
//! so that neither names the other's tests.

use super::eval::TABLE;
use super::proto::tensor_proto::DataType as D;
use super::proto::{AttributeProto, NodeProto};
use super::shapes::{Fail, infer};
use super::values::{Tensor, Val};

const F: i32 = D::Float as i32;
const L: i32 = D::Int64 as i32;

enum A {
    I(i64),
    Is(Vec<i64>),
    S(&'static str),
}

fn node(op: &str, n_in: usize, n_out: usize, attrs: Vec<(&str, A)>) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        input: (0..n_in).map(|i| format!("i{i}")).collect(),
        output: (0..n_out).map(|i| format!("o{i}")).collect(),
        attribute: attrs
            .into_iter()
            .map(|(name, a)| {
                let mut p = AttributeProto { name: Some(name.into()), ..Default::default() };
                match a {
                    A::I(i) => p.i = Some(i),
                    A::Is(v) => p.ints = v,
                    A::S(s) => p.s = Some(s.as_bytes().to_vec().into()),
                }
                p
            })
            .collect(),
        ..Default::default()
    }
}

fn ints(dims: &[u64], v: &[i64]) -> Tensor {
    Tensor::with_value(dims.to_vec(), L, Val::Int(v.to_vec()))
}

fn floats(dims: &[u64], v: &[f64]) -> Tensor {
    Tensor::with_value(dims.to_vec(), F, Val::Float(v.to_vec()))
}

fn run(op: &str, attrs: Vec<(&str, A)>, ins: &[&Tensor], n_out: usize) -> Vec<Tensor> {
    let n = node(op, ins.len(), n_out, attrs);
    let ins: Vec<Option<&Tensor>> = ins.iter().map(|t| Some(*t)).collect();
    match infer(&n, 18, &ins) {
        Ok(o) => o,
        Err(Fail::Bad(m) | Fail::Unknown(m)) => panic!("{op}: {m}"),
        Err(Fail::Unsupported) => panic!("{op}: no rule"),
    }
}

fn val(op: &str, attrs: Vec<(&str, A)>, ins: &[&Tensor]) -> Val {
    run(op, attrs, ins, 1).remove(0).value.unwrap_or_else(|| panic!("{op}: no value"))
}

#[test]
fn every_operator_in_the_table_has_a_shape_rule() {
    for (op, _) in TABLE {
        assert!(super::shapes::has_rule(op), "{op}");
    }
}

#[test]
fn torchscript_pad_amounts_through_reshape_slice_and_transpose() {
    // torch.nn.functional.pad's [left, right, top, bottom] becomes ONNX's [begin..., end...]:
    // Reshape to [-1, 2], Slice reversed along axis 0, Transpose, Reshape to [-1].
    let pads = ints(&[4], &[0, 1, 2, 3]);
    let two = run("Reshape", vec![], &[&pads, &ints(&[2], &[-1, 2])], 1).remove(0);
    assert_eq!(two.dims, [2, 2]);
    let rev = run(
        "Slice",
        vec![],
        &[&two, &ints(&[1], &[-1]), &ints(&[1], &[i64::MIN]), &ints(&[1], &[0]), &ints(&[1], &[-1])],
        1,
    )
    .remove(0);
    assert_eq!(rev.value, Some(Val::Int(vec![2, 3, 0, 1])));
    let t = run("Transpose", vec![("perm", A::Is(vec![1, 0]))], &[&rev], 1).remove(0);
    assert_eq!(t.value, Some(Val::Int(vec![2, 0, 3, 1])));
    let flat = val("Reshape", vec![], &[&t, &ints(&[1], &[-1])]);
    assert_eq!(flat, Val::Int(vec![2, 0, 3, 1]));
}

#[test]
fn resize_sizes_through_reductions_reciprocal_and_floor() {
    // min_size / min(h, w) and max_size / max(h, w), the smaller scale, times the size, floored.
    let hw = floats(&[2], &[480.0, 640.0]);
    let lo = run("ReduceMin", vec![("keepdims", A::I(0))], &[&hw], 1).remove(0);
    assert_eq!((lo.dims.clone(), lo.value.clone()), (vec![], Some(Val::Float(vec![480.0]))));
    let hi = val("ReduceMax", vec![("keepdims", A::I(0))], &[&hw]);
    assert_eq!(hi, Val::Float(vec![640.0]));
    let r = val("Reciprocal", vec![], &[&lo]);
    assert_eq!(r, Val::Float(vec![(1.0f32 / 480.0) as f64]));
    let s = val("Mul", vec![], &[&floats(&[], &[320.0]), &Tensor::with_value(vec![], F, r)]);
    let sized = val("Mul", vec![], &[&hw, &Tensor::with_value(vec![], F, s)]);
    let fl = val("Floor", vec![], &[&Tensor::with_value(vec![2], F, sized)]);
    assert_eq!(fl, Val::Float(vec![320.0, 426.0]));
    let c = val("Cast", vec![("to", A::I(L as i64))], &[&Tensor::with_value(vec![2], F, fl)]);
    assert_eq!(c, Val::Int(vec![320, 426]));
}

#[test]
fn arithmetic_follows_the_reference() {
    let a = ints(&[4], &[7, -7, 7, -7]);
    let b = ints(&[4], &[2, 2, -2, -2]);
    assert_eq!(val("Div", vec![], &[&a, &b]), Val::Int(vec![3, -3, -3, 3]));
    // fmod=0 is numpy's mod (the divisor's sign), fmod=1 C's.
    assert_eq!(val("Mod", vec![], &[&a, &b]), Val::Int(vec![1, 1, -1, -1]));
    assert_eq!(val("Mod", vec![("fmod", A::I(1))], &[&a, &b]), Val::Int(vec![1, -1, 1, -1]));
    // A division by zero leaves the value unknown.
    let z = ints(&[], &[0]);
    assert_eq!(run("Div", vec![], &[&a, &z], 1)[0].value, None);
    assert_eq!(val("Round", vec![], &[&floats(&[4], &[0.5, 1.5, 2.5, -0.5])]), Val::Float(vec![0.0, 2.0, 2.0, -0.0]));
    assert_eq!(val("Pow", vec![], &[&ints(&[2], &[2, 3]), &ints(&[], &[3])]), Val::Int(vec![8, 27]));
    // Broadcasting a column against a row.
    let col = ints(&[2, 1], &[10, 20]);
    let row = ints(&[3], &[1, 2, 3]);
    assert_eq!(val("Add", vec![], &[&col, &row]), Val::Int(vec![11, 12, 13, 21, 22, 23]));
    assert_eq!(val("Less", vec![], &[&col, &ints(&[], &[15])]), Val::Int(vec![1, 0]));
    let cond = Tensor::with_value(vec![2, 1], D::Bool as i32, Val::Int(vec![1, 0]));
    assert_eq!(val("Where", vec![], &[&cond, &row, &ints(&[], &[0])]), Val::Int(vec![1, 2, 3, 0, 0, 0]));
    // FLOAT values are f32: 0.1 + 0.2 rounds as float32 does.
    let s = val("Add", vec![], &[&floats(&[], &[0.1]), &floats(&[], &[0.2])]);
    assert_eq!(s, Val::Float(vec![(0.1f32 + 0.2f32) as f64]));
    assert_eq!(val("Cast", vec![("to", A::I(D::Bool as i64))], &[&floats(&[2], &[0.5, 0.0])]), Val::Int(vec![1, 0]));
    assert_eq!(val("Cast", vec![("to", A::I(D::Int32 as i64))], &[&ints(&[1], &[1 << 32 | 5])]), Val::Int(vec![5]));
}

#[test]
fn data_movement_follows_the_reference() {
    let m = ints(&[2, 3], &[0, 1, 2, 3, 4, 5]);
    assert_eq!(val("Gather", vec![("axis", A::I(1))], &[&m, &ints(&[2], &[2, -3])]), Val::Int(vec![2, 0, 5, 3]));
    assert_eq!(val("Gather", vec![], &[&m, &ints(&[], &[1])]), Val::Int(vec![3, 4, 5]));
    assert_eq!(val("Concat", vec![("axis", A::I(1))], &[&m, &m]), Val::Int(vec![0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5]));
    assert_eq!(val("Tile", vec![], &[&ints(&[2], &[1, 2]), &ints(&[1], &[2])]), Val::Int(vec![1, 2, 1, 2]));
    assert_eq!(val("Expand", vec![], &[&ints(&[2, 1], &[1, 2]), &ints(&[2], &[2, 2])]), Val::Int(vec![1, 1, 2, 2]));
    let parts = run("Split", vec![("axis", A::I(1))], &[&m, &ints(&[2], &[1, 2])], 2);
    assert_eq!(parts[0].value, Some(Val::Int(vec![0, 3])));
    assert_eq!(parts[1].value, Some(Val::Int(vec![1, 2, 4, 5])));
    assert_eq!(val("ReduceSum", vec![("keepdims", A::I(0))], &[&m, &ints(&[1], &[0])]), Val::Int(vec![3, 5, 7]));
    assert_eq!(val("ReduceProd", vec![("keepdims", A::I(1))], &[&m, &ints(&[1], &[1])]), Val::Int(vec![0, 60]));
    assert_eq!(val("ArgMax", vec![("axis", A::I(1))], &[&m]), Val::Int(vec![2, 2]));
    assert_eq!(val("CumSum", vec![], &[&ints(&[3], &[1, 2, 3]), &ints(&[], &[0])]), Val::Int(vec![1, 3, 6]));
    assert_eq!(
        val("CumSum", vec![("exclusive", A::I(1)), ("reverse", A::I(1))], &[&ints(&[3], &[1, 2, 3]), &ints(&[], &[0])]),
        Val::Int(vec![5, 3, 0])
    );
    assert_eq!(val("Pad", vec![], &[&ints(&[2], &[1, 2]), &ints(&[2], &[1, 0])]), Val::Int(vec![0, 1, 2]));
    assert_eq!(val("Unsqueeze", vec![], &[&ints(&[2], &[4, 5]), &ints(&[1], &[0])]), Val::Int(vec![4, 5]));
    assert_eq!(val("Shape", vec![("start", A::I(-1))], &[&m]), Val::Int(vec![3]));
    assert_eq!(val("Range", vec![], &[&ints(&[], &[5]), &ints(&[], &[0]), &ints(&[], &[-2])]), Val::Int(vec![5, 3, 1]));
    let eye = ints(&[2, 2], &[1, 0, 0, 1]);
    assert_eq!(val("MatMul", vec![], &[&m.clone(), &ints(&[3, 1], &[1, 1, 1])]), Val::Int(vec![3, 12]));
    assert_eq!(val("MatMul", vec![], &[&eye, &m]), Val::Int(vec![0, 1, 2, 3, 4, 5]));
    assert_eq!(
        val("BitShift", vec![("direction", A::S("RIGHT"))], &[&ints(&[1], &[8]), &ints(&[1], &[2])]),
        Val::Int(vec![2])
    );
}

#[test]
fn evaluation_is_bounded_in_size() {
    // An output above VALUE_LIMIT elements has no value, whatever its inputs.
    let big = ints(&[2], &[4096, 2]);
    let t = run("ConstantOfShape", vec![], &[&big], 1).remove(0);
    assert_eq!((t.dims, t.value), (vec![4096, 2], None));
    let t = run("Tile", vec![], &[&ints(&[2], &[1, 2]), &ints(&[1], &[4096])], 1).remove(0);
    assert_eq!((t.dims, t.value), (vec![8192], None));
    // A bounded (data-dependent) input has no value to read.
    let mut nz = ints(&[2], &[1, 2]);
    nz.bound = 1;
    assert_eq!(run("Neg", vec![], &[&nz], 1)[0].value, None);
}
