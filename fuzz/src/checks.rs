//! The properties the fuzz targets check, shared with `cargo test` (tests/fuzz_props.rs
//! includes this file): each takes raw bytes and panics on a violation.
//!
//! * [`json_loader`]: any bytes either load or fail with a coded, non-empty message; what
//!   loads allocates or fails the same way, and its allocation JSON reparses.
//! * [`pipeline`]: bytes decode into a valid graph with options; the whole pipeline must
//!   succeed, the independent checker must find no violation, and a second run must give
//!   byte-identical output.
//! * [`onnx_import`]: any bytes either import as an ONNX model or fail with a coded, non-empty
//!   message; what imports imports the same twice, loads as graph JSON, and its allocation
//!   passes the checker as the loader's does.
//! * [`runtime_pool`]: bytes decode into a sequence of pool operations run against a fake
//!   device runtime and a simple model of grants; counts must match the model after every
//!   step, no stream is held by one model twice, and everything balances at the end.

use std::collections::BTreeMap;
use stream_alloc::memory::AllocationDocument;

use serde_json::{Value, json};
use stream_alloc::allocate;
use stream_alloc::compile::Stage;
use stream_alloc::graph::json as graph_json;

/// An `arbitrary`-style reader: never fails, yields zeros once the bytes run out.
pub struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data, pos: 0 }
    }
    pub fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    pub fn u16(&mut self) -> u16 {
        u16::from(self.u8()) | (u16::from(self.u8()) << 8)
    }
    /// A value in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n <= 256 { usize::from(self.u8()) % n } else { usize::from(self.u16()) % n }
    }
    pub fn flag(&mut self) -> bool {
        self.u8() & 1 == 1
    }
    pub fn exhausted(&self) -> bool {
        self.pos >= self.data.len()
    }
}

fn known_code(code: &str) -> bool {
    matches!(code.as_bytes(), [b'S', b'A', ..] | [b'E', b'1', ..]) && code.len() == 6
}

pub fn json_loader(data: &[u8]) {
    match graph_json::load_slice(data) {
        Err(e) => {
            assert!(known_code(e.code()), "unknown code {}", e.code());
            assert!(!e.message.is_empty());
        }
        Ok(model) => match allocate(&model, Stage::All) {
            Err(e) => {
                assert!(known_code(e.code()), "unknown code {}", e.code());
                assert!(!e.message.is_empty());
            }
            Ok(alloc) => {
                let text = alloc.to_json_string_new_plan(&model);
                let doc: Value = serde_json::from_str(&text).expect("allocation JSON reparses");
                let report = stream_alloc::verify::check(&model, &doc);
                if let Err(e) = only_unavoidable_task_overflows(&model, &alloc, &report) {
                    panic!("the checker rejects the allocation: {e}");
                }
            }
        },
    }
}

pub fn onnx_import(data: &[u8]) {
    use stream_alloc::import::onnx::{ImportOptions, import_bytes};
    let opts = ImportOptions { batch: Some(1), unknown_op_cost_us: Some(5.0), ..Default::default() };
    match import_bytes(data, "fuzz", "fuzz.onnx", &opts) {
        Err(e) => {
            assert!(known_code(e.code()), "unknown code {}", e.code());
            assert!(!e.message.is_empty());
        }
        Ok(imported) => {
            let again = import_bytes(data, "fuzz", "fuzz.onnx", &opts).expect("a second import succeeds");
            let json = imported.json();
            assert_eq!(json, again.json(), "the import is deterministic");
            if let Err(e) = graph_json::load_str(&json) {
                panic!("imported graph JSON does not load: {e}");
            }
            let read = graph_json::builder_from_slice(json.as_bytes()).expect("the imported graph JSON reads");
            let direct = imported.into_builder().expect("the imported graph becomes a builder");
            assert_eq!(format!("{direct:?}"), format!("{read:?}"), "the builder is what reading the JSON gives");
            json_loader(json.as_bytes());
        }
    }
}

