"""The exceptions of stream_alloc: one base class, a subclass per kind of failure.

Every exception carries ``code``, the code the C ABI and the command line give for the same
failure (``"SA1000"`` for a file that cannot be read, ``"E10001"`` for a bad option value, ...),
and ``message``, which names what is wrong.
"""


class StreamAllocError(Exception):
    """Any failure of stream_alloc. ``code``: the C ABI's and command line's error code;
    ``message``: what is wrong (the node, option, file or value at fault)."""

    def __init__(self, message: str, code: str = "SA2001") -> None:
        super().__init__(f"{code}: {message}")
        self.message = message
        self.code = code

    def __reduce__(self):
        return (type(self), (self.message, self.code))


class FileError(StreamAllocError):
    """A file could not be read or written (SA1000)."""


class GraphError(StreamAllocError):
    """The graph (or ONNX model, or allocation file) is malformed: bad JSON or protobuf, a
    missing field, an unknown node or engine, ... (SA1001 to SA1010)."""


class CycleError(GraphError):
    """The graph has a cycle (SA1006); the message lists the nodes on it."""


class OptionError(StreamAllocError):
    """An unknown option name, a bad option value or policy, or a bad argument (GE's E10001,
    E10006, E10055, E10056)."""


class LimitError(StreamAllocError):
    """A limit or budget that cannot be met: streams, events, notifies, tasks (SA2003)."""


class AllocationError(StreamAllocError):
    """The allocation failed on this graph (SA2000 to SA2002), or an internal error (E19999)."""


class UnsupportedError(AllocationError):
    """What the allocator or the ONNX importer does not handle (SA2000): an operator without
    a shape rule, an ONNX Loop, a mode not implemented."""


def _error_class(code: str) -> type:
    """The exception class for a code read from the C ABI (``sa_last_error_code``)."""
    if code == "SA1000":
        return FileError
    if code == "SA1006":
        return CycleError
    if code.startswith("SA10"):
        return GraphError
    if code.startswith("E100"):
        return OptionError
    if code == "SA2003":
        return LimitError
    if code == "SA2000":
        return UnsupportedError
    if code.startswith("SA20") or code == "E19999":
        return AllocationError
    return StreamAllocError
