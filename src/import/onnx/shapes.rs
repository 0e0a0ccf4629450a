//! Shape inference: each node's output shapes from its inputs' shapes, its attributes and the
//! values of the small integer tensors that steer shapes. Values are propagated through the
//! shape arithmetic exporters emit (Shape, Gather, Concat, Unsqueeze, Slice, Cast, Add, Mul,
//! Equal, Where, ...), so a Reshape whose target is computed from another tensor's shape still
//! gets a concrete shape.

use super::attrs::Attrs;
use super::proto::NodeProto;
use super::proto::tensor_proto::DataType as D;
use super::values::{Tensor, VALUE_LIMIT, Val, fmt_dims, numel};

/// Why a node's shapes could not be inferred.
#[derive(Debug)]
pub enum Fail {
    /// The importer has no rule for this operator.
    Unsupported,
    /// The node is malformed or its inputs disagree (a message naming what).
    Bad(String),
}

type R<T> = std::result::Result<T, Fail>;

fn bad<T>(msg: impl Into<String>) -> R<T> {
    Err(Fail::Bad(msg.into()))
}

const I64: i32 = D::Int64 as i32;
const BOOL: i32 = D::Bool as i32;
const F32: i32 = D::Float as i32;

/// Output tensors of `node` given its inputs (`None` for an omitted optional input).
pub fn infer(node: &NodeProto, opset: i64, ins: &[Option<&Tensor>]) -> R<Vec<Tensor>> {
    let op = node.op_type.as_deref().unwrap_or("");
    let a = Attrs::of(node);
    let nout = node.output.len().max(1);
    let x = || req(ins, 0);
    let one = |t: Tensor| Ok(vec![t]);
    match op {
        "Identity" => {
            let t = x()?;
            one(t.clone())
        }
        "Relu"
        | "LeakyRelu"
        | "Sigmoid"
        | "HardSigmoid"
        | "HardSwish"
        | "Tanh"
        | "Exp"
        | "Log"
        | "Sqrt"
        | "Reciprocal"
        | "Erf"
        | "Sin"
        | "Cos"
        | "Tan"
        | "Asin"
        | "Acos"
        | "Atan"
        | "Sinh"
        | "Cosh"
        | "Asinh"
        | "Acosh"
        | "Atanh"
        | "Elu"
        | "Selu"
        | "Celu"
        | "Softplus"
        | "Softsign"
        | "Mish"
        | "Gelu"
        | "Clip"
        | "Softmax"
        | "LogSoftmax"
        | "Hardmax"
        | "LRN"
        | "Shrink"
        | "ThresholdedRelu"
        | "CumSum"
        | "Trilu"
        | "InstanceNormalization"
        | "MeanVarianceNormalization"
        | "GroupNormalization"
        | "Bernoulli"
        | "RandomNormalLike"
        | "RandomUniformLike"
        | "EyeLike"
        | "Round"
        | "Swish"
        | "BitwiseNot" => one(Tensor::new(x()?.dims.clone(), x()?.elem)),
        "Neg" | "Abs" | "Floor" | "Ceil" | "Sign" | "Not" => {
            let t = x()?;
            let value = t.value.as_ref().map(|v| unary_value(op, v));
            one(Tensor { dims: t.dims.clone(), elem: t.elem, value })
        }
        "IsNaN" | "IsInf" => one(Tensor::new(x()?.dims.clone(), BOOL)),
        "QuantizeLinear" => {
            let elem = ins.get(2).copied().flatten().map_or(D::Uint8 as i32, |z| z.elem);
            one(Tensor::new(x()?.dims.clone(), elem))
        }
        "DequantizeLinear" => one(Tensor::new(x()?.dims.clone(), F32)),
        "Cast" | "CastLike" => {
            let t = x()?;
            let to = if op == "Cast" { a.i("to").map(|v| v as i32).unwrap_or(t.elem) } else { req(ins, 1)?.elem };
            let value = t
                .value
                .as_ref()
                .map(|v| if super::values::is_int_type(to) { Val::Int(v.ints()) } else { Val::Float(v.floats()) });
            one(Tensor { dims: t.dims.clone(), elem: to, value })
        }
        "Dropout" => {
            let t = x()?;
            let mut out = vec![t.clone()];
            if nout > 1 {
                out.push(Tensor::new(t.dims.clone(), BOOL));
            }
            Ok(out)
        }
        "BatchNormalization" => {
            let t = x()?;
            let c = t.dims.get(1).copied().unwrap_or(1);
            let mut out = vec![Tensor::new(t.dims.clone(), t.elem)];
            for _ in 1..nout {
                out.push(Tensor::new(vec![c], t.elem));
            }
            Ok(out)
        }
        "LayerNormalization" => {
            let t = x()?;
            let axis = norm_axis(a.i_or("axis", -1), t.rank())?;
            let mut stat = t.dims[..axis].to_vec();
            stat.extend(std::iter::repeat_n(1, t.rank() - axis));
            let mut out = vec![Tensor::new(t.dims.clone(), t.elem)];
            for _ in 1..nout {
                out.push(Tensor::new(stat.clone(), F32));
            }
            Ok(out)
        }
        "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Mod" | "PRelu" | "BitShift" | "BitwiseAnd" | "BitwiseOr"
        | "BitwiseXor" | "Sum" | "Mean" | "Max" | "Min" => {
            let ts = present(ins);
            if ts.is_empty() {
                return bad("no inputs");
            }
            let dims = broadcast_all(&ts)?;
            let value = fold_binary(op, &ts, &dims);
            Ok(vec![Tensor { dims, elem: ts[0].elem, value }])
        }
        "Equal" | "Greater" | "GreaterOrEqual" | "Less" | "LessOrEqual" | "And" | "Or" | "Xor" => {
            let ts = vec![req(ins, 0)?, req(ins, 1)?];
            let dims = broadcast_all(&ts)?;
            let value = fold_binary(op, &ts, &dims);
            Ok(vec![Tensor { dims, elem: BOOL, value }])
        }
        "Where" => {
            let ts = vec![req(ins, 0)?, req(ins, 1)?, req(ins, 2)?];
            let dims = broadcast_all(&ts)?;
            let value = fold_where(&ts, &dims);
            Ok(vec![Tensor { dims, elem: ts[1].elem, value }])
        }
        "Conv" => conv(&a, x()?, req(ins, 1)?).map(|t| vec![t]),
        "ConvTranspose" => conv_transpose(&a, x()?, req(ins, 1)?).map(|t| vec![t]),
        "MaxPool" | "AveragePool" | "LpPool" => {
            let t = pool(&a, x()?)?;
            let mut out = vec![t.clone()];
            if nout > 1 {
                out.push(Tensor::new(t.dims, I64));
            }
            Ok(out)
        }
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => {
            let t = x()?;
            if t.rank() < 3 {
                return bad(format!("input shape {} has no spatial dims", fmt_dims(&t.dims)));
            }
            let mut d = t.dims[..2].to_vec();
            d.extend(std::iter::repeat_n(1, t.rank() - 2));
            one(Tensor::new(d, t.elem))
        }
        "MatMul" | "MatMulInteger" => matmul(x()?, req(ins, 1)?).map(|t| vec![t]),
        "Gemm" => {
            let (ta, tb) = (x()?, req(ins, 1)?);
            if ta.rank() != 2 || tb.rank() != 2 {
                return bad(format!("Gemm needs 2-D inputs, got {} and {}", fmt_dims(&ta.dims), fmt_dims(&tb.dims)));
            }
            let (m, k1) = if a.i_or("transA", 0) != 0 { (ta.dims[1], ta.dims[0]) } else { (ta.dims[0], ta.dims[1]) };
            let (k2, n) = if a.i_or("transB", 0) != 0 { (tb.dims[1], tb.dims[0]) } else { (tb.dims[0], tb.dims[1]) };
            if k1 != k2 {
                return bad(format!(
                    "shape conflict: A {} and B {} disagree on the inner dimension ({k1} vs {k2})",
                    fmt_dims(&ta.dims),
                    fmt_dims(&tb.dims)
                ));
            }
            one(Tensor::new(vec![m, n], ta.elem))
        }
        "Concat" => concat(&a, &present(ins)).map(|t| vec![t]),
        "Split" => split(&a, opset, x()?, ins.get(1).copied().flatten(), nout),
        "Slice" => slice(&a, x()?, ins),
        "Gather" => gather(&a, x()?, req(ins, 1)?).map(|t| vec![t]),
        "GatherElements" => one(Tensor::new(req(ins, 1)?.dims.clone(), x()?.elem)),
        "GatherND" => {
            let (d, i) = (x()?, req(ins, 1)?);
            let b = a.i_or("batch_dims", 0).max(0) as usize;
            let last = *i.dims.last().unwrap_or(&0) as usize;
            if i.rank() == 0 || b + last > d.rank() {
                return bad(format!("indices {} do not fit data {}", fmt_dims(&i.dims), fmt_dims(&d.dims)));
            }
            let mut dims = i.dims[..i.rank() - 1].to_vec();
            dims.extend_from_slice(&d.dims[b + last..]);
            one(Tensor::new(dims, d.elem))
        }
        "ScatterElements" | "ScatterND" | "Scatter" => one(Tensor::new(x()?.dims.clone(), x()?.elem)),
        "Reshape" => reshape(&a, x()?, req(ins, 1)?).map(|t| vec![t]),
        "Flatten" => {
            let t = x()?;
            let axis = norm_axis_incl(a.i_or("axis", 1), t.rank())?;
            let d = vec![numel(&t.dims[..axis]), numel(&t.dims[axis..])];
            one(Tensor { dims: d, elem: t.elem, value: t.value.clone() })
        }
        "Squeeze" => squeeze(&a, x()?, ins.get(1).copied().flatten()).map(|t| vec![t]),
        "Unsqueeze" => unsqueeze(&a, x()?, ins.get(1).copied().flatten()).map(|t| vec![t]),
        "Transpose" => {
            let t = x()?;
            let perm: Vec<i64> = a.ints("perm").unwrap_or_else(|| (0..t.rank() as i64).rev().collect());
            if perm.len() != t.rank() {
                return bad(format!("perm {perm:?} does not fit input {}", fmt_dims(&t.dims)));
            }
            let mut seen = vec![false; t.rank()];
            let mut dims = Vec::with_capacity(t.rank());
            for &p in &perm {
                let p = norm_axis(p, t.rank())?;
                if std::mem::replace(&mut seen[p], true) {
                    return bad(format!("perm {perm:?} repeats axis {p}"));
                }
                dims.push(t.dims[p]);
            }
            one(Tensor::new(dims, t.elem))
        }
        "Expand" => {
            let t = x()?;
            let shape = dims_value(req(ins, 1)?, "shape")?;
            let dims = broadcast(&t.dims, &shape)?;
            let value = t.value.as_ref().and_then(|v| expand_value(v, &t.dims, &dims));
            one(Tensor { dims, elem: t.elem, value })
        }
        "Tile" => {
            let t = x()?;
            let reps = ints_value(req(ins, 1)?, "repeats")?;
            if reps.len() != t.rank() || reps.iter().any(|&r| r < 0) {
                return bad(format!("repeats {reps:?} do not fit input {}", fmt_dims(&t.dims)));
            }
            let dims = t.dims.iter().zip(&reps).map(|(&d, &r)| d.saturating_mul(r as u64)).collect();
            one(Tensor::new(dims, t.elem))
        }
        "Resize" | "Upsample" => resize(&a, op, x()?, ins).map(|t| vec![t]),
        "Pad" => pad(&a, x()?, ins).map(|t| vec![t]),
        "DepthToSpace" | "SpaceToDepth" => {
            let t = x()?;
            let b = a.i_or("blocksize", 0);
            if t.rank() != 4 || b <= 0 {
                return bad(format!("needs a 4-D input and blocksize > 0, got {} and {b}", fmt_dims(&t.dims)));
            }
            let b = b as u64;
            let (n, c, h, w) = (t.dims[0], t.dims[1], t.dims[2], t.dims[3]);
            let dims = if op == "DepthToSpace" {
                if c % (b * b) != 0 {
                    return bad(format!("channels {c} not divisible by blocksize² {}", b * b));
                }
                vec![n, c / (b * b), h * b, w * b]
            } else {
                if h % b != 0 || w % b != 0 {
                    return bad(format!("spatial dims {h}x{w} not divisible by blocksize {b}"));
                }
                vec![n, c * b * b, h / b, w / b]
            };
            one(Tensor::new(dims, t.elem))
        }
        "ReduceMean" | "ReduceSum" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL1" | "ReduceL2"
        | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare" => reduce(&a, op, x()?, ins).map(|t| vec![t]),
        "ArgMax" | "ArgMin" => {
            let t = x()?;
            let axis = norm_axis(a.i_or("axis", 0), t.rank())?;
            let keep = a.i_or("keepdims", 1) != 0;
            let mut dims = t.dims.clone();
            if keep {
                dims[axis] = 1;
            } else {
                dims.remove(axis);
            }
            one(Tensor::new(dims, I64))
        }
        "Shape" => {
            let t = x()?;
            let r = t.rank() as i64;
            let clamp = |v: i64| if v < 0 { (v + r).max(0) } else { v.min(r) } as usize;
            let start = clamp(a.i_or("start", 0));
            let end = clamp(a.i_or("end", r));
            let v: Vec<i64> = t.dims[start..end.max(start)].iter().map(|&d| d as i64).collect();
            one(Tensor::with_value(vec![v.len() as u64], I64, Val::Int(v)))
        }
        "Size" => one(Tensor::with_value(vec![], I64, Val::Int(vec![x()?.numel() as i64]))),
        "ConstantOfShape" => {
            let dims = dims_value(x()?, "shape")?;
            let (elem, fill) = match a.t("value") {
                Some(t) => {
                    let v = super::values::from_proto(t, "value").map_err(|e| Fail::Bad(e.message))?;
                    (v.elem, v.value.unwrap_or(Val::Float(vec![0.0])))
                }
                None => (F32, Val::Float(vec![0.0])),
            };
            let n = numel(&dims);
            let value = (n <= VALUE_LIMIT).then(|| match fill {
                Val::Int(v) => Val::Int(vec![v.first().copied().unwrap_or(0); n as usize]),
                Val::Float(v) => Val::Float(vec![v.first().copied().unwrap_or(0.0); n as usize]),
            });
            one(Tensor { dims, elem, value })
        }
        "Constant" => constant(&a).map(|t| vec![t]),
        "Range" => {
            let (s, l, d) = (req(ins, 0)?, req(ins, 1)?, req(ins, 2)?);
            let get = |t: &Tensor, w: &str| -> R<f64> {
                match &t.value {
                    Some(v) if v.len() == 1 => Ok(v.floats()[0]),
                    _ => bad(format!("the {w} of Range is not known at import time (computed from data)")),
                }
            };
            let (s, l, d) = (get(s, "start")?, get(l, "limit")?, get(d, "delta")?);
            if d == 0.0 || !(s.is_finite() && l.is_finite() && d.is_finite()) {
                return bad("Range with delta 0 or a non-finite bound");
            }
            let n = ((l - s) / d).ceil().max(0.0);
            if n > (1u64 << 40) as f64 {
                return bad("Range too long");
            }
            let n = n as u64;
            let elem = req(ins, 0)?.elem;
            let value = (n <= VALUE_LIMIT).then(|| {
                if super::values::is_int_type(elem) {
                    Val::Int((0..n).map(|i| (s + d * i as f64) as i64).collect())
                } else {
                    Val::Float((0..n).map(|i| s + d * i as f64).collect())
                }
            });
            one(Tensor { dims: vec![n], elem, value })
        }
        // Data-dependent sizes: the importer takes the largest the input allows.
        "NonZero" => {
            let t = x()?;
            one(Tensor::new(vec![t.rank() as u64, t.numel()], I64))
        }
        "Unique" => {
            let t = x()?;
            let mut out = vec![Tensor::new(vec![t.numel()], t.elem)];
            for _ in 1..nout {
                out.push(Tensor::new(vec![t.numel()], I64));
            }
            Ok(out)
        }
        "TopK" => {
            let t = x()?;
            let k = match a.i("k") {
                Some(k) => k,
                None => {
                    let v = ints_value(req(ins, 1)?, "k")?;
                    *v.first().unwrap_or(&-1)
                }
            };
            let axis = norm_axis(a.i_or("axis", -1), t.rank())?;
            if k < 0 || k as u64 > t.dims[axis] {
                return bad(format!("k = {k} does not fit axis {axis} of {}", fmt_dims(&t.dims)));
            }
            let mut dims = t.dims.clone();
            dims[axis] = k as u64;
            Ok(vec![Tensor::new(dims.clone(), t.elem), Tensor::new(dims, I64)])
        }
        "OneHot" => {
            let (i, d) = (x()?, req(ins, 1)?);
            let depth = match &d.value {
                Some(v) if v.len() == 1 => v.floats()[0],
                _ => return bad("the depth of OneHot is not known at import time"),
            };
            if !(depth >= 0.0 && depth < (1u64 << 40) as f64) {
                return bad(format!("OneHot depth {depth} is out of range"));
            }
            let r = i.rank() + 1;
            let axis = norm_axis(a.i_or("axis", -1), r)?;
            let mut dims = i.dims.clone();
            dims.insert(axis, depth as u64);
            one(Tensor::new(dims, req(ins, 2)?.elem))
        }
        _ => Err(Fail::Unsupported),
    }
}

