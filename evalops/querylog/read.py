"""Read one window of production query logs: date-partitioned JSONL/Parquet files, OTLP JSON trace exports,
or a SQL table.

**Layout of a log folder.** Any file under the folder whose suffix is ``.jsonl``, ``.jsonl.gz``,
``.parquet`` or an OTLP trace export's (``.otlp.json``, ``.otlp.jsonl``, optionally ``.gz``; read by
:mod:`evalops.querylog.otlp`: one row per OpenInference retriever span) and whose relative path contains a date ``YYYY-MM-DD`` (``date=2025-03-01/part-0.jsonl``,
``2025-03-01.jsonl``, ...) belongs to that date's partition. Dates are UTC. ``read_log_window`` reads every
partition whose date overlaps ``[start, end)`` and keeps all their rows: a row whose timestamp falls
outside the interval is reported by the validation suite, not silently filtered.

**Row fields** (``columns`` maps these names to the file's own names): ``timestamp`` (ISO-8601 text,
read as UTC when it has no offset; a Parquet timestamp column), ``query``, ``retriever_version``, the
segment column (``segment`` by default), and optional ``clicked_doc_ids`` / ``cited_doc_ids`` (lists of
doc ids). Every other field is dropped on reading, so user ids and the like never enter evalops.

**Tolerance.** A line that is not JSON or not an object, a field of the wrong type, or feedback that is
not a list of ids makes a row with a ``malformed`` reason (the bad value is null) instead of an exception,
so that the suite can weigh the share of bad rows. ``file`` and ``line`` locate every row.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from evalops.errors import ConfigError, FormatError, InputError
from evalops.querylog._parse import FEEDBACK_COLUMNS, TEXT_FIELDS, finish, parse_jsonl, parse_parquet
from evalops.querylog.otlp import OTLP_SUFFIXES, parse_otlp
from evalops.util.utc import as_utc

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

__all__ = ["LogWindow", "read_log_window", "read_log_table", "log_partitions", "FEEDBACK_COLUMNS"]

_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")
_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet", *OTLP_SUFFIXES)


@dataclass(frozen=True)
class LogWindow:
    """The rows of one data interval ``[start, end)`` and where they came from."""

    frame: pd.DataFrame
    start: datetime
    end: datetime
    sources: list[str] = field(default_factory=list)

    @property
    def source(self) -> str:
        if len(self.sources) == 1:
            return self.sources[0]
        return f"{len(self.sources)} files" + (f" under {Path(self.sources[0]).parent.parent}" if self.sources else "")


def _fields(segment_column: str) -> tuple[str, ...]:
    return ("timestamp", "query", "retriever_version", segment_column, *FEEDBACK_COLUMNS)


def log_partitions(root: str | os.PathLike[str]) -> dict[date, list[Path]]:
    """Every log file under ``root`` grouped by the date in its relative path (the last one, if several)."""
    base = Path(root)
    if not base.is_dir():
        raise FormatError("not a directory (expected a folder of date-partitioned logs)", path=str(base))
    out: dict[date, list[Path]] = {}
    for path in sorted(base.rglob("*")):
        name = path.name.lower()
        if not path.is_file() or not name.endswith(_SUFFIXES) or name.startswith("."):
            continue
        found = _DATE.findall(path.relative_to(base).as_posix())
        if not found:
            continue
        try:
            day = date.fromisoformat(found[-1])
        except ValueError:
            continue
        out.setdefault(day, []).append(path)
    return out


def _timestamps(values: pd.Series) -> pd.Series:
    """UTC times; text without an offset is read as UTC, and anything unparseable becomes NaT."""
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        return values.dt.tz_convert("UTC")
    if pd.api.types.is_datetime64_dtype(values.dtype):
        return values.dt.tz_localize("UTC")
    if values.dtype == object:  # SQL rows: datetimes, text or anything else
        values = values.where(values.map(lambda v: isinstance(v, str | datetime)), None)
    return pd.to_datetime(values, utc=True, errors="coerce", format="ISO8601")


def _column_names(segment_column: str, columns: Mapping[str, str] | None) -> dict[str, str]:
    names = {c: c for c in _fields(segment_column)}
    for canonical, name in (columns or {}).items():
        if canonical not in names:
            raise ConfigError(f"unknown log field {canonical!r} in the column mapping; known: {sorted(names)}")
        names[canonical] = name
    return names


def read_log_window(
    source: str | os.PathLike[str],
    start: datetime,
    end: datetime,
    *,
    segment_column: str = "segment",
    columns: Mapping[str, str] | None = None,
) -> LogWindow:
    """Read the partitions under ``source`` that overlap ``[start, end)`` (see module docs)."""
    start_u, end_u = as_utc(start, "start"), as_utc(end, "end")
    if end_u <= start_u:
        raise ConfigError(f"empty data interval: start {start} is not before end {end}")
    names = _column_names(segment_column, columns)
    partitions = log_partitions(source)
    first, last = start_u.date(), (end_u - timedelta(microseconds=1)).date()
    files = [p for day in sorted(partitions) if first <= day <= last for p in partitions[day]]
    if not files:
        have = f"{min(partitions)} .. {max(partitions)}" if partitions else "none"
        raise InputError(
            f"{source}: no log partition for {first} .. {last} (partitions found: {have}); "
            "check the folder and the run's data interval"
        )
    frames = []
    for path in files:
        name = path.name.lower()
        parse = (parse_otlp if name.endswith(OTLP_SUFFIXES) else parse_parquet if name.endswith(".parquet")
                 else parse_jsonl)
        part = parse(path, names, segment_column)
        part["file"] = str(path)
        frames.append(part)
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    frame["file"] = frame["file"].astype("category")
    frame["timestamp"] = _timestamps(frame["timestamp"])
    return LogWindow(frame, start_u, end_u, [str(p) for p in files])


def read_log_table(
    url: str | Engine,
    table: str,
    start: datetime,
    end: datetime,
    *,
    segment_column: str = "segment",
    columns: Mapping[str, str] | None = None,
    schema: str | None = None,
) -> LogWindow:
    """Read the rows of a SQL table with ``start <= timestamp < end`` (``line`` is the row number)."""
    import sqlalchemy as sa

    start_u, end_u = as_utc(start, "start"), as_utc(end, "end")
    names = _column_names(segment_column, columns)
    engine = sa.create_engine(url) if isinstance(url, str) else url
    where = f"{engine.url.render_as_string(hide_password=True)} table {table!r}"
    try:
        with engine.connect() as conn:
            available = {c["name"] for c in sa.inspect(conn).get_columns(table, schema=schema)}
            if names["timestamp"] not in available:
                raise InputError(f"{where}: no timestamp column {names['timestamp']!r}; have {sorted(available)}")
            ts = sa.column(names["timestamp"], sa.DateTime(timezone=True))
            cols = [sa.column(n) if n != names["timestamp"] else ts for n in names.values() if n in available]
            tbl = sa.table(table, *cols, schema=schema)
            lo, hi = start_u, end_u
            if conn.dialect.name == "sqlite":  # SQLite stores naive UTC text
                lo, hi = lo.replace(tzinfo=None), hi.replace(tzinfo=None)
            stmt = sa.select(*tbl.c).where(ts >= lo, ts < hi).order_by(ts)
            rows = conn.execute(stmt).all()
    except sa.exc.SQLAlchemyError as exc:
        raise InputError(f"{where}: could not read logs ({exc.__class__.__name__}: {str(exc).splitlines()[0]})") from None
    finally:
        if isinstance(url, str):
            engine.dispose()
    by_name = {n: c for c, n in names.items()}
    got = {by_name[c.name]: [r[i] for r in rows] for i, c in enumerate(tbl.c)}
    n = len(rows)
    columns = {c: got.get(c, [None] * n) for c in names if c != "timestamp"}
    frame = finish(columns, [None] * n, np.arange(1, n + 1), (*TEXT_FIELDS, segment_column))
    frame.insert(0, "timestamp", _timestamps(pd.Series(got["timestamp"], dtype=object)))
    frame["file"] = pd.Series([where] * n, dtype="category")
    return LogWindow(frame, start_u, end_u, [where])
