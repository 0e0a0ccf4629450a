//! ONNX Runtime's own operators, the ones its graph optimisations write into the model it saves
//! (`SessionOptions.optimized_model_filepath`): the fusions of ORT_ENABLE_EXTENDED in the
//! `com.microsoft` domain and the NCHWc layout of ORT_ENABLE_ALL in `com.microsoft.nchwc`. Each
//! gets a shape rule from its schema and a cost by docs/cost-model.md, so a model ORT optimised
//! imports like any other (docs/ort.md).
//!
//! Schemas: onnxruntime `onnxruntime/core/graph/contrib_ops/contrib_defs.cc` (FusedConv,
//! FusedGemm, FusedMatMul, Gelu, BiasGelu, FastGelu, QuickGelu, SimplifiedLayerNormalization),
//! `bert_defs.cc` (Attention, MultiHeadAttention, SkipLayerNormalization,
//! SkipSimplifiedLayerNormalization) and `nchwc_schema_defs.cc` (the NCHWc Conv, pools,
//! Upsample, ReorderInput, ReorderOutput). A fused operator's shape is that of the ONNX operator
//! it replaces, so those rules run the importer's own (Conv, Gemm, MatMul, pools) on the node.

use super::attrs::Attrs;
use super::proto::NodeProto;
use super::shapes::{self, Fail};
use super::values::{Tensor, fmt_dims};

type R<T> = std::result::Result<T, Fail>;

fn bad<T>(msg: impl Into<String>) -> R<T> {
    Err(Fail::Bad(msg.into()))
}

/// ORT's contrib domain.
pub const MS: &str = "com.microsoft";
/// ORT's NCHWc layout domain.
pub const NCHWC: &str = "com.microsoft.nchwc";

/// Channel block of ORT's NCHWc layout: MLAS's `MlasNchwcGetBlockSize()`, 16 with AVX-512 and
/// 8 with AVX2. The saved model does not record it; the importer takes 16, so a ReorderInput's
/// output may be counted up to 8 channels wider than an AVX2 machine makes it.
pub const NCHWC_BLOCK: u64 = 16;

/// Whether this module has the operator's rule. ORT registers a few of its operators in the
/// default domain (SimplifiedLayerNormalization).
pub fn handles(domain: &str, op: &str) -> bool {
    match domain {
        MS => matches!(
            op,
            "FusedConv"
                | "FusedGemm"
                | "FusedMatMul"
                | "Gelu"
                | "BiasGelu"
                | "FastGelu"
                | "QuickGelu"
                | "SkipLayerNormalization"
                | "SkipSimplifiedLayerNormalization"
                | "Attention"
                | "MultiHeadAttention"
        ),
        NCHWC => matches!(
            op,
            "Conv"
                | "MaxPool"
                | "AveragePool"
                | "GlobalMaxPool"
                | "GlobalAveragePool"
                | "Upsample"
                | "ReorderInput"
                | "ReorderOutput"
        ),
        "" => op == "SimplifiedLayerNormalization",
        _ => false,
    }
}

/// The node as the default-domain operator `op` with the same inputs and attributes: a fused
/// operator's shape is the shape of what it replaces.
fn as_onnx(node: &NodeProto, op: &str, opset: i64, ins: &[Option<&Tensor>]) -> R<Vec<Tensor>> {
    let mut n = node.clone();
    n.op_type = Some(op.to_string());
    n.domain = None;
    shapes::infer(&n, opset, ins)
}

fn req<'t>(ins: &[Option<&'t Tensor>], i: usize) -> R<&'t Tensor> {
    ins.get(i).copied().flatten().ok_or_else(|| Fail::Bad(format!("input {i} is missing")))
}