fn req<'t>(ins: &[Option<&'t Tensor>], i: usize) -> R<&'t Tensor> {
    match ins.get(i).copied().flatten() {
        Some(t) => Ok(t),
        None => bad(format!("required input {i} is missing")),
    }
}

fn present<'t>(ins: &[Option<&'t Tensor>]) -> Vec<&'t Tensor> {
    ins.iter().filter_map(|t| *t).collect()
}

fn norm_axis(a: i64, rank: usize) -> R<usize> {
    let r = rank as i64;
    let v = if a < 0 { a + r } else { a };
    if v < 0 || v >= r.max(1) && !(r == 0 && v == 0) {
        return bad(format!("axis {a} is out of range for rank {rank}"));
    }
    Ok(v as usize)
}

/// An axis in `[-rank, rank]` (Flatten, Unsqueeze's insertion points).
fn norm_axis_incl(a: i64, rank: usize) -> R<usize> {
    let r = rank as i64;
    let v = if a < 0 { a + r } else { a };
    if v < 0 || v > r {
        return bad(format!("axis {a} is out of range for rank {rank}"));
    }
    Ok(v as usize)
}

fn ints_value(t: &Tensor, what: &str) -> R<Vec<i64>> {
    match &t.value {
        Some(v) => Ok(v.ints()),
        None => bad(format!(
            "the value of '{what}' (shape {}) is not known at import time: it is computed from data, or too large",
            fmt_dims(&t.dims)
        )),
    }
}

