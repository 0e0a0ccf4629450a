"""stream_alloc: the stream allocator of the Ascend Graph Engine, from Python.

Load a graph (graph JSON or an ONNX model), allocate streams and syncs the way GE does or
with another policy, check the result, simulate it on a device model and compare policies::

    import stream_alloc as sa
    g = sa.Graph.load("model.onnx", batch=1)
    a = sa.allocate(g, policy="auto")
    print(a.physical_streams, a.events)
    rows = sa.compare(g, ["ge", "min-streams", "auto"])

Every failure raises ``StreamAllocError`` (or a subclass) with ``.code``.
"""

from ._errors import (
    AllocationError,
    CycleError,
    FileError,
    GraphError,
    LimitError,
    OptionError,
    StreamAllocError,
    UnsupportedError,
)
from ._pluggable import pluggable_stats
from ._native import (
    Allocation,
    Graph,
    Node,
    Report,
    Simulation,
    __version__,
    allocate,
    check,
    compare,
    option_names,
    policy_names,
    simulate,
)

__all__ = [
    "Allocation",
    "AllocationError",
    "CycleError",
    "FileError",
    "Graph",
    "GraphError",
    "LimitError",
    "Node",
    "OptionError",
    "Report",
    "Simulation",
    "StreamAllocError",
    "UnsupportedError",
    "__version__",
    "allocate",
    "check",
    "compare",
    "option_names",
    "pluggable_stats",
    "policy_names",
    "simulate",
]
