"""Arrow arrays to numpy without pandas.

pyarrow's ``to_numpy`` imports pandas (about a second) even for a plain int32 array, so the reading path
of ``evalops evaluate`` views the buffers itself.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import numpy as np

__all__ = ["available", "call", "compute_options", "doc_strings", "from_numpy", "from_strings", "numeric", "strings"]

_TYPES = {
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "float": np.float32, "double": np.float64, "halffloat": np.float16,
}


def available() -> bool:
    """Whether pyarrow is installed (the ``fast`` extra, which ``pipeline`` includes), without importing it.
    The base install reads every table with the exact parser and scores against numpy judgments instead: the
    same values, line by line."""
    if "pyarrow" in sys.modules:
        return sys.modules["pyarrow"] is not None
    return importlib.util.find_spec("pyarrow") is not None


def _compute() -> Any:
    try:
        from pyarrow import _compute as compute
    except ImportError:  # a pyarrow without the private module: the public one has the same two names
        from pyarrow import compute
    return compute


def call(name: str, *args: Any, options: Any = None) -> Any:
    """Arrow's compute function ``name`` on ``args`` (``pyarrow.compute.call_function``) without importing
    ``pyarrow.compute``: that module writes a docstring for each of its 280 functions when it is imported,
    about 0.05 s CPU, a seventh of a small ``evalops evaluate``. So do the Array methods that call a compute
    function (``take``, ``cast``, ``dictionary_encode``, ``unique``...): the reading path calls them here."""
    return _compute().call_function(name, list(args), options)


def compute_options(kind: str, *args: Any, **kwargs: Any) -> Any:
    """An options object of Arrow's compute functions by class name (``SetLookupOptions``...)."""
    return getattr(_compute(), kind)(*args, **kwargs)


def numeric(array: Any, fill: Any = None) -> np.ndarray:
    """A numeric Arrow array (or chunked array) as a numpy array (a view when possible); nulls become
    ``fill`` (without ``fill`` an array with nulls is an error). ``fill_null`` would import pandas."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        parts = [numeric(c, fill) for c in array.chunks]
        if not parts:
            return np.zeros(0, dtype=_TYPES[str(array.type)])
        return parts[0] if len(parts) == 1 else np.concatenate(parts)
    if array.null_count and fill is None:
        raise ValueError("numeric() needs an array without nulls, or a fill value")
    dtype = _TYPES[str(array.type)]
    validity, buffer = array.buffers()[:2]
    if buffer is None or len(array) == 0:
        return np.zeros(0, dtype=dtype)
    values = np.frombuffer(buffer, dtype=dtype)[array.offset : array.offset + len(array)]
    if array.null_count:
        bits = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
        values = np.where(bits[array.offset : array.offset + len(array)].astype(bool), values, dtype(fill))
    return values


def strings(array: Any) -> np.ndarray:
    """A string Arrow array (or chunked array) as an object array of str."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        values: list[Any] = []
        for chunk in array.chunks:
            values.extend(chunk.to_pylist())
    else:
        values = array.to_pylist()
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def from_numpy(values: np.ndarray) -> Any:
    """A numeric numpy array as an Arrow array over the same memory (``pa.array`` would import pandas)."""
    import pyarrow as pa

    values = np.ascontiguousarray(values)
    kind = {np.dtype(v): k for k, v in _TYPES.items()}[values.dtype]
    arrow_type = {"float": pa.float32(), "double": pa.float64(), "halffloat": pa.float16()}.get(kind) or getattr(pa, kind)()
    return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(values)])


def from_strings(values: Any) -> Any:
    """A sequence (or object array) of str as an Arrow string array (``pa.array`` would import pandas)."""
    import pyarrow as pa

    encoded = [v.encode("utf-8") for v in (values.tolist() if isinstance(values, np.ndarray) else values)]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    large = offsets[-1] >= 2**31
    arrow_type = pa.large_string() if large else pa.string()
    offsets = offsets if large else offsets.astype(np.int32)
    return pa.Array.from_buffers(arrow_type, len(encoded), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def doc_strings(dictionary: Any, codes: np.ndarray) -> np.ndarray:
    """``dictionary[codes]`` as an object array of str; ``dictionary`` is numpy (exact parser) or Arrow."""
    if isinstance(dictionary, np.ndarray):
        return dictionary[codes]
    if len(codes) == 0:
        return np.zeros(0, dtype=object)
    return strings(call("take", dictionary, from_numpy(codes)))