/// Output tensors of an operator [`handles`] accepts; `opset` is the model's default-domain
/// opset (for the ONNX rules a fused operator runs).
pub fn infer(node: &NodeProto, opset: i64, ins: &[Option<&Tensor>]) -> R<Vec<Tensor>> {
    let op = node.op_type.as_deref().unwrap_or("");
    let domain = super::decode::domain(node);
    let x = || req(ins, 0);
    let same = |t: &Tensor| Ok(vec![Tensor::new(t.dims.clone(), t.elem)]);
    match (domain, op) {
        (MS, "FusedConv") => as_onnx(node, "Conv", opset, &ins[..ins.len().min(3)]),
        (MS, "FusedGemm") => as_onnx(node, "Gemm", opset, ins),
        (MS, "FusedMatMul") => fused_matmul(node, x()?, req(ins, 1)?),
        (MS, "Gelu" | "FastGelu" | "QuickGelu") => same(x()?),
        (MS, "BiasGelu") => {
            let (a, b) = (x()?, req(ins, 1)?);
            shapes::broadcast(&a.dims, &b.dims).map_err(|_| {
                Fail::Bad(format!("bias {} does not broadcast to input {}", fmt_dims(&b.dims), fmt_dims(&a.dims)))
            })?;
            same(a)
        }
        (MS, "SkipLayerNormalization" | "SkipSimplifiedLayerNormalization") => skip_layer_norm(node, ins),
        ("", "SimplifiedLayerNormalization") => {
            let t = x()?;
            let mut stat = t.dims.clone();
            if let Some(l) = stat.last_mut() {
                *l = 1;
            }
            let mut out = vec![Tensor::new(t.dims.clone(), t.elem)];
            out.extend((1..node.output.len()).map(|_| Tensor::new(stat.clone(), 1)));
            Ok(out)
        }
        (MS, "Attention") => attention(node, ins),
        (MS, "MultiHeadAttention") => multi_head_attention(node, ins),
        (NCHWC, "Conv") => nchwc_conv(node, opset, ins),
        (NCHWC, "MaxPool" | "AveragePool" | "GlobalMaxPool" | "GlobalAveragePool") => {
            as_onnx(node, op, opset, &ins[..ins.len().min(1)]).map(|mut v| {
                v.truncate(1);
                v
            })
        }
        (NCHWC, "Upsample") => {
            let t = x()?;
            let scales = Attrs::of(node).ints("scales").unwrap_or_default();
            if scales.len() != t.rank() || scales.iter().any(|&s| s <= 0) {
                return bad(format!("scales {scales:?} do not fit input {}", fmt_dims(&t.dims)));
            }
            let dims = t.dims.iter().zip(&scales).map(|(&d, &s)| d * s as u64).collect();
            Ok(vec![Tensor::new(dims, t.elem)])
        }
        (NCHWC, "ReorderInput") => reorder_input(node, x()?),
        (NCHWC, "ReorderOutput") => reorder_output(node, x()?),
        _ => Err(Fail::Unsupported),
    }
}

/// FusedMatMul: MatMul after moving A's (B's) first axis behind its batch axes (`transBatchA`,
/// permutation `[1, …, R-2, 0, R-1]`) and swapping its last two (`transA`).
fn fused_matmul(node: &NodeProto, a: &Tensor, b: &Tensor) -> R<Vec<Tensor>> {
    let at = Attrs::of(node);
    let arrange = |t: &Tensor, batch: bool, trans: bool, which: &str| -> R<Tensor> {
        let mut d = t.dims.clone();
        if batch && d.len() >= 3 {
            let first = d.remove(0);
            let last = d.len();
            d.insert(last - 1, first);
        } else if batch {
            return bad(format!("transBatch{which} needs rank 3 or more, {which} is {}", fmt_dims(&t.dims)));
        }
        if trans && d.len() >= 2 {
            let r = d.len();
            d.swap(r - 2, r - 1);
        }
        Ok(Tensor::new(d, t.elem))
    };
    let a2 = arrange(a, at.i_or("transBatchA", 0) != 0, at.i_or("transA", 0) != 0, "A")?;
    let b2 = arrange(b, at.i_or("transBatchB", 0) != 0, at.i_or("transB", 0) != 0, "B")?;
    let mut n = node.clone();
    n.op_type = Some("MatMul".into());
    n.domain = None;
    n.attribute.clear();
    shapes::infer(&n, 13, &[Some(&a2), Some(&b2)])
}

