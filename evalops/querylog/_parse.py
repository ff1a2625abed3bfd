"""Parse one log file into the canonical frame, tolerating bad lines. Used by ``evalops.querylog.read``.

JSON Lines are parsed by pyarrow in chunks of ``CHUNK`` lines (Python's ``json`` manages about 30 MB/s,
too slow for a million-row window). pyarrow refuses a whole chunk when one line is malformed or has a
value of another type, and names that line; the lines before it are kept, the line itself goes to the
slow path (``json.loads``), and parsing resumes after it. Lines that cannot be objects (not ``{...}``)
go to the slow path directly. The slow path classifies each line: invalid JSON, not an object, or a
record whose fields are checked one by one.

Canonical columns: ``timestamp`` (text from JSON; a typed time from Parquet or SQL), ``query``,
``retriever_version`` and the segment column (``str`` dtype; a non-text value becomes null and marks the
row), ``clicked_doc_ids`` / ``cited_doc_ids`` (a list of str, or None), ``malformed`` (the first reason,
or None), ``line``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalops.errors import FormatError
from evalops.formats._source import as_source
from evalops.util.safetext import ARROW_UNSAFE_ID, ARROW_UNSAFE_TEXT, unsafe_character

__all__ = ["parse_jsonl", "parse_parquet", "FEEDBACK_COLUMNS", "TEXT_FIELDS"]

FEEDBACK_COLUMNS: tuple[str, ...] = ("clicked_doc_ids", "cited_doc_ids")
TEXT_FIELDS: tuple[str, ...] = ("query", "retriever_version")  # plus the segment column
CHUNK = 256  # lines per pyarrow call: small enough that re-parsing around a bad line is cheap
_ROW = re.compile(r" in row (\d+)")


def _note(reasons: list[str | None], i: int, reason: str) -> None:
    if reasons[i] is None:
        reasons[i] = reason


def _feedback(value: Any) -> tuple[list[str] | None, str | None]:
    """A feedback value as a list of ids, or the reason it is malformed."""
    if value is None:
        return None, None
    if isinstance(value, str):  # SQL sources store the list as JSON text
        try:
            value = json.loads(value)
        except ValueError:
            return None, "feedback is not a JSON list"
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, list) or not all(isinstance(v, str | int) and not isinstance(v, bool) for v in value):
        return None, "feedback is not a list of doc ids"
    return [str(v) for v in value], None


def _kind(field: str) -> str:
    """The input rule (:func:`evalops.util.safetext.refuse_unsafe`) a text field is held to: a query is a text
    (tab and line breaks allowed), the other fields (version, segment, timestamp) are held as ids."""
    return "text" if field == "query" else "id"


def finish(columns: dict[str, list[Any]], reasons: list[str | None], lines: list[int] | np.ndarray,
           text_fields: tuple[str, ...]) -> pd.DataFrame:
    """Check field types value by value (the slow path and SQL rows) and build the frame."""
    for field in text_fields:
        values = columns[field]
        for i, v in enumerate(values):
            if v is not None and not isinstance(v, str):
                _note(reasons, i, f"{field} is {type(v).__name__}, not text")
                values[i] = None
            elif v is not None and (problem := unsafe_character(v, _kind(field))) is not None:
                _note(reasons, i, f"{field} holds {problem}")
                values[i] = None
    for field in FEEDBACK_COLUMNS:
        values = columns[field]
        for i, v in enumerate(values):
            if v is not None:
                values[i], reason = _feedback(v)
                if reason:
                    _note(reasons, i, f"{field}: {reason}")
    frame = pd.DataFrame({c: pd.Series(v, dtype="str" if c in text_fields else object) for c, v in columns.items()})
    frame["malformed"] = pd.Series(reasons, dtype=object)
    frame["line"] = np.asarray(lines, dtype=np.int64)
    return frame


def _slow(raw: list[bytes], linenos: list[int], names: Mapping[str, str], text_fields: tuple[str, ...]) -> pd.DataFrame:
    columns: dict[str, list[Any]] = {c: [] for c in names}
    reasons: list[str | None] = []
    for line in raw:
        try:
            record = json.loads(line)
        except ValueError:
            record, reason = None, "invalid JSON"
        else:
            reason = None if type(record) is dict else "not a JSON object"
        reasons.append(reason)
        for canonical, name in names.items():
            columns[canonical].append(record.get(name) if reason is None else None)
    return finish(columns, reasons, linenos, text_fields)


def _arrow_schema(names: Mapping[str, str]) -> Any:
    import pyarrow as pa

    return pa.schema(
        [(name, pa.list_(pa.string()) if canonical in FEEDBACK_COLUMNS else pa.string()) for canonical, name in names.items()]
    )


def _arrow_frame(tables: list[Any], linenos: list[int], names: Mapping[str, str], text_fields: tuple[str, ...]) -> pd.DataFrame:
    """One frame from the chunks pyarrow parsed (converted once: per-chunk pandas frames cost more than parsing)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.concat_tables(tables)
    out: dict[str, Any] = {}
    reasons: list[str | None] = [None] * table.num_rows
    for canonical, name in names.items():
        col = table.column(name)
        if canonical in FEEDBACK_COLUMNS:
            values = col.to_pylist()
            flat = pc.list_flatten(col)
            if flat.null_count:  # [null] inside a list is no doc id
                for i in set(pc.list_parent_indices(col).filter(pc.is_null(flat)).to_pylist()):
                    values[i] = None
                    _note(reasons, i, f"{canonical}: feedback is not a list of doc ids")
            out[canonical] = pd.Series(values, dtype=object)
        else:
            if canonical in text_fields and col.null_count < len(col):
                pattern = ARROW_UNSAFE_TEXT if _kind(canonical) == "text" else ARROW_UNSAFE_ID
                unsafe = np.flatnonzero(pc.fill_null(pc.match_substring_regex(col, pattern), False).to_numpy(
                    zero_copy_only=False))
                if unsafe.size:  # rare: named one by one, the value nulled as for a value of the wrong type
                    values = col.to_pylist()
                    for i in unsafe.tolist():
                        _note(reasons, i, f"{canonical} holds {unsafe_character(values[i], _kind(canonical))}")
                        values[i] = None
                    col = pa.array(values, type=col.type)
            out[canonical] = col.to_pandas().astype("str" if canonical in text_fields else object)
    frame = pd.DataFrame(out)
    frame["malformed"] = pd.Series(reasons, dtype=object)
    frame["line"] = np.asarray(linenos, dtype=np.int64)
    return frame


