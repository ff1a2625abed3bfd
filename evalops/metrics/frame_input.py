"""Run DataFrames as Arrow columns: validated like ``Run``, without one Python string per row.

pandas 3 stores string columns in Arrow, so query ids are dictionary-encoded by Arrow and doc ids
hashed straight from Arrow's buffers (:mod:`evalops.metrics.strhash`). Columns that are not strings (integer ids, say) return None and go through
``Run.from_frame``, which converts them the documented way (``str``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from evalops.data import check_scoring, first_repeated_row
from evalops.errors import DuplicateDocumentError, InputError
from evalops.metrics.strhash import hash_strings, pair_keys

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["run_columns"]

QUERY, DOC, SCORE = "query_id", "doc_id", "score"


def _string_column(frame: pd.DataFrame, name: str) -> Any:
    """The column as a pyarrow string array, or None when it does not hold strings only."""
    import pandas as pd
    import pyarrow as pa

    series = frame[name]
    if not (pd.api.types.is_string_dtype(series.dtype) or series.dtype == object):
        return None
    try:
        array = pa.array(series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None  # mixed types in an object column
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        return None
    if array.null_count:
        row = int(np.flatnonzero(array.is_null().to_numpy(zero_copy_only=False))[0])
        raise InputError(f"run frame: row {row} has no {name}; every row needs a query id and a doc id")
    return array


def run_columns(
    frame: pd.DataFrame,
) -> tuple[np.ndarray, np.ndarray, Any, np.ndarray, tuple[np.ndarray, np.ndarray]] | None:
    """(query codes, unique query ids, doc ids as pyarrow, scores, (row keys, key order)), or None.

    Columns: ``query_id``, ``doc_id`` and optionally ``score`` (without it, row order is rank order).
    Raises ``DuplicateDocumentError`` or ``InputError`` as ``Run`` would.
    """
    import pyarrow.compute as pc

    missing = [c for c in (QUERY, DOC) if c not in frame.columns]
    if missing:
        raise InputError(f"run frame: missing column(s) {missing}; have {list(frame.columns)}")
    queries = _string_column(frame, QUERY)
    docs = _string_column(frame, DOC)
    if queries is None or docs is None:
        return None
    try:
        scores = (
            frame[SCORE].to_numpy(dtype=np.float64, na_value=np.nan)
            if SCORE in frame.columns
            else np.full(len(frame), np.nan)
        )
    except (TypeError, ValueError) as exc:
        raise InputError(f"run frame: scores must be numbers or missing ({exc})") from None

    encoded = pc.dictionary_encode(queries)
    codes = encoded.indices.to_numpy().astype(np.int64)
    uniques = np.asarray(encoded.dictionary.to_numpy(zero_copy_only=False), dtype=object)
    index = _reject_duplicates(codes, uniques, docs)
    check_scoring(codes, uniques, scores, "run frame")
    return codes, uniques, docs, scores, index


def _reject_duplicates(codes: np.ndarray, uniques: np.ndarray, docs: Any) -> tuple[np.ndarray, np.ndarray]:
    """Raise on a (query, doc) pair listed twice; return (keys, their sort order) for the join to reuse."""
    keys = pair_keys(codes, hash_strings(docs))
    order = np.argsort(keys)
    row = first_repeated_row(keys, lambda rows: zip(codes[rows].tolist(), docs.take(rows).to_pylist()), order)
    if row is not None:
        raise DuplicateDocumentError(str(uniques[codes[row]]), docs.take([row]).to_pylist()[0], "run frame")
    return keys, order
