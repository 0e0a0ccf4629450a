//! The evaluator over known values: the output values of a node whose inputs' values are known,
//! by ONNX's reference semantics (onnx/onnx, `onnx/reference/ops/op_*.py`), so that the constant
//! arithmetic exporters write in front of a shape (Pad amounts through Transpose and Slice,
//! Resize sizes through ReduceMin, Reciprocal and Floor, Reshape targets through Gather and
//! Concat) folds to the numbers the shape rules need.
//!
//! One table ([`TABLE`]) maps an operator to its evaluation. Shape inference runs first and fixes
//! every output's dims and element type; the evaluator only fills values. It runs when every
//! output has at most [`VALUE_LIMIT`] elements, so no operation allocates more than that per
//! output, and each one touches every input and output element a bounded number of times (at
//! most rank-many index steps; the few with an inner loop, MatMul and CumSum, are held under
//! [`WORK_LIMIT`]): time and memory are linear in the model's size whatever its numbers say.
//!
//! Float values are computed in f64 and rounded to the element type's precision after each node
//! (f32 for FLOAT, f16 and bfloat16 via f32), integers wrap to their type's width, as the
//! reference's numpy arrays do. A value the reference leaves undefined (an integer division by
//! zero, a cast of NaN to an integer, a negative integer power) leaves the output unknown.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::attrs::Attrs;
use super::proto::tensor_proto::DataType as D;
use super::values::{Tensor, VALUE_LIMIT, Val, is_int_type, numel};

/// The most element steps one evaluation with an inner loop (MatMul, CumSum) may take.
pub const WORK_LIMIT: u64 = 1 << 20;

/// What an evaluation reads: the node's attributes, its inputs and its inferred outputs.
pub struct Ev<'a> {
    pub a: &'a Attrs<'a>,
    pub ins: &'a [Option<&'a Tensor>],
    pub outs: &'a [Tensor],
    pub op: &'a str,
}

impl<'a> Ev<'a> {
    fn t(&self, i: usize) -> Option<&'a Tensor> {
        self.ins.get(i).copied().flatten()
    }

    /// Input `i`'s value; `None` when the input is absent or its value unknown.
    fn v(&self, i: usize) -> Option<&'a Val> {
        self.t(i)?.value.as_ref()
    }

    fn out(&self, k: usize) -> Option<&'a Tensor> {
        self.outs.get(k)
    }
}

type EvalFn = fn(&Ev) -> Option<Vec<Val>>;

/// Every operator the evaluator knows, with its evaluation.
pub(super) const TABLE: &[(&str, EvalFn)] = &[
    ("Identity", same),
    ("Reshape", same),
    ("Flatten", same),
    ("Squeeze", same),
    ("Unsqueeze", same),
    ("Neg", unary),
    ("Abs", unary),
    ("Sign", unary),
    ("Floor", unary),
    ("Ceil", unary),
    ("Round", unary),
    ("Reciprocal", unary),
    ("Sqrt", unary),
    ("Exp", unary),
    ("Log", unary),
    ("Relu", unary),
    ("Not", unary),
    ("IsNaN", unary),
    ("IsInf", unary),
    ("Cast", cast),
    ("CastLike", cast),
    ("Add", binary),
    ("Sub", binary),
    ("Mul", binary),
    ("Div", binary),
    ("Mod", binary),
    ("Pow", binary),
    ("Max", binary),
    ("Min", binary),
    ("Sum", binary),
    ("Mean", binary),
    ("Equal", binary),
    ("Greater", binary),
    ("GreaterOrEqual", binary),
    ("Less", binary),
    ("LessOrEqual", binary),
    ("And", binary),
    ("Or", binary),
    ("Xor", binary),
    ("BitShift", binary),
    ("BitwiseAnd", binary),
    ("BitwiseOr", binary),
    ("BitwiseXor", binary),
    ("Where", where_),
    ("Clip", clip),
    ("Transpose", transpose),
    ("Slice", slice),
    ("Gather", gather),
    ("GatherElements", gather_elements),
    ("Concat", concat),
    ("Split", split),
    ("Expand", expand),
    ("Tile", tile),
    ("Pad", pad),
    ("ReduceSum", reduce),
    ("ReduceProd", reduce),
    ("ReduceMin", reduce),
    ("ReduceMax", reduce),
    ("ReduceMean", reduce),
    ("ReduceL1", reduce),
    ("ReduceSumSquare", reduce),
    ("ArgMax", arg_reduce),
    ("ArgMin", arg_reduce),
    ("CumSum", cumsum),
    ("MatMul", matmul),
    ("Shape", shape),
    ("Size", size),
    ("ConstantOfShape", constant_of_shape),
    ("Range", range),
];

