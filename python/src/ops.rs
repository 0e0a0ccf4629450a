//! The module's functions: `allocate`, `check`, `simulate`, `compare`.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use serde_json::Value;
use stream_alloc::baseline::Peer;
use stream_alloc::compile::Stage;
use stream_alloc::graph::Options;
use stream_alloc::graph::device::DeviceProfile;
use stream_alloc::graph::options::OPTION_KEYS;
use stream_alloc::simulate::{SimConfig, bound, ideal, simulate as run_simulation};
use stream_alloc::verify::{self, tasks};
use stream_alloc::{Error, ErrorKind, frontend};

use crate::allocation::{Allocation, Report, Simulation};
use crate::errors::{detached, guarded, invalid};
use crate::graph::Graph;
use crate::value;

/// The policies `compare` runs when given none (the command line's default).
const DEFAULT_POLICIES: &[&str] = &["ge", "per-operator", "min-streams", "budget:8", "list", "auto"];

/// One option value in GE's string form: text as it is, booleans as `true` / `false`, numbers
/// as Python writes them.
fn option_text(key: &str, v: &Bound<'_, PyAny>) -> Result<String, Error> {
    if v.is_instance_of::<PyBool>() {
        return Ok(if v.is_truthy().unwrap_or(false) { "true" } else { "false" }.to_string());
    }
    if v.is_instance_of::<PyString>() || v.is_instance_of::<PyInt>() || v.is_instance_of::<PyFloat>() {
        return v.str().map(|s| s.to_string()).map_err(|e| invalid(format!("option '{key}': {e}")));
    }
    let t = v.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    Err(invalid(format!("option '{key}': a value of type {t}; give a str, int, float or bool in GE's string form")))
}

/// `options` (and `policy`) as `KEY=VALUE` assignments, in the dict's order, the policy last;
/// an unknown name is refused with the closest known one as a tip.
fn assignments(options: Option<&Bound<'_, PyDict>>, policy: Option<&str>) -> PyResult<Result<Vec<String>, Error>> {
    let mut out = Vec::new();
    for (k, v) in options.into_iter().flat_map(|d| d.iter()) {
        let key: String = k.extract()?;
        if Options::canonical_key(key.trim()).is_none() {
            let tip = frontend::closest_option(key.trim())
                .map(|c| format!("; a similar option exists: '{c}'"))
                .unwrap_or_else(|| format!("; known options: {}", OPTION_KEYS.join(", ")));
            return Ok(Err(invalid(format!("unknown option name '{key}'{tip}"))));
        }
        match option_text(&key, &v) {
            Ok(text) => out.push(format!("{key}={text}")),
            Err(e) => return Ok(Err(e)),
        }
    }
    if let Some(p) = policy {
        out.push(format!("policy={p}"));
    }
    Ok(Ok(out))
}

/// Allocates streams and syncs for ``graph`` the way ``stream-alloc allocate`` does:
/// ``options`` in GE's string forms (``{"max_parallel_num": "AIcoreEngine:4"}``), ``policy``
/// the same as ``options={"policy": ...}``, ``stage`` one of ``logical``, ``sync``, ``split``,
/// ``all``. Runs with the GIL released. Raises ``OptionError`` (E10001, …), ``LimitError``
/// (SA2003: a budget that cannot be met) or ``AllocationError``.
#[pyfunction]
#[pyo3(signature = (graph, *, policy=None, options=None, stage="all"))]
pub fn allocate(
    py: Python<'_>,
    graph: &Graph,
    policy: Option<&str>,
    options: Option<&Bound<'_, PyDict>>,
    stage: &str,
) -> PyResult<Allocation> {
    let list = assignments(options, policy)?;
    let list = guarded(py, || list)?;
    let stage = guarded(py, || {
        Stage::parse(stage).ok_or_else(|| invalid(format!("stage '{stage}': expected logical, sync, split or all")))
    })?;
    detached(py, || {
        let inputs = frontend::Inputs::of(graph.with_options(&list)?)?;
        let compiled = inputs.compile(stage, SimConfig::default(), true)?;
        let (text, _) = frontend::allocation_document(&inputs, &compiled, None);
        let source = graph.onnx.clone().map(|o| (graph.path_buf(), o));
        Ok(Allocation::new(Arc::new(inputs.model), compiled, text, source))
    })
}

/// `allocation` as a document: an `Allocation`'s own, or an allocation JSON file.
fn document(py: Python<'_>, allocation: &Bound<'_, PyAny>) -> PyResult<(Value, Option<Arc<stream_alloc::Model>>)> {
    if let Ok(a) = allocation.cast::<Allocation>() {
        let a = a.get();
        return Ok((a.doc().clone(), Some(a.model.clone())));
    }
    let path: std::path::PathBuf = allocation.extract().map_err(|_| {
        crate::errors::to_py(py, invalid("allocation: expected an Allocation or the path of an allocation JSON file"))
    })?;
    let doc = guarded(py, || {
        let bytes = std::fs::read(&path)
            .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read allocation file '{}': {e}", path.display())))?;
        serde_json::from_slice::<Value>(&bytes)
            .map_err(|e| Error::new(ErrorKind::Json, format!("malformed allocation JSON '{}': {e}", path.display())))
    })?;
    Ok((doc, None))
}