/// SkipLayerNormalization: the output and the optional sum are the input's shape; the optional
/// mean and inverse standard deviation keep every axis but the last.
fn skip_layer_norm(node: &NodeProto, ins: &[Option<&Tensor>]) -> R<Vec<Tensor>> {
    let (x, skip) = (req(ins, 0)?, req(ins, 1)?);
    if shapes::broadcast(&x.dims, &skip.dims).ok().as_deref() != Some(&x.dims[..]) {
        return bad(format!("skip {} does not fit input {}", fmt_dims(&skip.dims), fmt_dims(&x.dims)));
    }
    let mut stat = x.dims.clone();
    if let Some(l) = stat.last_mut() {
        *l = 1;
    }
    Ok((0..node.output.len().max(1))
        .map(|k| match k {
            1 | 2 => Tensor::new(stat.clone(), 1),
            _ => Tensor::new(x.dims.clone(), x.elem),
        })
        .collect())
}

/// Attention: `[B, S, in] x [in, q+k+v] -> [B, S, v]`, with `qkv_hidden_sizes` or three equal
/// parts; with `past` (`[2, B, N, P, H]`), `present` is `[2, B, N, P+S, H]`.
fn attention(node: &NodeProto, ins: &[Option<&Tensor>]) -> R<Vec<Tensor>> {
    let (x, w) = (req(ins, 0)?, req(ins, 1)?);
    if x.rank() != 3 || w.rank() != 2 || w.dims[0] != x.dims[2] {
        return bad(format!(
            "input {} and weights {} need [B, S, D] and [D, 3H]",
            fmt_dims(&x.dims),
            fmt_dims(&w.dims)
        ));
    }
    let a = Attrs::of(node);
    let heads = a.i_or("num_heads", 0);
    if heads < 1 {
        return bad("num_heads must be 1 or more");
    }
    let heads = heads as u64;
    let sizes = a.ints("qkv_hidden_sizes").unwrap_or_default();
    let (q, k, v) = match sizes.as_slice() {
        [] if w.dims[1] % 3 == 0 => (w.dims[1] / 3, w.dims[1] / 3, w.dims[1] / 3),
        [q, k, v] if *q > 0 && *k > 0 && *v > 0 && (q + k + v) as u64 == w.dims[1] => (*q as u64, *k as u64, *v as u64),
        _ => return bad(format!("weights {} do not split into Q, K and V {sizes:?}", fmt_dims(&w.dims))),
    };
    if q != k || q % heads != 0 || v % heads != 0 {
        return bad(format!("hidden sizes {q}, {k}, {v} do not divide into {heads} heads"));
    }
    let (b, s) = (x.dims[0], x.dims[1]);
    let mut out = vec![Tensor::new(vec![b, s, v], x.elem)];
    if node.output.len() > 1 {
        let past = ins.get(4).copied().flatten();
        let p = match past {
            Some(t) if t.rank() == 5 => t.dims[3],
            Some(t) => return bad(format!("past {} is not [2, B, N, P, H]", fmt_dims(&t.dims))),
            None => 0,
        };
        let share = a.i_or("past_present_share_buffer", 0) != 0;
        let dims = match past {
            Some(t) if share => t.dims.clone(),
            _ => vec![2, b, heads, p + s, k / heads],
        };
        out.push(Tensor::new(dims, x.elem));
    }
    Ok(out)
}