fn table() -> &'static HashMap<&'static str, EvalFn> {
    static T: OnceLock<HashMap<&'static str, EvalFn>> = OnceLock::new();
    T.get_or_init(|| TABLE.iter().copied().collect())
}

/// Whether the evaluator has an entry for `op`.
pub fn knows(op: &str) -> bool {
    table().contains_key(op)
}

/// Fills the values of `outs` (already shaped by inference) when `op` is in the table, every
/// output is small and has no data-dependent dimension, and the inputs it reads are known.
pub fn evaluate(op: &str, a: &Attrs, ins: &[Option<&Tensor>], outs: &mut [Tensor]) {
    if outs.is_empty() || outs.iter().any(|t| t.numel() > VALUE_LIMIT || t.bound != 0) {
        return;
    }
    // A value read from a data-dependent tensor would only be a bound, not a value.
    if ins.iter().flatten().any(|t| t.bound != 0 && t.value.is_some()) {
        return;
    }
    let Some(f) = table().get(op) else { return };
    let vals = f(&Ev { a, ins, outs, op });
    let Some(vals) = vals else { return };
    if vals.len() != outs.len() || vals.iter().zip(outs.iter()).any(|(v, t)| v.len() as u64 != t.numel()) {
        return;
    }
    for (t, v) in outs.iter_mut().zip(vals) {
        t.value = narrow(t.elem, v);
    }
}

/// A value as an element of type `elem` holds it: floats rounded to the type's precision,
/// integers wrapped to its width, BOOL as 0/1; `None` for a float in an integer type that has no
/// integer value (NaN, infinity) and for types whose values are not kept (strings).
pub fn narrow(elem: i32, v: Val) -> Option<Val> {
    let ty = D::try_from(elem).ok();
    if is_int_type(elem) {
        let ints = match v {
            Val::Int(x) => x,
            Val::Float(x) => {
                if x.iter().any(|f| !f.is_finite()) {
                    return None;
                }
                // The reference casts with numpy's astype: truncation toward zero.
                x.iter().map(|&f| f.trunc().clamp(i64::MIN as f64, i64::MAX as f64) as i64).collect()
            }
        };
        let wrap = |i: i64| -> i64 {
            match ty {
                Some(D::Bool) => (i != 0) as i64,
                Some(D::Int8) => i as i8 as i64,
                Some(D::Uint8) => i as u8 as i64,
                Some(D::Int16) => i as i16 as i64,
                Some(D::Uint16) => i as u16 as i64,
                Some(D::Int32) => i as i32 as i64,
                Some(D::Uint32) => i as u32 as i64,
                _ => i,
            }
        };
        return Some(Val::Int(ints.into_iter().map(wrap).collect()));
    }
    match ty {
        Some(D::Float | D::Float16 | D::Bfloat16) => {
            Some(Val::Float(v.floats().into_iter().map(|f| f as f32 as f64).collect()))
        }
        Some(D::Double) => Some(Val::Float(v.floats())),
        // An element type not recorded (an operator without a rule): keep the value as computed.
        None if elem == 0 => Some(v),
        _ => None,
    }
}

fn same(e: &Ev) -> Option<Vec<Val>> {
    Some(vec![e.v(0)?.clone()])
}

fn unary(e: &Ev) -> Option<Vec<Val>> {
    let x = e.v(0)?;
    let out_int = is_int_type(e.out(0)?.elem);
    let v = match (e.op, x) {
        ("Not", _) => Val::Int(x.ints().iter().map(|&i| (i == 0) as i64).collect()),
        ("IsNaN", Val::Float(f)) => Val::Int(f.iter().map(|f| f.is_nan() as i64).collect()),
        ("IsInf", Val::Float(f)) => Val::Int(f.iter().map(|f| f.is_infinite() as i64).collect()),
        ("IsNaN" | "IsInf", Val::Int(i)) => Val::Int(vec![0; i.len()]),
        (op, Val::Int(i)) if out_int && !matches!(op, "Reciprocal" | "Sqrt" | "Exp" | "Log") => {
            Val::Int(i.iter().map(|&i| int_unary(op, i)).collect())
        }
        (op, _) => Val::Float(x.floats().iter().map(|&f| float_unary(op, f)).collect()),
    };
    Some(vec![v])
}

fn int_unary(op: &str, i: i64) -> i64 {
    match op {
        "Neg" => i.wrapping_neg(),
        "Abs" => i.wrapping_abs(),
        "Sign" => i.signum(),
        "Relu" => i.max(0),
        _ => i, // Floor, Ceil, Round of an integer
    }
}

