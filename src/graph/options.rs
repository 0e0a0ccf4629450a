//! Allocation options: GE's keys and value rules (graph-json.md "Options"). Values arrive either
//! typed, from a graph file's `options` object, or as GE's own strings, from `--option KEY=VALUE`
//! and the C ABI; both paths meet in [`Options::set`]. An invalid value is E10001 (E10006 for
//! `hcom_parallel`, as GE's option parser reports it), naming the option and the value.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};

/// `event` option: what logical cross-stream syncs are made of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SyncKind {
    #[default]
    Event,
    Notify,
}

impl SyncKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SyncKind::Event => "event",
            SyncKind::Notify => "notify",
        }
    }
}

/// `ge.autoMultistreamParallelMode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AutoMultistreamMode {
    #[default]
    Off,
    /// Mark vector nodes parallel to cube nodes as VectorEngine.
    Cv,
    /// `default`, accepted from the root graph attribute only.
    Default,
    /// MiniDAG strategies with their stream cap (`None`: the default cap).
    LoadBalance(Option<u32>),
    MainStream(u32),
    WeightedLoadBalance(u32),
}

impl AutoMultistreamMode {
    /// Parses GE's string form. `from_graph_attr` admits `default`, as GE does.
    pub fn parse(value: &str, from_graph_attr: bool, key: &str) -> Result<Self> {
        let bad = |why: &str| {
            Error::new(
                ErrorKind::InvalidOption,
                format!(
                    "invalid value \"{value}\" for option {key} (ge.autoMultistreamParallelMode): {why}; \
                     expected \"\", \"cv\", \"LoadBalance[:N]\", \"MainStream:N\" or \"WeightedLoadBalance:N\" with N in [1, 64]"
                ),
            )
        };
        match value {
            "" => return Ok(AutoMultistreamMode::Off),
            "cv" => return Ok(AutoMultistreamMode::Cv),
            "default" if from_graph_attr => return Ok(AutoMultistreamMode::Default),
            "default" => return Err(bad("\"default\" is accepted only as a graph attribute")),
            _ => {}
        }
        let (strategy, n) = match value.split_once(':') {
            Some((s, n)) => (s, Some(n)),
            None => (value, None),
        };
        let n = match n {
            None => None,
            Some(n) => {
                if n.contains(':') {
                    return Err(bad("more than one ':'"));
                }
                let parsed: u32 = n.parse().map_err(|_| bad("N is not an integer"))?;
                if !(1..=64).contains(&parsed) {
                    return Err(bad("N is out of range"));
                }
                Some(parsed)
            }
        };
        match (strategy, n) {
            ("LoadBalance", n) => Ok(AutoMultistreamMode::LoadBalance(n)),
            ("MainStream", Some(n)) => Ok(AutoMultistreamMode::MainStream(n)),
            ("WeightedLoadBalance", Some(n)) => Ok(AutoMultistreamMode::WeightedLoadBalance(n)),
            ("MainStream" | "WeightedLoadBalance", None) => Err(bad("this strategy needs \":N\"")),
            _ => Err(bad("unknown strategy")),
        }
    }

    pub fn is_set(self) -> bool {
        self != AutoMultistreamMode::Off
    }

    /// GE's string form.
    pub fn to_ge_string(self) -> String {
        match self {
            AutoMultistreamMode::Off => String::new(),
            AutoMultistreamMode::Cv => "cv".into(),
            AutoMultistreamMode::Default => "default".into(),
            AutoMultistreamMode::LoadBalance(None) => "LoadBalance".into(),
            AutoMultistreamMode::LoadBalance(Some(n)) => format!("LoadBalance:{n}"),
            AutoMultistreamMode::MainStream(n) => format!("MainStream:{n}"),
            AutoMultistreamMode::WeightedLoadBalance(n) => format!("WeightedLoadBalance:{n}"),
        }
    }
}

/// `policy`: how nodes are assigned to streams, as written (`NAME` or `NAME:ARG`; empty is GE's
/// chain). Which names exist and what an argument means is the policy table's business
/// (`compile::policy::POLICIES`, one layer up), so this layer keeps the text and a new policy
/// changes nothing here. Whoever reads options from a user (the command line, the C ABI)
/// resolves the text against the table at once, so a bad name is still reported where it
/// was given.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Policy(String);

