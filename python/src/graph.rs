//! `Graph` and `Node`: a loaded graph (graph JSON or ONNX), immutable and shared.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use stream_alloc::Model;
use stream_alloc::frontend::{self, OnnxOptions};

use crate::errors::{detached, guarded, invalid};

/// A graph loaded from graph JSON or an ONNX model (``Graph.load``). Immutable: allocations,
/// reports and simulations made from it keep what they need and stay valid after it is gone.
#[pyclass(frozen, module = "stream_alloc")]
pub struct Graph {
    pub model: Arc<Model>,
    path: PathBuf,
    /// The import options, when the file is an ONNX model (for ONNX Runtime's partition).
    pub onnx: Option<Arc<OnnxOptions>>,
}

/// One operator of a graph: its name, op type, engine and cost (µs).
#[pyclass(frozen, module = "stream_alloc")]
pub struct Node {
    /// The node's name (unique within its graph).
    #[pyo3(get)]
    name: String,
    /// The op type (``Conv2D``, ``MatMul``, …).
    #[pyo3(get, name = "type")]
    op_type: String,
    /// The engine that runs it (``AIcoreEngine``, ``VectorEngine``, …).
    #[pyo3(get)]
    engine: String,
    /// Estimated or measured run time, µs.
    #[pyo3(get)]
    cost: f64,
    /// Device tasks the node issues.
    #[pyo3(get)]
    tasks: u32,
    /// The (sub)graph it belongs to; ``""`` for the root.
    #[pyo3(get)]
    graph: String,
}

#[pymethods]
impl Node {
    fn __repr__(&self) -> String {
        format!("Node(name={:?}, type={:?}, engine={:?}, cost={})", self.name, self.op_type, self.engine, self.cost)
    }
}

/// `{"input": [1, 3, 224, 224]}` as the importer's `NAME=d0,d1,...` list.
fn shape_specs(shapes: Option<&Bound<'_, PyDict>>) -> PyResult<Result<Vec<String>, stream_alloc::Error>> {
    let mut out = Vec::new();
    for (k, v) in shapes.into_iter().flat_map(|d| d.iter()) {
        let name: String = k.extract()?;
        let dims: Vec<i64> = v.extract()?;
        if let Some(d) = dims.iter().find(|d| **d < 0) {
            return Ok(Err(invalid(format!("input_shapes['{name}']: {d} is not a dimension (an integer >= 0)"))));
        }
        let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
        out.push(format!("{name}={}", dims.join(",")));
    }
    Ok(Ok(out))
}

impl Graph {
    /// The file it was loaded from.
    pub fn path_buf(&self) -> PathBuf {
        self.path.clone()
    }

    /// The graph's model with options applied over its own (`KEY=VALUE` in GE's forms).
    pub fn with_options(&self, assignments: &[String]) -> Result<Model, stream_alloc::Error> {
        let mut m = (*self.model).clone();
        frontend::apply_options(&mut m.options, assignments)?;
        Ok(m)
    }
}

#[pymethods]
impl Graph {
    /// Loads graph JSON, or an ONNX model (``.onnx``) imported with the command line's import
    /// options: ``input_shapes`` (input name to dims) and ``batch`` fix symbolic input dims,
    /// ``costs`` replaces the estimates with measured times (the Ascend profiler's op summary
    /// CSV or a Chrome trace), ``device`` is a device profile JSON, ``unknown_op_cost`` runs
    /// operators without a shape rule at that cost (µs) instead of refusing the model.
    /// Raises ``FileError``, ``GraphError``, ``CycleError`` or ``OptionError``.
    #[staticmethod]
    #[pyo3(signature = (path, *, input_shapes=None, batch=None, costs=None, device=None, unknown_op_cost=None))]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        input_shapes: Option<&Bound<'_, PyDict>>,
        batch: Option<i64>,
        costs: Option<PathBuf>,
        device: Option<PathBuf>,
        unknown_op_cost: Option<f64>,
    ) -> PyResult<Graph> {
        let specs = shape_specs(input_shapes)?;
        let specs = guarded(py, || specs)?;
        let batch = guarded(py, || match batch {
            Some(b) if b < 1 => Err(invalid(format!("batch {b}: expected a positive integer"))),
            b => Ok(b.map(|b| b as u64)),
        })?;
        if let Some(c) = unknown_op_cost
            && !(c.is_finite() && c >= 0.0)
        {
            return guarded(py, || Err(invalid(format!("unknown_op_cost {c}: expected a finite number of µs >= 0"))));
        }
        let onnx = OnnxOptions { input_shapes: specs, batch, unknown_op_cost, device, costs };
        let p = path.clone();
        let (model, onnx) = detached(py, move || {
            let b = frontend::load_builder(&p, &onnx)?;
            let is_onnx = std::fs::read(&p).is_ok_and(|bytes| frontend::is_onnx(&p, &bytes));
            Ok((b.build()?, is_onnx.then(|| Arc::new(onnx))))
        })?;
        Ok(Graph { model: Arc::new(model), path, onnx })
    }

    /// The graph's name (the root graph's; an ONNX model's file stem).
    #[getter]
    fn name(&self) -> String {
        self.model.name.clone()
    }

    /// The file it was loaded from.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Number of nodes, subgraphs included.
    #[getter]
    fn node_count(&self) -> usize {
        self.model.nodes.len()
    }

    /// Number of edges.
    #[getter]
    fn edge_count(&self) -> usize {
        self.model.edges.len()
    }

    /// Every node, in declaration order (root graph first, then subgraphs).
    #[getter]
    fn nodes(&self) -> Vec<Node> {
        self.model.nodes.ids().map(|n| self.node(n)).collect()
    }

    fn __len__(&self) -> usize {
        self.model.nodes.len()
    }

    fn __repr__(&self) -> String {
        format!("Graph(name={:?}, nodes={}, edges={})", self.model.name, self.model.nodes.len(), self.model.edges.len())
    }
}

impl Graph {
    fn node(&self, n: stream_alloc::graph::NodeId) -> Node {
        let node = &self.model.nodes[n];
        Node {
            name: node.name.clone(),
            op_type: node.op_type.clone(),
            engine: self.model.engines[node.engine].name.clone(),
            cost: node.cost_us,
            tasks: node.tasks,
            graph: if node.graph.index() == 0 { String::new() } else { self.model.graphs[node.graph].name.clone() },
        }
    }
}