fn float_unary(op: &str, f: f64) -> f64 {
    match op {
        "Neg" => -f,
        "Abs" => f.abs(),
        "Sign" => {
            if f == 0.0 || f.is_nan() {
                f
            } else {
                f.signum()
            }
        }
        "Floor" => f.floor(),
        "Ceil" => f.ceil(),
        "Round" => f.round_ties_even(),
        "Reciprocal" => 1.0 / f,
        "Sqrt" => f.sqrt(),
        "Exp" => f.exp(),
        "Log" => f.ln(),
        "Relu" => f.max(0.0),
        _ => f,
    }
}

fn cast(e: &Ev) -> Option<Vec<Val>> {
    let x = e.v(0)?;
    let to = e.out(0)?.elem;
    // Cast to BOOL is "nonzero", also from floats (narrow truncates, which would make 0.5 false).
    if to == D::Bool as i32 {
        return Some(vec![Val::Int(x.floats().iter().map(|&f| (f != 0.0) as i64).collect())]);
    }
    Some(vec![x.clone()])
}

/// Strides of a row-major tensor of `dims`.
fn strides(dims: &[u64]) -> Vec<usize> {
    let mut s = vec![1usize; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1] as usize;
    }
    s
}

/// For each element of a tensor of `out` dims in row-major order, `f(coordinates)`.
fn per_coord<T>(out: &[u64], mut f: impl FnMut(&[u64]) -> T) -> Vec<T> {
    let n = numel(out) as usize;
    let mut r = Vec::with_capacity(n);
    let mut c = vec![0u64; out.len()];
    for _ in 0..n {
        r.push(f(&c));
        for k in (0..out.len()).rev() {
            c[k] += 1;
            if c[k] < out[k] {
                break;
            }
            c[k] = 0;
        }
    }
    r
}

/// For each element of a tensor of `out` dims, the element of a tensor of `dims` that numpy
/// broadcasting reads.
pub fn bcast_index(dims: &[u64], out: &[u64]) -> Vec<usize> {
    let r = out.len();
    let st = strides(dims);
    let mut eff = vec![0usize; r];
    for i in 0..dims.len() {
        eff[i + r - dims.len()] = if dims[i] == 1 { 0 } else { st[i] };
    }
    per_coord(out, |c| c.iter().zip(&eff).map(|(&c, &s)| c as usize * s).sum())
}

/// `v`'s elements at `idx`.
fn pick(v: &Val, idx: &[usize]) -> Option<Val> {
    Some(match v {
        Val::Int(x) => Val::Int(idx.iter().map(|&i| x.get(i).copied()).collect::<Option<_>>()?),
        Val::Float(x) => Val::Float(idx.iter().map(|&i| x.get(i).copied()).collect::<Option<_>>()?),
    })
}

fn binary(e: &Ev) -> Option<Vec<Val>> {
    let out = e.out(0)?;
    let ts: Vec<&Tensor> = e.ins.iter().flatten().copied().collect();
    let vals: Vec<&Val> = ts.iter().map(|t| t.value.as_ref()).collect::<Option<_>>()?;
    let idx: Vec<Vec<usize>> = ts.iter().map(|t| bcast_index(&t.dims, &out.dims)).collect();
    let n = out.numel() as usize;
    let all_int = vals.iter().all(|v| matches!(v, Val::Int(_)));
    let fmod = e.a.i_or("fmod", 0) != 0;
    let left = e.a.s("direction").as_deref() != Some("RIGHT");
    if all_int && e.op != "Mean" {
        let xs: Vec<Vec<i64>> = vals.iter().map(|v| v.ints()).collect();
        let mut r = Vec::with_capacity(n);
        for k in 0..n {
            let mut acc = xs[0][idx[0][k]];
            for j in 1..xs.len() {
                acc = int_binary(e.op, acc, xs[j][idx[j][k]], fmod, left)?;
            }
            r.push(acc);
        }
        return Some(vec![Val::Int(r)]);
    }
    let xs: Vec<Vec<f64>> = vals.iter().map(|v| v.floats()).collect();
    let mut r = Vec::with_capacity(n);
    for k in 0..n {
        let mut acc = xs[0][idx[0][k]];
        for j in 1..xs.len() {
            acc = float_binary(e.op, acc, xs[j][idx[j][k]], fmod)?;
        }
        if e.op == "Mean" {
            acc /= xs.len() as f64;
        }
        r.push(acc);
    }
    Some(vec![Val::Float(r)])
}

