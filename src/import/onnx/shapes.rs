//! Shape inference: each node's output shapes from its inputs' shapes, its attributes and the
//! values of the small tensors that steer shapes. One table ([`RULES`]) maps each operator to its
//! rule; after the rule, [`super::eval`] fills the outputs' values where the inputs' are known,
//! so a Reshape whose target is computed from another tensor's shape (Shape, Gather, Concat,
//! Cast, arithmetic, ...) still gets a concrete shape.
//!
//! Data-dependent dimensions (NonZero, Unique, TopK with a computed k, NonMaxSuppression) are
//! bounded unknowns: the dimension holds its largest possible size and its bit in
//! [`Tensor::bound`] is set. Where a bounded dimension meets a fixed one no larger (broadcasting,
//! Concat, a matrix product's inner dimension, a Split's sizes, a declared shape), it yields and
//! becomes that fixed size instead of a shape conflict.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::attrs::Attrs;
use super::names::Map;
use super::proto::NodeProto;
use super::proto::tensor_proto::DataType as D;
use super::values::{Tensor, Val, fmt_dims, numel};

/// Why a node's shapes could not be inferred.
#[derive(Debug)]
pub enum Fail {
    /// The importer has no rule for this operator.
    Unsupported,
    /// A value the rule needs (a Reshape target, Resize sizes, ...) is not known at import time:
    /// a shape the model declares may stand in (a message naming the value).
    Unknown(String),
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

/// What a rule reads: the node, its attributes, its inputs (`None` for an omitted optional one).
pub struct Cx<'a> {
    pub node: &'a NodeProto,
    pub op: &'a str,
    pub opset: i64,
    pub a: Attrs<'a>,
    pub ins: &'a [Option<&'a Tensor>],
    /// Outputs the node names (at least 1).
    pub nout: usize,
}

impl<'a> Cx<'a> {
    fn x(&self) -> R<&'a Tensor> {
        req(self.ins, 0)
    }

    fn req(&self, i: usize) -> R<&'a Tensor> {
        req(self.ins, i)
    }

    fn opt(&self, i: usize) -> Option<&'a Tensor> {
        self.ins.get(i).copied().flatten()
    }
}

/// A shape rule.
pub type Rule = fn(&Cx) -> R<Vec<Tensor>>;

/// How a rule treats bounded (data-dependent) input dimensions.
#[derive(Clone, Copy, PartialEq)]
enum Bounds {
    /// The rule sets each output dimension's bound bit itself.
    Tracked,
    /// Every output dimension is bounded when any input dimension is.
    Spread,
}

use Bounds::{Spread, Tracked};