fn dims_value(t: &Tensor, what: &str) -> R<Vec<u64>> {
    let v = ints_value(t, what)?;
    v.iter()
        .map(
            |&d| {
                if (0..1 << 40).contains(&d) {
                    Ok(d as u64)
                } else {
                    bad(format!("'{what}' {v:?} holds dimension {d}"))
                }
            },
        )
        .collect()
}

/// Numpy broadcasting of two shapes; a mismatch names both.
pub fn broadcast(a: &[u64], b: &[u64]) -> R<Vec<u64>> {
    let r = a.len().max(b.len());
    let mut out = vec![0; r];
    for i in 0..r {
        let da = if i + a.len() >= r { a[i + a.len() - r] } else { 1 };
        let db = if i + b.len() >= r { b[i + b.len() - r] } else { 1 };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return bad(format!(
                    "shape conflict: {} and {} do not broadcast (dimension {i}: {da} vs {db})",
                    fmt_dims(a),
                    fmt_dims(b)
                ));
            }
        };
    }
    Ok(out)
}

fn broadcast_all(ts: &[&Tensor]) -> R<Vec<u64>> {
    let mut d = ts[0].dims.clone();
    for t in &ts[1..] {
        d = broadcast(&d, &t.dims)?;
    }
    Ok(d)
}