fn int_binary(op: &str, a: i64, b: i64, fmod: bool, left: bool) -> Option<i64> {
    Some(match op {
        "Add" | "Sum" => a.wrapping_add(b),
        "Sub" => a.wrapping_sub(b),
        "Mul" => a.wrapping_mul(b),
        // numpy's true division cast back to the integer type: truncation toward zero.
        "Div" => a.checked_div(b)?,
        "Mod" => {
            let r = a.checked_rem(b)?;
            // fmod=0 is numpy's mod: the sign of the divisor.
            if !fmod && r != 0 && ((r < 0) != (b < 0)) { r + b } else { r }
        }
        "Pow" => a.checked_pow(u32::try_from(b).ok()?)?,
        "Max" => a.max(b),
        "Min" => a.min(b),
        "Equal" => (a == b) as i64,
        "Greater" => (a > b) as i64,
        "GreaterOrEqual" => (a >= b) as i64,
        "Less" => (a < b) as i64,
        "LessOrEqual" => (a <= b) as i64,
        "And" => (a != 0 && b != 0) as i64,
        "Or" => (a != 0 || b != 0) as i64,
        "Xor" => ((a != 0) != (b != 0)) as i64,
        "BitwiseAnd" => a & b,
        "BitwiseOr" => a | b,
        "BitwiseXor" => a ^ b,
        "BitShift" => {
            let s = u32::try_from(b).ok().filter(|&s| s < 64)?;
            if left { ((a as u64) << s) as i64 } else { ((a as u64) >> s) as i64 }
        }
        _ => return None,
    })
}

fn float_binary(op: &str, a: f64, b: f64, fmod: bool) -> Option<f64> {
    let t = |c: bool| c as i64 as f64;
    Some(match op {
        "Add" | "Sum" | "Mean" => a + b,
        "Sub" => a - b,
        "Mul" => a * b,
        "Div" => a / b,
        "Mod" => {
            let r = a % b;
            if !fmod && r != 0.0 && ((r < 0.0) != (b < 0.0)) { r + b } else { r }
        }
        "Pow" => a.powf(b),
        // numpy's maximum and minimum propagate NaN.
        "Max" => {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.max(b)
            }
        }
        "Min" => {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.min(b)
            }
        }
        "Equal" => t(a == b),
        "Greater" => t(a > b),
        "GreaterOrEqual" => t(a >= b),
        "Less" => t(a < b),
        "LessOrEqual" => t(a <= b),
        "And" => t(a != 0.0 && b != 0.0),
        "Or" => t(a != 0.0 || b != 0.0),
        "Xor" => t((a != 0.0) != (b != 0.0)),
        _ => return None,
    })
}

fn where_(e: &Ev) -> Option<Vec<Val>> {
    let out = &e.out(0)?.dims;
    let (c, x, y) = (e.v(0)?.ints(), e.v(1)?, e.v(2)?);
    let ic = bcast_index(&e.t(0)?.dims, out);
    let ix = bcast_index(&e.t(1)?.dims, out);
    let iy = bcast_index(&e.t(2)?.dims, out);
    let sel = |k: usize| if c[ic[k]] != 0 { (true, ix[k]) } else { (false, iy[k]) };
    Some(vec![match (x, y) {
        (Val::Int(x), Val::Int(y)) => Val::Int(
            (0..ic.len())
                .map(|k| match sel(k) {
                    (true, i) => x[i],
                    (false, i) => y[i],
                })
                .collect(),
        ),
        _ => {
            let (x, y) = (x.floats(), y.floats());
            Val::Float(
                (0..ic.len())
                    .map(|k| match sel(k) {
                        (true, i) => x[i],
                        (false, i) => y[i],
                    })
                    .collect(),
            )
        }
    }])
}

fn clip(e: &Ev) -> Option<Vec<Val>> {
    let x = e.v(0)?;
    // Opset 11+: min and max are optional scalar inputs; before, attributes.
    let bound = |i: usize, attr: &str| -> Option<Option<f64>> {
        match e.t(i) {
            Some(t) => Some(Some(*t.value.as_ref()?.floats().first()?)),
            None => Some(e.a.f(attr).map(|f| f as f64)),
        }
    };
    let (lo, hi) = (bound(1, "min")?, bound(2, "max")?);
    let v = match x {
        Val::Int(i) => Val::Int(
            i.iter()
                .map(|&v| {
                    let v = lo.map_or(v, |l| v.max(l as i64));
                    hi.map_or(v, |h| v.min(h as i64))
                })
                .collect(),
        ),
        Val::Float(f) => Val::Float(
            f.iter()
                .map(|&v| {
                    let v = lo.map_or(v, |l| v.max(l));
                    hi.map_or(v, |h| v.min(h))
                })
                .collect(),
        ),
    };
    Some(vec![v])
}

fn transpose(e: &Ev) -> Option<Vec<Val>> {
    let x = e.t(0)?;
    let r = x.rank();
    let perm: Vec<usize> = match e.a.ints("perm") {
        Some(p) => p.iter().map(|&v| usize::try_from(v).ok().filter(|&v| v < r)).collect::<Option<_>>()?,
        None => (0..r).rev().collect(),
    };
    let st = strides(&x.dims);
    let idx = per_coord(&e.out(0)?.dims, |c| c.iter().zip(&perm).map(|(&c, &p)| c as usize * st[p]).sum());
    Some(vec![pick(x.value.as_ref()?, &idx)?])
}

