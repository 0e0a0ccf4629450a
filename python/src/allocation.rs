//! `Allocation`, `Report` and `Simulation`: results that own what they read.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use pyo3::prelude::*;
use serde_json::Value;
use stream_alloc::compile::Allocation as Alloc;
use stream_alloc::compile::summary::StreamAllocationSummary;
use stream_alloc::driver::{Compiled, SessionStage};
use stream_alloc::frontend::OnnxOptions;
use stream_alloc::import::onnx::ort::Device;
use stream_alloc::simulate::SimResult;
use stream_alloc::{Error, ErrorKind, Model, frontend, verify};

use crate::errors::{detached, guarded, invalid};
use crate::value;

/// The result of ``allocate``: streams, syncs and the allocation JSON document.
#[pyclass(frozen, module = "stream_alloc")]
pub struct Allocation {
    /// The graph with the allocation's options applied: what it was compiled from.
    pub model: Arc<Model>,
    pub compiled: Arc<Compiled>,
    /// The document `stream-alloc allocate -o OUT` writes.
    pub text: String,
    /// The ONNX model and its import options, when the graph came from one.
    source: Option<(PathBuf, Arc<OnnxOptions>)>,
    doc: OnceLock<Value>,
    by_name: OnceLock<HashMap<String, Vec<NodeEntry>>>,
}

/// A node of the document: its (sub)graph, physical and logical streams.
struct NodeEntry {
    graph: String,
    stream: Option<u32>,
    logical: Option<u32>,
}

impl Allocation {
    pub fn new(
        model: Arc<Model>,
        compiled: Compiled,
        text: String,
        source: Option<(PathBuf, Arc<OnnxOptions>)>,
    ) -> Self {
        Allocation { model, compiled: Arc::new(compiled), text, source, doc: OnceLock::new(), by_name: OnceLock::new() }
    }

    fn alloc(&self) -> &Alloc {
        &self.compiled.alloc
    }

    /// The document, parsed once.
    pub fn doc(&self) -> &Value {
        self.doc.get_or_init(|| serde_json::from_str(&self.text).expect("the library writes valid JSON"))
    }

    /// The document's entry of the node named `name` (in `graph` when given): its physical and
    /// logical streams. Inserted nodes (Send, Recv, …) are found too.
    fn node(&self, name: &str, graph: Option<&str>) -> Result<(Option<u32>, Option<u32>), Error> {
        let by_name = self.by_name.get_or_init(|| {
            let mut m: HashMap<String, Vec<NodeEntry>> = HashMap::new();
            for n in self.doc()["nodes"].as_array().into_iter().flatten() {
                let stream = |k: &str| n[k].as_i64().and_then(|s| u32::try_from(s).ok());
                let entry = NodeEntry {
                    graph: n["graph"].as_str().unwrap_or_default().to_string(),
                    stream: stream("stream"),
                    logical: stream("logical_stream"),
                };
                m.entry(n["name"].as_str().unwrap_or_default().to_string()).or_default().push(entry);
            }
            m
        });
        // The root graph is "" in the document; its own name picks it too.
        let wanted = graph.map(|g| if g == self.model.name { "" } else { g });
        let found: Vec<&NodeEntry> =
            by_name.get(name).into_iter().flatten().filter(|e| wanted.is_none_or(|g| g == e.graph)).collect();
        match found.as_slice() {
            [e] => Ok((e.stream, e.logical)),
            [] => Err(Error::new(
                ErrorKind::UnknownNode,
                format!(
                    "graph '{}' has no node named '{name}'{}",
                    self.model.name,
                    graph.map(|g| format!(" in graph '{g}'")).unwrap_or_default()
                ),
            )),
            _ => Err(Error::new(
                ErrorKind::UnknownNode,
                format!("'{name}' names nodes of several graphs of '{}': give graph=", self.model.name),
            )),
        }
    }

    fn session_stage(&self) -> SessionStage {
        SessionStage::after(self.alloc().stage())
    }
}

#[pymethods]
impl Allocation {
    /// The allocation JSON document, byte for byte what ``stream-alloc allocate GRAPH -o OUT``
    /// writes with the same options and stage.
    fn to_json(&self) -> String {
        self.text.clone()
    }

