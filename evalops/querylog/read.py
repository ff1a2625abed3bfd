"""Read one window of production query logs: date-partitioned JSONL/Parquet files, or a SQL table.

**Layout of a log folder.** Any file under the folder whose suffix is ``.jsonl``, ``.jsonl.gz`` or
``.parquet`` and whose relative path contains a date ``YYYY-MM-DD`` (``date=2025-03-01/part-0.jsonl``,
``2025-03-01.jsonl``, ...) belongs to that date's partition. Dates are UTC. ``read_log_window`` reads every
partition whose date overlaps ``[start, end)`` and keeps all their rows: a row whose timestamp falls
outside the interval is reported by the validation suite, not silently filtered.

**Row fields** (``columns`` maps these names to the file's own names): ``timestamp`` (ISO-8601 text,
read as UTC when it has no offset; a Parquet timestamp column), ``query``, ``retriever_version``, the
segment column (``segment`` by default), and optional ``clicked_doc_ids`` / ``cited_doc_ids`` (lists of
doc ids). Every other field is dropped on reading, so user ids and the like never enter evalops.

**Tolerance.** A line that is not JSON, not an object, or has feedback that is not a list of ids becomes a
row with a ``malformed`` reason (nothing else) instead of an exception, so that the suite can weigh the
share of bad rows. ``file`` and ``line`` locate every row.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from evalops.errors import ConfigError, FormatError, InputError

if TYPE_CHECKING:  # pragma: no cover
    from sqlalchemy.engine import Engine

__all__ = ["LogWindow", "read_log_window", "read_log_table", "log_partitions", "FEEDBACK_COLUMNS"]

FEEDBACK_COLUMNS: tuple[str, ...] = ("clicked_doc_ids", "cited_doc_ids")
_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")
_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet")


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


def _utc(value: datetime, name: str) -> datetime:
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ConfigError(f"{name} must be a timezone-aware datetime, got {value!r}")
    return value.astimezone(timezone.utc)


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


def _feedback(value: Any) -> tuple[list[str] | None, str | None]:
    """A feedback field as a list of ids, or a reason it is malformed."""
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


def _open(path: Path) -> Iterator[str]:
    if path.name.lower().endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            yield from fh
    else:
        with open(path, encoding="utf-8") as fh:
            yield from fh


def _read_jsonl(path: Path, names: Mapping[str, str]) -> pd.DataFrame:
    wanted = list(names.items())  # (canonical, name in file)
    cols: dict[str, list[Any]] = {c: [] for c, _ in wanted}
    malformed: list[str | None] = []
    lines: list[int] = []
    loads = json.loads
    try:
        for lineno, raw in enumerate(_open(path), start=1):
            if not raw.strip():
                continue
            try:
                record = loads(raw)
            except ValueError:
                record, reason = None, "invalid JSON"
            else:
                reason = None if type(record) is dict else "not a JSON object"
            lines.append(lineno)
            malformed.append(reason)
            if reason is None:
                get = record.get
                for canonical, name in wanted:
                    cols[canonical].append(get(name))
            else:
                for canonical, _ in wanted:
                    cols[canonical].append(None)
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None
    frame = pd.DataFrame({c: pd.Series(v, dtype=object) for c, v in cols.items()})
    frame["malformed"] = pd.Series(malformed, dtype=object)
    frame["line"] = np.asarray(lines, dtype=np.int64)
    return frame


def _read_parquet(path: Path, names: Mapping[str, str]) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        available = set(pq.read_schema(path).names)
        table = pq.read_table(path, columns=[n for n in names.values() if n in available])
    except Exception as exc:  # pyarrow raises several unrelated types for a damaged file
        raise FormatError(f"could not be read as Parquet ({exc.__class__.__name__}: {exc})", path=str(path)) from None
    raw = table.to_pandas()
    frame = pd.DataFrame({c: raw[n] if n in raw.columns else pd.Series([None] * len(raw), dtype=object) for c, n in names.items()})
    frame["malformed"] = pd.Series([None] * len(raw), dtype=object)
    frame["line"] = np.arange(1, len(raw) + 1, dtype=np.int64)  # the row number within the file
    return frame


def _timestamps(values: pd.Series) -> pd.Series:
    if isinstance(values.dtype, pd.DatetimeTZDtype):
        return values.dt.tz_convert("UTC")
    if pd.api.types.is_datetime64_dtype(values.dtype):
        return values.dt.tz_localize("UTC")
    text = values.where(values.map(lambda v: isinstance(v, str | datetime)), None)
    return pd.to_datetime(text, utc=True, errors="coerce", format="ISO8601")


def _normalise_types(frame: pd.DataFrame) -> pd.DataFrame:
    """Parse timestamps and feedback lists; a bad feedback value marks the row malformed."""
    frame["timestamp"] = _timestamps(frame["timestamp"])
    for col in FEEDBACK_COLUMNS:
        values = frame[col].to_numpy(dtype=object)
        present = np.flatnonzero(pd.notna(frame[col]).to_numpy() if values.size else np.zeros(0, dtype=bool))
        if present.size == 0:
            continue
        parsed = values.copy()
        for i in present:
            ids, reason = _feedback(values[i])
            parsed[i] = ids
            if reason and frame.at[frame.index[i], "malformed"] is None:
                frame.at[frame.index[i], "malformed"] = f"{col}: {reason}"
        frame[col] = parsed
    return frame


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
    start_u, end_u = _utc(start, "start"), _utc(end, "end")
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
        part = _read_parquet(path, names) if path.name.lower().endswith(".parquet") else _read_jsonl(path, names)
        part["file"] = str(path)
        frames.append(part)
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    frame["file"] = frame["file"].astype("category")
    return LogWindow(_normalise_types(frame), start_u, end_u, [str(p) for p in files])


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

    start_u, end_u = _utc(start, "start"), _utc(end, "end")
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
    raw = pd.DataFrame([tuple(r) for r in rows], columns=[by_name[c.name] for c in tbl.c], dtype=object)
    frame = pd.DataFrame({c: raw[c] if c in raw.columns else pd.Series([None] * len(raw), dtype=object) for c in names})
    frame["malformed"] = pd.Series([None] * len(raw), dtype=object)
    frame["line"] = np.arange(1, len(raw) + 1, dtype=np.int64)
    frame["file"] = pd.Series([where] * len(raw), dtype="category")
    return LogWindow(_normalise_types(frame), start_u, end_u, [where])