/// For each element of `out`, the element of a tensor of `dims` that broadcasting reads.
fn bcast_index(dims: &[u64], out: &[u64]) -> Vec<usize> {
    let n = numel(out) as usize;
    let r = out.len();
    let mut idx = vec![0usize; n];
    let mut strides = vec![0usize; r];
    let mut s = 1usize;
    for i in (0..dims.len()).rev() {
        let oi = i + r - dims.len();
        strides[oi] = if dims[i] == 1 { 0 } else { s };
        s *= dims[i] as usize;
    }
    let mut coord = vec![0u64; r];
    for slot in idx.iter_mut() {
        *slot = coord.iter().zip(&strides).map(|(&c, &st)| c as usize * st).sum();
        for k in (0..r).rev() {
            coord[k] += 1;
            if coord[k] < out[k] {
                break;
            }
            coord[k] = 0;
        }
    }
    idx
}

fn unary_value(op: &str, v: &Val) -> Val {
    match v {
        Val::Int(x) => Val::Int(
            x.iter()
                .map(|&i| match op {
                    "Neg" => i.wrapping_neg(),
                    "Abs" => i.wrapping_abs(),
                    "Sign" => i.signum(),
                    "Not" => (i == 0) as i64,
                    _ => i,
                })
                .collect(),
        ),
        Val::Float(x) => Val::Float(
            x.iter()
                .map(|&f| match op {
                    "Neg" => -f,
                    "Abs" => f.abs(),
                    "Floor" => f.floor(),
                    "Ceil" => f.ceil(),
                    "Sign" => f.signum(),
                    "Not" => (f == 0.0) as i64 as f64,
                    _ => f,
                })
                .collect(),
        ),
    }
}

fn fold_binary(op: &str, ts: &[&Tensor], out: &[u64]) -> Option<Val> {
    if numel(out) > VALUE_LIMIT || ts.iter().any(|t| t.value.is_none()) {
        return None;
    }
    let idx: Vec<Vec<usize>> = ts.iter().map(|t| bcast_index(&t.dims, out)).collect();
    let n = numel(out) as usize;
    let all_int = ts.iter().all(|t| matches!(t.value, Some(Val::Int(_))));
    if all_int {
        let vals: Vec<Vec<i64>> = ts.iter().map(|t| t.value.as_ref().map(|v| v.ints()).unwrap_or_default()).collect();
        let r = fold_elements(&vals, &idx, n, |acc, b| {
            Some(match op {
                "Add" | "Sum" => acc.wrapping_add(b),
                "Sub" => acc.wrapping_sub(b),
                "Mul" => acc.wrapping_mul(b),
                "Div" => {
                    if b == 0 {
                        return None;
                    }
                    acc.wrapping_div(b)
                }
                "Mod" => {
                    if b == 0 {
                        return None;
                    }
                    acc.wrapping_rem(b)
                }
                "Max" => acc.max(b),
                "Min" => acc.min(b),
                "Equal" => (acc == b) as i64,
                "Greater" => (acc > b) as i64,
                "GreaterOrEqual" => (acc >= b) as i64,
                "Less" => (acc < b) as i64,
                "LessOrEqual" => (acc <= b) as i64,
                "And" => (acc != 0 && b != 0) as i64,
                "Or" => (acc != 0 || b != 0) as i64,
                "Xor" => ((acc != 0) != (b != 0)) as i64,
                _ => return None,
            })
        })?;
        return Some(Val::Int(r));
    }
    let vals: Vec<Vec<f64>> = ts.iter().map(|t| t.value.as_ref().map(|v| v.floats()).unwrap_or_default()).collect();
    let r = fold_elements(&vals, &idx, n, |acc, b| {
        Some(match op {
            "Add" | "Sum" => acc + b,
            "Sub" => acc - b,
            "Mul" => acc * b,
            "Div" => acc / b,
            "Max" => acc.max(b),
            "Min" => acc.min(b),
            "Equal" => (acc == b) as i64 as f64,
            "Greater" => (acc > b) as i64 as f64,
            "Less" => (acc < b) as i64 as f64,
            _ => return None,
        })
    })?;
    match op {
        "Equal" | "Greater" | "Less" => Some(Val::Int(r.iter().map(|&f| f as i64).collect())),
        _ => Some(Val::Float(r)),
    }
}

/// Folds the inputs' broadcast elements left to right with `f`, element by element (`idx[k][e]`:
/// the element of input `k` that output element `e` reads); `None` as soon as `f` gives up.
fn fold_elements<T: Copy>(
    vals: &[Vec<T>],
    idx: &[Vec<usize>],
    n: usize,
    f: impl Fn(T, T) -> Option<T>,
) -> Option<Vec<T>> {
    let mut r = Vec::with_capacity(n);
    for e in 0..n {
        let mut acc = vals[0][idx[0][e]];
        for k in 1..vals.len() {
            acc = f(acc, vals[k][idx[k][e]])?;
        }
        r.push(acc);
    }
    Some(r)
}

