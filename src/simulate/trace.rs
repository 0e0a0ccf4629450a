//! Chrome trace-event JSON of a simulation (Perfetto, chrome://tracing): one track per
//! stream, a complete event per node, each wait as a flow arrow from the record to the wait,
//! and, when given a live-bytes profile (`memory::trace_json` gives the graph's when it has
//! `out_bytes`), a `memory` counter track.

use serde_json::{Value, json};

use super::{SimResult, round3};
use crate::graph::Model;

/// The trace of `sim`; `live` is `(time µs, bytes)` at every change of the live bytes, or empty
/// for no memory track.
pub fn trace_json(model: &Model, sim: &SimResult, live: &[(f64, u64)]) -> Value {
    let mut events = vec![json!({"ph": "M", "pid": 0, "name": "process_name", "args": {"name": model.name}})];
    for s in 0..sim.streams {
        events.push(
            json!({"ph": "M", "pid": 0, "tid": s, "name": "thread_name", "args": {"name": format!("stream {s}")}}),
        );
        events.push(json!({"ph": "M", "pid": 0, "tid": s, "name": "thread_sort_index", "args": {"sort_index": s}}));
    }
    for n in model.all_nodes() {
        if let (Some((start, finish)), Some(s)) = (sim.span[n], sim.stream[n]) {
            let node = &model.nodes[n];
            events.push(json!({
                "ph": "X", "pid": 0, "tid": s.0, "name": node.name, "cat": node.op_type,
                "ts": round3(start), "dur": round3(finish - start),
                "args": {"engine": model.engine(n).name, "cores": node.cores},
            }));
        }
    }
    for (i, &(from, to)) in sim.waits.iter().enumerate() {
        let (Some((_, f)), Some((s, _)), Some(fs), Some(ts)) =
            (sim.span[from], sim.span[to], sim.stream[from], sim.stream[to])
        else {
            continue;
        };
        events.push(json!({"ph": "s", "pid": 0, "tid": fs.0, "id": i, "name": "sync", "cat": "sync", "ts": round3(f)}));
        events.push(json!({"ph": "f", "bp": "e", "pid": 0, "tid": ts.0, "id": i, "name": "sync", "cat": "sync", "ts": round3(s)}));
    }
    // Memory over time: a counter track of the bytes live in the simulated schedule.
    for &(t, bytes) in live {
        events.push(json!({"ph": "C", "pid": 0, "name": "memory", "ts": round3(t), "args": {"live_bytes": bytes}}));
    }
    json!({"displayTimeUnit": "ns", "traceEvents": events})
}
