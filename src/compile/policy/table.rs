//! The policy table: every policy `--option policy=` accepts, once. An entry says what the
//! option's text is (name, and how an argument such as `budget:N`'s is parsed), how the policy
//! assigns streams, what it fills in its report, and whether `auto` tries it. Everything else
//! reads the table: option parsing and its error text, the usage text, the driver's dispatch,
//! auto's candidates. docs/policies.md, "Adding a policy", walks through a new entry.

use super::report::Cover;
use super::{Assignment, Ctx, PolicyReport, budget, earliest, fifo, list, per_backend, per_operator, single};
use crate::error::Result;
use crate::graph::Options;
use crate::graph::options::invalid;

/// A policy's assignment of the free task nodes within `cap` policy streams, given its
/// argument (0 for a policy without one). It fills its sections of the report and says how
/// many streams it made before `cap` bound ([`Made`]).
pub type AssignFn = fn(ctx: &Ctx<'_>, arg: u32, cap: u32, report: &mut PolicyReport) -> Result<(Assignment, Made)>;

/// How many streams a policy made before its cap bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Made {
    /// This many: the count when the cap did not bind.
    Streams(u32),
    /// The assignment fills the cap, and what the policy would make without it takes a run of
    /// its own (list's schedule again with no cap): the run with cap `u32::MAX` counts them,
    /// when a report that shows the count is asked for.
    Uncounted,
}

/// How a policy runs.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// GE's pass chain, in the mode the graph's shape and options select.
    Ge,
    /// A search over whole runs of other policies under the simulator: the driver runs the
    /// session's search (`crate::search::auto`), which sits above this layer.
    Search,
    /// An assignment of the free nodes, merged into GE's pinned streams.
    Assign(AssignFn),
}

/// A policy's argument, written after `NAME:`.
#[derive(Clone, Copy, Debug)]
pub struct Arg {
    /// How the usage text writes it (`N`).
    pub usage: &'static str,
    /// What a valid one is, for the error text (` (N >= 1)`).
    pub rule: &'static str,
    /// The argument's value, `None` when invalid.
    pub parse: fn(&str) -> Option<u32>,
}

/// Whether `auto` runs a policy as a candidate.
#[derive(Clone, Copy, Debug)]
pub enum Candidate {
    No,
    Yes,
    /// A parameterised policy: the arguments to try for a graph whose chain cover is this wide
    /// (the first) when the budget leaves a policy this many streams of its own (the second).
    With(fn(usize, u32) -> Vec<u32>),
}

/// One policy.
#[derive(Debug)]
pub struct Entry {
    /// What `policy=` takes, and the report's `name` (with `:ARG` for an argument).
    pub name: &'static str,
    pub arg: Option<Arg>,
    pub kind: Kind,
    pub candidate: Candidate,
    /// The policy whose unbounded run the report compares this one's makespan with, when
    /// the costs are asked for (`budget:N` against min-streams).
    pub compare_with: Option<&'static str>,
}