impl Policy {
    pub fn new(text: impl Into<String>) -> Self {
        Policy(text.into())
    }

    /// The text as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Policy {
    fn from(text: &str) -> Self {
        Policy::new(text)
    }
}

/// `memory_limit`: the arena the memory plan may need at most, in bytes or as a multiple of the
/// single-stream plan's peak (docs/memory.md). Every policy honours it: `auto` keeps the fastest
/// candidate within it, the others order their nodes to fit or fail with SA2003.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryLimit {
    Bytes(u64),
    /// Thousandths of the single-stream peak (`1.1x`: 1100).
    Times(u32),
}

impl MemoryLimit {
    /// The limit in bytes, given the single-stream plan's peak.
    pub fn bytes(self, single_peak: u64) -> u64 {
        match self {
            MemoryLimit::Bytes(b) => b,
            MemoryLimit::Times(m) => (u128::from(single_peak) * u128::from(m) / 1000).min(u128::from(u64::MAX)) as u64,
        }
    }
}

impl std::fmt::Display for MemoryLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MemoryLimit::Bytes(b) => write!(f, "{b}"),
            MemoryLimit::Times(m) if m % 1000 == 0 => write!(f, "{}x", m / 1000),
            MemoryLimit::Times(m) => {
                let frac = format!("{:03}", m % 1000);
                write!(f, "{}.{}x", m / 1000, frac.trim_end_matches('0'))
            }
        }
    }
}

/// `execution_order`: how each stream orders its nodes outside `compat=ge`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ExecutionOrder {
    /// Critical path first where several streams run, GE's order on one (docs/simulate.md).
    #[default]
    CriticalPath,
    /// The memory-aware order (docs/memory.md): least live bytes, or under `memory_limit`'s
    /// bytes the critical path first as far as live bytes allow.
    Memory,
}

/// Every allocation option, with GE's defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// `ge.enableSingleStream`.
    pub enable_single_stream: bool,
    /// `ge.streamMaxParallelNum`, by engine name (default 1 for every engine).
    pub max_parallel_num: BTreeMap<String, u32>,
    /// `ge.hcomParallel`.
    pub hcom_parallel: bool,
    /// `ge.event`.
    pub event: SyncKind,
    /// `ge.exec.memoryOptimizationPolicy` = MemoryPriority.
    pub memory_priority: bool,
    /// `ac_parallel_enable`: `""`, `"0"` or `"1"`.
    pub ac_parallel_enable: String,
    /// Environment `ENABLE_DYNAMIC_SHAPE_MULTI_STREAM=1`.
    pub dynamic_multi_stream: bool,
    /// `ge.autoMultistreamParallelMode` (the option; the graph attribute wins, see `Model`).
    pub auto_multistream_parallel_mode: AutoMultistreamMode,
    /// Per-stream task limit of a normal stream (`None`: ask the runtime, else GE's test default).
    pub max_task_count: Option<u32>,
    /// Per-stream task limit of a huge stream.
    pub max_huge_task_count: Option<u32>,
    /// The device reports persistent unlimited-depth streams: no split.
    pub unlimited_depth: Option<bool>,
    pub policy: Policy,
    /// `compat=ge`: reproduce GE's results exactly in every stage.
    pub compat_ge: bool,
    /// `event_reuse=lifetime`.
    pub event_reuse_lifetime: bool,
    /// `event_reuse=never`: one id per sync even over `max_events` (a policy's streams are cut
    /// instead of its ids reused by lifetime).
    pub event_reuse_never: bool,
    /// Run the checker on the result.
    pub verify: bool,
    /// `memory_limit` (also `max_memory`, `ge.graphMemoryMaxSize`): the memory plan's arena at most.
    pub memory_limit: Option<MemoryLimit>,
    /// `execution_order`.
    pub execution_order: ExecutionOrder,
    /// `next_stream`: GE's pass context for the passes and steps `stream-alloc pass` runs, the
    /// first stream id they hand out (`None`: one past the ids the graph gives). A whole
    /// allocation always starts a fresh context.
    pub next_stream: Option<u32>,
    /// `max_streams`: policy streams every policy but GE's stays within (`None`: the default,
    /// [`DEFAULT_MAX_STREAMS`]; `u32::MAX`: unlimited).
    pub max_streams: Option<u32>,
    /// `max_events`: sync ids a policy's result may use (`None`: the default,
    /// [`DEFAULT_MAX_EVENTS`]; `u32::MAX`: unlimited).
    pub max_events: Option<u32>,
}