/// Operators whose output has the first input's shape and element type.
const SAME_SHAPE: &[&str] = &[
    "Relu",
    "LeakyRelu",
    "Sigmoid",
    "HardSigmoid",
    "HardSwish",
    "Tanh",
    "Exp",
    "Log",
    "Sqrt",
    "Reciprocal",
    "Erf",
    "Sin",
    "Cos",
    "Tan",
    "Asin",
    "Acos",
    "Atan",
    "Sinh",
    "Cosh",
    "Asinh",
    "Acosh",
    "Atanh",
    "Elu",
    "Selu",
    "Celu",
    "Softplus",
    "Softsign",
    "Mish",
    "Gelu",
    "Clip",
    "Softmax",
    "LogSoftmax",
    "Hardmax",
    "LRN",
    "Shrink",
    "ThresholdedRelu",
    "CumSum",
    "Trilu",
    "InstanceNormalization",
    "MeanVarianceNormalization",
    "GroupNormalization",
    "Bernoulli",
    "RandomNormalLike",
    "RandomUniformLike",
    "EyeLike",
    "Round",
    "Swish",
    "BitwiseNot",
    "Neg",
    "Abs",
    "Floor",
    "Ceil",
    "Sign",
    "Not",
    "Identity",
];
const BROADCAST: &[&str] = &[
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Pow",
    "Mod",
    "PRelu",
    "BitShift",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
    "Sum",
    "Mean",
    "Max",
    "Min",
];
const COMPARE: &[&str] = &["Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "And", "Or", "Xor"];
const REDUCE: &[&str] = &[
    "ReduceMean",
    "ReduceSum",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
];

/// Every operator with a shape rule: its names, rule and treatment of bounded dimensions.
const RULES: &[(&[&str], Rule, Bounds)] = &[
    (SAME_SHAPE, same_shape, Tracked),
    (&["IsNaN", "IsInf"], is_nan, Tracked),
    (&["QuantizeLinear"], quantize, Tracked),
    (&["DequantizeLinear"], dequantize, Tracked),
    (&["Cast", "CastLike"], cast, Tracked),
    (&["Dropout"], dropout, Tracked),
    (&["BatchNormalization"], batch_norm, Spread),
    (&["LayerNormalization"], layer_norm, Spread),
    (BROADCAST, elementwise, Tracked),
    (COMPARE, elementwise, Tracked),
    (&["Where"], elementwise, Tracked),
    (&["Conv"], conv, Spread),
    (&["ConvTranspose"], conv_transpose, Spread),
    (&["MaxPool", "AveragePool", "LpPool"], pool, Spread),
    (&["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"], global_pool, Spread),
    (&["MatMul", "MatMulInteger"], matmul, Tracked),
    (&["Gemm"], gemm, Tracked),
    (&["Einsum"], einsum, Spread),
    (&["Concat"], concat, Tracked),
    (&["Split"], split, Tracked),
    (&["Slice"], slice, Spread),
    (&["Gather"], gather, Spread),
    (&["GatherElements"], gather_elements, Spread),
    (&["GatherND"], gather_nd, Spread),
    (&["ScatterElements", "ScatterND", "Scatter"], scatter, Tracked),
    (&["Reshape"], reshape, Spread),
    (&["Flatten"], flatten, Spread),
    (&["Squeeze"], squeeze, Spread),
    (&["Unsqueeze"], unsqueeze, Spread),
    (&["Transpose"], transpose, Tracked),
    (&["Expand"], expand, Tracked),
    (&["Tile"], tile, Spread),
    (&["Resize", "Upsample"], resize, Spread),
    (&["Pad"], pad, Spread),
    (&["DepthToSpace", "SpaceToDepth"], depth_to_space, Spread),
    (REDUCE, reduce, Spread),
    (&["ArgMax", "ArgMin"], arg_reduce, Spread),
    (&["Shape"], shape, Tracked),
    (&["Size"], size, Tracked),
    (&["ConstantOfShape"], constant_of_shape, Spread),
    (&["Constant"], constant, Tracked),
    (&["Range"], range, Spread),
    (&["NonZero"], non_zero, Tracked),
    (&["Unique"], unique, Tracked),
    (&["TopK"], top_k, Tracked),
    (&["NonMaxSuppression"], non_max_suppression, Tracked),
    (&["OneHot"], one_hot, Spread),
];

fn rules() -> &'static Map<&'static str, (Rule, Bounds)> {
    static T: OnceLock<Map<&'static str, (Rule, Bounds)>> = OnceLock::new();
    T.get_or_init(|| {
        let mut m = Map::default();
        for &(names, rule, b) in RULES {
            for &n in names {
                m.insert(n, (rule, b));
            }
        }
        m
    })
}

/// Whether `op` (default domain) has a shape rule.
pub fn has_rule(op: &str) -> bool {
    rules().contains_key(op)
}

/// Output tensors of `node` given its inputs (`None` for an omitted optional input): the
/// operator's rule, then the evaluator for the outputs' values.
pub fn infer(node: &NodeProto, opset: i64, ins: &[Option<&Tensor>]) -> R<Vec<Tensor>> {
    let op = node.op_type.as_deref().unwrap_or("");
    let Some(&(rule, bounds)) = rules().get(op) else { return Err(Fail::Unsupported) };
    super::types::check(op, ins).map_err(Fail::Bad)?;
    let cx = Cx { node, op, opset, a: Attrs::of(node), ins, nout: node.output.len().max(1) };
    let mut outs = rule(&cx)?;
    if bounds == Spread && ins.iter().flatten().any(|t| t.bound != 0) {
        for o in &mut outs {
            o.bound = all_bounded(o.rank());
        }
    }
    super::eval::evaluate(op, &cx.a, ins, &mut outs);
    Ok(outs)
}

/// The bound mask with every dimension of a tensor of `rank` bounded.
pub fn all_bounded(rank: usize) -> u16 {
    if rank >= 16 { u16::MAX } else { (1u16 << rank) - 1 }
}

fn one(t: Tensor) -> R<Vec<Tensor>> {
    Ok(vec![t])
}

fn same_shape(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    one(Tensor::like(t, t.dims.clone(), t.elem))
}

fn is_nan(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    one(Tensor::like(t, t.dims.clone(), BOOL))
}

fn quantize(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    let elem = c.opt(2).map_or(D::Uint8 as i32, |z| z.elem);
    one(Tensor::like(t, t.dims.clone(), elem))
}

fn dequantize(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    one(Tensor::like(t, t.dims.clone(), F32))
}

fn cast(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    let to = if c.op == "Cast" { c.a.i("to").map(|v| v as i32).unwrap_or(t.elem) } else { c.req(1)?.elem };
    one(Tensor::like(t, t.dims.clone(), to))
}

fn dropout(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    let mut out = vec![Tensor::like(t, t.dims.clone(), t.elem)];
    if c.nout > 1 {
        out.push(Tensor::like(t, t.dims.clone(), BOOL));
    }
    Ok(out)
}

fn batch_norm(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    let ch = t.dims.get(1).copied().unwrap_or(1);
    let mut out = vec![Tensor::new(t.dims.clone(), t.elem)];
    for _ in 1..c.nout {
        out.push(Tensor::new(vec![ch], t.elem));
    }
    Ok(out)
}

fn layer_norm(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    let axis = norm_axis(c.a.i_or("axis", -1), t.rank())?;
    let mut stat = t.dims[..axis].to_vec();
    stat.extend(std::iter::repeat_n(1, t.rank() - axis));
    let mut out = vec![Tensor::new(t.dims.clone(), t.elem)];
    for _ in 1..c.nout {
        out.push(Tensor::new(stat.clone(), F32));
    }
    Ok(out)
}

/// Broadcasting operators: arithmetic (the first input's type), comparisons and logic (BOOL),
/// Where (the type of its values).
fn elementwise(c: &Cx) -> R<Vec<Tensor>> {
    let ts: Vec<&Tensor> = match c.op {
        "Where" => vec![c.req(0)?, c.req(1)?, c.req(2)?],
        op if COMPARE.contains(&op) => vec![c.req(0)?, c.req(1)?],
        _ => present(c.ins),
    };
    if ts.is_empty() {
        return bad("no inputs");
    }
    let (dims, bound) = broadcast_all(&ts)?;
    let elem = match c.op {
        "Where" => ts[1].elem,
        op if COMPARE.contains(&op) => BOOL,
        _ => ts[0].elem,
    };
    one(Tensor { dims, elem, value: None, bound })
}

fn global_pool(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    if t.rank() < 3 {
        return bad(format!("input shape {} has no spatial dims", fmt_dims(&t.dims)));
    }
    let mut d = t.dims[..2].to_vec();
    d.extend(std::iter::repeat_n(1, t.rank() - 2));
    one(Tensor::new(d, t.elem))
}

fn gemm(c: &Cx) -> R<Vec<Tensor>> {
    let (ta, tb) = (c.x()?, c.req(1)?);
    if ta.rank() != 2 || tb.rank() != 2 {
        return bad(format!("Gemm needs 2-D inputs, got {} and {}", fmt_dims(&ta.dims), fmt_dims(&tb.dims)));
    }
    let side = |t: &Tensor, trans: bool| {
        let (i, j) = if trans { (1, 0) } else { (0, 1) };
        ((t.dims[i], t.is_bounded(i)), (t.dims[j], t.is_bounded(j)))
    };
    let ((m, bm), k1) = side(ta, c.a.i_or("transA", 0) != 0);
    let (k2, (n, bn)) = side(tb, c.a.i_or("transB", 0) != 0);
    inner_dims_agree(k1, k2, ["A ", "B "], ta, tb)?;
    one(Tensor { dims: vec![m, n], elem: ta.elem, value: None, bound: bm as u16 | (bn as u16) << 1 })
}

fn gather_nd(c: &Cx) -> R<Vec<Tensor>> {
    let (d, i) = (c.x()?, c.req(1)?);
    let b = c.a.i_or("batch_dims", 0).max(0) as usize;
    let last = *i.dims.last().unwrap_or(&0) as usize;
    if i.rank() == 0 || b + last > d.rank() {
        return bad(format!("indices {} do not fit data {}", fmt_dims(&i.dims), fmt_dims(&d.dims)));
    }
    let mut dims = i.dims[..i.rank() - 1].to_vec();
    dims.extend_from_slice(&d.dims[b + last..]);
    one(Tensor::new(dims, d.elem))
}

fn gather_elements(c: &Cx) -> R<Vec<Tensor>> {
    one(Tensor::new(c.req(1)?.dims.clone(), c.x()?.elem))
}

fn scatter(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    one(Tensor::like(t, t.dims.clone(), t.elem))
}

fn flatten(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    let axis = norm_axis_incl(c.a.i_or("axis", 1), t.rank())?;
    one(Tensor::new(vec![numel(&t.dims[..axis]), numel(&t.dims[axis..])], t.elem))
}

fn transpose(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    let perm: Vec<i64> = c.a.ints("perm").unwrap_or_else(|| (0..t.rank() as i64).rev().collect());
    if perm.len() != t.rank() {
        return bad(format!("perm {perm:?} does not fit input {}", fmt_dims(&t.dims)));
    }
    let mut seen = vec![false; t.rank()];
    let mut out = Tensor::new(Vec::with_capacity(t.rank()), t.elem);
    for (k, &p) in perm.iter().enumerate() {
        let p = norm_axis(p, t.rank())?;
        if std::mem::replace(&mut seen[p], true) {
            return bad(format!("perm {perm:?} repeats axis {p}"));
        }
        out.dims.push(t.dims[p]);
        out.bound |= (t.is_bounded(p) as u16) << k;
    }
    one(out)
}

fn expand(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    let s = c.req(1)?;
    let shape = dims_value(s, "shape")?;
    let target =
        Tensor { dims: shape, elem: 0, value: None, bound: all_bounded(s.numel() as usize) * (s.bound != 0) as u16 };
    let (dims, bound) = broadcast_all(&[t, &target])?;
    one(Tensor { dims, elem: t.elem, value: None, bound })
}

fn tile(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    let reps = ints_value(c.req(1)?, "repeats")?;
    if reps.len() != t.rank() || reps.iter().any(|&r| r < 0) {
        return bad(format!("repeats {reps:?} do not fit input {}", fmt_dims(&t.dims)));
    }
    one(Tensor::new(t.dims.iter().zip(&reps).map(|(&d, &r)| d.saturating_mul(r as u64)).collect(), t.elem))
}

fn depth_to_space(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    let b = c.a.i_or("blocksize", 0);
    if t.rank() != 4 || b <= 0 {
        return bad(format!("needs a 4-D input and blocksize > 0, got {} and {b}", fmt_dims(&t.dims)));
    }
    let b = b as u64;
    let (n, ch, h, w) = (t.dims[0], t.dims[1], t.dims[2], t.dims[3]);
    let dims = if c.op == "DepthToSpace" {
        if ch % (b * b) != 0 {
            return bad(format!("channels {ch} not divisible by blocksize² {}", b * b));
        }
        vec![n, ch / (b * b), h * b, w * b]
    } else {
        if h % b != 0 || w % b != 0 {
            return bad(format!("spatial dims {h}x{w} not divisible by blocksize {b}"));
        }
        vec![n, ch * b * b, h / b, w / b]
    };
    one(Tensor::new(dims, t.elem))
}

fn arg_reduce(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    let axis = norm_axis(c.a.i_or("axis", 0), t.rank())?;
    let mut dims = t.dims.clone();
    if c.a.i_or("keepdims", 1) != 0 {
        dims[axis] = 1;
    } else {
        dims.remove(axis);
    }
    one(Tensor::new(dims, I64))
}

/// Shape and Size: their outputs' shapes; the evaluator gives the values (a bounded input's
/// bounds, the memory planned for it).
fn shape(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    let r = t.rank() as i64;
    let clamp = |v: i64| if v < 0 { (v + r).max(0) } else { v.min(r) } as usize;
    let start = clamp(c.a.i_or("start", 0));
    let end = clamp(c.a.i_or("end", r)).max(start);
    one(Tensor::new(vec![(end - start) as u64], I64))
}

fn size(c: &Cx) -> R<Vec<Tensor>> {
    c.x()?;
    one(Tensor::new(vec![], I64))
}

fn constant_of_shape(c: &Cx) -> R<Vec<Tensor>> {
    let dims = dims_value(c.x()?, "shape")?;
    let elem = match c.a.t("value") {
        Some(t) => super::values::from_proto(t, "value").map_err(|e| Fail::Bad(e.message))?.elem,
        None => F32,
    };
    one(Tensor::new(dims, elem))
}

fn constant(c: &Cx) -> R<Vec<Tensor>> {
    constant_value(&c.a).map(|t| vec![t])
}

fn range(c: &Cx) -> R<Vec<Tensor>> {
    let (s, l, d) = (c.req(0)?, c.req(1)?, c.req(2)?);
    let get = |t: &Tensor, w: &str| -> R<f64> {
        match &t.value {
            Some(v) if v.len() == 1 => Ok(v.floats()[0]),
            _ => Err(Fail::Unknown(format!("the {w} of Range is not known at import time (computed from data)"))),
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
    one(Tensor::new(vec![n as u64], c.req(0)?.elem))
}

/// NonZero: [rank, at most every element].
fn non_zero(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    one(Tensor { dims: vec![t.rank() as u64, t.numel()], elem: I64, value: None, bound: 0b10 })
}

/// Unique: at most every element (along `axis` when given, else of the flattened input).
fn unique(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    let (first, n) = match c.a.i("axis") {
        Some(ax) => {
            let ax = norm_axis(ax, t.rank())?;
            (Tensor { dims: t.dims.clone(), elem: t.elem, value: None, bound: t.bound | 1 << ax }, t.dims[ax])
        }
        None => (Tensor { dims: vec![t.numel()], elem: t.elem, value: None, bound: 1 }, t.numel()),
    };
    let mut out = vec![first];
    for k in 1..c.nout {
        // inverse_indices has one entry per input element (along the axis); indices and counts one
        // per unique value.
        let inverse = k == 2;
        let len = if inverse { c.a.i("axis").map_or(t.numel(), |_| n) } else { n };
        out.push(Tensor { dims: vec![len], elem: I64, value: None, bound: (!inverse) as u16 });
    }
    Ok(out)
}

/// TopK: k elements along the axis; a k computed from data is a bounded unknown (at most the
/// axis).
fn top_k(c: &Cx) -> R<Vec<Tensor>> {
    let t = c.x()?;
    let axis = norm_axis(c.a.i_or("axis", -1), t.rank())?;
    let k = match c.a.i("k") {
        Some(k) => Some(k),
        None => {
            let kt = c.req(1)?;
            kt.value.as_ref().map(|v| *v.ints().first().unwrap_or(&-1))
        }
    };
    let mut out = Tensor::like(t, t.dims.clone(), t.elem);
    match k {
        Some(k) => {
            if k < 0 || k as u64 > t.dims[axis] {
                return bad(format!("k = {k} does not fit axis {axis} of {}", fmt_dims(&t.dims)));
            }
            out.dims[axis] = k as u64;
        }
        None => out.bound |= 1 << axis,
    }
    let idx = Tensor { elem: I64, ..out.clone() };
    Ok(vec![out, idx])
}

/// NonMaxSuppression: [selected, 3], at most batches · classes · min(boxes, max per class).
fn non_max_suppression(c: &Cx) -> R<Vec<Tensor>> {
    let (boxes, scores) = (c.x()?, c.req(1)?);
    if boxes.rank() != 3 || scores.rank() != 3 {
        return bad(format!("boxes {} and scores {} must be 3-D", fmt_dims(&boxes.dims), fmt_dims(&scores.dims)));
    }
    let per_class = match c.opt(2).and_then(|t| t.value.as_ref()) {
        Some(v) => v.ints().first().copied().unwrap_or(0).clamp(0, boxes.dims[1] as i64) as u64,
        None if c.opt(2).is_none() => 0,
        None => boxes.dims[1],
    };
    let n = scores.dims[0].saturating_mul(scores.dims[1]).saturating_mul(per_class);
    one(Tensor { dims: vec![n, 3], elem: I64, value: None, bound: 1 })
}

fn one_hot(c: &Cx) -> R<Vec<Tensor>> {
    let (i, d) = (c.x()?, c.req(1)?);
    let depth = match &d.value {
        Some(v) if v.len() == 1 => v.floats()[0],
        _ => return Err(Fail::Unknown("the depth of OneHot is not known at import time".into())),
    };
    if !(depth >= 0.0 && depth < (1u64 << 40) as f64) {
        return bad(format!("OneHot depth {depth} is out of range"));
    }
    let axis = norm_axis(c.a.i_or("axis", -1), i.rank() + 1)?;
    let mut dims = i.dims.clone();
    dims.insert(axis, depth as u64);
    one(Tensor::new(dims, c.req(2)?.elem))
}

/// Einsum: each output letter takes the size its letter has in the inputs (`...` broadcast);
/// without `->`, the letters used once, in alphabetical order, after the broadcast dims.
fn einsum(c: &Cx) -> R<Vec<Tensor>> {
    let eq = c.a.s("equation").unwrap_or_default().replace(' ', "");
    let ts = present(c.ins);
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (eq.clone(), None),
    };
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != ts.len() || ts.is_empty() {
        return bad(format!("equation '{eq}' has {} operands, the node {}", terms.len(), ts.len()));
    }
    let mut size: HashMap<char, u64> = HashMap::new();
    let mut count: HashMap<char, usize> = HashMap::new();
    let mut ell: Vec<u64> = Vec::new();
    for (term, t) in terms.iter().zip(&ts) {
        let letters: Vec<char> = term.replace("...", ".").chars().collect();
        let named = letters.iter().filter(|&&l| l != '.').count();
        if named > t.rank() || (!letters.contains(&'.') && named != t.rank()) {
            return bad(format!("term '{term}' of '{eq}' does not fit operand {}", fmt_dims(&t.dims)));
        }
        let mut k = 0;
        for &l in &letters {
            if l == '.' {
                let n = t.rank() - named;
                ell = broadcast(&ell, &t.dims[k..k + n])?;
                k += n;
                continue;
            }
            if !l.is_ascii_alphabetic() {
                return bad(format!("equation '{eq}' holds '{l}'"));
            }
            let d = t.dims[k];
            let s = size.entry(l).or_insert(d);
            if *s != d {
                match (*s, d) {
                    (1, d) => *s = d,
                    (_, 1) => {}
                    _ => return bad(format!("shape conflict: letter '{l}' of '{eq}' is {} and {d}", *s)),
                }
            }
            *count.entry(l).or_insert(0) += 1;
            k += 1;
        }
    }
    let out_letters: String = match rhs {
        Some(r) => r.replace("...", "."),
        None => {
            let mut once: Vec<char> = count.iter().filter(|(_, n)| **n == 1).map(|(l, _)| *l).collect();
            once.sort_unstable();
            std::iter::once('.').chain(once).collect()
        }
    };
    let mut dims = Vec::new();
    for l in out_letters.chars() {
        match l {
            '.' => dims.extend_from_slice(&ell),
            l => match size.get(&l) {
                Some(&d) => dims.push(d),
                None => return bad(format!("output letter '{l}' of '{eq}' is in no input")),
            },
        }
    }
    one(Tensor::new(dims, ts[0].elem))
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
    // A scalar has no axis to name (its dims would be indexed at 0).
    if v < 0 || v >= r {
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
        None => Err(Fail::Unknown(format!(
            "the value of '{what}' (shape {}) is not known at import time: it is computed from data, or too large",
            fmt_dims(&t.dims)
        ))),
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
    broadcast_bounded(a, 0, b, 0).map(|(d, _)| d)
}

/// A matrix product's inner dimensions `k1` (of `a`) and `k2` (of `b`) must agree; `names`
/// prefix the operands' shapes in the error.
fn inner_dims_agree(k1: (u64, bool), k2: (u64, bool), names: [&str; 2], a: &Tensor, b: &Tensor) -> R<()> {
    if meet(k1, k2).is_none() {
        return bad(format!(
            "shape conflict: {}{} and {}{} disagree on the inner dimension ({} vs {})",
            names[0],
            fmt_dims(&a.dims),
            names[1],
            fmt_dims(&b.dims),
            k1.0,
            k2.0
        ));
    }
    Ok(())
}

/// Two dimensions meeting (a matrix product's inner dimension, a Concat's other axes, an
/// element-wise pair neither of which is 1), each with its bound bit: equal sizes agree (bounded
/// only when both are); a bounded one yields to a fixed one no larger; two bounded ones take the
/// larger bound. `None`: a conflict.
fn meet(a: (u64, bool), b: (u64, bool)) -> Option<(u64, bool)> {
    match (a, b) {
        ((x, ba), (y, bb)) if x == y => Some((x, ba && bb)),
        ((x, true), (y, false)) if y <= x => Some((y, false)),
        ((x, false), (y, true)) if x <= y => Some((x, false)),
        ((x, true), (y, true)) => Some((x.max(y), true)),
        _ => None,
    }
}

/// [`broadcast`] with bound masks: a dimension of 1 takes the other side's; any other pair meets
/// ([`meet`]).
fn broadcast_bounded(a: &[u64], ma: u16, b: &[u64], mb: u16) -> R<(Vec<u64>, u16)> {
    let r = a.len().max(b.len());
    let mut out = vec![0; r];
    let mut mask = 0u16;
    #[allow(clippy::needless_range_loop)]
    for i in 0..r {
        let side = |d: &[u64], m: u16| {
            if i + d.len() >= r {
                let k = i + d.len() - r;
                (d[k], k < 16 && m >> k & 1 == 1)
            } else {
                (1, false)
            }
        };
        let (da, db) = (side(a, ma), side(b, mb));
        let (d, bd) = match (da, db) {
            // A 1 broadcasts, also a bounded one (its size is 0 or 1; planned as 1).
            ((1, _), y) => y,
            (x, (1, _)) => x,
            (x, y) => match meet(x, y) {
                Some(v) => v,
                None => {
                    return bad(format!(
                        "shape conflict: {} and {} do not broadcast (dimension {i}: {} vs {})",
                        fmt_dims(a),
                        fmt_dims(b),
                        da.0,
                        db.0
                    ));
                }
            },
        };
        out[i] = d;
        if bd && i < 16 {
            mask |= 1 << i;
        }
    }
    Ok((out, mask))
}

fn broadcast_all(ts: &[&Tensor]) -> R<(Vec<u64>, u16)> {
    let mut d = (ts[0].dims.clone(), ts[0].bound);
    for t in &ts[1..] {
        d = broadcast_bounded(&d.0, d.1, &t.dims, t.bound)?;
    }
    Ok(d)
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

fn conv(c: &Cx) -> R<Vec<Tensor>> {
    let (a, x, w) = (&c.a, c.x()?, c.req(1)?);
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
    one(Tensor::new(dims, x.elem))
}

fn conv_transpose(c: &Cx) -> R<Vec<Tensor>> {
    let (a, x, w) = (&c.a, c.x()?, c.req(1)?);
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
        return one(Tensor::new(dims, x.elem));
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
    one(Tensor::new(dims, x.elem))
}

fn pool(c: &Cx) -> R<Vec<Tensor>> {
    let (a, x) = (&c.a, c.x()?);
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
    let t = Tensor::new(dims, x.elem);
    let mut out = vec![t.clone()];
    if c.nout > 1 {
        out.push(Tensor::new(t.dims, I64));
    }
    Ok(out)
}

fn matmul(c: &Cx) -> R<Vec<Tensor>> {
    let (x, y) = (c.x()?, c.req(1)?);
    if x.rank() == 0 || y.rank() == 0 {
        return bad("MatMul of a scalar");
    }
    // Dims with their bound bits; a 1-D operand gains a unit dimension that the result drops.
    let with_bits = |t: &Tensor| -> Vec<(u64, bool)> { (0..t.rank()).map(|i| (t.dims[i], t.is_bounded(i))).collect() };
    let (mut a, mut b) = (with_bits(x), with_bits(y));
    let (va, vb) = (a.len() == 1, b.len() == 1);
    if va {
        a.insert(0, (1, false));
    }
    if vb {
        b.push((1, false));
    }
    let (m, k1) = (a[a.len() - 2], a[a.len() - 1]);
    let (k2, n) = (b[b.len() - 2], b[b.len() - 1]);
    inner_dims_agree(k1, k2, ["", ""], x, y)?;
    let split = |v: &[(u64, bool)]| -> (Vec<u64>, u16) {
        (v.iter().map(|d| d.0).collect(), v.iter().enumerate().fold(0, |m, (i, d)| m | (d.1 as u16) << i))
    };
    let ((ba, ma), (bb, mb)) = (split(&a[..a.len() - 2]), split(&b[..b.len() - 2]));
    let (mut dims, mut mask) = broadcast_bounded(&ba, ma, &bb, mb)?;
    for (keep, d) in [(!va, m), (!vb, n)] {
        if keep {
            mask |= (d.1 as u16) << dims.len();
            dims.push(d.0);
        }
    }
    one(Tensor { dims, elem: x.elem, value: None, bound: mask })
}

fn concat(c: &Cx) -> R<Vec<Tensor>> {
    let ts = present(c.ins);
    let Some(first) = ts.first() else { return bad("no inputs") };
    let axis = norm_axis(c.a.i_or("axis", 0), first.rank())?;
    let mut out = Tensor::like(first, first.dims.clone(), first.elem);
    for t in &ts[1..] {
        let conflict = || {
            bad(format!(
                "shape conflict: inputs {} and {} differ outside axis {axis}",
                fmt_dims(&first.dims),
                fmt_dims(&t.dims)
            ))
        };
        if t.rank() != first.rank() {
            return conflict();
        }
        for i in 0..t.rank() {
            if i == axis {
                out.dims[i] = out.dims[i].saturating_add(t.dims[i]);
                out.bound |= (t.is_bounded(i) as u16) << i;
                continue;
            }
            let Some((d, b)) = meet((out.dims[i], out.is_bounded(i)), (t.dims[i], t.is_bounded(i))) else {
                return conflict();
            };
            out.dims[i] = d;
            out.bound = out.bound & !(1 << i) | (b as u16) << i;
        }
    }
    one(out)
}

/// Split: sizes from the attribute, the input or equal parts. A bounded axis yields to sizes the
/// model fixes (their sum at most its bound): the exporter's trace-time count.
fn split(c: &Cx) -> R<Vec<Tensor>> {
    let (a, x, nout) = (&c.a, c.x()?, c.nout);
    let axis = norm_axis(a.i_or("axis", 0), x.rank())?;
    let total = x.dims[axis];
    let bounded = x.is_bounded(axis);
    let given: Option<Vec<u64>> = match (a.ints("split"), c.opt(1)) {
        (Some(s), _) if !s.is_empty() => Some(s.iter().map(|&v| v.max(0) as u64).collect()),
        (_, Some(t)) => Some(dims_value(t, "split")?),
        _ => None,
    };
    let fixed = given.is_some() && c.opt(1).is_none_or(|t| t.bound == 0);
    let parts = given.unwrap_or_else(|| {
        let n = a.i("num_outputs").map(|v| v.max(1) as u64).unwrap_or(nout as u64);
        let chunk = total.div_ceil(n.max(1));
        (0..n).map(|i| chunk.min(total.saturating_sub(i * chunk))).collect()
    });
    let sum = parts.iter().fold(0u64, |s, &p| s.saturating_add(p));
    if !(sum == total || bounded && fixed && sum <= total) || parts.len() != nout {
        return bad(format!(
            "shape conflict: split sizes {parts:?} ({} outputs) do not cover axis {axis} of {} ({nout} outputs{})",
            parts.len(),
            fmt_dims(&x.dims),
            if bounded { ", a bound" } else { "" }
        ));
    }
    Ok(parts
        .iter()
        .map(|&p| {
            let mut t = Tensor::like(x, x.dims.clone(), x.elem);
            t.dims[axis] = p;
            if fixed {
                t.bound &= !(1 << axis);
            }
            t
        })
        .collect())
}

fn slice(c: &Cx) -> R<Vec<Tensor>> {
    let (a, x, ins) = (&c.a, c.x()?, c.ins);
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
    if let Some(&ax) = axes.iter().find(|&&ax| ax >= x.rank()) {
        return bad(format!("Slice axis {ax} is out of range for input {}", fmt_dims(&x.dims)));
    }
    let mut dims = x.dims.clone();
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
    }
    one(Tensor::new(dims, x.elem))
}

fn gather(c: &Cx) -> R<Vec<Tensor>> {
    let (d, i) = (c.x()?, c.req(1)?);
    if d.rank() == 0 {
        return bad("Gather from a scalar");
    }
    let axis = norm_axis(c.a.i_or("axis", 0), d.rank())?;
    let mut dims = d.dims[..axis].to_vec();
    dims.extend_from_slice(&i.dims);
    dims.extend_from_slice(&d.dims[axis + 1..]);
    one(Tensor::new(dims, d.elem))
}

/// Reshape: `0` copies, `-1` takes the rest. A bounded input's element count is a bound: a
/// target with fewer elements is accepted.
fn reshape(c: &Cx) -> R<Vec<Tensor>> {
    let (a, x, s) = (&c.a, c.x()?, c.req(1)?);
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
    let fits = |m: u64| m == n || x.bound != 0 && m <= n;
    if let Some(i) = infer_at {
        let rest = numel(&dims);
        if rest == 0 || n % rest != 0 {
            return bad(format!("shape conflict: cannot reshape {} ({n} elements) to {target:?}", fmt_dims(&x.dims)));
        }
        dims[i] = n / rest;
    }
    if !fits(numel(&dims)) {
        return bad(format!(
            "shape conflict: cannot reshape {} ({n} elements) to {} ({} elements)",
            fmt_dims(&x.dims),
            fmt_dims(&dims),
            numel(&dims)
        ));
    }
    one(Tensor::new(dims, x.elem))
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

fn squeeze(c: &Cx) -> R<Vec<Tensor>> {
    let (a, x) = (&c.a, c.x()?);
    let axes = axes_of(a, c.opt(1))?;
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
    one(Tensor::new(dims, x.elem))
}

fn unsqueeze(c: &Cx) -> R<Vec<Tensor>> {
    let (a, x) = (&c.a, c.x()?);
    let Some(ax) = axes_of(a, c.opt(1))? else { return bad("Unsqueeze without axes") };
    let r = x.rank() + ax.len();
    let mut ax: Vec<usize> = ax.iter().map(|&v| norm_axis(v, r)).collect::<R<_>>()?;
    ax.sort_unstable();
    if ax.windows(2).any(|w| w[0] == w[1]) {
        return bad(format!("axes {ax:?} repeat"));
    }
    let mut src = x.dims.iter();
    let dims = (0..r).map(|i| if ax.contains(&i) { 1 } else { *src.next().unwrap_or(&1) }).collect();
    one(Tensor::new(dims, x.elem))
}

fn resize(c: &Cx) -> R<Vec<Tensor>> {
    let (a, op, x, ins) = (&c.a, c.op, c.x()?, c.ins);
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
        return one(Tensor::new(dims, x.elem));
    }
    let scales: Vec<f64> = match scales_t.filter(|t| t.numel() > 0) {
        Some(t) => match &t.value {
            Some(v) => v.floats(),
            None => return Err(Fail::Unknown("the scales of Resize are not known at import time".into())),
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
    one(Tensor::new(dims, x.elem))
}

fn pad(c: &Cx) -> R<Vec<Tensor>> {
    let (a, x, ins) = (&c.a, c.x()?, c.ins);
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
    one(Tensor::new(dims, x.elem))
}

fn reduce(c: &Cx) -> R<Vec<Tensor>> {
    let (a, x, ins) = (&c.a, c.x()?, c.ins);
    let keep = a.i_or("keepdims", 1) != 0;
    let axes = axes_of(a, ins.get(1).copied().flatten())?;
    let axes: Vec<usize> = match axes {
        Some(v) if !v.is_empty() => v.iter().map(|&ax| norm_axis(ax, x.rank())).collect::<R<_>>()?,
        _ if a.i_or("noop_with_empty_axes", 0) != 0 => return one(Tensor::new(x.dims.clone(), x.elem)),
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
    one(Tensor::new(dims, x.elem))
}

fn constant_value(a: &Attrs) -> R<Tensor> {
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
