"""Type stubs of stream_alloc's native module (the names stream_alloc re-exports)."""

import os
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

__version__: str

PathLike = Union[str, "os.PathLike[str]"]
OptionValue = Union[str, int, float, bool]

class Node:
    """One operator of a graph."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def engine(self) -> str: ...
    @property
    def cost(self) -> float:
        """Run time, µs."""
    @property
    def tasks(self) -> int: ...
    @property
    def graph(self) -> str:
        """The (sub)graph it belongs to; "" for the root."""

class Graph:
    """A graph loaded from graph JSON or an ONNX model; immutable."""

    @staticmethod
    def load(
        path: PathLike,
        *,
        input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
        batch: Optional[int] = None,
        costs: Optional[PathLike] = None,
        device: Optional[PathLike] = None,
        unknown_op_cost: Optional[float] = None,
    ) -> "Graph": ...
    @property
    def name(self) -> str: ...
    @property
    def path(self) -> Path: ...
    @property
    def node_count(self) -> int: ...
    @property
    def edge_count(self) -> int: ...
    @property
    def nodes(self) -> List[Node]: ...
    def __len__(self) -> int: ...

class Allocation:
    """The result of allocate()."""

    def to_json(self) -> str:
        """The document `stream-alloc allocate GRAPH -o OUT` writes, byte for byte."""
    def to_dict(self) -> Dict[str, Any]: ...
    def to_ort_partition(self, ep: str = "cpu") -> str:
        """ONNX Runtime's stream partition, what `stream-alloc export MODEL --to ort` writes."""
    def save(self, path: PathLike) -> None: ...
    def stream_of(self, node_name: str, graph: Optional[str] = None) -> Optional[int]: ...
    def logical_stream_of(self, node_name: str, graph: Optional[str] = None) -> Optional[int]: ...
    @property
    def syncs(self) -> List[Tuple[str, str, str, int]]:
        """(from, to, kind, id) of every sync."""
    @property
    def logical_streams(self) -> int: ...
    @property
    def physical_streams(self) -> int: ...
    @property
    def events(self) -> int: ...
    @property
    def sync_kind(self) -> str: ...
    @property
    def mode(self) -> str: ...
    @property
    def stage(self) -> str: ...
    @property
    def graph_name(self) -> str: ...
    @property
    def memory_peak_bytes(self) -> Optional[int]: ...
    @property
    def policy(self) -> Optional[Dict[str, Any]]: ...
    def summary(self) -> Dict[str, Any]:
        """GE's StreamAllocationSummary."""

class Report:
    """The checker's verdict."""

    @property
    def ok(self) -> bool: ...
    @property
    def errors(self) -> List[str]: ...
    @property
    def edges_checked(self) -> int: ...
    @property
    def edge_sync_minimum(self) -> Optional[int]: ...
    @property
    def width(self) -> Optional[int]: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def __bool__(self) -> bool: ...

class Simulation:
    """A simulated run of an allocation."""

    @property
    def makespan_us(self) -> float: ...
    @property
    def lower_bound_us(self) -> float: ...
    @property
    def ideal_us(self) -> float: ...
    @property
    def utilisation(self) -> float: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def save_trace(self, path: PathLike) -> None:
        """Writes a Chrome trace (Perfetto, chrome://tracing)."""

def allocate(
    graph: Graph,
    *,
    policy: Optional[str] = None,
    options: Optional[Mapping[str, OptionValue]] = None,
    stage: str = "all",
) -> Allocation: ...
def check(graph: Graph, allocation: Union[Allocation, PathLike]) -> Report: ...
def simulate(
    graph: Graph,
    allocation: Allocation,
    *,
    units: Optional[int] = None,
    wait_latency_us: Optional[float] = None,
) -> Simulation: ...
def compare(
    graph: Graph,
    policies: Optional[Sequence[str]] = None,
    *,
    options: Optional[Mapping[str, OptionValue]] = None,
) -> List[Dict[str, Any]]: ...
def option_names() -> List[str]: ...
def policy_names() -> List[str]: ...