    /// ONNX Runtime's stream partition of this allocation, the document
    /// ``stream-alloc export MODEL --to ort`` writes with the same options: every node of the
    /// graph ORT builds from the model under ORT's name, on the plan's stream. ``ep`` is the
    /// execution provider, ``"cpu"`` or ``"cuda"``. Give the file to ORT through the session
    /// config entry ``session.node_partition_config_file`` (docs/ort.md). Raises
    /// ``UnsupportedError`` when the graph was not loaded from an ONNX model.
    #[pyo3(signature = (ep="cpu"))]
    fn to_ort_partition(&self, py: Python<'_>, ep: &str) -> PyResult<String> {
        let device = guarded(py, || match ep {
            "cpu" => Ok(Device::Cpu),
            "cuda" => Ok(Device::Cuda),
            _ => Err(invalid(format!("ep '{ep}': expected cpu or cuda"))),
        })?;
        let Some((path, onnx)) = self.source.clone() else {
            return guarded(py, || {
                Err(Error::new(
                    ErrorKind::NotImplemented,
                    format!(
                        "graph '{}' was not loaded from an ONNX model: ONNX Runtime's partition names the nodes of the .onnx file ORT loads",
                        self.model.name
                    ),
                ))
            });
        };
        let (model, compiled) = (self.model.clone(), self.compiled.clone());
        detached(py, move || Ok(frontend::ort_partition(&path, &onnx, &model, &compiled.alloc, device)?.to_json()))
    }

    /// The document as Python objects (``json.loads(a.to_json())``).
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        value::to_py(py, self.doc())
    }

    /// Writes the allocation JSON document to ``path``.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        guarded(py, || {
            std::fs::write(&path, &self.text)
                .map_err(|e| Error::new(ErrorKind::Io, format!("cannot write '{}': {e}", path.display())))
        })
    }

    /// The physical stream of the node named ``node_name``, or ``None`` when it has none (a
    /// node without device tasks). ``graph`` picks a subgraph's node when names repeat.
    /// Raises ``GraphError`` (SA1005) for an unknown name.
    #[pyo3(signature = (node_name, graph=None))]
    fn stream_of(&self, py: Python<'_>, node_name: &str, graph: Option<&str>) -> PyResult<Option<u32>> {
        Ok(guarded(py, || self.node(node_name, graph))?.0)
    }

    /// The logical stream of the node named ``node_name``, or ``None``.
    #[pyo3(signature = (node_name, graph=None))]
    fn logical_stream_of(&self, py: Python<'_>, node_name: &str, graph: Option<&str>) -> PyResult<Option<u32>> {
        Ok(guarded(py, || self.node(node_name, graph))?.1)
    }

    /// Every sync of the document as ``(from, to, kind, id)``: the node that records, the node
    /// that waits, ``"event"`` or ``"notify"``, and the sync id.
    #[getter]
    fn syncs(&self) -> Vec<(String, String, String, i64)> {
        let doc = self.doc();
        let kind = doc["events"]["kind"].as_str().unwrap_or("event").to_string();
        doc["syncs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                let end = |k: &str| s[k].as_str().unwrap_or_default().to_string();
                let k = s["kind"].as_str().map_or_else(|| kind.clone(), str::to_string);
                (end("from"), end("to"), k, s["id"].as_i64().unwrap_or(-1))
            })
            .collect()
    }

    /// Number of logical streams.
    #[getter]
    fn logical_streams(&self) -> u32 {
        self.alloc().logical_count()
    }

    /// Number of physical streams (after the split at the task limit).
    #[getter]
    fn physical_streams(&self) -> u32 {
        self.alloc().physical_count()
    }

    /// Number of events (or notifies, under ``event=notify``) between streams.
    #[getter]
    fn events(&self) -> u32 {
        self.alloc().sync_count()
    }

    /// ``"event"`` or ``"notify"``: what the syncs are made of.
    #[getter]
    fn sync_kind(&self) -> &'static str {
        self.alloc().sync_kind().as_str()
    }

    /// The mode or policy that made it (``static-multi``, ``auto``, …).
    #[getter]
    fn mode(&self) -> String {
        self.alloc().mode().to_string()
    }

    /// The stage it stops after: ``logical``, ``sync``, ``split`` or ``all``.
    #[getter]
    fn stage(&self) -> &'static str {
        self.alloc().stage().as_str()
    }

    /// The graph's name.
    #[getter]
    fn graph_name(&self) -> String {
        self.model.name.clone()
    }

    /// Arena bytes of the memory plan, or ``None`` when the graph gives no tensor sizes.
    #[getter]
    fn memory_peak_bytes(&self) -> Option<u64> {
        self.compiled.memory(&self.model).map(|p| p.peak_bytes)
    }

    /// The policy's report (the document's ``policy`` object: ``auto``'s candidates and
    /// choice, a budget's cost), or ``None`` under GE's default.
    #[getter]
    fn policy(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.compiled.report.as_ref().map(|r| value::to_py(py, &r.to_json())).transpose()
    }

    /// GE's ``StreamAllocationSummary`` as a dict (what ``stream-alloc summary --format json``
    /// prints): per graph its logical streams with their nodes, and GE's flattened lists.
    fn summary(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let v = guarded(py, || {
            let s = StreamAllocationSummary::new(
                &self.model,
                &self.model.options,
                self.alloc(),
                self.session_stage().as_str(),
            )?;
            Ok(s.to_json(&self.model))
        })?;
        value::to_py(py, &v)
    }

    fn __repr__(&self) -> String {
        format!(
            "Allocation(graph={:?}, mode={:?}, stage={:?}, logical_streams={}, physical_streams={}, events={})",
            self.model.name,
            self.alloc().mode(),
            self.alloc().stage().as_str(),
            self.alloc().logical_count(),
            self.alloc().physical_count(),
            self.alloc().sync_count()
        )
    }
}