/// The checker's report holds no violation but rule 7's task limit, and every physical stream
/// over its limit is one the split cannot keep within it: a node's own Send/Recv nodes stay on
/// its stream beside it (allocation JSON ends syncs on graph nodes), and every piece the split
/// opens or closes holds the split's own wait (2) and record (1). So a stream over the limit
/// must hold a node whose tasks there with its Send/Recv nodes (a "unit") plus those 3 exceed
/// the room, and nothing beyond that unit and 3 more tasks. At the fuzz targets' limits (room
/// 1..40) this is common; at the corpus's it is the documented gap of a node waiting on more
/// streams than fit.
pub fn only_unavoidable_task_overflows(
    model: &stream_alloc::Model,
    alloc: &stream_alloc::Allocation,
    report: &stream_alloc::verify::Report,
) -> Result<(), String> {
    use stream_alloc::compile::split::{self, RESERVED_TASKS, TaskLimits};
    use stream_alloc::graph::tasks;
    if let Some(v) = report.violations.iter().find(|v| v.rule != 7) {
        return Err(format!("{v:?}"));
    }
    let limits = TaskLimits::from_options(&model.options);
    if limits.unlimited_depth || alloc.stage() < Stage::Split {
        return if report.violations.is_empty() { Ok(()) } else { Err(format!("{:?}", report.violations)) };
    }
    let streams = alloc.physical_count() as usize;
    let mut total = vec![0u64; streams];
    let mut unit: BTreeMap<(usize, u32), u64> = BTreeMap::new();
    for n in model.nodes.ids() {
        if let Some(s) = alloc.stream()[n] {
            let t = tasks::main_task_count(model, n).unwrap();
            total[s.index()] += t;
            *unit.entry((n.index(), s.0)).or_default() += t;
        }
        for (i, s) in alloc.attached()[n].iter().enumerate() {
            let t = tasks::attached_task_count(model, n, i).unwrap();
            total[s.index()] += t;
            *unit.entry((n.index(), s.0)).or_default() += t;
        }
    }
    for ins in alloc.inserted() {
        let t = ins.kind.sync_tasks().unwrap_or(1);
        total[ins.stream.index()] += t;
        *unit.entry((ins.anchor.index(), ins.stream.0)).or_default() += t;
    }
    let mut biggest = vec![0u64; streams];
    for (&(_, s), &t) in &unit {
        biggest[s as usize] = biggest[s as usize].max(t);
    }
    let split_events = split::plan::SPLIT_RECV_TASKS + split::plan::SPLIT_SEND_TASKS;
    for s in 0..streams {
        let huge = alloc.huge_streams().iter().any(|h| h.index() == s);
        let limit = if huge { limits.huge.unwrap_or(limits.normal) } else { limits.normal };
        let room = u64::from(limit).saturating_sub(u64::from(RESERVED_TASKS));
        let unavoidable = biggest[s] + split_events > room && total[s] <= biggest[s] + split_events;
        if total[s] > room && !unavoidable {
            return Err(format!(
                "physical stream {s} holds {} tasks, room {room}, its biggest node with its syncs {}",
                total[s], biggest[s]
            ));
        }
    }
    Ok(())
}

const ENGINES: &[(&str, &str)] = &[
    ("AIcoreEngine", "Conv2D"),
    ("VectorEngine", "Add"),
    ("aicpu_ascend_kernel", "TopK"),
    ("DNN_HCCL", "HcomAllReduce"),
    ("DNN_VM_GE_LOCAL", "Identity"),
    ("DSAEngine", "DSARandomNormal"),
];

/// Decodes bytes into a valid graph document: a DAG (edges only go forward in node order)
/// over GE's engines, with optional stream labels and a random set of valid options.
pub fn graph_doc(b: &mut Bytes<'_>) -> Value {
    let n = 1 + b.below(48);
    let mut nodes = vec![json!({"name": "in", "type": "Data", "engine": "DNN_VM_GE_LOCAL", "tasks": 0})];
    let mut edges = Vec::new();
    for i in 0..n {
        let (engine, ty) = ENGINES[b.below(ENGINES.len())];
        let mut node = json!({"name": format!("n{i}"), "type": ty, "engine": engine, "tasks": b.below(6)});
        if b.below(8) == 0 {
            node["attrs"] = json!({"stream_label": format!("L{}", b.below(3))});
        }
        nodes.push(node);
        // One to three inputs from earlier nodes ("in" is index 0).
        for _ in 0..1 + b.below(3) {
            let src = b.below(i + 1);
            let kind = if b.below(6) == 0 { "control" } else { "data" };
            let src = if src == 0 { "in".to_string() } else { format!("n{}", src - 1) };
            edges.push(json!({"src": src, "dst": format!("n{i}"), "kind": kind}));
        }
    }
    nodes.push(json!({"name": "out", "type": "NetOutput", "engine": "DNN_VM_GE_LOCAL", "tasks": 0}));
    edges.push(json!({"src": format!("n{}", n - 1), "dst": "out"}));
    let mut options = BTreeMap::new();
    if b.flag() {
        let mut mp = serde_json::Map::new();
        for (e, _) in ENGINES.iter().take(3) {
            mp.insert((*e).to_string(), json!(1 + b.below(4)));
        }
        options.insert("max_parallel_num", Value::Object(mp));
    }
    if b.flag() {
        options.insert("event", json!(if b.flag() { "notify" } else { "event" }));
    }
    if b.flag() {
        options.insert("compat", json!("ge"));
    }
    if b.flag() {
        options.insert("event_reuse", json!("lifetime"));
    }
    if b.flag() {
        options.insert("max_task_count", json!(28 + b.below(40)));
    }
    if b.flag() {
        options.insert("hcom_parallel", json!(b.flag()));
    }
    json!({"format": "stream-graph", "version": 1, "name": "fuzz", "nodes": nodes, "edges": edges, "options": options})
}

