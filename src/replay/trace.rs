//! Chrome trace-event JSON of a measured run (Perfetto, chrome://tracing), in the shape of the
//! simulator's trace (`simulate::trace`): one track per stream, a complete event per kernel at
//! its measured start and end, each record / wait pair between two kernels as a flow arrow, and
//! each violation as an instant event on the consumer's track.

use serde_json::{Value, json};

use super::{ArcKind, Program, Run};
use crate::simulate::round3;

pub fn trace_json(program: &Program, run: &Run, device: &str) -> Value {
    let mut events = vec![
        json!({"ph": "M", "pid": 0, "name": "process_name", "args": {"name": format!("{} on {device}", program.graph)}}),
    ];
    for (s, ops) in program.streams.iter().enumerate() {
        if ops.is_empty() {
            continue;
        }
        events.push(
            json!({"ph": "M", "pid": 0, "tid": s, "name": "thread_name", "args": {"name": format!("stream {s}")}}),
        );
        events.push(json!({"ph": "M", "pid": 0, "tid": s, "name": "thread_sort_index", "args": {"sort_index": s}}));
    }
    for (k, kern) in program.kernels.iter().enumerate() {
        let (b, e) = run.spans[k];
        events.push(json!({
            "ph": "X", "pid": 0, "tid": kern.stream, "name": kern.name, "cat": kern.op_type,
            "ts": round3(b), "dur": round3(e - b),
            "args": {"cost_us": kern.cost_us, "units": kern.units},
        }));
    }
    let kernel_at: std::collections::HashMap<usize, usize> =
        program.kernels.iter().enumerate().map(|(k, kern)| (kern.node, k)).collect();
    for (i, arc) in program.arcs.iter().enumerate() {
        let (Some(&f), Some(&t)) = (kernel_at.get(&arc.from), kernel_at.get(&arc.to)) else { continue };
        let name = match arc.kind {
            ArcKind::Sync { .. } => "sync",
            ArcKind::Activation => "activation",
        };
        events.push(json!({"ph": "s", "pid": 0, "tid": arc.from_stream, "id": i, "name": name, "cat": "sync", "ts": round3(run.spans[f].1)}));
        events.push(json!({"ph": "f", "bp": "e", "pid": 0, "tid": arc.to_stream, "id": i, "name": name, "cat": "sync", "ts": round3(run.spans[t].0)}));
    }
    for v in &run.violations {
        let (k, d) = (&program.kernels[v.kernel as usize], &program.kernels[v.dep as usize]);
        events.push(json!({
            "ph": "i", "s": "t", "pid": 0, "tid": k.stream, "name": "missing sync", "cat": "violation",
            "ts": round3(run.spans[v.kernel as usize].0),
            "args": {"from": d.name, "to": k.name},
        }));
    }
    json!({"displayTimeUnit": "ns", "traceEvents": events})
}