/// The checker's verdict on an allocation (``check``): ``ok``, and every broken rule.
#[pyclass(frozen, module = "stream_alloc")]
pub struct Report {
    pub report: verify::Report,
}

#[pymethods]
impl Report {
    /// True when every rule holds.
    #[getter]
    fn ok(&self) -> bool {
        self.report.ok()
    }

    /// Every broken rule as ``"rule N: message"`` (empty when ``ok``).
    #[getter]
    fn errors(&self) -> Vec<String> {
        self.report.violations.iter().map(|v| format!("rule {}: {}", v.rule, v.message)).collect()
    }

    /// Dependencies proven ordered (between task-bearing nodes, through task-less ones).
    #[getter]
    fn edges_checked(&self) -> usize {
        self.report.edges_checked
    }

    /// The fewest syncs that order every dependency for this assignment, or ``None``.
    #[getter]
    fn edge_sync_minimum(&self) -> Option<usize> {
        self.report.edge_sync_minimum
    }

    /// The graph's width (most mutually independent task nodes), or ``None``.
    #[getter]
    fn width(&self) -> Option<usize> {
        self.report.width
    }

    /// The report as ``stream-alloc check`` prints it (JSON), as a dict.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        value::to_py(py, &self.report.to_json())
    }

    fn __bool__(&self) -> bool {
        self.report.ok()
    }

    fn __repr__(&self) -> String {
        format!(
            "Report(ok={}, errors={}, edges_checked={})",
            if self.report.ok() { "True" } else { "False" },
            self.report.violations.len(),
            self.report.edges_checked
        )
    }
}

/// A simulated run of an allocation on the device model (``simulate``).
#[pyclass(frozen, module = "stream_alloc")]
pub struct Simulation {
    pub model: Arc<Model>,
    pub sim: SimResult,
    /// ``stream-alloc simulate --json``'s report.
    pub doc: Value,
}

#[pymethods]
impl Simulation {
    /// The simulated makespan in µs: the number ``stream-alloc simulate`` reports.
    #[getter]
    fn makespan_us(&self) -> f64 {
        self.doc["makespan_us"].as_f64().unwrap_or(self.sim.makespan_us)
    }

    /// max(critical path, work / units), µs.
    #[getter]
    fn lower_bound_us(&self) -> f64 {
        self.doc["lower_bound_us"].as_f64().unwrap_or(self.sim.lower_bound_us)
    }

    /// The ideal schedule's makespan (unlimited streams, free syncs), µs.
    #[getter]
    fn ideal_us(&self) -> f64 {
        self.doc["ideal_us"].as_f64().unwrap_or(0.0)
    }

    /// Busy unit-time over units × makespan.
    #[getter]
    fn utilisation(&self) -> f64 {
        self.doc["utilisation"].as_f64().unwrap_or(self.sim.utilisation)
    }

    /// ``stream-alloc simulate --json``'s report, as a dict.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        value::to_py(py, &self.doc)
    }

    /// Writes the schedule as a Chrome trace (Perfetto, ``chrome://tracing``), as
    /// ``stream-alloc simulate --trace FILE`` does.
    fn save_trace(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let (model, sim) = (&self.model, &self.sim);
        detached(py, move || {
            std::fs::write(&path, frontend::trace_text(model, sim))
                .map_err(|e| Error::new(ErrorKind::Io, format!("cannot write trace '{}': {e}", path.display())))
        })
    }

    fn __repr__(&self) -> String {
        format!("Simulation(graph={:?}, makespan_us={})", self.model.name, self.makespan_us())
    }
}