fn fold_where(ts: &[&Tensor], out: &[u64]) -> Option<Val> {
    if numel(out) > VALUE_LIMIT || ts.iter().any(|t| t.value.is_none()) {
        return None;
    }
    let idx: Vec<Vec<usize>> = ts.iter().map(|t| bcast_index(&t.dims, out)).collect();
    let c = ts[0].value.as_ref()?.ints();
    match (ts[1].value.as_ref()?, ts[2].value.as_ref()?) {
        (Val::Int(x), Val::Int(y)) => Some(Val::Int(
            (0..idx[0].len()).map(|e| if c[idx[0][e]] != 0 { x[idx[1][e]] } else { y[idx[2][e]] }).collect(),
        )),
        (x, y) => {
            let (x, y) = (x.floats(), y.floats());
            Some(Val::Float(
                (0..idx[0].len()).map(|e| if c[idx[0][e]] != 0 { x[idx[1][e]] } else { y[idx[2][e]] }).collect(),
            ))
        }
    }
}

fn expand_value(v: &Val, dims: &[u64], out: &[u64]) -> Option<Val> {
    if numel(out) > VALUE_LIMIT {
        return None;
    }
    let idx = bcast_index(dims, out);
    Some(match v {
        Val::Int(x) => Val::Int(idx.iter().map(|&i| x[i]).collect()),
        Val::Float(x) => Val::Float(idx.iter().map(|&i| x[i]).collect()),
    })
}

/// Per spatial axis: kernel, stride, dilation, pads (begin, end).
struct Window {
    kernel: Vec<u64>,
    strides: Vec<u64>,
    dilations: Vec<u64>,
    pads: Vec<(u64, u64)>,
    auto_pad: String,
}

fn window(a: &Attrs, spatial: usize, kernel: Vec<u64>) -> R<Window> {
    let get = |name: &str| -> R<Vec<u64>> {
        match a.ints(name) {
            Some(v) if v.len() == spatial && v.iter().all(|&x| (1..1 << 30).contains(&x)) => {
                Ok(v.iter().map(|&x| x as u64).collect())
            }
            Some(v) if !v.is_empty() => bad(format!("attribute {name} {v:?} does not fit {spatial} spatial dims")),
            _ => Ok(vec![1; spatial]),
        }
    };
    let pads = match a.ints("pads") {
        Some(p) if p.len() == 2 * spatial && p.iter().all(|&x| (0..1 << 30).contains(&x)) => {
            (0..spatial).map(|i| (p[i] as u64, p[i + spatial] as u64)).collect()
        }
        Some(p) if !p.is_empty() => return bad(format!("attribute pads {p:?} does not fit {spatial} spatial dims")),
        _ => vec![(0, 0); spatial],
    };
    Ok(Window {
        kernel,
        strides: get("strides")?,
        dilations: get("dilations")?,
        pads,
        auto_pad: a.s("auto_pad").unwrap_or_else(|| "NOTSET".into()),
    })
}

fn window_out(w: &Window, input: &[u64], ceil: bool) -> R<Vec<u64>> {
    let mut out = Vec::with_capacity(input.len());
    for (i, &x) in input.iter().enumerate() {
        let s = w.strides[i];
        let eff = w.dilations[i] * (w.kernel[i].max(1) - 1) + 1;
        let o = match w.auto_pad.as_str() {
            "SAME_UPPER" | "SAME_LOWER" => x.div_ceil(s),
            "VALID" => {
                if x < eff {
                    return bad(format!("window {eff} is larger than input dimension {x}"));
                }
                (x - eff) / s + 1
            }
            _ => {
                let padded = x + w.pads[i].0 + w.pads[i].1;
                if padded < eff {
                    return bad(format!("window {eff} is larger than padded input dimension {padded}"));
                }
                let span = padded - eff;
                let mut o = if ceil { span.div_ceil(s) } else { span / s } + 1;
                // ceil_mode: the last window must start inside the input or its left padding.
                if ceil && (o - 1) * s >= x + w.pads[i].0 {
                    o -= 1;
                }
                o
            }
        };
        out.push(o);
    }
    Ok(out)
}

fn conv(a: &Attrs, x: &Tensor, w: &Tensor) -> R<Tensor> {
    if x.rank() < 3 || w.rank() != x.rank() {
        return bad(format!("input {} and weight {} need the same rank >= 3", fmt_dims(&x.dims), fmt_dims(&w.dims)));
    }
    let g = a.i_or("group", 1);
    if g < 1 {
        return bad(format!("group {g} < 1"));
    }
    let g = g as u64;
    if x.dims[1] != w.dims[1] * g {
        return bad(format!(
            "shape conflict: input {} has {} channels, weight {} with group {g} expects {}",
            fmt_dims(&x.dims),
            x.dims[1],
            fmt_dims(&w.dims),
            w.dims[1] * g
        ));
    }
    let spatial = x.rank() - 2;
    let kernel = match a.ints("kernel_shape") {
        Some(k) if !k.is_empty() => k.iter().map(|&v| v.max(0) as u64).collect(),
        _ => w.dims[2..].to_vec(),
    };
    if kernel.len() != spatial {
        return bad(format!("kernel_shape {kernel:?} does not fit input {}", fmt_dims(&x.dims)));
    }
    let win = window(a, spatial, kernel)?;
    let mut dims = vec![x.dims[0], w.dims[0]];
    dims.extend(window_out(&win, &x.dims[2..], false)?);
    Ok(Tensor::new(dims, x.elem))
}