/// Per axis of `x`, the first element read and the step (Slice's clamped starts and steps).
fn slice_ranges(e: &Ev, x: &Tensor) -> Option<Vec<(i64, i64)>> {
    let ints = |i: usize| -> Option<Option<Vec<i64>>> {
        match e.t(i) {
            Some(t) => Some(Some(t.value.as_ref()?.ints())),
            None => Some(None),
        }
    };
    let (starts, axes, steps) =
        if e.a.has("starts") { (e.a.ints("starts")?, e.a.ints("axes"), None) } else { (ints(1)??, ints(3)?, ints(4)?) };
    let r = x.rank() as i64;
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let mut ranges: Vec<(i64, i64)> = vec![(0, 1); x.rank()];
    for (k, &ax) in axes.iter().enumerate() {
        let ax = if ax < 0 { ax + r } else { ax };
        let d = *x.dims.get(usize::try_from(ax).ok()?)? as i64;
        let step = steps.as_ref().map_or(Some(1), |s| s.get(k).copied())?;
        let s = *starts.get(k)?;
        let s = if s < 0 { s.saturating_add(d) } else { s };
        let s = if step > 0 { s.clamp(0, d) } else { s.clamp(0, d - 1) };
        ranges[ax as usize] = (s, step);
    }
    Some(ranges)
}

fn slice(e: &Ev) -> Option<Vec<Val>> {
    let x = e.t(0)?;
    let ranges = slice_ranges(e, x)?;
    let st = strides(&x.dims);
    let idx = per_coord(&e.out(0)?.dims, |c| {
        c.iter().zip(&ranges).zip(&st).map(|((&c, &(s, step)), &st)| (s + c as i64 * step) as usize * st).sum()
    });
    Some(vec![pick(x.value.as_ref()?, &idx)?])
}

fn axis(e: &Ev, rank: usize, default: i64) -> Option<usize> {
    let a = e.a.i_or("axis", default);
    let a = if a < 0 { a + rank as i64 } else { a };
    usize::try_from(a).ok().filter(|&a| a < rank.max(1))
}

fn gather(e: &Ev) -> Option<Vec<Val>> {
    let (d, i) = (e.t(0)?, e.t(1)?);
    let ax = axis(e, d.rank(), 0)?;
    let n = *d.dims.get(ax)? as i64;
    let iv = i.value.as_ref()?.ints();
    let st = strides(&d.dims);
    let ir = i.rank();
    let ist = strides(&i.dims);
    let idx = per_coord(&e.out(0)?.dims, |c| {
        let k = c[ax..ax + ir].iter().zip(&ist).map(|(&c, &s)| c as usize * s).sum::<usize>();
        let j = iv[k];
        let j = if j < 0 { j + n } else { j };
        if !(0..n).contains(&j) {
            return usize::MAX;
        }
        let pre: usize = c[..ax].iter().zip(&st).map(|(&c, &s)| c as usize * s).sum();
        let post: usize = c[ax + ir..].iter().zip(&st[ax + 1..]).map(|(&c, &s)| c as usize * s).sum();
        pre + j as usize * st[ax] + post
    });
    Some(vec![pick(d.value.as_ref()?, &idx)?])
}

fn gather_elements(e: &Ev) -> Option<Vec<Val>> {
    let (d, i) = (e.t(0)?, e.t(1)?);
    let ax = axis(e, d.rank(), 0)?;
    if d.rank() != i.rank() {
        return None;
    }
    let n = *d.dims.get(ax)? as i64;
    let iv = i.value.as_ref()?.ints();
    let st = strides(&d.dims);
    let mut k = 0;
    let idx = per_coord(&i.dims, |c| {
        let j = iv[k];
        k += 1;
        let j = if j < 0 { j + n } else { j };
        if !(0..n).contains(&j) || c.iter().zip(&d.dims).any(|(&c, &dd)| c >= dd) {
            return usize::MAX;
        }
        c.iter().enumerate().map(|(a, &c)| if a == ax { j as usize } else { c as usize } * st[a]).sum()
    });
    Some(vec![pick(d.value.as_ref()?, &idx)?])
}