/// MultiHeadAttention: the output is `[B, S, v]` for a query `[B, S, D]` (or packed
/// `[B, S, N, 3, H]`) and a value `[B, L, v]`, `[B, N, L, H]` or packed with the key
/// (`[B, L, N, 2, H]`); `present_key` / `present_value` are `[B, N, P+L, H]`.
fn multi_head_attention(node: &NodeProto, ins: &[Option<&Tensor>]) -> R<Vec<Tensor>> {
    let q = req(ins, 0)?;
    let heads = Attrs::of(node).i_or("num_heads", 0);
    if heads < 1 {
        return bad("num_heads must be 1 or more");
    }
    let n = heads as u64;
    let key = ins.get(1).copied().flatten();
    let value = ins.get(2).copied().flatten();
    let (b, s) = match q.rank() {
        3 | 5 => (q.dims[0], q.dims[1]),
        _ => return bad(format!("query {} is neither [B, S, D] nor [B, S, N, 3, H]", fmt_dims(&q.dims))),
    };
    // (hidden size of V, head size of K, key length)
    let (v_hidden, k_head, l) = match (q.rank(), key, value) {
        (5, _, _) => (q.dims[2] * q.dims[4], q.dims[4], s),
        (3, Some(k), _) if k.rank() == 5 => (k.dims[2] * k.dims[4], k.dims[4], k.dims[1]),
        (3, Some(k), Some(v)) if v.rank() == 3 && k.rank() == 3 => (v.dims[2], k.dims[2] / n, k.dims[1]),
        (3, Some(k), Some(v)) if v.rank() == 4 && k.rank() == 4 => (v.dims[1] * v.dims[3], k.dims[3], k.dims[2]),
        (3, None, None) => return bad("query [B, S, D] needs a key and a value"),
        _ => {
            let d = |t: Option<&Tensor>| t.map_or("-".to_string(), |t| fmt_dims(&t.dims));
            return bad(format!("key {} and value {} do not fit query {}", d(key), d(value), fmt_dims(&q.dims)));
        }
    };
    if v_hidden % n != 0 {
        return bad(format!("value hidden size {v_hidden} does not divide into {n} heads"));
    }
    let past = ins.get(6).copied().flatten().filter(|t| t.rank() == 4).map_or(0, |t| t.dims[2]);
    let mut out = vec![Tensor::new(vec![b, s, v_hidden], q.elem)];
    for k in 1..node.output.len() {
        let head = if k == 1 { k_head } else { v_hidden / n };
        out.push(Tensor::new(vec![b, n, past + l, head], q.elem));
    }
    Ok(out)
}

/// The NCHWc Conv: Conv's rule on the weights' channels. A blocked input's channel count is
/// padded to the block, so ORT's own rule does not compare it with the weights.
fn nchwc_conv(node: &NodeProto, opset: i64, ins: &[Option<&Tensor>]) -> R<Vec<Tensor>> {
    let (x, w) = (req(ins, 0)?, req(ins, 1)?);
    let g = Attrs::of(node).i_or("group", 1).max(1) as u64;
    let mut xs = x.clone();
    if xs.rank() >= 3 && w.rank() >= 2 {
        xs.dims[1] = w.dims[1] * g;
    }
    as_onnx(node, "Conv", opset, &[Some(&xs), Some(w)])
}

/// ReorderInput: NCHW (or NHWC with `channels_last`) to NCHWc, channels rounded up to the block.
fn reorder_input(node: &NodeProto, x: &Tensor) -> R<Vec<Tensor>> {
    if x.rank() < 2 {
        return bad(format!("input {} has rank below 2", fmt_dims(&x.dims)));
    }
    let last = Attrs::of(node).i_or("channels_last", 0) != 0;
    let c = if last { x.dims[x.rank() - 1] } else { x.dims[1] };
    let mut dims = vec![x.dims[0], c.div_ceil(NCHWC_BLOCK) * NCHWC_BLOCK];
    dims.extend_from_slice(if last { &x.dims[1..x.rank() - 1] } else { &x.dims[2..] });
    Ok(vec![Tensor::new(dims, x.elem)])
}

