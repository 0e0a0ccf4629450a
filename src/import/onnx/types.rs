//! Operand element types where an operator's schema restricts them (onnx/onnx,
//! `docs/Operators.md`, each operator's type constraints): indices, shapes, axes and counts are
//! integers, conditions are booleans, arithmetic takes numbers. A model that breaks one is
//! refused naming the node's input and both types; the evaluator never reads, say, a STRING
//! tensor as Gather's indices. An element type the importer does not know (0: an operator
//! without a rule) is not checked.

use super::proto::tensor_proto::DataType as D;
use super::values::Tensor;

const I32: i32 = D::Int32 as i32;
const I64: i32 = D::Int64 as i32;
const BOOL: i32 = D::Bool as i32;
const STRING: i32 = D::String as i32;

const INDEX: &[i32] = &[I32, I64];
const LONG: &[i32] = &[I64];
const COND: &[i32] = &[BOOL];
const FLOATS: &[i32] = &[D::Float as i32, D::Float16 as i32, D::Double as i32, D::Bfloat16 as i32];

/// Which input of an operator must have which element types: (operator, input, name, types).
/// `None` as the input: every input.
const INPUT_TYPES: &[(&str, Option<usize>, &str, &[i32])] = &[
    ("Gather", Some(1), "indices", INDEX),
    ("GatherElements", Some(1), "indices", INDEX),
    ("GatherND", Some(1), "indices", LONG),
    ("ScatterElements", Some(1), "indices", INDEX),
    ("Scatter", Some(1), "indices", INDEX),
    ("ScatterND", Some(1), "indices", LONG),
    ("Reshape", Some(1), "shape", LONG),
    ("Expand", Some(1), "shape", LONG),
    ("Tile", Some(1), "repeats", LONG),
    ("ConstantOfShape", Some(0), "input", LONG),
    ("Slice", Some(1), "starts", INDEX),
    ("Slice", Some(2), "ends", INDEX),
    ("Slice", Some(3), "axes", INDEX),
    ("Slice", Some(4), "steps", INDEX),
    ("Squeeze", Some(1), "axes", LONG),
    ("Unsqueeze", Some(1), "axes", LONG),
    ("Split", Some(1), "split", LONG),
    ("Pad", Some(1), "pads", LONG),
    ("Pad", Some(3), "axes", INDEX),
    ("TopK", Some(1), "K", LONG),
    ("CumSum", Some(1), "axis", INDEX),
    ("Resize", Some(3), "sizes", LONG),
    ("NonMaxSuppression", Some(2), "max_output_boxes_per_class", LONG),
    ("Where", Some(0), "condition", COND),
    ("Not", None, "X", COND),
    ("And", None, "A/B", COND),
    ("Or", None, "A/B", COND),
    ("Xor", None, "A/B", COND),
    ("Sqrt", None, "X", FLOATS),
    ("Exp", None, "X", FLOATS),
    ("Log", None, "X", FLOATS),
    ("Reciprocal", None, "X", FLOATS),
    ("Floor", None, "X", FLOATS),
    ("Ceil", None, "X", FLOATS),
    ("Round", None, "X", FLOATS),
];

/// Operators over numbers: no STRING operand.
const NUMERIC: &[&str] = &[
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Mod",
    "Pow",
    "Max",
    "Min",
    "Sum",
    "Mean",
    "Neg",
    "Abs",
    "Sign",
    "Relu",
    "Clip",
    "Greater",
    "GreaterOrEqual",
    "Less",
    "LessOrEqual",
    "ReduceSum",
    "ReduceProd",
    "ReduceMin",
    "ReduceMax",
    "ReduceMean",
    "ReduceL1",
    "ReduceL2",
    "ReduceSumSquare",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ArgMax",
    "ArgMin",
    "MatMul",
    "Gemm",
    "Conv",
    "Range",
    "CumSum",
    "Einsum",
];

fn name(elem: i32) -> &'static str {
    D::try_from(elem).map(|d| d.as_str_name()).unwrap_or("an unknown type")
}

/// Checks `op`'s inputs against its schema's element types; the message names the input.
pub fn check(op: &str, ins: &[Option<&Tensor>]) -> Result<(), String> {
    let known = |i: usize| ins.get(i).copied().flatten().map(|t| t.elem).filter(|&e| e != 0);
    for &(o, input, what, types) in INPUT_TYPES.iter().filter(|r| r.0 == op) {
        let idx: Vec<usize> = match input {
            Some(i) => vec![i],
            None => (0..ins.len()).collect(),
        };
        for i in idx {
            if let Some(e) = known(i)
                && !types.contains(&e)
            {
                let allowed: Vec<&str> = types.iter().map(|&t| name(t)).collect();
                return Err(format!(
                    "input {i} ({what}) of {o} has element type {}; the operator takes {}",
                    name(e),
                    allowed.join(" or ")
                ));
            }
        }
    }
    if NUMERIC.contains(&op)
        && let Some(i) = (0..ins.len()).find(|&i| known(i) == Some(STRING))
    {
        return Err(format!("input {i} of {op} has element type STRING; the operator takes numbers"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_indices_of_gather_are_refused() {
        let data = Tensor::new(vec![4], I64);
        let idx = Tensor::new(vec![2], STRING);
        let e = check("Gather", &[Some(&data), Some(&idx)]).unwrap_err();
        assert!(
            e.contains("input 1 (indices) of Gather") && e.contains("STRING") && e.contains("INT32 or INT64"),
            "{e}"
        );
        let ok = Tensor::new(vec![2], I32);
        assert!(check("Gather", &[Some(&data), Some(&ok)]).is_ok());
        // An unknown element type is not checked.
        assert!(check("Gather", &[Some(&data), Some(&Tensor::new(vec![2], 0))]).is_ok());
        let e = check("Add", &[Some(&data), Some(&idx)]).unwrap_err();
        assert!(e.contains("STRING"), "{e}");
        let e = check("Where", &[Some(&data), Some(&data), Some(&data)]).unwrap_err();
        assert!(e.contains("condition") && e.contains("BOOL"), "{e}");
    }
}