/// GE's ceiling for automatic multi-stream (`ge.autoMultistreamParallelMode`'s N is at most 64).
pub const DEFAULT_MAX_STREAMS: u32 = 64;
/// Event ids a policy may use when nothing says otherwise: the device runtime's seam has no
/// event-count query, so the budget is the notify allocator's size, the smaller of the two.
pub const DEFAULT_MAX_EVENTS: u32 = 1024;

impl Options {
    /// The stream budget of every policy but GE's (`u32::MAX`: unlimited).
    pub fn stream_budget(&self) -> u32 {
        self.max_streams.unwrap_or(DEFAULT_MAX_STREAMS)
    }

    /// The sync-id budget of every policy but GE's (`u32::MAX`: unlimited).
    pub fn event_budget(&self) -> u32 {
        self.max_events.unwrap_or(DEFAULT_MAX_EVENTS)
    }

    /// The options without budgets: what a policy would do unbounded.
    pub fn unbudgeted(&self) -> Options {
        Options { max_streams: Some(u32::MAX), max_events: Some(u32::MAX), ..self.clone() }
    }
}

/// Every key [`Options::set`] accepts, for help texts and error messages.
pub const OPTION_KEYS: &[&str] = &[
    "enable_single_stream",
    "max_parallel_num",
    "hcom_parallel",
    "event",
    "memory_priority",
    "ac_parallel_enable",
    "dynamic_multi_stream",
    "auto_multistream_parallel_mode",
    "max_task_count",
    "max_huge_task_count",
    "unlimited_depth",
    "policy",
    "compat",
    "event_reuse",
    "verify",
    "memory_limit",
    "execution_order",
    "next_stream",
    "max_streams",
    "max_events",
];

/// GE's option names, accepted as synonyms of ours.
const GE_KEYS: &[(&str, &str)] = &[
    ("ge.enableSingleStream", "enable_single_stream"),
    ("ge.streamMaxParallelNum", "max_parallel_num"),
    ("ge.hcomParallel", "hcom_parallel"),
    ("ge.event", "event"),
    ("ge.exec.memoryOptimizationPolicy", "memory_priority"),
    ("ge.autoMultistreamParallelMode", "auto_multistream_parallel_mode"),
    ("ENABLE_DYNAMIC_SHAPE_MULTI_STREAM", "dynamic_multi_stream"),
    // GE's bound on a graph's feature memory: the arena this project plans.
    ("ge.graphMemoryMaxSize", "memory_limit"),
    // The earlier name of memory_limit, when only auto honoured it.
    ("max_memory", "memory_limit"),
];

/// E10001 for `value` of option `key`, saying what was expected.
pub fn invalid(key: &str, value: &str, why: &str) -> Error {
    Error::new(ErrorKind::InvalidOption, format!("invalid value \"{value}\" for option {key}: {why}"))
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A bool from JSON `true`/`false` or GE's strings.
fn parse_bool(key: &str, v: &Value) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Number(n) if n.as_u64() == Some(0) => Ok(false),
        Value::Number(n) if n.as_u64() == Some(1) => Ok(true),
        Value::String(s) => match s.as_str() {
            "true" | "1" => Ok(true),
            "false" | "0" | "" => Ok(false),
            _ => Err(invalid(key, s, "expected true or false")),
        },
        other => Err(invalid(key, &value_text(other), "expected true or false")),
    }
}

/// A whole number from a JSON number or a decimal string, kept when `fits`; else the error says
/// what was `expected`.
fn parse_u32(key: &str, v: &Value, fits: impl Fn(u64) -> bool, expected: &str) -> Result<u32> {
    let n = match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        _ => None,
    };
    match n {
        Some(n) if fits(n) => Ok(n as u32),
        _ => Err(invalid(key, &value_text(v), expected)),
    }
}