def _read_bytes(path: Path) -> bytes:
    """The decompressed bytes (BOM skipped); a damaged ``.gz``/``.zst`` raises ``FormatError``."""
    return b"".join(as_source(path).chunks())


def parse_jsonl(path: Path, names: Mapping[str, str], segment_column: str) -> pd.DataFrame:
    """Parse a ``.jsonl`` / ``.jsonl.gz`` file (see module docs)."""
    import pyarrow as pa
    import pyarrow.json as pj

    text_fields = ("timestamp", *TEXT_FIELDS, segment_column)  # JSON carries times as text
    try:
        data = _read_bytes(path)
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(
            f"not UTF-8 text ({exc.reason} at byte {exc.start}); save the log as UTF-8", path=str(path), line=line
        ) from None
    fast_lines: list[bytes] = []
    fast_nos: list[int] = []
    slow_lines: list[bytes] = []
    slow_nos: list[int] = []
    lines = data.split(b"\n")
    del data  # the lines hold their own copies; a large window should not be held twice
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        if line[:1] == b"{" and line[-1:] == b"}":
            fast_lines.append(line)
            fast_nos.append(lineno)
        else:
            slow_lines.append(line)
            slow_nos.append(lineno)
    options = pj.ParseOptions(explicit_schema=_arrow_schema(names), unexpected_field_behavior="ignore")
    tables: list[Any] = []
    table_nos: list[int] = []

    def arrow(lo: int, hi: int) -> None:
        buf = b"\n".join(fast_lines[lo:hi])
        # One block for the whole buffer, so that an error's row number counts from its first line.
        tables.append(pj.read_json(pa.BufferReader(buf), parse_options=options, read_options=pj.ReadOptions(block_size=len(buf) + 1)))
        table_nos.extend(fast_nos[lo:hi])

    for start in range(0, len(fast_lines), CHUNK):
        pos, end = start, min(start + CHUNK, len(fast_lines))
        while pos < end:
            try:
                arrow(pos, end)
                break
            except pa.ArrowInvalid as exc:
                match = _ROW.search(str(exc))
                bad = pos + int(match.group(1)) if match else end
                if bad >= end:  # no usable row number: the slow path takes the rest of the chunk
                    slow_lines.extend(fast_lines[pos:end])
                    slow_nos.extend(fast_nos[pos:end])
                    break
                if bad > pos:
                    arrow(pos, bad)
                slow_lines.append(fast_lines[bad])
                slow_nos.append(fast_nos[bad])
                pos = bad + 1
    frames = [_arrow_frame(tables, table_nos, names, text_fields)] if tables else []
    if slow_lines:
        frames.append(_slow(slow_lines, slow_nos, names, text_fields))
    if not frames:
        return finish({c: [] for c in names}, [], [], text_fields)
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return frame.sort_values("line", kind="stable").reset_index(drop=True)


def parse_parquet(path: Path, names: Mapping[str, str], segment_column: str) -> pd.DataFrame:
    """Parse a Parquet file; ``line`` is the row number within the file. A typed timestamp column is kept."""
    import pyarrow.parquet as pq

    try:
        available = set(pq.read_schema(path).names)
        table = pq.read_table(path, columns=[n for n in names.values() if n in available])
    except Exception as exc:  # pyarrow raises several unrelated types for a damaged file
        raise FormatError(f"could not be read as Parquet ({exc.__class__.__name__}: {exc})", path=str(path)) from None
    raw = table.to_pandas()
    n = len(raw)
    columns = {c: raw[name].tolist() if name in raw.columns else [None] * n for c, name in names.items() if c != "timestamp"}
    frame = finish(columns, [None] * n, np.arange(1, n + 1), (*TEXT_FIELDS, segment_column))
    ts_name = names["timestamp"]
    frame.insert(0, "timestamp", raw[ts_name].reset_index(drop=True) if ts_name in raw.columns else pd.Series([None] * n, dtype=object))
    return frame