/// Every policy, in the order the usage and error texts list them. The first is the default.
/// `auto` runs the `Candidate::Yes` entries in this order, then each `Candidate::With`
/// entry's arguments.
pub static POLICIES: &[Entry] = &[
    Entry { name: "ge", arg: None, kind: Kind::Ge, candidate: Candidate::Yes, compare_with: None },
    Entry {
        name: "single",
        arg: None,
        kind: Kind::Assign(|ctx, _, cap, _| Ok(fit(ctx, single(ctx), cap))),
        candidate: Candidate::Yes,
        compare_with: None,
    },
    Entry {
        name: "per-backend",
        arg: None,
        kind: Kind::Assign(|ctx, _, cap, _| Ok(fit(ctx, per_backend(ctx), cap))),
        candidate: Candidate::Yes,
        compare_with: None,
    },
    Entry {
        name: "per-operator",
        arg: None,
        kind: Kind::Assign(|ctx, _, cap, _| Ok(fit(ctx, per_operator::assign(ctx), cap))),
        candidate: Candidate::Yes,
        compare_with: None,
    },
    Entry {
        name: "min-streams",
        arg: None,
        kind: Kind::Assign(|ctx, _, cap, report| {
            let cover = ctx.chain_cover();
            let antichain = cover.antichain.iter().map(|&n| ctx.model.nodes[n].name.clone()).collect();
            report.cover = Some(Cover { width: cover.chains.len(), antichain: Some(antichain) });
            Ok((budget::merge(ctx, cover, cap), Made::Streams(cover.chains.len() as u32)))
        }),
        candidate: Candidate::Yes,
        compare_with: None,
    },
    Entry {
        name: "budget",
        arg: Some(AT_LEAST_ONE),
        kind: Kind::Assign(|ctx, n, cap, report| {
            let cover = ctx.chain_cover();
            report.budget = Some(n);
            report.cover = Some(Cover { width: cover.chains.len(), antichain: None });
            let made = cover.chains.len().min(n as usize) as u32;
            Ok((budget::merge(ctx, cover, n.min(cap)), Made::Streams(made)))
        }),
        // Budgets below the width: at or above it, a budget is min-streams.
        candidate: Candidate::With(|width, _| [2, 4, 8, 16].into_iter().filter(|&b| (b as usize) < width).collect()),
        compare_with: Some("min-streams"),
    },
    Entry {
        name: "list",
        arg: None,
        kind: Kind::Assign(|ctx, _, cap, _| {
            // Fewer streams than the cap: the cap never bound, the unbounded run is the same.
            let a = list::assign(ctx, cap);
            let made = if a.count < cap { Made::Streams(a.count) } else { Made::Uncounted };
            Ok((a, made))
        }),
        candidate: Candidate::Yes,
        compare_with: None,
    },
    Entry {
        name: "earliest",
        arg: Some(AT_LEAST_ONE),
        kind: Kind::Assign(|ctx, n, cap, _| Ok(at_most(earliest::assign(ctx, n.min(cap)), n, cap))),
        candidate: Candidate::With(|width, cap| few_streams(width, cap, 8)),
        compare_with: None,
    },
    Entry {
        name: "fifo",
        arg: Some(AT_LEAST_ONE),
        kind: Kind::Assign(|ctx, n, cap, _| Ok(at_most(fifo::assign(ctx, n.min(cap)), n, cap))),
        candidate: Candidate::With(|width, cap| few_streams(width, cap, 64)),
        compare_with: None,
    },
    Entry { name: "auto", arg: None, kind: Kind::Search, candidate: Candidate::No, compare_with: None },
];

/// The argument `N >= 1` of `budget:N`, `earliest:N` and `fifo:N`.
const AT_LEAST_ONE: Arg = Arg { usage: "N", rule: " (N >= 1)", parse: |a| a.parse::<u32>().ok().filter(|&n| n >= 1) };

/// The assignment of a schedule onto at most `n` streams run with `min(n, cap)`, and how many
/// streams it made: at or under the cap, the cap did not bind.
fn at_most(a: Assignment, n: u32, cap: u32) -> (Assignment, Made) {
    let made = if n <= cap { Made::Streams(a.count) } else { Made::Uncounted };
    (a, made)
}

/// The stream counts `earliest:N` and `fifo:N` are tried with on a graph whose chain cover is
/// `width` wide, where the budget leaves a policy `cap` streams: the powers of two from 2 to
/// `most`, up to the first at or above the width, and past 8 up to the first at or above the
/// cap (a count past the cap runs as the cap, so the next one would repeat it). More streams than the graph
/// is wide seldom pay, but as many can: the greedy packing then still beats min-streams' and
/// list's on inception-1000 of the synthetic families (docs/compare.md). `fifo:N` goes up to
/// 64, `earliest:N` to 8: on the wide synthetic graphs `fifo:32` and `fifo:64` are the fastest
/// plans, and `earliest:N` past 8 never beats `fifo:N` at the same count (docs/policies.md).
fn few_streams(width: usize, cap: u32, most: u32) -> Vec<u32> {
    (1..=most.ilog2()).map(|k| 1 << k).filter(|&n| (n as usize) / 2 < width && (n <= 8 || n / 2 < cap)).collect()
}

/// A policy's own assignment merged down to `cap` streams, and how many it made.
fn fit(ctx: &Ctx<'_>, a: Assignment, cap: u32) -> (Assignment, Made) {
    let made = Made::Streams(a.count);
    (budget::merge_assignment(ctx, &a, cap), made)
}

/// A policy as an option names it: its table entry and argument (0 without one).
#[derive(Clone, Copy, Debug)]
pub struct Chosen {
    pub entry: &'static Entry,
    pub arg: u32,
}

impl PartialEq for Chosen {
    fn eq(&self, other: &Self) -> bool {
        self.entry.name == other.entry.name && self.arg == other.arg
    }
}

impl Eq for Chosen {}

impl Chosen {
    /// The text `policy=` takes for it, also the report's and the allocation's mode name.
    pub fn name(&self) -> String {
        match self.entry.arg {
            Some(_) => format!("{}:{}", self.entry.name, self.arg),
            None => self.entry.name.to_string(),
        }
    }

    /// The options' value that names it.
    pub fn policy(&self) -> crate::graph::Policy {
        crate::graph::Policy::new(self.name())
    }

    /// Options running this policy instead of theirs.
    pub fn options(&self, options: &Options) -> Options {
        Options { policy: self.policy(), ..options.clone() }
    }

