//! Tensors as the importer sees them: a shape, whether the elements are integers, and for small
//! tensors the values. Weights are never read, only their dims; the values of small tensors are,
//! because shapes depend on them (Reshape's target, Slice's starts, ConstantOfShape's shape...).

use super::proto::{TensorProto, tensor_proto::DataType};
use crate::error::Result;
use crate::{bail, err};

/// Tensors of at most this many elements have their values read and propagated.
pub const VALUE_LIMIT: u64 = 4096;

/// Element values of a small tensor.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Int(Vec<i64>),
    Float(Vec<f64>),
}

impl Val {
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn len(&self) -> usize {
        match self {
            Val::Int(v) => v.len(),
            Val::Float(v) => v.len(),
        }
    }

    pub fn ints(&self) -> Vec<i64> {
        match self {
            Val::Int(v) => v.clone(),
            Val::Float(v) => v.iter().map(|&f| if f.is_finite() { f as i64 } else { 0 }).collect(),
        }
    }

    pub fn floats(&self) -> Vec<f64> {
        match self {
            Val::Int(v) => v.iter().map(|&i| i as f64).collect(),
            Val::Float(v) => v.clone(),
        }
    }
}

/// One tensor: dims, integer-ness and, when small and known, values.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub dims: Vec<u64>,
    /// ONNX element type (`TensorProto.DataType`); 0 when unknown.
    pub elem: i32,
    pub value: Option<Val>,
    /// Bit `i` set: dimension `i` depends on data (NonZero, Unique, ...) and `dims[i]` is its
    /// bound, the largest size it can take (ranks are at most 16, see [`check_dims`]).
    pub bound: u16,
}

impl Tensor {
    pub fn new(dims: Vec<u64>, elem: i32) -> Tensor {
        Tensor { dims, elem, value: None, bound: 0 }
    }

    /// A tensor of `dims` with `like`'s bound bits (an operator that keeps its input's axes).
    pub fn like(like: &Tensor, dims: Vec<u64>, elem: i32) -> Tensor {
        Tensor { dims, elem, value: None, bound: like.bound }
    }

    pub fn with_value(dims: Vec<u64>, elem: i32, value: Val) -> Tensor {
        let small = numel(&dims) <= VALUE_LIMIT && value.len() as u64 == numel(&dims);
        Tensor { dims, elem, value: small.then_some(value), bound: 0 }
    }

    /// Whether dimension `i` is a bound rather than a size.
    pub fn is_bounded(&self, i: usize) -> bool {
        i < 16 && self.bound >> i & 1 == 1
    }

    pub fn numel(&self) -> u64 {
        numel(&self.dims)
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    pub fn is_int(&self) -> bool {
        is_int_type(self.elem)
    }
}

/// Element count, saturating (a shape that overflows is refused before it is used).
pub fn numel(dims: &[u64]) -> u64 {
    dims.iter().fold(1u64, |a, &d| a.saturating_mul(d))
}

/// Dims the importer accepts: each below 2^40 and at most 2^50 elements in all, so that every
/// byte count fits in a u64 with room to sum.
pub fn check_dims(dims: &[u64], what: &dyn Fn() -> String) -> Result<()> {
    if dims.len() > 16 {
        bail!(Field, "{}: rank {} is above 16", what(), dims.len());
    }
    if dims.iter().any(|&d| d >= 1 << 40) || numel(dims) > 1 << 50 {
        bail!(Field, "{}: shape {} is too large", what(), fmt_dims(dims));
    }
    Ok(())
}

pub fn fmt_dims(dims: &[u64]) -> String {
    let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(","))
}

pub fn is_int_type(elem: i32) -> bool {
    use DataType as D;
    [D::Int8, D::Uint8, D::Int16, D::Uint16, D::Int32, D::Uint32, D::Int64, D::Uint64, D::Bool]
        .iter()
        .any(|&d| d as i32 == elem)
}

/// An initializer or `Constant` value as a [`Tensor`]: dims always; values when the tensor is
/// small and stored in the file (external data is never opened).
pub fn from_proto(t: &TensorProto, what: &str) -> Result<Tensor> {
    let dims = super::decode::tensor_dims(t)?;
    check_dims(&dims, &|| format!("tensor '{what}'"))?;
    let elem = t.data_type.unwrap_or(0);
    let n = numel(&dims);
    let external = t.data_location == Some(super::proto::tensor_proto::DataLocation::External as i32);
    if n > VALUE_LIMIT || external {
        return Ok(Tensor::new(dims, elem));
    }
    let value = read_values(t, elem, n, what)?;
    Ok(match value {
        Some(v) => Tensor::with_value(dims, elem, v),
        None => Tensor::new(dims, elem),
    })
}

