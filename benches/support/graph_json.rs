//! Synthetic models written as graph JSON v1, shared by the benches that start from a file.

use std::fmt::Write;

use stream_alloc::graph::Model;

/// The model as graph JSON v1, the way an exporter writes it (one node or edge per line).
pub fn to_json(m: &Model) -> String {
    let mut s = String::with_capacity(m.nodes.len() * 120 + m.edges.len() * 50);
    let _ = writeln!(s, "{{\"format\":\"stream-graph\",\"version\":1,\"name\":\"{}\",\"nodes\":[", m.name);
    for (i, n) in m.nodes.iter().enumerate() {
        let sep = if i > 0 { ",\n" } else { "" };
        let _ = write!(
            s,
            "{sep}{{\"name\":\"{}\",\"type\":\"{}\",\"engine\":\"{}\",\"tasks\":{}",
            n.name, n.op_type, m.engines[n.engine].name, n.tasks
        );
        if n.cost_us > 0.0 {
            let _ = write!(s, ",\"cost_us\":{},\"cores\":{}", n.cost_us, n.cores);
        }
        let a = &n.attrs;
        let labels = [
            ("stream_label", &a.stream_label),
            ("user_stream_label", &a.user_stream_label),
            ("parallel_group", &a.parallel_group),
        ];
        if labels.iter().any(|(_, v)| v.is_some()) {
            s.push_str(",\"attrs\":{");
            let mut first = true;
            for (k, v) in labels {
                if let Some(v) = v {
                    let _ = write!(s, "{}\"{k}\":\"{v}\"", if first { "" } else { "," });
                    first = false;
                }
            }
            s.push('}');
        }
        s.push('}');
    }
    s.push_str("\n],\"edges\":[\n");
    for (i, e) in m.edges.iter().enumerate() {
        let sep = if i > 0 { ",\n" } else { "" };
        let (src, dst) = (&m.nodes[e.src].name, &m.nodes[e.dst].name);
        let _ = write!(s, "{sep}{{\"src\":\"{src}\",\"dst\":\"{dst}\",\"kind\":\"{}\"}}", e.kind.as_str());
    }
    s.push_str("\n]}\n");
    s
}