fn parse_count(key: &str, v: &Value) -> Result<u32> {
    parse_u32(key, v, |n| n >= 1 && n <= u64::from(u32::MAX), "expected an integer >= 1")
}

/// A budget: an integer >= 1 or `unlimited` (`u32::MAX`).
fn parse_budget(key: &str, v: &Value) -> Result<u32> {
    if v.as_str().is_some_and(|s| s.trim() == "unlimited") {
        return Ok(u32::MAX);
    }
    parse_u32(key, v, |n| n >= 1 && n < u64::from(u32::MAX), "expected an integer >= 1 or \"unlimited\"")
}

/// A stream id: an integer in [0, 2^20) (GE's stream ids are small; tables are sized by them).
fn parse_stream_id(key: &str, v: &Value) -> Result<u32> {
    parse_u32(key, v, |n| n < 1 << 20, "expected a stream id, an integer in [0, 1048575]")
}

/// Bytes as GE's memory-size options take them (`ge.graphMemoryMaxSize`): a decimal integer
/// >= 1, here also with a binary suffix `K`, `M` or `G` (KiB, MiB, GiB) for convenience.
fn parse_bytes(key: &str, v: &Value) -> Result<u64> {
    let bad = || invalid(key, &value_text(v), "expected a byte count >= 1, optionally with K, M or G (KiB, MiB, GiB)");
    let n = match v {
        Value::Number(n) => n.as_u64().ok_or_else(bad)?,
        Value::String(s) => {
            let s = s.trim();
            let (digits, shift) = match s.strip_suffix(['K', 'M', 'G']) {
                Some(d) => (
                    d,
                    match s.as_bytes()[s.len() - 1] {
                        b'K' => 10,
                        b'M' => 20,
                        _ => 30,
                    },
                ),
                None => (s, 0),
            };
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            let n: u64 = digits.parse().map_err(|_| bad())?;
            n.checked_mul(1u64 << shift).ok_or_else(bad)?
        }
        _ => return Err(bad()),
    };
    if n == 0 {
        return Err(bad());
    }
    Ok(n)
}

/// `memory_limit`: bytes as [`parse_bytes`] takes them (also with `KiB`, `MiB`, `GiB`), or a
/// multiple of the single-stream peak with up to three decimals and an `x` (`1.1x`).
fn parse_memory_limit(key: &str, v: &Value) -> Result<MemoryLimit> {
    let Value::String(text) = v else { return parse_bytes(key, v).map(MemoryLimit::Bytes) };
    let t = text.trim();
    if let Some(m) = t.strip_suffix(['x', 'X']) {
        let bad = || {
            invalid(
                key,
                text,
                "expected a multiple of the single-stream peak such as 1.1x, above 0, at most 3 decimals",
            )
        };
        let (int, frac) = m.split_once('.').unwrap_or((m, ""));
        if int.is_empty()
            || frac.len() > 3
            || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
            || int.len() > 6
        {
            return Err(bad());
        }
        let thousandths =
            int.parse::<u32>().map_err(|_| bad())? * 1000 + format!("{frac:0<3}").parse::<u32>().map_err(|_| bad())?;
        if thousandths == 0 {
            return Err(bad());
        }
        return Ok(MemoryLimit::Times(thousandths));
    }
    let short = t.strip_suffix("iB").map(str::to_string).unwrap_or_else(|| t.to_string());
    let ok = short.strip_suffix(['K', 'M', 'G']).unwrap_or(&short).bytes().all(|b| b.is_ascii_digit());
    parse_bytes(key, &Value::String(if ok { short } else { t.to_string() })).map(MemoryLimit::Bytes).map_err(|_| {
        invalid(key, text, "expected bytes (64MiB, 3M, 1048576) or a multiple of the single-stream peak (1.1x)")
    })
}

fn parse_string<'a>(key: &str, v: &'a Value) -> Result<&'a str> {
    v.as_str().ok_or_else(|| invalid(key, &value_text(v), "expected a string"))
}