fn conv_transpose(a: &Attrs, x: &Tensor, w: &Tensor) -> R<Tensor> {
    if x.rank() < 3 || w.rank() != x.rank() {
        return bad(format!("input {} and weight {} need the same rank >= 3", fmt_dims(&x.dims), fmt_dims(&w.dims)));
    }
    let g = a.i_or("group", 1).max(1) as u64;
    if x.dims[1] != w.dims[0] {
        return bad(format!(
            "shape conflict: input {} has {} channels, weight {} expects {}",
            fmt_dims(&x.dims),
            x.dims[1],
            fmt_dims(&w.dims),
            w.dims[0]
        ));
    }
    let spatial = x.rank() - 2;
    let kernel: Vec<u64> = match a.ints("kernel_shape") {
        Some(k) if !k.is_empty() => k.iter().map(|&v| v.max(0) as u64).collect(),
        _ => w.dims[2..].to_vec(),
    };
    if kernel.len() != spatial {
        return bad(format!("kernel_shape {kernel:?} does not fit input {}", fmt_dims(&x.dims)));
    }
    let win = window(a, spatial, kernel)?;
    let mut dims = vec![x.dims[0], w.dims[1] * g];
    if let Some(os) = a.ints("output_shape").filter(|v| !v.is_empty()) {
        let os: Vec<u64> = os.iter().map(|&v| v.max(0) as u64).collect();
        if os.len() != spatial {
            return bad(format!("output_shape {os:?} does not fit input {}", fmt_dims(&x.dims)));
        }
        dims.extend(os);
        return Ok(Tensor::new(dims, x.elem));
    }
    let op = a.ints("output_padding").unwrap_or_default();
    for i in 0..spatial {
        let s = win.strides[i];
        let o = if win.auto_pad.starts_with("SAME") {
            x.dims[2 + i] * s
        } else {
            let full = s * (x.dims[2 + i].max(1) - 1)
                + op.get(i).copied().unwrap_or(0).max(0) as u64
                + (win.kernel[i].max(1) - 1) * win.dilations[i]
                + 1;
            let p = win.pads[i].0 + win.pads[i].1;
            if full < p {
                return bad(format!("pads {p} exceed the output extent {full}"));
            }
            full - p
        };
        dims.push(o);
    }
    Ok(Tensor::new(dims, x.elem))
}

fn pool(a: &Attrs, x: &Tensor) -> R<Tensor> {
    if x.rank() < 3 {
        return bad(format!("input {} has no spatial dims", fmt_dims(&x.dims)));
    }
    let spatial = x.rank() - 2;
    let kernel: Vec<u64> = match a.ints("kernel_shape") {
        Some(k) if k.len() == spatial && k.iter().all(|&v| v > 0) => k.iter().map(|&v| v as u64).collect(),
        k => return bad(format!("kernel_shape {k:?} does not fit input {}", fmt_dims(&x.dims))),
    };
    let win = window(a, spatial, kernel)?;
    let mut dims = x.dims[..2].to_vec();
    dims.extend(window_out(&win, &x.dims[2..], a.i_or("ceil_mode", 0) != 0)?);
    Ok(Tensor::new(dims, x.elem))
}

fn matmul(x: &Tensor, y: &Tensor) -> R<Tensor> {
    if x.rank() == 0 || y.rank() == 0 {
        return bad("MatMul of a scalar");
    }
    let mut a = x.dims.clone();
    let mut b = y.dims.clone();
    let (va, vb) = (a.len() == 1, b.len() == 1);
    if va {
        a.insert(0, 1);
    }
    if vb {
        b.push(1);
    }
    let (m, k1) = (a[a.len() - 2], a[a.len() - 1]);
    let (k2, n) = (b[b.len() - 2], b[b.len() - 1]);
    if k1 != k2 {
        return bad(format!(
            "shape conflict: {} and {} disagree on the inner dimension ({k1} vs {k2})",
            fmt_dims(&x.dims),
            fmt_dims(&y.dims)
        ));
    }
    let mut dims = broadcast(&a[..a.len() - 2], &b[..b.len() - 2])?;
    if !va {
        dims.push(m);
    }
    if !vb {
        dims.push(n);
    }
    Ok(Tensor::new(dims, x.elem))
}

fn concat(a: &Attrs, ts: &[&Tensor]) -> R<Tensor> {
    let Some(first) = ts.first() else { return bad("no inputs") };
    let axis = norm_axis(a.i_or("axis", 0), first.rank())?;
    let mut dims = first.dims.clone();
    for t in &ts[1..] {
        if t.rank() != first.rank() || (0..t.rank()).any(|i| i != axis && t.dims[i] != first.dims[i]) {
            return bad(format!(
                "shape conflict: inputs {} and {} differ outside axis {axis}",
                fmt_dims(&first.dims),
                fmt_dims(&t.dims)
            ));
        }
        dims[axis] += t.dims[axis];
    }
    let value = if first.rank() == 1 && ts.iter().all(|t| t.value.is_some()) && numel(&dims) <= VALUE_LIMIT {
        if ts.iter().all(|t| matches!(t.value, Some(Val::Int(_)))) {
            Some(Val::Int(ts.iter().flat_map(|t| t.value.as_ref().map(|v| v.ints()).unwrap_or_default()).collect()))
        } else {
            Some(Val::Float(ts.iter().flat_map(|t| t.value.as_ref().map(|v| v.floats()).unwrap_or_default()).collect()))
        }
    } else {
        None
    };
    Ok(Tensor { dims, elem: first.elem, value })
}

fn split(a: &Attrs, _opset: i64, x: &Tensor, sizes: Option<&Tensor>, nout: usize) -> R<Vec<Tensor>> {
    let axis = norm_axis(a.i_or("axis", 0), x.rank())?;
    let total = x.dims[axis];
    let parts: Vec<u64> = match (a.ints("split"), sizes) {
        (Some(s), _) if !s.is_empty() => s.iter().map(|&v| v.max(0) as u64).collect(),
        (_, Some(t)) => dims_value(t, "split")?,
        _ => {
            let n = a.i("num_outputs").map(|v| v.max(1) as u64).unwrap_or(nout as u64);
            let chunk = total.div_ceil(n.max(1));
            (0..n).map(|i| chunk.min(total.saturating_sub(i * chunk))).collect()
        }
    };
    if parts.iter().sum::<u64>() != total || parts.len() != nout {
        return bad(format!(
            "shape conflict: split sizes {parts:?} ({} outputs) do not cover axis {axis} of {} ({nout} outputs)",
            parts.len(),
            fmt_dims(&x.dims)
        ));
    }
    Ok(parts
        .iter()
        .map(|&p| {
            let mut d = x.dims.clone();
            d[axis] = p;
            Tensor::new(d, x.elem)
        })
        .collect())
}