pub fn pipeline(data: &[u8]) {
    let doc = graph_doc(&mut Bytes::new(data));
    let text = serde_json::to_vec(&doc).unwrap();
    let model = graph_json::load_slice(&text).unwrap_or_else(|e| panic!("generated graph refused: {e}\n{doc}"));
    let alloc = allocate(&model, Stage::All).unwrap_or_else(|e| panic!("pipeline failed: {e}\n{doc}"));
    let out = alloc.to_json_new_plan(&model);
    let report = stream_alloc::verify::check(&model, &out);
    if let Err(e) = only_unavoidable_task_overflows(&model, &alloc, &report) {
        panic!("checker: {e}\n{doc}");
    }
    let again = allocate(&model, Stage::All).unwrap().to_json_string_new_plan(&model);
    assert_eq!(again, alloc.to_json_string_new_plan(&model), "nondeterministic output\n{doc}");
}

/// The pool against a model: per handle, the models holding it (grants).
pub fn runtime_pool(data: &[u8]) {
    use std::collections::{BTreeMap, BTreeSet};
    use stream_alloc::runtime::consts::*;
    use stream_alloc::runtime::{PoolOptions, ReusableStreamPool, RtErrorKind};

    let mut b = Bytes::new(data);
    let (rt, fake) = crate::fake_rt::new_fake();
    let reuse = b.flag();
    let pool = ReusableStreamPool::with_runtime(PoolOptions { reuse, task_limit: None }, rt.clone());
    // handle -> models holding a grant (a model may hold a handle once per grant when reuse is off:
    // then each grant is its own stream).
    let mut held: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    let mut destroyed: BTreeSet<usize> = BTreeSet::new();
    let flags = [RT_STREAM_PERSISTENT, RT_STREAM_DEFAULT, RT_STREAM_PERSISTENT | RT_STREAM_HUGE];
    let mut steps = 0;
    while !b.exhausted() && steps < 512 {
        steps += 1;
        match b.below(4) {
            0 | 1 => {
                let model = b.below(6) as u32;
                let f = flags[b.below(flags.len())];
                let tasks = b.below(400) as u32;
                let (s, shared) =
                    pool.get_or_create(model, b.below(2) as i32, f, tasks).expect("fake never fails here");
                let h = s as usize;
                let holders = held.entry(h).or_default();
                assert_eq!(shared, !holders.is_empty(), "shared flag vs model for {h:#x}");
                assert!(!holders.contains(&model), "stream {h:#x} granted twice to model {model}");
                if !reuse {
                    assert!(holders.is_empty(), "no reuse, yet live stream {h:#x} granted again");
                }
                holders.push(model);
                destroyed.remove(&h);
            }
            2 => {
                let live: Vec<usize> = held.keys().copied().collect();
                if live.is_empty() {
                    continue;
                }
                let h = live[b.below(live.len())];
                pool.destroy(h as *mut std::ffi::c_void, b.flag()).expect("destroy of a held stream");
                let holders = held.get_mut(&h).unwrap();
                holders.remove(b.below(holders.len()) % holders.len().max(1));
                if holders.is_empty() {
                    held.remove(&h);
                    destroyed.insert(h);
                }
            }
            _ => {
                // A handle the pool never made, or one already destroyed (a no-op success).
                if b.flag() || destroyed.is_empty() {
                    let e = pool.destroy((0xdead_0000 + 16 * b.below(64)) as *mut std::ffi::c_void, false).unwrap_err();
                    assert_eq!(e.kind, RtErrorKind::UnknownHandle);
                } else {
                    let d: Vec<usize> = destroyed.iter().copied().collect();
                    pool.destroy(d[b.below(d.len())] as *mut std::ffi::c_void, false).expect("destroyed again");
                }
            }
        }
        let st = pool.stats();
        assert_eq!(st.live as usize, held.len(), "live streams vs model: {st:?}");
        assert_eq!(st.grants as usize, held.values().map(Vec::len).sum::<usize>(), "grants vs model: {st:?}");
        assert_eq!(fake.live.lock().len(), held.len(), "device streams vs model");
    }
    for (h, holders) in std::mem::take(&mut held) {
        for _ in holders {
            pool.destroy(h as *mut std::ffi::c_void, false).unwrap();
        }
    }
    assert_eq!(pool.stats().live, 0);
    drop(pool);
    drop(rt);
    fake.check_balanced().unwrap();
}
