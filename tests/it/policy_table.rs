//! The policy table is the one place a policy is declared: option parsing, the error and usage
//! texts, the driver's dispatch and auto's candidates all follow from its entries. Each test
//! reads the table and checks one of those readers against it, so an entry that one of them
//! does not follow fails here.

use std::process::Command;

use stream_alloc::compile::policy::table::{self, Candidate, Chosen, Kind, POLICIES};
use stream_alloc::compile::policy::{Ctx, min_streams};
use stream_alloc::compile::{Stage, TaskLimits};
use stream_alloc::graph::json;
use stream_alloc::search;
use stream_alloc::search::report::AutoReport;
use stream_alloc::simulate::SimConfig;

use crate::common;

/// One valid spelling per entry: its name, with the smallest argument it takes.
fn spellings() -> Vec<Chosen> {
    POLICIES
        .iter()
        .map(|entry| {
            let arg = entry.arg.map_or(0, |a| {
                (0..100).find(|n| (a.parse)(&n.to_string()).is_some()).expect("an argument below 100 parses")
            });
            Chosen { entry, arg }
        })
        .collect()
}

#[test]
fn every_entry_round_trips_through_the_option() {
    for c in spellings() {
        let mut o = stream_alloc::graph::Options::default();
        o.set_str("policy", &c.name()).unwrap();
        assert_eq!(table::resolve(&o).unwrap(), c, "{}", c.name());
        assert_eq!(table::parse(&c.name()).unwrap().name(), c.name());
    }
}

#[test]
fn usage_and_error_texts_list_every_entry() {
    let bin = env!("CARGO_BIN_EXE_stream-alloc");
    let help = Command::new(bin).args(["allocate", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let line = help.lines().find(|l| l.trim_start().starts_with("policy=")).expect("a policy line in the help");
    let listed: Vec<&str> =
        line.trim_start().trim_start_matches("policy=").split_whitespace().next().unwrap().split('|').collect();
    let names: Vec<&str> = listed.iter().map(|s| s.split(':').next().unwrap()).collect();
    assert_eq!(names, POLICIES.iter().map(|e| e.name).collect::<Vec<_>>(), "{line}");
    let g = common::corpus_graph("squeezenet1_1.json");
    let out = Command::new(bin)
        .args(["allocate", g.to_str().unwrap(), "--option", "policy=no-such-policy"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("E10001") && err.contains("\"no-such-policy\""), "{err}");
    for e in POLICIES {
        assert!(err.contains(e.name), "{} missing from: {err}", e.name);
    }
}

#[test]
fn the_driver_runs_each_entry_by_its_table_kind() {
    let path = common::corpus_graph("squeezenet1_1.json");
    for c in spellings() {
        let mut m = json::load_file(&path).unwrap();
        m.options.policy = c.policy();
        let limits = TaskLimits::from_options(&m.options);
        let (alloc, report) = search::run(&m, m.options.clone(), limits, Stage::Logical, SimConfig::default()).unwrap();
        match c.entry.kind {
            // GE's chain names the allocation after GE's mode and makes no report.
            Kind::Ge => assert!(report.is_none() && alloc.mode().starts_with("static-"), "{}", alloc.mode()),
            Kind::Search => {
                let r = report.expect("a search reports");
                assert_eq!(r.name, c.name());
                assert!(r.section::<AutoReport>().is_some());
            }
            Kind::Assign(_) => {
                let r = report.expect("a policy reports");
                assert_eq!((r.name.as_str(), alloc.mode()), (c.name().as_str(), c.name().as_str()));
            }
        }
    }
}

#[test]
fn auto_runs_the_table_candidates_in_table_order() {
    let path = common::corpus_graph("googlenet.json");
    let mut m = json::load_file(&path).unwrap();
    m.options.policy = "auto".into();
    let ctx = Ctx::new(&m, &m.options).unwrap();
    let width = min_streams::chain_cover(&ctx).chains.len();
    let cap = ctx.policy_cap(m.options.stream_budget());
    let table_order: Vec<String> = table::candidates(width, cap).iter().map(Chosen::name).collect();
    // Fixed entries first, in table order, then the arguments of parameterised ones.
    let fixed: Vec<&str> = POLICIES.iter().filter(|e| matches!(e.candidate, Candidate::Yes)).map(|e| e.name).collect();
    assert_eq!(table_order[..fixed.len()], fixed[..]);
    assert!(table_order.len() > fixed.len(), "googlenet is wide enough for a budget candidate");
    // Then the peers' assignments (docs/policies.md, "The peers' plans"), in their order.
    let expected: Vec<String> =
        table_order.into_iter().chain(search::peers::PEERS.into_iter().map(search::peers::name)).collect();
    let limits = TaskLimits::from_options(&m.options);
    let (_, report) = search::run(&m, m.options.clone(), limits, Stage::All, SimConfig::default()).unwrap();
    let rows = report.unwrap().section::<AutoReport>().unwrap().candidates.clone();
    let ran: Vec<&str> = rows.iter().map(|r| r.policy.as_str()).collect();
    assert_eq!(ran, expected);
}