impl Options {
    /// Canonical key for one of ours or a GE synonym.
    pub fn canonical_key(key: &str) -> Option<&'static str> {
        OPTION_KEYS
            .iter()
            .copied()
            .find(|k| *k == key)
            .or_else(|| GE_KEYS.iter().find(|(ge, _)| *ge == key).map(|(_, ours)| *ours))
    }

    /// Sets one option from a typed JSON value (graph files) or a GE string (CLI, C ABI).
    pub fn set(&mut self, key: &str, value: &Value) -> Result<()> {
        let Some(canonical) = Self::canonical_key(key) else {
            return Err(Error::new(
                ErrorKind::InvalidOption,
                format!("unknown option \"{key}\"; known options: {}", OPTION_KEYS.join(", ")),
            ));
        };
        match canonical {
            "enable_single_stream" => self.enable_single_stream = parse_bool(key, value)?,
            "max_parallel_num" => self.max_parallel_num = parse_max_parallel(key, value)?,
            "hcom_parallel" => {
                self.hcom_parallel = parse_bool(key, value).map_err(|e| {
                    Error::new(ErrorKind::InvalidHcomParallel, format!("{}; GE accepts only 0 or 1", e.message))
                })?
            }
            "event" => {
                self.event = match parse_string(key, value)? {
                    "" | "event" => SyncKind::Event,
                    "notify" => SyncKind::Notify,
                    other => return Err(invalid(key, other, "expected \"event\" or \"notify\"")),
                }
            }
            "memory_priority" => {
                self.memory_priority = match value {
                    Value::String(s) if s == "MemoryPriority" => true,
                    Value::String(s) if s == "GraphPriority" => false,
                    _ => parse_bool(key, value)?,
                }
            }
            "ac_parallel_enable" => {
                let s = match value {
                    Value::Number(n) if n.as_u64().is_some_and(|n| n <= 1) => n.to_string(),
                    _ => parse_string(key, value)?.to_string(),
                };
                if !matches!(s.as_str(), "" | "0" | "1") {
                    return Err(invalid(key, &s, "expected \"\", \"0\" or \"1\""));
                }
                self.ac_parallel_enable = s;
            }
            "dynamic_multi_stream" => self.dynamic_multi_stream = parse_bool(key, value)?,
            "auto_multistream_parallel_mode" => {
                self.auto_multistream_parallel_mode = AutoMultistreamMode::parse(parse_string(key, value)?, false, key)?
            }
            "max_task_count" => self.max_task_count = Some(parse_count(key, value)?),
            "max_huge_task_count" => self.max_huge_task_count = Some(parse_count(key, value)?),
            "unlimited_depth" => self.unlimited_depth = Some(parse_bool(key, value)?),
            "policy" => self.policy = Policy::new(parse_string(key, value)?),
            "compat" => {
                self.compat_ge = match parse_string(key, value)? {
                    "ge" => true,
                    "" | "none" => false,
                    other => return Err(invalid(key, other, "expected \"ge\" or absent")),
                }
            }
            "event_reuse" => {
                (self.event_reuse_lifetime, self.event_reuse_never) = match parse_string(key, value)? {
                    "lifetime" => (true, false),
                    "never" => (false, true),
                    "" | "none" => (false, false),
                    other => return Err(invalid(key, other, "expected \"lifetime\", \"never\" or absent")),
                }
            }
            "verify" => self.verify = parse_bool(key, value)?,
            "memory_limit" => self.memory_limit = Some(parse_memory_limit(key, value)?),
            "execution_order" => {
                self.execution_order = match parse_string(key, value)? {
                    "" | "critical-path" => ExecutionOrder::CriticalPath,
                    "memory" => ExecutionOrder::Memory,
                    other => return Err(invalid(key, other, "expected \"critical-path\" or \"memory\"")),
                }
            }
            "next_stream" => self.next_stream = Some(parse_stream_id(key, value)?),
            "max_streams" => self.max_streams = Some(parse_budget(key, value)?),
            "max_events" => self.max_events = Some(parse_budget(key, value)?),
            _ => unreachable!("every canonical key is handled"),
        }
        Ok(())
    }

    /// Sets one option from GE's string form (`--option KEY=VALUE`).
    pub fn set_str(&mut self, key: &str, value: &str) -> Result<()> {
        self.set(key, &Value::String(value.to_string()))
    }

    /// Parses `KEY=VALUE`.
    pub fn set_assignment(&mut self, assignment: &str) -> Result<()> {
        let (k, v) = assignment.split_once('=').ok_or_else(|| {
            Error::new(ErrorKind::InvalidOption, format!("option \"{assignment}\" is not of the form KEY=VALUE"))
        })?;
        self.set_str(k.trim(), v.trim())
    }

    /// `max_parallel_num` for one engine (GE's default: 1).
    pub fn max_parallel(&self, engine: &str) -> u32 {
        self.max_parallel_num.get(engine).copied().unwrap_or(1)
    }
}

