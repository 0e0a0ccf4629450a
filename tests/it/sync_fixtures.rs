//! Every insertion scenario and GE optimisation as a fixture in the filetest syntax
//! (`filetest.rs`): `tests/fixtures/sync/NAME.MODE.expected` runs graph `NAME.json`, whose
//! streams (and events) are given, through the sync stage of one mode (`; option: compat=ge`,
//! `; option: event_reuse=lifetime`, or neither for the default):
//!
//! ```text
//! ; run: preassigned sync        (the sync stage on the given streams)
//! ; run: preassigned all         (also through the split, for orderings GE leaves to activation)
//! sync kind=K ids=N              (the sync kind and the id count after the sync stage)
//! pair FROM -> TO                (the kept pairs, sorted; an attached-stream end is NODE@attached)
//! inserted NAME                  (nodes the sync stage inserted, in order)
//! split pairs unchanged          (`all`: the split kept the pairs; else `split pair FROM -> TO` lines)
//! checker ok                     (or `checker rule R: MESSAGE`, one per violation)
//! error CODE MESSAGE             (instead of all the above: the run fails)
//! ```
//!
//! The checker runs on the last stage run: orderings GE leaves to stream activation are proven
//! only once the split stage has written the activation lists.

use std::fmt::Write;

use crate::filetest::{self, Case};
use stream_alloc::allocate_from_preassigned;
use stream_alloc::compile::{Allocation, Stage};
use stream_alloc::graph::Model;

fn pairs(model: &Model, alloc: &Allocation) -> Vec<String> {
    let end = |e: &stream_alloc::compile::SyncEnd| {
        let n = &model.nodes[e.node].name;
        if e.attached.is_some() { format!("{n}@attached") } else { n.clone() }
    };
    let mut v: Vec<String> = alloc.syncs().iter().map(|p| format!("{} -> {}", end(&p.from), end(&p.to))).collect();
    v.sort();
    v
}

fn actual(case: &Case) -> String {
    let run = case.run.as_deref().unwrap_or_else(|| panic!("{}: no '; run:' directive", case.graph.display()));
    let stage = match run {
        "preassigned sync" => Stage::Sync,
        "preassigned all" => Stage::All,
        _ => panic!("unknown run directive '{run}'"),
    };
    let result = (|| {
        let model = filetest::model(case)?;
        let alloc = allocate_from_preassigned(&model, Stage::Sync)?;
        let mut out = format!("sync kind={} ids={}\n", alloc.sync_kind().as_str(), alloc.sync_count());
        let kept = pairs(&model, &alloc);
        for p in &kept {
            writeln!(out, "pair {p}").unwrap();
        }
        for i in alloc.inserted().iter() {
            writeln!(out, "inserted {}", i.name(&model)).unwrap();
        }
        let last = if stage == Stage::All {
            let all = allocate_from_preassigned(&model, Stage::All)?;
            let after = pairs(&model, &all);
            if after == kept {
                out.push_str("split pairs unchanged\n");
            } else {
                for p in &after {
                    writeln!(out, "split pair {p}").unwrap();
                }
            }
            all
        } else {
            alloc
        };
        out.push_str(&filetest::checker_lines(&model, &last));
        Ok(out)
    })();
    result.unwrap_or_else(|e| filetest::error_line(&e))
}

#[test]
fn sync_fixtures() {
    filetest::run_all("sync", 50, actual);
}
