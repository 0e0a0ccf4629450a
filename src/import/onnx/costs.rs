//! Engines, tasks and cost estimates (docs/cost-model.md): which engine runs each ONNX operator,
//! under which GE operator type, and the fp16 roofline for `cost_us` and `cores`, with every
//! constant taken from the [`DeviceProfile`].

use super::attrs::Attrs;
use super::proto::NodeProto;
use super::values::{Tensor, numel};
use crate::graph::device::DeviceProfile;

/// How a node runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Moves no data: no task (`DNN_VM_GE_LOCAL`); its output is its first input's memory.
    View,
    /// Bookkeeping without a task that allocates its own (small) output: Shape, Size.
    Local,
    /// A constant (initializer, Constant, ConstantOfShape, a folded shape computation).
    Const,
    /// An AI core kernel.
    AiCore,
    /// A data-dependent kernel on the AI CPU.
    AiCpu,
    /// A collective on the HCCL engine.
    Collective,
    /// A control-flow op (If) on the runtime engine.
    Control,
}

impl Kind {
    pub fn engine(self) -> &'static str {
        match self {
            Kind::View | Kind::Local | Kind::Const => "DNN_VM_GE_LOCAL",
            Kind::AiCore => "AIcoreEngine",
            Kind::AiCpu => "aicpu_ascend_kernel",
            Kind::Collective => "DNN_HCCL",
            Kind::Control => "DNN_VM_RTS",
        }
    }

    pub fn tasks(self) -> u32 {
        match self {
            Kind::View | Kind::Local | Kind::Const => 0,
            _ => 1,
        }
    }
}

/// The engine class of an ONNX operator (cost-model.md's table; ONNX's Transpose, Slice, Split,
/// Gather and Concat materialise their results, so they are device ops).
pub fn kind_of(op: &str) -> Kind {
    match op {
        "Reshape" | "Flatten" | "Squeeze" | "Unsqueeze" | "Expand" | "Identity" | "Dropout" => Kind::View,
        "Shape" | "Size" => Kind::Local,
        "Constant" | "ConstantOfShape" => Kind::Const,
        "NonZero" | "TopK" | "Unique" | "Multinomial" | "Compress" | "RandomNormal" | "RandomUniform" => Kind::AiCpu,
        "AllReduce" | "AllGather" | "ReduceScatter" | "AllToAll" => Kind::Collective,
        "If" => Kind::Control,
        _ => Kind::AiCore,
    }
}

/// GE's spelling of an ONNX operator type, where GE's ONNX parser renames it.
pub fn ge_type(node: &NodeProto, ins: &[Option<&Tensor>]) -> String {
    let op = node.op_type.as_deref().unwrap_or("");
    let rank = |i: usize| ins.get(i).copied().flatten().map_or(0, |t| t.rank());
    let t = match op {
        "Conv" => {
            let group = Attrs::of(node).i_or("group", 1);
            let cin = ins.first().copied().flatten().and_then(|t| t.dims.get(1).copied()).unwrap_or(0);
            match rank(0) {
                5 => "Conv3D",
                _ if group > 1 && group as u64 == cin => "DepthwiseConv2D",
                _ => "Conv2D",
            }
        }
        "ConvTranspose" => "Conv2DTranspose",
        "BatchNormalization" => "BatchNorm",
        "LayerNormalization" => "LayerNorm",
        "InstanceNormalization" => "InstanceNorm",
        "GroupNormalization" => "GroupNorm",
        "Gemm" => "MatMul",
        "MatMul" if rank(0) > 2 || rank(1) > 2 => "BatchMatMul",
        "AveragePool" => "AvgPool",
        "Gather" => "GatherV2",
        "Div" => "RealDiv",
        "Where" => "SelectV2",
        "And" => "LogicalAnd",
        "Or" => "LogicalOr",
        "Not" => "LogicalNot",
        "Sum" => "AddN",
        "Slice" => "StridedSlice",
        "Split" => "SplitV",
        "Max" => "Maximum",
        "Min" => "Minimum",
        "Constant" | "ConstantOfShape" => "Const",
        "AllReduce" => "HcomAllReduce",
        "AllGather" => "HcomAllGather",
        "ReduceScatter" => "HcomReduceScatter",
        "AllToAll" => "HcomAllToAll",
        other => other,
    };
    t.to_string()
}

/// Per-element flop factor of element-wise operators (cost-model.md).
fn elementwise_factor(op: &str) -> f64 {
    match op {
        "Sqrt" | "Pow" | "Div" | "Reciprocal" | "Mod" => 2.0,
        "Exp" | "Log" | "Tanh" | "Sigmoid" | "Erf" | "Sin" | "Cos" | "Tan" | "HardSwish" | "Swish" | "Mish"
        | "Softplus" | "Elu" | "Selu" | "Celu" => 4.0,
        "Softmax" | "LogSoftmax" | "Hardmax" => 5.0,
        "Gelu"
        | "LayerNormalization"
        | "GroupNormalization"
        | "InstanceNormalization"
        | "LRN"
        | "MeanVarianceNormalization" => 8.0,
        _ => 1.0,
    }
}