    pub fn is_ge(&self) -> bool {
        matches!(self.entry.kind, Kind::Ge)
    }

    pub fn is_search(&self) -> bool {
        matches!(self.entry.kind, Kind::Search)
    }
}

/// The entry named `text` (`NAME` or `NAME:ARG`; empty is the first entry, GE's), or E10001
/// naming the option, the value and every spelling the table accepts.
pub fn parse(text: &str) -> Result<Chosen> {
    let (name, arg) = match text.split_once(':') {
        Some((name, arg)) => (name, Some(arg)),
        None if text.is_empty() => (POLICIES[0].name, None),
        None => (text, None),
    };
    let found = POLICIES.iter().find(|e| e.name == name).and_then(|entry| match (&entry.arg, arg) {
        (None, None) => Some(Chosen { entry, arg: 0 }),
        (Some(spec), Some(a)) => (spec.parse)(a).map(|arg| Chosen { entry, arg }),
        _ => None,
    });
    found.ok_or_else(|| invalid("policy", text, &format!("expected {}", spellings())))
}

/// The policy `options` select.
pub fn resolve(options: &Options) -> Result<Chosen> {
    parse(options.policy.as_str())
}

/// The entry named `name` (no argument): a policy another entry refers to.
pub fn entry(name: &str) -> Option<&'static Entry> {
    POLICIES.iter().find(|e| e.name == name)
}

/// Every spelling with its rule, for error texts: `ge, single, …, budget:N (N >= 1), list or auto`.
fn spellings() -> String {
    let all: Vec<String> = POLICIES
        .iter()
        .map(|e| match &e.arg {
            Some(a) => format!("{}:{}{}", e.name, a.usage, a.rule),
            None => e.name.to_string(),
        })
        .collect();
    match all.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => all.join(""),
    }
}

/// Every spelling for the usage text: `ge|single|…|budget:N|list|auto`.
pub fn usage() -> String {
    let all: Vec<String> = POLICIES
        .iter()
        .map(|e| match &e.arg {
            Some(a) => format!("{}:{}", e.name, a.usage),
            None => e.name.to_string(),
        })
        .collect();
    all.join("|")
}

/// `auto`'s candidates for a graph whose chain cover is `width` wide, where the budget leaves a
/// policy `cap` streams ([`super::Ctx::policy_cap`]): the fixed policies in table order, then
/// each parameterised one's arguments.
pub fn candidates(width: usize, cap: u32) -> Vec<Chosen> {
    let fixed = POLICIES.iter().filter(|e| matches!(e.candidate, Candidate::Yes)).map(|entry| Chosen { entry, arg: 0 });
    let with = POLICIES.iter().flat_map(|entry| match entry.candidate {
        Candidate::With(args) => args(width, cap).into_iter().map(|arg| Chosen { entry, arg }).collect(),
        _ => Vec::new(),
    });
    fixed.chain(with).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_names_and_arguments_name_the_option_and_every_spelling() {
        for bad in ["nonsense", "budget:0", "budget", "budget:x", "single:2", "ge:", ":"] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.code(), "E10001", "{bad}");
            assert!(e.message.contains(&format!("\"{bad}\"")) && e.message.contains("option policy"), "{e}");
            for entry in POLICIES {
                assert!(e.message.contains(entry.name), "{e}");
            }
        }
    }

    /// The event budget's narrowing takes `single`'s assignment for a cap of one stream
    /// instead of running the policy (`Bounded::fewer`): every policy must agree with it.
    #[test]
    fn every_policy_within_one_stream_is_single() {
        let models = crate::graph::synth::test_models(
            2000,
            None,
            &["bert_base", "googlenet", "resnet50_train", "bert_base_dynamic"],
        );
        for model in &models {
            let ctx = Ctx::new(model, &model.options).expect("GE's pass chain runs");
            let one = super::super::single(&ctx);
            for entry in POLICIES {
                let Kind::Assign(assign) = entry.kind else { continue };
                for arg in [1, 2, 8] {
                    let (a, _) = assign(&ctx, arg, 1, &mut PolicyReport::default()).expect("the policy assigns");
                    assert_eq!((&a.stream, a.count), (&one.stream, one.count), "{} on {}", entry.name, model.name);
                }
            }
        }
    }

    #[test]
    fn names_are_unique_and_references_resolve() {
        let mut names: Vec<&str> = POLICIES.iter().map(|e| e.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), POLICIES.len());
        for e in POLICIES {
            if let Some(other) = e.compare_with {
                assert!(entry(other).is_some_and(|o| matches!(o.kind, Kind::Assign(_))), "{}", e.name);
            }
        }
    }
}