/// `{"ENGINE": N}` or GE's `"ENGINE:N,ENGINE:N"`.
fn parse_max_parallel(key: &str, v: &Value) -> Result<BTreeMap<String, u32>> {
    let mut out = BTreeMap::new();
    match v {
        Value::Object(map) => {
            for (engine, n) in map {
                if engine.is_empty() {
                    return Err(invalid(key, &v.to_string(), "empty engine name"));
                }
                let n = parse_count(&format!("{key}[{engine}]"), n)?;
                out.insert(engine.clone(), n);
            }
        }
        Value::String(s) => {
            for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                let (engine, n) =
                    item.split_once(':').ok_or_else(|| invalid(key, s, &format!("item \"{item}\" is not ENGINE:N")))?;
                let engine = engine.trim();
                if engine.is_empty() {
                    return Err(invalid(key, s, &format!("item \"{item}\" has no engine name")));
                }
                let n = parse_count(&format!("{key}[{engine}]"), &Value::String(n.trim().to_string()))?;
                out.insert(engine.to_string(), n);
            }
        }
        other => return Err(invalid(key, &value_text(other), "expected {\"ENGINE\": N} or \"ENGINE:N,...\"")),
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ge_string_forms() {
        let mut o = Options::default();
        o.set_assignment("max_parallel_num=AIcoreEngine:8,VectorEngine:2").unwrap();
        assert_eq!(o.max_parallel("AIcoreEngine"), 8);
        assert_eq!(o.max_parallel("VectorEngine"), 2);
        assert_eq!(o.max_parallel("DNN_HCCL"), 1);
        o.set_assignment("enable_single_stream=true").unwrap();
        assert!(o.enable_single_stream);
        o.set_assignment("event=notify").unwrap();
        assert_eq!(o.event, SyncKind::Notify);
        o.set_assignment("ge.exec.memoryOptimizationPolicy=MemoryPriority").unwrap();
        assert!(o.memory_priority);
    }

    #[test]
    fn invalid_values_name_option_and_value() {
        let mut o = Options::default();
        let e = o.set_str("ac_parallel_enable", "2").unwrap_err();
        assert_eq!(e.code(), "E10001");
        assert!(e.message.contains("ac_parallel_enable") && e.message.contains("\"2\""));
        let e = o.set_str("hcom_parallel", "yes").unwrap_err();
        assert_eq!(e.code(), "E10006");
        let e = o.set("max_parallel_num", &json!({"AIcoreEngine": 0})).unwrap_err();
        assert!(e.message.contains("AIcoreEngine"), "{e}");
        let e = o.set_str("no_such", "1").unwrap_err();
        assert!(e.message.contains("no_such"));
        assert!(o.set_str("event", "signal").is_err());
        assert!(o.set_str("max_task_count", "0").is_err());
        for bad in ["0", "-1", "1.5", "12T", "K", "", "99999999999999999999", "1 M"] {
            let e = o.set_str("max_memory", bad).unwrap_err();
            assert_eq!(e.code(), "E10001", "{bad}");
            assert!(e.message.contains("max_memory"), "{e}");
        }
        assert!(o.set("max_memory", &json!(-5)).is_err());
        for bad in ["-1", "x", "1048576", ""] {
            let e = o.set_str("next_stream", bad).unwrap_err();
            assert!(e.message.contains("next_stream"), "{e}");
        }
    }

    #[test]
    fn budgets_take_counts_or_unlimited() {
        let mut o = Options::default();
        assert_eq!((o.stream_budget(), o.event_budget()), (DEFAULT_MAX_STREAMS, DEFAULT_MAX_EVENTS));
        o.set_str("max_streams", "unlimited").unwrap();
        o.set("max_events", &json!(16)).unwrap();
        assert_eq!((o.stream_budget(), o.event_budget()), (u32::MAX, 16));
        for key in ["max_streams", "max_events"] {
            for bad in ["0", "abc", "-1", "", "1.5", "4294967295"] {
                let e = o.set_str(key, bad).unwrap_err();
                assert_eq!(e.code(), "E10001", "{key}={bad}");
                assert!(e.message.contains(key), "{e}");
            }
            assert!(o.set(key, &json!(true)).is_err());
        }
    }

    #[test]
    fn next_stream_takes_zero() {
        let mut o = Options::default();
        assert_eq!(o.next_stream, None);
        o.set_str("next_stream", "0").unwrap();
        assert_eq!(o.next_stream, Some(0));
        o.set("next_stream", &json!(7)).unwrap();
        assert_eq!(o.next_stream, Some(7));
    }

    #[test]
    fn memory_limit_takes_bytes_or_a_multiple() {
        let mut o = Options::default();
        for (text, want) in [
            ("1048576", MemoryLimit::Bytes(1 << 20)),
            ("3M", MemoryLimit::Bytes(3 << 20)),
            ("64MiB", MemoryLimit::Bytes(64 << 20)),
            ("2G", MemoryLimit::Bytes(2 << 30)),
            ("1.1x", MemoryLimit::Times(1100)),
            ("2x", MemoryLimit::Times(2000)),
            ("0.75x", MemoryLimit::Times(750)),
        ] {
            o.set_str("memory_limit", text).unwrap();
            assert_eq!(o.memory_limit, Some(want), "{text}");
        }
        o.set("memory_limit", &json!(512)).unwrap();
        assert_eq!(o.memory_limit, Some(MemoryLimit::Bytes(512)));
        // The earlier name and GE's take bytes the same way.
        o.set_str("max_memory", "1K").unwrap();
        assert_eq!(o.memory_limit, Some(MemoryLimit::Bytes(1024)));
        o.set_str("ge.graphMemoryMaxSize", "4096").unwrap();
        assert_eq!(o.memory_limit, Some(MemoryLimit::Bytes(4096)));
        for bad in ["0x", "1.2345x", "x", "-1x", "1,1x", "64MB", "0", "1.5"] {
            let e = o.set_str("memory_limit", bad).unwrap_err();
            assert_eq!(e.code(), "E10001", "{bad}");
            assert!(e.message.contains("memory_limit") && e.message.contains(bad), "{e}");
        }
        assert_eq!(MemoryLimit::Times(1100).bytes(1000), 1100);
        assert_eq!(MemoryLimit::Times(1100).to_string(), "1.1x");
        assert_eq!(MemoryLimit::Times(2000).to_string(), "2x");
        assert_eq!(MemoryLimit::Bytes(7).bytes(1000), 7);
    }

    #[test]
    fn execution_order_values() {
        let mut o = Options::default();
        o.set_str("execution_order", "memory").unwrap();
        assert_eq!(o.execution_order, ExecutionOrder::Memory);
        o.set_str("execution_order", "critical-path").unwrap();
        assert_eq!(o.execution_order, ExecutionOrder::CriticalPath);
        let e = o.set_str("execution_order", "fast").unwrap_err();
        assert!(e.message.contains("execution_order") && e.message.contains("fast"), "{e}");
    }

    #[test]
    fn auto_modes() {
        let p = |s| AutoMultistreamMode::parse(s, false, "k");
        assert_eq!(p("LoadBalance:8").unwrap(), AutoMultistreamMode::LoadBalance(Some(8)));
        assert_eq!(p("LoadBalance").unwrap(), AutoMultistreamMode::LoadBalance(None));
        assert_eq!(p("MainStream:64").unwrap(), AutoMultistreamMode::MainStream(64));
        for bad in
            ["MainStream:65", "MainStream:0", "MainStream", "Foo:3", "LoadBalance:1:2", "default", "LoadBalance:x"]
        {
            assert_eq!(p(bad).unwrap_err().code(), "E10001", "{bad}");
        }
        assert_eq!(AutoMultistreamMode::parse("default", true, "k").unwrap(), AutoMultistreamMode::Default);
    }
}