fn concat(e: &Ev) -> Option<Vec<Val>> {
    let out = e.out(0)?;
    let ts: Vec<&Tensor> = e.ins.iter().flatten().copied().collect();
    let ax = axis(e, out.rank(), 0)?;
    let vals: Vec<&Val> = ts.iter().map(|t| t.value.as_ref()).collect::<Option<_>>()?;
    // Output position along the axis -> (input, position in it).
    let mut owner = Vec::with_capacity(out.dims[ax] as usize);
    for (k, t) in ts.iter().enumerate() {
        owner.extend((0..*t.dims.get(ax)?).map(|p| (k, p)));
    }
    let sts: Vec<Vec<usize>> = ts.iter().map(|t| strides(&t.dims)).collect();
    let idx = per_coord(&out.dims, |c| {
        let (k, p) = owner[c[ax] as usize];
        let flat: usize =
            c.iter().enumerate().map(|(a, &c)| if a == ax { p as usize } else { c as usize } * sts[k][a]).sum();
        (k, flat)
    });
    let all_int = vals.iter().all(|v| matches!(v, Val::Int(_)));
    Some(vec![if all_int {
        let xs: Vec<Vec<i64>> = vals.iter().map(|v| v.ints()).collect();
        Val::Int(idx.iter().map(|&(k, i)| xs[k].get(i).copied()).collect::<Option<_>>()?)
    } else {
        let xs: Vec<Vec<f64>> = vals.iter().map(|v| v.floats()).collect();
        Val::Float(idx.iter().map(|&(k, i)| xs[k].get(i).copied()).collect::<Option<_>>()?)
    }])
}

fn split(e: &Ev) -> Option<Vec<Val>> {
    let x = e.t(0)?;
    let v = x.value.as_ref()?;
    let ax = axis(e, x.rank(), 0)?;
    let st = strides(&x.dims);
    let mut offset = 0usize;
    let mut vals = Vec::with_capacity(e.outs.len());
    for o in e.outs {
        let idx = per_coord(&o.dims, |c| {
            c.iter().enumerate().map(|(a, &c)| if a == ax { c as usize + offset } else { c as usize } * st[a]).sum()
        });
        offset += *o.dims.get(ax)? as usize;
        vals.push(pick(v, &idx)?);
    }
    Some(vals)
}

fn expand(e: &Ev) -> Option<Vec<Val>> {
    let x = e.t(0)?;
    Some(vec![pick(x.value.as_ref()?, &bcast_index(&x.dims, &e.out(0)?.dims))?])
}

fn tile(e: &Ev) -> Option<Vec<Val>> {
    let x = e.t(0)?;
    let st = strides(&x.dims);
    let idx = per_coord(&e.out(0)?.dims, |c| {
        c.iter().zip(&x.dims).zip(&st).map(|((&c, &d), &s)| (c % d.max(1)) as usize * s).sum()
    });
    Some(vec![pick(x.value.as_ref()?, &idx)?])
}

/// Pad in `constant` mode (the value a shape may read); other modes are left unknown.
fn pad(e: &Ev) -> Option<Vec<Val>> {
    let x = e.t(0)?;
    if e.a.s("mode").is_some_and(|m| m != "constant") {
        return None;
    }
    let pads = match e.a.ints("pads") {
        Some(p) => p,
        None => e.v(1)?.ints(),
    };
    let axes: Vec<usize> = match e.t(3) {
        Some(t) => {
            let r = x.rank() as i64;
            let ax = t.value.as_ref()?.ints();
            ax.iter().map(|&a| usize::try_from(if a < 0 { a + r } else { a }).ok()).collect::<Option<_>>()?
        }
        None => (0..x.rank()).collect(),
    };
    let mut begin = vec![0i64; x.rank()];
    for (k, &a) in axes.iter().enumerate() {
        *begin.get_mut(a)? = *pads.get(k)?;
    }
    let fill = match e.t(2) {
        Some(t) => *t.value.as_ref()?.floats().first()?,
        None => e.a.f("value").map_or(0.0, |f| f as f64),
    };
    let st = strides(&x.dims);
    let idx = per_coord(&e.out(0)?.dims, |c| {
        let mut flat = 0usize;
        for (a, &c) in c.iter().enumerate() {
            let p = c as i64 - begin[a];
            if p < 0 || p >= x.dims[a] as i64 {
                return None;
            }
            flat += p as usize * st[a];
        }
        Some(flat)
    });
    Some(vec![match x.value.as_ref()? {
        Val::Int(v) => Val::Int(idx.iter().map(|i| i.map_or(fill as i64, |i| v[i])).collect()),
        Val::Float(v) => Val::Float(idx.iter().map(|i| i.map_or(fill, |i| v[i])).collect()),
    }])
}