fn slice(a: &Attrs, x: &Tensor, ins: &[Option<&Tensor>]) -> R<Vec<Tensor>> {
    let (starts, ends, axes, steps) = if a.has("starts") {
        (a.ints("starts").unwrap_or_default(), a.ints("ends").unwrap_or_default(), a.ints("axes"), None)
    } else {
        let get = |i: usize, w: &str| -> R<Option<Vec<i64>>> {
            match ins.get(i).copied().flatten() {
                Some(t) => ints_value(t, w).map(Some),
                None => Ok(None),
            }
        };
        (get(1, "starts")?.unwrap_or_default(), get(2, "ends")?.unwrap_or_default(), get(3, "axes")?, get(4, "steps")?)
    };
    if starts.len() != ends.len() {
        return bad(format!("starts {starts:?} and ends {ends:?} differ in length"));
    }
    let axes: Vec<usize> = match axes {
        Some(v) => v.iter().map(|&ax| norm_axis(ax, x.rank())).collect::<R<_>>()?,
        None => (0..starts.len()).collect(),
    };
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if axes.len() != starts.len() || steps.len() != starts.len() {
        return bad("starts, ends, axes and steps differ in length");
    }
    let mut dims = x.dims.clone();
    let mut ranges: Vec<(i64, i64, i64)> = x.dims.iter().map(|&d| (0, d as i64, 1)).collect();
    for k in 0..starts.len() {
        let ax = axes[k];
        let d = x.dims[ax] as i64;
        let step = steps[k];
        if step == 0 {
            return bad("Slice step 0");
        }
        let clampi = |v: i64, lo: i64, hi: i64| v.clamp(lo, hi);
        let norm = |v: i64| if v < 0 { v.saturating_add(d) } else { v };
        let (s, e) = if step > 0 {
            (clampi(norm(starts[k]), 0, d), clampi(norm(ends[k]), 0, d))
        } else {
            (clampi(norm(starts[k]), 0, d - 1), clampi(norm(ends[k]), -1, d - 1))
        };
        let n = if step > 0 {
            if e > s { (e - s + step - 1) / step } else { 0 }
        } else if s > e {
            (s - e + (-step) - 1) / (-step)
        } else {
            0
        };
        dims[ax] = n as u64;
        ranges[ax] = (s, e, step);
    }
    let value = match (&x.value, x.rank()) {
        (Some(v), 1) => {
            let (s, _, st) = ranges[0];
            let idx: Vec<usize> = (0..dims[0] as i64).map(|i| (s + i * st) as usize).collect();
            Some(match v {
                Val::Int(w) => Val::Int(idx.iter().filter_map(|&i| w.get(i).copied()).collect()),
                Val::Float(w) => Val::Float(idx.iter().filter_map(|&i| w.get(i).copied()).collect()),
            })
        }
        _ => None,
    };
    Ok(vec![Tensor { dims, elem: x.elem, value }])
}

fn gather(a: &Attrs, d: &Tensor, i: &Tensor) -> R<Tensor> {
    if d.rank() == 0 {
        return bad("Gather from a scalar");
    }
    let axis = norm_axis(a.i_or("axis", 0), d.rank())?;
    let mut dims = d.dims[..axis].to_vec();
    dims.extend_from_slice(&i.dims);
    dims.extend_from_slice(&d.dims[axis + 1..]);
    let value = match (&d.value, &i.value, d.rank()) {
        (Some(v), Some(iv), 1) => {
            let n = d.dims[0] as i64;
            let idx: Option<Vec<usize>> = iv
                .ints()
                .iter()
                .map(|&k| {
                    let k = if k < 0 { k + n } else { k };
                    (0..n).contains(&k).then_some(k as usize)
                })
                .collect();
            idx.map(|idx| match v {
                Val::Int(w) => Val::Int(idx.iter().map(|&k| w[k]).collect()),
                Val::Float(w) => Val::Float(idx.iter().map(|&k| w[k]).collect()),
            })
        }
        _ => None,
    };
    Ok(Tensor { dims, elem: d.elem, value })
}

fn reshape(a: &Attrs, x: &Tensor, s: &Tensor) -> R<Tensor> {
    let target = ints_value(s, "shape")?;
    let allowzero = a.i_or("allowzero", 0) != 0;
    let mut dims = Vec::with_capacity(target.len());
    let mut infer_at = None;
    for (i, &t) in target.iter().enumerate() {
        match t {
            -1 => {
                if infer_at.replace(i).is_some() {
                    return bad(format!("shape {target:?} has two -1 entries"));
                }
                dims.push(1);
            }
            0 if !allowzero => match x.dims.get(i) {
                Some(&d) => dims.push(d),
                None => {
                    return bad(format!(
                        "shape {target:?} copies dimension {i} that input {} lacks",
                        fmt_dims(&x.dims)
                    ));
                }
            },
            t if (0..1 << 40).contains(&t) => dims.push(t as u64),
            t => return bad(format!("shape {target:?} holds dimension {t}")),
        }
    }
    let n = x.numel();
    if let Some(i) = infer_at {
        let rest = numel(&dims);
        if rest == 0 || n % rest != 0 {
            return bad(format!("shape conflict: cannot reshape {} ({n} elements) to {target:?}", fmt_dims(&x.dims)));
        }
        dims[i] = n / rest;
    }
    if numel(&dims) != n {
        return bad(format!(
            "shape conflict: cannot reshape {} ({n} elements) to {} ({} elements)",
            fmt_dims(&x.dims),
            fmt_dims(&dims),
            numel(&dims)
        ));
    }
    Ok(Tensor { dims, elem: x.elem, value: x.value.clone() })
}

fn axes_of(a: &Attrs, t: Option<&Tensor>) -> R<Option<Vec<i64>>> {
    if let Some(v) = a.ints("axes") {
        return Ok(Some(v));
    }
    match t {
        Some(t) => ints_value(t, "axes").map(Some),
        None => Ok(None),
    }
}

fn squeeze(a: &Attrs, x: &Tensor, axes: Option<&Tensor>) -> R<Tensor> {
    let axes = axes_of(a, axes)?;
    let dims: Vec<u64> = match axes {
        Some(ax) => {
            let ax: Vec<usize> = ax.iter().map(|&v| norm_axis(v, x.rank())).collect::<R<_>>()?;
            for &i in &ax {
                if x.dims[i] != 1 {
                    return bad(format!("cannot squeeze axis {i} of {}: it is not 1", fmt_dims(&x.dims)));
                }
            }
            x.dims.iter().enumerate().filter(|(i, _)| !ax.contains(i)).map(|(_, &d)| d).collect()
        }
        None => x.dims.iter().copied().filter(|&d| d != 1).collect(),
    };
    Ok(Tensor { dims, elem: x.elem, value: x.value.clone() })
}