/// ReorderOutput: NCHWc back to NCHW (or NHWC) with the real channel count, `channels`.
fn reorder_output(node: &NodeProto, x: &Tensor) -> R<Vec<Tensor>> {
    let a = Attrs::of(node);
    let c = a.i_or("channels", 0);
    if x.rank() < 2 || c <= 0 {
        return bad(format!("input {} and channels {c} do not make an NCHW tensor", fmt_dims(&x.dims)));
    }
    let mut dims = vec![x.dims[0]];
    if a.i_or("channels_last", 0) == 0 {
        dims.push(c as u64);
    }
    dims.extend_from_slice(&x.dims[2..]);
    if a.i_or("channels_last", 0) != 0 {
        dims.push(c as u64);
    }
    Ok(vec![Tensor::new(dims, x.elem)])
}

/// Flops of a fused activation per output element (cost-model.md's factors).
fn activation_factor(node: &NodeProto) -> f64 {
    let a = Attrs::of(node);
    match a.s("activation").as_deref() {
        Some("Sigmoid" | "Tanh" | "HardSigmoid") => 4.0,
        Some(_) => 1.0,
        None => 0.0,
    }
}

/// Floating-point operations of an operator [`handles`] accepts (cost-model.md): the ONNX
/// operator it replaces plus what it fused (an activation per output element, a sum, a bias,
/// the normalisation); attention as its matrix products and softmax. `None` for other nodes.
pub fn flops(node: &NodeProto, ins: &[Option<&Tensor>], outs: &[Tensor]) -> Option<f64> {
    let op = node.op_type.as_deref().unwrap_or("");
    let domain = super::decode::domain(node);
    if !handles(domain, op) {
        return None;
    }
    let inp = |i: usize| ins.get(i).copied().flatten();
    let out = outs.first().map_or(0.0, |t| t.numel() as f64);
    let as_op = |name: &str| {
        let mut n = node.clone();
        n.op_type = Some(name.to_string());
        n.domain = None;
        super::costs::flops(&n, ins, outs)
    };
    Some(match (domain, op) {
        (MS, "FusedConv") => as_op("Conv") + out * (activation_factor(node) + f64::from(u8::from(inp(3).is_some()))),
        (NCHWC, "Conv") => as_op("Conv") + out * (activation_factor(node) + f64::from(u8::from(inp(3).is_some()))),
        (MS, "FusedGemm") => as_op("Gemm") + out * activation_factor(node),
        // 2 · M · N · K per batch: K is the reduced axis of A after its transposes.
        (MS, "FusedMatMul") => {
            let a = inp(0)?;
            let trans = Attrs::of(node).i_or("transA", 0) != 0 && a.rank() >= 2;
            let k = if trans { a.dims[a.rank() - 2] } else { *a.dims.last().unwrap_or(&1) };
            2.0 * out * k as f64
        }
        (MS, "Gelu" | "BiasGelu" | "FastGelu") => out * 8.0,
        (MS, "QuickGelu") => out * 4.0,
        (MS, "SkipLayerNormalization" | "SkipSimplifiedLayerNormalization") | ("", "SimplifiedLayerNormalization") => {
            out * 8.0
        }
        (MS, "Attention") => attention_flops(node, ins, outs)?,
        (MS, "MultiHeadAttention") => mha_flops(node, outs)?,
        (NCHWC, "MaxPool" | "AveragePool" | "GlobalMaxPool" | "GlobalAveragePool") => as_op(op),
        // Layout changes and upsampling move every element once.
        _ => out,
    })
}

/// Attention: the Q, K, V projection (`2 · B · S · D · (q+k+v)`), scores and context
/// (`2 · B · N · S · L · H` each) and a softmax over the scores (factor 5).
fn attention_flops(node: &NodeProto, ins: &[Option<&Tensor>], outs: &[Tensor]) -> Option<f64> {
    let x = ins.first().copied().flatten()?;
    let w = ins.get(1).copied().flatten()?;
    let (b, s) = (x.dims[0] as f64, x.dims[1] as f64);
    let n = Attrs::of(node).i_or("num_heads", 1).max(1) as f64;
    let l = outs.get(1).and_then(|p| p.dims.get(3).copied()).map_or(s, |v| v as f64);
    let proj = 2.0 * b * s * w.dims[0] as f64 * w.dims[1] as f64;
    let v = outs.first()?.dims.get(2).copied()? as f64;
    let qk = w.dims[1] as f64 - v;
    Some(proj + 2.0 * b * s * l * (qk / 2.0) + 2.0 * b * s * l * v + 5.0 * b * n * s * l)
}