/// The reduced axes of a Reduce* node (attribute before opset 18, input after), all when none.
fn reduced_axes(e: &Ev, rank: usize) -> Option<Vec<bool>> {
    let axes = match (e.a.ints("axes"), e.t(1)) {
        (Some(a), _) => a,
        (None, Some(t)) => t.value.as_ref()?.ints(),
        (None, None) => Vec::new(),
    };
    if axes.is_empty() {
        // noop_with_empty_axes: the input itself; shape inference gives it unchanged.
        return Some(vec![e.a.i_or("noop_with_empty_axes", 0) == 0; rank]);
    }
    let mut m = vec![false; rank];
    for a in axes {
        let a = if a < 0 { a + rank as i64 } else { a };
        *m.get_mut(usize::try_from(a).ok()?)? = true;
    }
    Some(m)
}

/// For each input element, the output element it reduces into.
fn reduce_target(x: &Tensor, m: &[bool]) -> Vec<usize> {
    let kept: Vec<u64> = x.dims.iter().zip(m).map(|(&d, &r)| if r { 1 } else { d }).collect();
    let st = strides(&kept);
    per_coord(&x.dims, |c| c.iter().zip(&st).zip(m).map(|((&c, &s), &r)| if r { 0 } else { c as usize * s }).sum())
}

fn reduce(e: &Ev) -> Option<Vec<Val>> {
    let x = e.t(0)?;
    let v = x.value.as_ref()?;
    let m = reduced_axes(e, x.rank())?;
    let n = e.out(0)?.numel() as usize;
    let target = reduce_target(x, &m);
    let count = (x.numel() as usize).checked_div(n).unwrap_or(0).max(1) as f64;
    if let (Val::Int(xs), "ReduceSum" | "ReduceProd" | "ReduceMin" | "ReduceMax" | "ReduceL1" | "ReduceSumSquare") =
        (v, e.op)
    {
        let acc = fold_reduce(e.op, [1, i64::MAX, i64::MIN, 0], &target, n, xs.iter().copied(), |a, x| {
            Some(match e.op {
                "ReduceProd" => a.wrapping_mul(x),
                "ReduceMin" => a.min(x),
                "ReduceMax" => a.max(x),
                "ReduceL1" => a.wrapping_add(x.wrapping_abs()),
                "ReduceSumSquare" => a.wrapping_add(x.wrapping_mul(x)),
                _ => a.wrapping_add(x),
            })
        })?;
        return Some(vec![Val::Int(acc)]);
    }
    let init = [1.0, f64::INFINITY, f64::NEG_INFINITY, 0.0];
    let mut acc = fold_reduce(e.op, init, &target, n, v.floats(), |a, x| {
        Some(match e.op {
            "ReduceProd" => a * x,
            "ReduceMin" => float_binary("Min", a, x, false)?,
            "ReduceMax" => float_binary("Max", a, x, false)?,
            "ReduceL1" => a + x.abs(),
            "ReduceSumSquare" => a + x * x,
            _ => a + x,
        })
    })?;
    if e.op == "ReduceMean" {
        acc.iter_mut().for_each(|a| *a /= count);
    }
    Some(vec![Val::Float(acc)])
}

/// Folds each input element into the output element `target` names, each output starting
/// from the operator's identity (`ids`: ReduceProd's, ReduceMin's, ReduceMax's, the sums').
fn fold_reduce<T: Copy>(
    op: &str,
    ids: [T; 4],
    target: &[usize],
    n: usize,
    xs: impl IntoIterator<Item = T>,
    f: impl Fn(T, T) -> Option<T>,
) -> Option<Vec<T>> {
    let init = match op {
        "ReduceProd" => ids[0],
        "ReduceMin" => ids[1],
        "ReduceMax" => ids[2],
        _ => ids[3],
    };
    let mut acc = vec![init; n];
    for (&t, x) in target.iter().zip(xs) {
        acc[t] = f(acc[t], x)?;
    }
    Some(acc)
}

fn arg_reduce(e: &Ev) -> Option<Vec<Val>> {
    let x = e.t(0)?;
    let ax = axis(e, x.rank(), 0)?;
    let f = x.value.as_ref()?.floats();
    let mut m = vec![false; x.rank()];
    *m.get_mut(ax)? = true;
    let target = reduce_target(x, &m);
    let n = e.out(0)?.numel() as usize;
    let last = e.a.i_or("select_last_index", 0) != 0;
    let max = e.op == "ArgMax";
    let mut best: Vec<Option<(f64, i64)>> = vec![None; n];
    let pos = per_coord(&x.dims, |c| c[ax] as i64);
    for ((&t, &v), &p) in target.iter().zip(&f).zip(&pos) {
        let better = match best[t] {
            None => true,
            Some((b, _)) => (if max { v > b } else { v < b }) || (last && v == b),
        };
        if better {
            best[t] = Some((v, p));
        }
    }
    Some(vec![Val::Int(best.iter().map(|b| b.map_or(0, |b| b.1)).collect())])
}