fn unsqueeze(a: &Attrs, x: &Tensor, axes: Option<&Tensor>) -> R<Tensor> {
    let Some(ax) = axes_of(a, axes)? else { return bad("Unsqueeze without axes") };
    let r = x.rank() + ax.len();
    let mut ax: Vec<usize> = ax.iter().map(|&v| norm_axis(v, r)).collect::<R<_>>()?;
    ax.sort_unstable();
    if ax.windows(2).any(|w| w[0] == w[1]) {
        return bad(format!("axes {ax:?} repeat"));
    }
    let mut src = x.dims.iter();
    let dims = (0..r).map(|i| if ax.contains(&i) { 1 } else { *src.next().unwrap_or(&1) }).collect();
    Ok(Tensor { dims, elem: x.elem, value: x.value.clone() })
}

fn resize(a: &Attrs, op: &str, x: &Tensor, ins: &[Option<&Tensor>]) -> R<Tensor> {
    // Resize-10 and Upsample-9: (X, scales); Resize-11+: (X, roi, scales, sizes).
    let (scales_t, sizes_t) = if op == "Upsample" || ins.len() == 2 {
        (ins.get(1).copied().flatten(), None)
    } else {
        (ins.get(2).copied().flatten(), ins.get(3).copied().flatten())
    };
    let axes: Vec<usize> = match a.ints("axes") {
        Some(v) if !v.is_empty() => v.iter().map(|&ax| norm_axis(ax, x.rank())).collect::<R<_>>()?,
        _ => (0..x.rank()).collect(),
    };
    let mut dims = x.dims.clone();
    if let Some(s) = sizes_t.filter(|t| t.numel() > 0) {
        let sizes = dims_value(s, "sizes")?;
        if sizes.len() != axes.len() {
            return bad(format!("sizes {sizes:?} do not fit input {}", fmt_dims(&x.dims)));
        }
        for (k, &ax) in axes.iter().enumerate() {
            dims[ax] = sizes[k];
        }
        return Ok(Tensor::new(dims, x.elem));
    }
    let scales: Vec<f64> = match scales_t.filter(|t| t.numel() > 0) {
        Some(t) => match &t.value {
            Some(v) => v.floats(),
            None => return bad("the scales of Resize are not known at import time"),
        },
        None => match a.floats("scales") {
            Some(v) => v.iter().map(|&f| f as f64).collect(),
            None => return bad("Resize without scales or sizes"),
        },
    };
    if scales.len() != axes.len() || scales.iter().any(|s| !(s.is_finite() && *s > 0.0 && *s < 1e6)) {
        return bad(format!("scales {scales:?} do not fit input {}", fmt_dims(&x.dims)));
    }
    for (k, &ax) in axes.iter().enumerate() {
        dims[ax] = (x.dims[ax] as f64 * scales[k]).floor() as u64;
    }
    Ok(Tensor::new(dims, x.elem))
}

fn pad(a: &Attrs, x: &Tensor, ins: &[Option<&Tensor>]) -> R<Tensor> {
    let pads = match a.ints("pads") {
        Some(p) => p,
        None => ints_value(req(ins, 1)?, "pads")?,
    };
    let axes: Vec<usize> = match ins.get(3).copied().flatten() {
        Some(t) => ints_value(t, "axes")?.iter().map(|&v| norm_axis(v, x.rank())).collect::<R<_>>()?,
        None => (0..x.rank()).collect(),
    };
    if pads.len() != 2 * axes.len() {
        return bad(format!("pads {pads:?} do not fit input {}", fmt_dims(&x.dims)));
    }
    let mut dims = x.dims.clone();
    let n = axes.len();
    for (k, &ax) in axes.iter().enumerate() {
        let v = dims[ax] as i64 + pads[k] + pads[k + n];
        if !(0..1 << 40).contains(&v) {
            return bad(format!("pads {pads:?} make dimension {ax} of {} negative", fmt_dims(&x.dims)));
        }
        dims[ax] = v as u64;
    }
    Ok(Tensor::new(dims, x.elem))
}

fn reduce(a: &Attrs, op: &str, x: &Tensor, ins: &[Option<&Tensor>]) -> R<Tensor> {
    let keep = a.i_or("keepdims", 1) != 0;
    let axes = axes_of(a, ins.get(1).copied().flatten())?;
    let axes: Vec<usize> = match axes {
        Some(v) if !v.is_empty() => v.iter().map(|&ax| norm_axis(ax, x.rank())).collect::<R<_>>()?,
        _ if a.i_or("noop_with_empty_axes", 0) != 0 => return Ok(x.clone()),
        _ => (0..x.rank()).collect(),
    };
    let mut dims = Vec::new();
    for (i, &d) in x.dims.iter().enumerate() {
        if axes.contains(&i) {
            if keep {
                dims.push(1);
            }
        } else {
            dims.push(d);
        }
    }
    let value = match (&x.value, op) {
        (Some(Val::Int(v)), "ReduceProd") if dims.iter().product::<u64>() == 1 => {
            Some(Val::Int(vec![v.iter().fold(1i64, |p, &e| p.wrapping_mul(e))]))
        }
        (Some(Val::Int(v)), "ReduceSum") if dims.iter().product::<u64>() == 1 => {
            Some(Val::Int(vec![v.iter().fold(0i64, |p, &e| p.wrapping_add(e))]))
        }
        _ => None,
    };
    Ok(Tensor { dims, elem: x.elem, value })
}

fn constant(a: &Attrs) -> R<Tensor> {
    if let Some(t) = a.t("value") {
        return super::values::from_proto(t, "value").map_err(|e| Fail::Bad(e.message));
    }
    if let Some(f) = a.f("value_float") {
        return Ok(Tensor::with_value(vec![], F32, Val::Float(vec![f as f64])));
    }
    if let Some(v) = a.floats("value_floats") {
        return Ok(Tensor::with_value(vec![v.len() as u64], F32, Val::Float(v.iter().map(|&f| f as f64).collect())));
    }
    if let Some(i) = a.i("value_int") {
        return Ok(Tensor::with_value(vec![], I64, Val::Int(vec![i])));
    }
    if let Some(v) = a.ints("value_ints") {
        return Ok(Tensor::with_value(vec![v.len() as u64], I64, Val::Int(v)));
    }
    if a.has("value_string") {
        return Ok(Tensor::new(vec![], D::String as i32));
    }
    if a.has("value_strings") {
        return Ok(Tensor::new(vec![0], D::String as i32));
    }
    if a.has("sparse_value") {
        return bad("sparse Constant values are not read");
    }
    bad("Constant without a value")
}