/// Proves an allocation correct for ``graph`` with the project's checker (``stream-alloc
/// check``): every dependency ordered, no deadlock, safe sync reuse, limits respected.
/// ``allocation`` is an ``Allocation`` or the path of an allocation JSON file. A broken rule is
/// not an exception: it is in ``Report.errors``.
#[pyfunction]
pub fn check(py: Python<'_>, graph: &Graph, allocation: &Bound<'_, PyAny>) -> PyResult<Report> {
    let (doc, made_from) = document(py, allocation)?;
    let model = graph.model.clone();
    let report = detached(py, move || {
        if let Some(m) = frontend::foreign(&model, &doc) {
            let violation = verify::Violation { rule: 0, message: m };
            return Ok(verify::Report { graph: model.name.clone(), violations: vec![violation], ..Default::default() });
        }
        // The task limits the allocation was made for (rule 7), else the graph's own.
        let options = made_from.as_ref().map_or(&model.options, |m| &m.options);
        Ok(verify::check_with_limits(&model, &doc, tasks::Limits::of(options)))
    })?;
    Ok(Report { report })
}

/// Runs ``allocation`` of ``graph`` on the device model (``stream-alloc simulate``): 24
/// compute units and a 1 µs wait unless ``units`` / ``wait_latency_us`` say otherwise.
/// Runs with the GIL released.
#[pyfunction]
#[pyo3(signature = (graph, allocation, *, units=None, wait_latency_us=None))]
pub fn simulate(
    py: Python<'_>,
    graph: &Graph,
    allocation: &Allocation,
    units: Option<u32>,
    wait_latency_us: Option<f64>,
) -> PyResult<Simulation> {
    let cfg = sim_config(py, units, wait_latency_us)?;
    let doc = allocation.doc();
    let (model, compiled) = (allocation.model.clone(), allocation.compiled.clone());
    let graph_model = graph.model.clone();
    detached(py, move || {
        if let Some(m) = frontend::foreign(&graph_model, doc) {
            return Err(Error::new(ErrorKind::Failed, m));
        }
        let sim = run_simulation(&model, &compiled.alloc, &cfg)?;
        let ideal = ideal(&model, &cfg)?;
        let doc = frontend::simulation_json(&model, &compiled, &sim, &ideal, &cfg);
        Ok(Simulation { model, sim, doc })
    })
}

fn sim_config(py: Python<'_>, units: Option<u32>, wait_latency_us: Option<f64>) -> PyResult<SimConfig> {
    guarded(py, || {
        let mut cfg = SimConfig::from_device(&DeviceProfile::default());
        if let Some(u) = units {
            if u == 0 {
                return Err(invalid("units 0: the device needs at least one compute unit"));
            }
            cfg.units = u;
        }
        if let Some(l) = wait_latency_us {
            if !(l.is_finite() && l >= 0.0) {
                return Err(invalid(format!("wait_latency_us {l}: expected a finite number of µs >= 0")));
            }
            cfg.wait_latency_us = l;
        }
        Ok(cfg)
    })
}

/// Compares policies on ``graph`` under the simulator (``stream-alloc compare --format
/// json``): one dict per policy with ``policy``, ``streams``, ``syncs``, ``makespan_us``,
/// ``edge_min_syncs``, ``event_ids``, ``ideal_us``, ``lower_bound_us``, ratios, ``chosen``
/// (``auto``'s pick) and ``peak_bytes`` when the graph gives sizes: rows for
/// ``pandas.DataFrame(rows)``. ``policies`` are the project's (``ge``, ``auto``,
/// ``budget:8``, …) and the peers' baselines (``xla``, ``nimble``, ``opara``, ``ort``); the
/// default is the command line's. Runs with the GIL released.
#[pyfunction]
#[pyo3(signature = (graph, policies=None, *, options=None))]
pub fn compare(
    py: Python<'_>,
    graph: &Graph,
    policies: Option<Vec<String>>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<Py<PyAny>>> {
    let policies = policies.unwrap_or_else(|| DEFAULT_POLICIES.iter().map(|p| p.to_string()).collect());
    let list = assignments(options, None)?;
    let list = guarded(py, || {
        if policies.is_empty() {
            return Err(invalid("compare: policies lists no policy"));
        }
        for p in &policies {
            frontend::check_policy_name(p)?;
        }
        list
    })?;
    let rows = detached(py, || {
        let cfg = SimConfig::from_device(&DeviceProfile::default());
        let model = graph.with_options(&list)?;
        let (ideal, bound) = (ideal(&model, &cfg)?, bound(&model, &cfg)?);
        // The single-stream plan's peak, for peak / single (as the command line's compare).
        let base = frontend::Inputs::of(model)?;
        let single_peak =
            stream_alloc::search::fit::single_stream_peak(&base.model, &base.options, &base.limits).unwrap_or(None);
        let mut rows = Vec::new();
        for p in &policies {
            let peer = Peer::parse(p);
            let mut opts = list.clone();
            if peer.is_none() {
                opts.push(format!("policy={p}"));
            }
            let inputs = frontend::Inputs::of(graph.with_options(&opts)?)?;
            rows.push(frontend::compare_row(&inputs, peer, p, &cfg, (&ideal, &bound), single_peak)?.to_json());
        }
        Ok(rows)
    })?;
    rows.iter().map(|r| value::to_py(py, r)).collect()
}

/// Every option name ``options`` accepts (GE's own names are accepted too).
#[pyfunction]
pub fn option_names() -> Vec<&'static str> {
    OPTION_KEYS.to_vec()
}

/// Every policy name (``budget`` takes ``:N``) and the peer baselines.
#[pyfunction]
pub fn policy_names() -> Vec<String> {
    let mut v: Vec<String> =
        stream_alloc::compile::policy::table::POLICIES.iter().map(|e| e.name.to_string()).collect();
    v.extend(Peer::ALL.iter().map(|p| p.name().to_string()));
    v
}
