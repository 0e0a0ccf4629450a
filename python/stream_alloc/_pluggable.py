"""Statistics of the pluggable allocator (docs/pluggable-allocator.md) from Python.

The pools behind ``sa_pluggable_malloc`` live in the ``libstream_alloc.so`` that PyTorch,
torch_npu or MindSpore loaded by path, not in this extension module (which links the library
statically), so the statistics are read from that shared library, the same file the framework
was given.
"""

import ctypes
import json
import os
from typing import Dict, Union

from ._errors import FileError, StreamAllocError, _error_class

_LIBS: Dict[str, ctypes.CDLL] = {}


def _library(path: Union[str, "os.PathLike[str]"]) -> ctypes.CDLL:
    key = os.fspath(path)
    lib = _LIBS.get(key)
    if lib is None:
        try:
            lib = ctypes.CDLL(key)
        except OSError as e:
            raise FileError(f"cannot load the allocator library '{key}': {e}", "SA1000") from None
        if not hasattr(lib, "sa_pluggable_stats_json"):
            raise FileError(f"'{key}' is not libstream_alloc: it has no sa_pluggable_stats_json", "SA1000")
        lib.sa_pluggable_stats_json.restype = ctypes.c_void_p
        lib.sa_pluggable_stats_json.argtypes = [ctypes.c_int]
        lib.sa_string_free.argtypes = [ctypes.c_void_p]
        lib.sa_last_error_message.restype = ctypes.c_char_p
        lib.sa_last_error_code.restype = ctypes.c_char_p
        _LIBS[key] = lib
    return lib


def pluggable_stats(library: Union[str, "os.PathLike[str]"], device: int = 0) -> Dict[str, int]:
    """The pluggable allocator's statistics for ``device``, under the names of torch's
    ``torch.cuda.memory_stats`` (``allocated_bytes.all.current``, ``reserved_bytes.all.peak``,
    ``allocation.all.allocated``, ``num_ooms``, ...) plus the refused frees
    (``num_foreign_frees``, ``num_double_frees``). ``library`` is the path of the
    ``libstream_alloc.so`` the framework loads as its allocator. Raises ``FileError`` when it
    cannot be loaded, or the library's error (``StreamAllocError`` with its code) when the
    device has no pool and none can be made."""
    if isinstance(device, bool) or not isinstance(device, int):
        raise StreamAllocError(f"device {device!r}: expected an integer", "E10001")
    lib = _library(library)
    p = lib.sa_pluggable_stats_json(device)
    if not p:
        code = (lib.sa_last_error_code() or b"SA2001").decode()
        message = (lib.sa_last_error_message() or b"no message").decode()
        raise _error_class(code)(message, code)
    try:
        return json.loads(ctypes.string_at(p).decode())
    finally:
        lib.sa_string_free(p)