/// MultiHeadAttention: scores and context (`2 · B · S · L · hidden` each) and the softmax.
fn mha_flops(node: &NodeProto, outs: &[Tensor]) -> Option<f64> {
    let o = outs.first()?;
    let (b, s, v) = (o.dims[0] as f64, o.dims[1] as f64, o.dims[2] as f64);
    let n = Attrs::of(node).i_or("num_heads", 1).max(1) as f64;
    let (l, k) = match outs.get(1) {
        Some(p) if p.rank() == 4 => (p.dims[2] as f64, (p.dims[1] * p.dims[3]) as f64),
        _ => (s, v),
    };
    Some(2.0 * b * s * l * k + 2.0 * b * s * l * v + 5.0 * b * n * s * l)
}

/// Elements of a tensor's dims, for tests.
#[cfg(test)]
fn elems(t: &Tensor) -> u64 {
    t.numel()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::onnx::proto::{AttributeProto, attribute_proto::AttributeType};

    fn node(domain: &str, op: &str, nin: usize, nout: usize, attrs: Vec<AttributeProto>) -> NodeProto {
        NodeProto {
            op_type: Some(op.into()),
            domain: Some(domain.into()),
            input: (0..nin).map(|i| format!("i{i}")).collect(),
            output: (0..nout).map(|i| format!("o{i}")).collect(),
            attribute: attrs,
            ..Default::default()
        }
    }

    fn int(name: &str, v: i64) -> AttributeProto {
        AttributeProto {
            name: Some(name.into()),
            i: Some(v),
            r#type: Some(AttributeType::Int as i32),
            ..Default::default()
        }
    }

    fn ints(name: &str, v: &[i64]) -> AttributeProto {
        AttributeProto {
            name: Some(name.into()),
            ints: v.to_vec(),
            r#type: Some(AttributeType::Ints as i32),
            ..Default::default()
        }
    }

    fn string(name: &str, v: &str) -> AttributeProto {
        AttributeProto {
            name: Some(name.into()),
            s: Some(v.as_bytes().to_vec().into()),
            r#type: Some(AttributeType::String as i32),
            ..Default::default()
        }
    }

    fn t(d: &[u64]) -> Tensor {
        Tensor::new(d.to_vec(), 1)
    }

    fn dims(r: R<Vec<Tensor>>) -> Vec<Vec<u64>> {
        match r {
            Ok(v) => v.into_iter().map(|t| t.dims).collect(),
            Err(Fail::Bad(m)) => panic!("bad: {m}"),
            Err(Fail::Unknown(m)) => panic!("unknown: {m}"),
            Err(Fail::Unsupported) => panic!("unsupported"),
        }
    }

    #[test]
    fn fused_conv_and_gemm_have_the_shapes_of_what_they_replace() {
        let n = node(MS, "FusedConv", 3, 1, vec![string("activation", "Relu"), ints("pads", &[1, 1, 1, 1])]);
        let (x, w, b) = (t(&[1, 3, 8, 8]), t(&[16, 3, 3, 3]), t(&[16]));
        assert_eq!(dims(infer(&n, 17, &[Some(&x), Some(&w), Some(&b)])), vec![vec![1, 16, 8, 8]]);
        let outs = infer(&n, 17, &[Some(&x), Some(&w), Some(&b)]).unwrap();
        // Conv's 2 · out · Cin · Kh · Kw plus one flop per output for the ReLU.
        let conv = 2.0 * 1024.0 * 27.0;
        assert_eq!(flops(&n, &[Some(&x), Some(&w), Some(&b)], &outs), Some(conv + 1024.0));
        let g = node(MS, "FusedGemm", 3, 1, vec![int("transB", 1), string("activation", "Tanh")]);
        let (a, w) = (t(&[4, 32]), t(&[10, 32]));
        assert_eq!(dims(infer(&g, 17, &[Some(&a), Some(&w), None])), vec![vec![4, 10]]);
        let outs = infer(&g, 17, &[Some(&a), Some(&w), None]).unwrap();
        assert_eq!(flops(&g, &[Some(&a), Some(&w)], &outs), Some(2.0 * 40.0 * 32.0 + 4.0 * 40.0));
        let bad_w = t(&[10, 31]);
        assert!(matches!(infer(&g, 17, &[Some(&a), Some(&bad_w)]), Err(Fail::Bad(_))));
    }

    #[test]
    fn fused_matmul_transposes_before_multiplying() {
        let n = node(MS, "FusedMatMul", 2, 1, vec![int("transB", 1)]);
        let (a, b) = (t(&[2, 5, 8]), t(&[2, 7, 8]));
        assert_eq!(dims(infer(&n, 17, &[Some(&a), Some(&b)])), vec![vec![2, 5, 7]]);
        let outs = infer(&n, 17, &[Some(&a), Some(&b)]).unwrap();
        assert_eq!(flops(&n, &[Some(&a), Some(&b)], &outs), Some(2.0 * 70.0 * 8.0));
        // transBatchA: [5, 2, 8] is read as [2, 5, 8].
        let n = node(MS, "FusedMatMul", 2, 1, vec![int("transBatchA", 1)]);
        let (a, b) = (t(&[5, 2, 8]), t(&[2, 8, 3]));
        assert_eq!(dims(infer(&n, 17, &[Some(&a), Some(&b)])), vec![vec![2, 5, 3]]);
        let b2 = t(&[2, 9, 3]);
        assert!(matches!(infer(&n, 17, &[Some(&a), Some(&b2)]), Err(Fail::Bad(_))));
    }

    #[test]
    fn gelus_and_layer_norms_keep_the_input_shape() {
        let x = t(&[2, 16, 64]);
        let bias = t(&[64]);
        for op in ["Gelu", "FastGelu", "QuickGelu", "BiasGelu"] {
            let n = node(MS, op, 2, 1, vec![]);
            assert_eq!(dims(infer(&n, 17, &[Some(&x), Some(&bias)])), vec![vec![2, 16, 64]], "{op}");
        }
        let n = node(MS, "SkipLayerNormalization", 3, 4, vec![]);
        let g = t(&[64]);
        assert_eq!(
            dims(infer(&n, 17, &[Some(&x), Some(&x), Some(&g)])),
            vec![vec![2, 16, 64], vec![2, 16, 1], vec![2, 16, 1], vec![2, 16, 64]]
        );
        let other = t(&[2, 8, 64]);
        assert!(matches!(infer(&n, 17, &[Some(&x), Some(&other), Some(&g)]), Err(Fail::Bad(_))));
    }

    #[test]
    fn attention_gives_the_value_hidden_size_and_present() {
        let n = node(MS, "Attention", 5, 2, vec![int("num_heads", 4)]);
        let (x, w, b) = (t(&[2, 16, 64]), t(&[64, 192]), t(&[192]));
        let past = t(&[2, 2, 4, 10, 16]);
        assert_eq!(
            dims(infer(&n, 17, &[Some(&x), Some(&w), Some(&b), None, Some(&past)])),
            vec![vec![2, 16, 64], vec![2, 2, 4, 26, 16]]
        );
        let n1 = node(MS, "Attention", 3, 1, vec![int("num_heads", 4), ints("qkv_hidden_sizes", &[64, 64, 32])]);
        let w2 = t(&[64, 160]);
        assert_eq!(dims(infer(&n1, 17, &[Some(&x), Some(&w2), None])), vec![vec![2, 16, 32]]);
        let n3 = node(MS, "Attention", 3, 1, vec![int("num_heads", 5)]);
        assert!(matches!(infer(&n3, 17, &[Some(&x), Some(&w), None]), Err(Fail::Bad(_))));
        let outs = infer(&n1, 17, &[Some(&x), Some(&w2), None]).unwrap();
        assert!(flops(&n1, &[Some(&x), Some(&w2)], &outs).unwrap() > 2.0 * 32.0 * 64.0 * 160.0);
    }

    #[test]
    fn multi_head_attention_reads_every_layout() {
        let n = node(MS, "MultiHeadAttention", 3, 3, vec![int("num_heads", 4)]);
        let (q, k, v) = (t(&[2, 16, 64]), t(&[2, 20, 64]), t(&[2, 20, 32]));
        assert_eq!(
            dims(infer(&n, 17, &[Some(&q), Some(&k), Some(&v)])),
            vec![vec![2, 16, 32], vec![2, 4, 20, 16], vec![2, 4, 20, 8]]
        );
        let packed = t(&[2, 16, 4, 3, 16]);
        let n1 = node(MS, "MultiHeadAttention", 1, 1, vec![int("num_heads", 4)]);
        assert_eq!(dims(infer(&n1, 17, &[Some(&packed)])), vec![vec![2, 16, 64]]);
        let (k4, v4) = (t(&[2, 4, 20, 16]), t(&[2, 4, 20, 8]));
        assert_eq!(dims(infer(&n1, 17, &[Some(&q), Some(&k4), Some(&v4)])), vec![vec![2, 16, 32]]);
        assert!(matches!(infer(&n1, 17, &[Some(&q), None, None]), Err(Fail::Bad(_))));
    }

    #[test]
    fn nchwc_layout_pads_channels_to_the_block_and_back() {
        let ri = node(NCHWC, "ReorderInput", 1, 1, vec![]);
        let x = t(&[1, 3, 224, 224]);
        assert_eq!(dims(infer(&ri, 17, &[Some(&x)])), vec![vec![1, NCHWC_BLOCK, 224, 224]]);
        let nhwc = node(NCHWC, "ReorderInput", 1, 1, vec![int("channels_last", 1)]);
        let y = t(&[1, 7, 7, 40]);
        assert_eq!(dims(infer(&nhwc, 17, &[Some(&y)])), vec![vec![1, 48, 7, 7]]);
        let ro = node(NCHWC, "ReorderOutput", 1, 1, vec![int("channels", 40)]);
        let z = t(&[1, 48, 7, 7]);
        assert_eq!(dims(infer(&ro, 17, &[Some(&z)])), vec![vec![1, 40, 7, 7]]);
        assert_eq!(elems(&infer(&ro, 17, &[Some(&z)]).unwrap()[0]), 40 * 49);
        let conv = node(NCHWC, "Conv", 3, 1, vec![ints("strides", &[2, 2]), ints("kernel_shape", &[3, 3])]);
        let (x, w) = (t(&[1, 48, 16, 16]), t(&[64, 48, 3, 3]));
        assert_eq!(dims(infer(&conv, 17, &[Some(&x), Some(&w), None])), vec![vec![1, 64, 7, 7]]);
        let pool = node(NCHWC, "MaxPool", 1, 1, vec![ints("kernel_shape", &[2, 2]), ints("strides", &[2, 2])]);
        assert_eq!(dims(infer(&pool, 17, &[Some(&x)])), vec![vec![1, 48, 8, 8]]);
        let gap = node(NCHWC, "GlobalAveragePool", 1, 1, vec![]);
        assert_eq!(dims(infer(&gap, 17, &[Some(&x)])), vec![vec![1, 48, 1, 1]]);
        let up = node(NCHWC, "Upsample", 1, 1, vec![ints("scales", &[1, 1, 2, 2])]);
        assert_eq!(dims(infer(&up, 17, &[Some(&x)])), vec![vec![1, 48, 32, 32]]);
        assert!(!handles(NCHWC, "Relu") && !handles(MS, "Conv") && handles("", "SimplifiedLayerNormalization"));
    }
}