/// Floating-point operations of one node (cost-model.md's rules).
pub fn flops(node: &NodeProto, ins: &[Option<&Tensor>], outs: &[Tensor]) -> f64 {
    let op = node.op_type.as_deref().unwrap_or("");
    let inp = |i: usize| ins.get(i).copied().flatten();
    let out_max = outs.iter().map(|t| t.numel()).max().unwrap_or(0) as f64;
    match op {
        // 2 · N · Cout · spatial_out · (Cin / groups) · kernel.
        "Conv" => match (inp(1), outs.first()) {
            (Some(w), Some(o)) => 2.0 * o.numel() as f64 * numel(w.dims.get(1..).unwrap_or(&[])) as f64,
            _ => out_max,
        },
        // Each input element scatters into Cout / groups · kernel outputs.
        "ConvTranspose" => match (inp(0), inp(1)) {
            (Some(x), Some(w)) => 2.0 * x.numel() as f64 * numel(w.dims.get(1..).unwrap_or(&[])) as f64,
            _ => out_max,
        },
        // 2 · M · N · K per batch: the output's elements times K.
        "MatMul" | "MatMulInteger" => match (inp(0), outs.first()) {
            (Some(a), Some(o)) => 2.0 * o.numel() as f64 * *a.dims.last().unwrap_or(&1) as f64,
            _ => out_max,
        },
        "Gemm" => match (inp(0), outs.first()) {
            (Some(a), Some(o)) if a.rank() == 2 => {
                let k = if Attrs::of(node).i_or("transA", 0) != 0 { a.dims[0] } else { a.dims[1] };
                2.0 * o.numel() as f64 * k as f64
            }
            _ => out_max,
        },
        // Reductions count their input; a windowed pool reads its window for every output.
        "ReduceMean" | "ReduceSum" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL1" | "ReduceL2"
        | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare" | "ArgMax" | "ArgMin" | "GlobalAveragePool"
        | "GlobalMaxPool" | "GlobalLpPool" => inp(0).map_or(out_max, |t| t.numel() as f64),
        "Einsum" => einsum_flops(node, ins).unwrap_or(out_max),
        "MaxPool" | "AveragePool" | "LpPool" => {
            let k: u64 =
                Attrs::of(node).ints("kernel_shape").unwrap_or_default().iter().map(|&v| v.max(1) as u64).product();
            outs.first().map_or(0.0, |o| o.numel() as f64 * k as f64)
        }
        _ => out_max * elementwise_factor(op),
    }
}

/// Einsum: a multiply and an add for every combination of the letters' sizes (each output
/// element sums over the letters it lacks), as MatMul's 2 · M · N · K; `...` dims count once.
fn einsum_flops(node: &NodeProto, ins: &[Option<&Tensor>]) -> Option<f64> {
    let eq = Attrs::of(node).s("equation")?.replace(' ', "");
    let lhs = eq.split("->").next()?;
    let mut sizes: std::collections::BTreeMap<char, u64> = std::collections::BTreeMap::new();
    let mut ell = 1u64;
    for (term, t) in lhs.split(',').zip(ins.iter().flatten()) {
        let letters: Vec<char> = term.replace("...", ".").chars().collect();
        let named = letters.iter().filter(|&&l| l != '.').count();
        let mut k = 0;
        for l in letters {
            if l == '.' {
                let n = t.rank().checked_sub(named)?;
                ell = ell.max(numel(t.dims.get(k..k + n)?));
                k += n;
            } else {
                let d = *t.dims.get(k)?;
                let e = sizes.entry(l).or_insert(d);
                *e = (*e).max(d);
                k += 1;
            }
        }
    }
    Some(2.0 * sizes.values().fold(ell as f64, |p, &d| p * d as f64))
}

/// Bytes a kernel moves: every input read plus every output written, at the device's element size.
pub fn bytes(dev: &DeviceProfile, ins: &[Option<&Tensor>], outs: &[Tensor]) -> f64 {
    let elems: u64 = ins.iter().flatten().map(|t| t.numel()).chain(outs.iter().map(|t| t.numel())).sum();
    elems as f64 * dev.element_bytes as f64
}

/// `(cost_us, cores)` of a node of `kind` from its flops and bytes.
pub fn estimate(dev: &DeviceProfile, kind: Kind, flops: f64, bytes: f64) -> (f64, u32) {
    match kind {
        Kind::AiCore => {
            let t = (flops / dev.peak_flops).max(bytes / dev.memory_bandwidth) * 1e6 + dev.launch_us;
            let c = (flops / dev.flops_per_unit).max(bytes / dev.bytes_per_unit).ceil();
            (t, (c.max(1.0) as u64).min(dev.units as u64) as u32)
        }
        Kind::AiCpu => ((flops / dev.aicpu_flops).max(bytes / dev.aicpu_bandwidth) * 1e6 + dev.aicpu_launch_us, 0),
        Kind::Collective => (dev.collective_latency_us + bytes / dev.collective_bandwidth * 1e6, 0),
        Kind::Control => (dev.launch_us, 0),
        Kind::View | Kind::Local | Kind::Const => (0.0, 0),
    }
}

/// Rounds a time to the nanosecond, as the corpus writes it.
pub fn round_us(t: f64) -> f64 {
    (t * 1000.0).round() / 1000.0
}