fn cumsum(e: &Ev) -> Option<Vec<Val>> {
    let x = e.t(0)?;
    let r = x.rank() as i64;
    let ax = *e.v(1)?.ints().first()?;
    let ax = usize::try_from(if ax < 0 { ax + r } else { ax }).ok().filter(|&a| a < x.rank())?;
    let (excl, rev) = (e.a.i_or("exclusive", 0) != 0, e.a.i_or("reverse", 0) != 0);
    let d = x.dims[ax];
    if x.numel().saturating_mul(d) > WORK_LIMIT {
        return None;
    }
    let st = strides(&x.dims);
    // Each output element: the sum over the positions along the axis it covers.
    let covers = |c: &[u64]| -> Vec<usize> {
        let p = c[ax];
        let base: usize = c.iter().zip(&st).map(|(&c, &s)| c as usize * s).sum::<usize>() - p as usize * st[ax];
        let range: Vec<u64> = match (rev, excl) {
            (false, false) => (0..=p).collect(),
            (false, true) => (0..p).collect(),
            (true, false) => (p..d).collect(),
            (true, true) => (p + 1..d).collect(),
        };
        range.into_iter().map(|q| base + q as usize * st[ax]).collect()
    };
    let groups = per_coord(&x.dims, covers);
    Some(vec![match x.value.as_ref()? {
        Val::Int(v) => Val::Int(groups.iter().map(|g| g.iter().fold(0i64, |a, &i| a.wrapping_add(v[i]))).collect()),
        Val::Float(v) => Val::Float(groups.iter().map(|g| g.iter().map(|&i| v[i]).sum()).collect()),
    }])
}

/// MatMul of known 1-D or 2-D values (a shape may come from a small product); others unknown.
fn matmul(e: &Ev) -> Option<Vec<Val>> {
    let (a, b) = (e.t(0)?, e.t(1)?);
    if a.rank() > 2 || b.rank() > 2 || a.rank() == 0 || b.rank() == 0 {
        return None;
    }
    let (m, k) = if a.rank() == 1 { (1, a.dims[0]) } else { (a.dims[0], a.dims[1]) };
    let n = if b.rank() == 1 { 1 } else { b.dims[1] };
    if b.dims[0] != k || m.saturating_mul(n).saturating_mul(k) > WORK_LIMIT {
        return None;
    }
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let (va, vb) = (e.v(0)?, e.v(1)?);
    Some(vec![match (va, vb) {
        (Val::Int(x), Val::Int(y)) => Val::Int(
            (0..m * n)
                .map(|o| (0..k).fold(0i64, |s, j| s.wrapping_add(x[o / n * k + j].wrapping_mul(y[j * n + o % n]))))
                .collect(),
        ),
        _ => {
            let (x, y) = (va.floats(), vb.floats());
            Val::Float((0..m * n).map(|o| (0..k).map(|j| x[o / n * k + j] * y[j * n + o % n]).sum()).collect())
        }
    }])
}

fn shape(e: &Ev) -> Option<Vec<Val>> {
    // A bounded dimension reads as its bound (docs/onnx-import.md, data-dependent dimensions).
    let x = e.t(0)?;
    let r = x.rank() as i64;
    let clamp = |v: i64| if v < 0 { (v + r).max(0) } else { v.min(r) } as usize;
    let start = clamp(e.a.i_or("start", 0));
    let end = clamp(e.a.i_or("end", r)).max(start);
    Some(vec![Val::Int(x.dims[start..end].iter().map(|&d| d as i64).collect())])
}

fn size(e: &Ev) -> Option<Vec<Val>> {
    Some(vec![Val::Int(vec![e.t(0)?.numel() as i64])])
}

fn constant_of_shape(e: &Ev) -> Option<Vec<Val>> {
    let o = e.out(0)?;
    let n = o.numel() as usize;
    let fill = match e.a.t("value") {
        Some(t) => super::values::from_proto(t, "value").ok()?.value?,
        None => Val::Float(vec![0.0]),
    };
    Some(vec![match fill {
        Val::Int(v) => Val::Int(vec![*v.first()?; n]),
        Val::Float(v) => Val::Float(vec![*v.first()?; n]),
    }])
}

fn range(e: &Ev) -> Option<Vec<Val>> {
    let n = e.out(0)?.numel();
    let (s, d) = (e.v(0)?, e.v(2)?);
    Some(vec![match (s, d) {
        (Val::Int(s), Val::Int(d)) => {
            let (s, d) = (*s.first()?, *d.first()?);
            Val::Int((0..n as i64).map(|i| s.wrapping_add(d.wrapping_mul(i))).collect())
        }
        _ => {
            let (s, d) = (*s.floats().first()?, *d.floats().first()?);
            Val::Float((0..n).map(|i| s + d * i as f64).collect())
        }
    }])
}