fn read_values(t: &TensorProto, elem: i32, n: u64, what: &str) -> Result<Option<Val>> {
    use DataType as D;
    let n = n as usize;
    let raw = t.raw_data.as_deref();
    let size = match D::try_from(elem) {
        Ok(D::Int8 | D::Uint8 | D::Bool) => 1,
        Ok(D::Int16 | D::Uint16 | D::Float16 | D::Bfloat16) => 2,
        Ok(D::Int32 | D::Uint32 | D::Float) => 4,
        Ok(D::Int64 | D::Uint64 | D::Double) => 8,
        _ => return Ok(None),
    };
    if let Some(raw) = raw {
        if raw.len() != n * size {
            bail!(
                Field,
                "tensor '{what}': raw_data holds {} bytes, its dims need {} ({} elements of {size} bytes)",
                raw.len(),
                n * size,
                n
            );
        }
        let words = raw.chunks_exact(size);
        let v = match D::try_from(elem) {
            Ok(D::Int8) => Val::Int(words.map(|c| c[0] as i8 as i64).collect()),
            Ok(D::Uint8 | D::Bool) => Val::Int(words.map(|c| c[0] as i64).collect()),
            Ok(D::Int16) => Val::Int(words.map(|c| i16::from_le_bytes([c[0], c[1]]) as i64).collect()),
            Ok(D::Uint16) => Val::Int(words.map(|c| u16::from_le_bytes([c[0], c[1]]) as i64).collect()),
            Ok(D::Int32) => Val::Int(words.map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64).collect()),
            Ok(D::Uint32) => Val::Int(words.map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64).collect()),
            Ok(D::Int64) => Val::Int(words.map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect()),
            Ok(D::Uint64) => Val::Int(
                words.map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])).min(i64::MAX as u64) as i64).collect(),
            ),
            Ok(D::Float) => Val::Float(words.map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64).collect()),
            Ok(D::Double) => Val::Float(words.map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect()),
            Ok(D::Float16) => Val::Float(words.map(|c| f16_to_f64(u16::from_le_bytes([c[0], c[1]]))).collect()),
            Ok(D::Bfloat16) => Val::Float(
                words.map(|c| f32::from_bits((u16::from_le_bytes([c[0], c[1]]) as u32) << 16) as f64).collect(),
            ),
            _ => return Ok(None),
        };
        return Ok(Some(v));
    }
    let v = match D::try_from(elem) {
        Ok(D::Int64) => Val::Int(t.int64_data.clone()),
        Ok(D::Uint64) => Val::Int(t.uint64_data.iter().map(|&u| u.min(i64::MAX as u64) as i64).collect()),
        Ok(D::Int8 | D::Uint8 | D::Int16 | D::Uint16 | D::Int32 | D::Bool) => {
            Val::Int(t.int32_data.iter().map(|&i| i as i64).collect())
        }
        Ok(D::Uint32) => Val::Int(t.uint64_data.iter().map(|&u| u.min(i64::MAX as u64) as i64).collect()),
        Ok(D::Float) => Val::Float(t.float_data.iter().map(|&f| f as f64).collect()),
        Ok(D::Double) => Val::Float(t.double_data.clone()),
        Ok(D::Float16) => Val::Float(t.int32_data.iter().map(|&i| f16_to_f64(i as u16)).collect()),
        Ok(D::Bfloat16) => {
            Val::Float(t.int32_data.iter().map(|&i| f32::from_bits((i as u32 & 0xffff) << 16) as f64).collect())
        }
        _ => return Ok(None),
    };
    if v.len() != n {
        // An empty typed field with elements expected: the data is elsewhere (external) or absent.
        if v.is_empty() {
            return Ok(None);
        }
        return Err(err!(Field, "tensor '{what}': holds {} values, its dims need {n}", v.len()));
    }
    Ok(Some(v))
}

/// IEEE half to f64 (values only steer shapes: Resize scales, fill values).
fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let frac = (h & 0x3ff) as f64;
    match exp {
        0 => sign * frac * 2f64.powi(-24),
        31 => {
            if frac == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            }
        }
        e => sign * (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}
