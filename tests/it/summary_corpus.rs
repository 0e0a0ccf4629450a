//! The stream allocation summary agrees with the allocation JSON on every corpus graph: the
//! entries, their nodes and physical stream counts are recounted from the JSON document alone.

use crate::common;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::Value;
use stream_alloc::graph::json;

/// Per graph label: logical id -> (node names, physical ids), from allocation JSON.
type Expected = BTreeMap<String, BTreeMap<i64, (Vec<String>, BTreeSet<i64>)>>;

fn expected(doc: &Value, dynamic: &BTreeSet<String>) -> Expected {
    let split: BTreeMap<i64, i64> = doc["streams"]["split_to_logic"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(p, l)| (p.parse().unwrap(), l.as_i64().unwrap()))
        .collect();
    let mut out: Expected = BTreeMap::new();
    for n in doc["nodes"].as_array().unwrap() {
        if n.get("inserted").is_some() {
            continue;
        }
        let graph = n["graph"].as_str().unwrap().to_string();
        let dyn_graph = dynamic.contains(&graph);
        let (logical, stream) = (n["logical_stream"].as_i64().unwrap(), n["stream"].as_i64().unwrap());
        let key = if dyn_graph { stream } else { logical };
        if key < 0 {
            continue;
        }
        let g = out.entry(graph).or_default();
        let e = g.entry(key).or_default();
        e.0.push(n["name"].as_str().unwrap().to_string());
        e.1.insert(stream);
        for a in n.get("attached_streams").and_then(Value::as_array).into_iter().flatten() {
            let p = a.as_i64().unwrap();
            let l = if dyn_graph { p } else { split[&p] };
            let e = g.entry(l).or_default();
            e.0.push(n["name"].as_str().unwrap().to_string());
            e.1.insert(p);
        }
    }
    out
}

#[test]
fn summary_numbers_agree_with_allocation_json_on_every_corpus_graph() {
    for path in common::corpus_paths() {
        let model = Arc::new(json::load_file(&path).unwrap());
        let mut s = common::session(Arc::clone(&model));
        s.run_all().unwrap();
        let doc = s.allocation_json().unwrap();
        let summary = s.summary().unwrap();
        let dynamic: BTreeSet<String> =
            model.graphs.ids().filter(|&g| model.is_dynamic(g)).map(|g| model.graph_label(g).to_string()).collect();
        let want = expected(&doc, &dynamic);
        let what = path.display();

        assert_eq!(summary.counts.stream_num as u64, doc["streams"]["physical"].as_u64().unwrap(), "{what}");
        let events = &doc["events"];
        let (ev, nt) = if events["kind"] == "notify" {
            (events["split_count"].as_u64().unwrap(), events["count"].as_u64().unwrap())
        } else {
            (events["count"].as_u64().unwrap(), 0)
        };
        assert_eq!((summary.counts.event_num as u64, summary.counts.notify_num as u64), (ev, nt), "{what}");

        let mut seen = 0;
        for g in &summary.graphs {
            let label = model.graph_label(g.graph).to_string();
            let empty = BTreeMap::new();
            let w = want.get(&label).unwrap_or(&empty);
            let ids: Vec<i64> = g.streams.iter().map(|i| i.logical_stream_id).collect();
            assert!(ids.windows(2).all(|p| p[0] < p[1]), "{what}: ascending ids");
            assert_eq!(ids, w.keys().copied().collect::<Vec<_>>(), "{what} graph '{}'", g.name);
            for i in &g.streams {
                let (names, phys) = &w[&i.logical_stream_id];
                let mut got: Vec<&str> = i.nodes.iter().map(|&n| model.nodes[n].name.as_str()).collect();
                let mut exp: Vec<&str> = names.iter().map(String::as_str).collect();
                got.sort_unstable();
                exp.sort_unstable();
                assert_eq!(got, exp, "{what}: nodes of stream {}", i.logical_stream_id);
                let phys_want = if g.is_static { phys.len() } else { 1 };
                assert_eq!(i.physical_stream_num, phys_want, "{what}: physical of {}", i.logical_stream_id);
                seen += 1;
            }
        }
        assert!(seen > 0, "{what}: the summary lists streams");
        // Every logical stream of the model appears in some graph's entries.
        let all: BTreeSet<i64> = summary
            .graphs
            .iter()
            .filter(|g| g.is_static)
            .flat_map(|g| g.streams.iter().map(|i| i.logical_stream_id))
            .collect();
        if model.graphs.ids().all(|g| !model.is_dynamic(g)) {
            let logical = doc["streams"]["logical"].as_i64().unwrap() + doc["streams"]["attached"].as_i64().unwrap();
            assert!(all.iter().all(|&l| l < logical.max(1)), "{what}: ids within the logical count");
        }
    }
}
