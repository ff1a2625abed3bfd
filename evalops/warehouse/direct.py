"""Reads of the warehouse on the driver alone: the standard library's sqlite3 for SQLite, psycopg for
PostgreSQL, and neither SQLAlchemy nor the models.

``evalops history`` (the latest run of each version, its default view) reads a few rows: its cost is its
imports, and SQLAlchemy's with the models was most of it. Its reads are written here once, as SQL text
with ``?`` parameters, and run by either of two readers (:class:`Reads`): :class:`Reader` on the driver,
or the SQLAlchemy connection of :mod:`evalops.warehouse.history`, whose ``*_rows`` functions run these
same functions. The rows are read raw and typed here (datetimes aware in UTC, SQLite's ``'NaN'`` text a
float NaN), so both paths give the same values and the same errors (a test holds them to the same rows
and the same output, byte for byte, on both backends). The URL comes resolved from
:mod:`evalops.warehouse.config` (its one place), and so do the PostgreSQL timeouts, keepalives and client
deadline.

Every read is a reader's transaction, as :func:`evalops.warehouse._db.transaction` with ``read_only``: a
deferred ``BEGIN`` on SQLite (no write lock: it answers while a run writes, and holds up no writer),
``READ ONLY`` on PostgreSQL. One connection serves the command's reads, opened at the first.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, TypedDict

from evalops.errors import EvalopsError, InputError, WarehouseError
from evalops.util.extras import require
from evalops.warehouse._deadline import deadline_connection_class
from evalops.warehouse._url import URLParts
from evalops.warehouse.config import WarehouseURL, postgres_connect_args, warehouse_timeout
from evalops.warehouse.statuses import SCORED_STATUSES

__all__ = ["HISTORY_COLUMNS", "RUN_COLUMNS", "HistoryFilters", "LatestFilters", "Reader", "Reads", "StoredQuery",
           "check_history_query", "check_stored", "describe_error", "driver_sql", "find_fingerprint_hash",
           "latest_run_rows", "mark_superseded_rows", "measure_history_rows", "one_fingerprint", "reading",
           "run_mean_rows", "supports"]

RUN_COLUMNS = (
    "run_id", "dag_id", "dag_run_id", "retriever", "version", "dataset", "logical_date", "status",
    "started_at", "finished_at", "fingerprint_hash", "gold_set_version", "kb_snapshot_id",
    "n_queries", "n_failed",
)
_DATETIMES = ("logical_date", "started_at", "finished_at")
HISTORY_COLUMNS = (
    "logical_date", "retriever", "version", "dataset", "run_id", "dag_run_id", "status", "fingerprint_hash",
    "measure", "n", "mean", "ci_low", "ci_high", "ci_level", "ci_method", "superseded", "superseded_by",
)
_FLOATS = ("mean", "ci_low", "ci_high", "ci_level")


def supports(resolved: WarehouseURL) -> bool:
    """Whether the driver path reads this warehouse: a SQLite file without URL options, or PostgreSQL
    with one host (anything else is left to SQLAlchemy)."""
    parts = resolved.parts()
    if parts.backend() == "sqlite":
        database = parts.database or ""
        return not parts.query and database not in ("", ":memory:") and not database.startswith("file:")
    return parts.backend() == "postgresql" and all(isinstance(v, str) for v in parts.query.values())


def describe_error(exc: BaseException, sqlite_file: str | None = None) -> str:
    """The first line of the driver's message, plus a hint when the schema is missing, or (``sqlite_file``)
    the file whose disk may be full: SQLite says ``database or disk is full``, or ``disk I/O error`` when a
    write was refused (a quota, a file-size limit)."""
    detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
    if "no such table" in detail or ("relation" in detail and "does not exist" in detail):
        detail += " (the warehouse schema is missing or old: run `evalops db upgrade`)"
    if sqlite_file is not None and detail in ("database or disk is full", "disk I/O error"):
        detail += f" (the SQLite warehouse {sqlite_file}: is its disk or quota full? free space and run again)"
    return detail


def connect_timeout_hint(host: str | None, port: int | None) -> str:
    """What a psycopg ``ConnectionTimeout`` means (its message names neither the server nor the setting)."""
    return (f" (the PostgreSQL server at {host}:{port or 5432} did not complete a connection "
            "within EVALOPS_WAREHOUSE_CONNECT_TIMEOUT)")


class Reads(Protocol):
    """What the reads below run their SQL on: :class:`Reader` (the driver), or the SQLAlchemy connection of
    :mod:`evalops.warehouse.history`."""

    dialect: str  # "sqlite" or "postgresql"

    def rows(self, sql: str, params: Sequence[Any], what: str) -> Sequence[Sequence[Any]]:
        """The raw rows of one statement with ``?`` placeholders; ``what`` names the read in its error."""
        ...


class HistoryFilters(TypedDict, total=False):
    """The keyword filters of :func:`measure_history_rows` (its defaults apply to those not given)."""

    dataset: str
    versions: Iterable[str] | None
    fingerprint_hash: str | None
    since: dt.datetime | None
    until: dt.datetime | None
    statuses: Sequence[str]
    include_superseded: bool


class StoredQuery(TypedDict, total=False):
    """What :func:`check_history_query` checks is stored."""

    retriever: str | None
    dataset: str | None
    versions: Iterable[str] | None
    measure: str | None


class LatestFilters(TypedDict, total=False):
    """The keyword filters of :func:`latest_run_rows` (its defaults apply to those not given)."""

    retriever: str | None
    dataset: str
    fingerprint_hash: str | None
    statuses: Sequence[str]


def driver_sql(sql: str, dialect: str) -> str:
    """``sql`` (``?`` placeholders) in the paramstyle of the dialect's driver: psycopg's ``%s``, with a
    literal ``%`` doubled; sqlite3's ``?`` as it is."""
    return sql if dialect == "sqlite" else sql.replace("%", "%%").replace("?", "%s")


class Reader:
    """One read-only connection to the warehouse, opened by the first read; :func:`reading` makes it."""

    def __init__(self, resolved: WarehouseURL):
        self.parts: URLParts = resolved.parts()
        self.dialect = "sqlite" if self.parts.backend() == "sqlite" else "postgresql"
        self._conn: Any = None
        self._errors: tuple[type[BaseException], ...] = (sqlite3.Error,)

    def rows(self, sql: str, params: Sequence[Any], what: str) -> list[tuple[Any, ...]]:
        """The rows of one statement (``?`` placeholders); a database error is a ``WarehouseError`` naming
        ``what`` failed, as the SQLAlchemy readers say it."""
        try:
            if self._conn is None:
                self._conn = self._connect()
            return self._conn.execute(driver_sql(sql, self.dialect), tuple(params)).fetchall()
        except EvalopsError:
            raise
        except self._errors as exc:
            self.close(commit=False)
            detail = describe_error(exc, self.parts.database if self.dialect == "sqlite" else None)
            if type(exc).__name__ == "ConnectionTimeout":
                detail += connect_timeout_hint(self.parts.host, self.parts.port)
            raise WarehouseError(f"{what} failed and was rolled back: {detail}") from exc

    def _connect(self) -> Any:
        if self.dialect == "sqlite":
            busy = warehouse_timeout("busy")
            # autocommit mode: the deferred BEGIN below is the transaction (the driver opens none itself)
            conn = sqlite3.connect(self.parts.database or "", timeout=busy, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout={int(busy * 1000)}")
            conn.execute("BEGIN")
            return conn
        require("psycopg", "postgres", "use a PostgreSQL warehouse")
        import psycopg

        self._errors = (sqlite3.Error, psycopg.Error)
        args, deadline, source = postgres_connect_args(self.parts, {})
        params: dict[str, Any] = {key: value for key, value in (
            ("user", self.parts.username), ("password", self.parts.password), ("host", self.parts.host),
            ("port", self.parts.port), ("dbname", self.parts.database)) if value is not None}
        params.update(self.parts.query)  # as SQLAlchemy's psycopg dialect: the URL's options, then connect_args
        params.update(args)
        cls: Any = (deadline_connection_class(deadline, source) if deadline is not None else None) or psycopg.Connection
        conn = cls.connect(**params)
        conn.execute("SET TRANSACTION READ ONLY")  # the first statement of the transaction psycopg opens
        return conn

    def close(self, commit: bool = True) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            if commit:
                conn.execute("COMMIT") if self.dialect == "sqlite" else conn.commit()
        finally:
            conn.close()


@contextlib.contextmanager
def reading(resolved: WarehouseURL) -> Iterator[Reader]:
    """A :class:`Reader` of the warehouse at ``resolved``, closed when the block ends."""
    reader = Reader(resolved)
    try:
        yield reader
    except BaseException:
        with contextlib.suppress(Exception):
            reader.close(commit=False)
        raise
    reader.close()


def _in(values: Sequence[Any]) -> str:
    return "(" + ", ".join("?" for _ in values) + ")"


def _utc(value: Any) -> dt.datetime | None:
    """A stored datetime as the warehouse's column type reads it: aware, in UTC (SQLite keeps naive UTC text)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value)
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


# -- the checks, shared with the SQLAlchemy readers -----------------------------------------------------


def check_stored(
    *,
    retriever: str | None,
    dataset: str | None,
    versions: Iterable[str] | None,
    measure: str | None,
    distinct: Callable[[str, list[tuple[str, str]]], list[str]],
    measure_lists: Callable[[list[tuple[str, str]]], Iterable[Sequence[str]]],
) -> None:
    """The rule of :func:`evalops.warehouse.history.check_history_query` over two reads: ``distinct(column,
    where)``, the stored values of a column of ``eval_runs`` (sorted) under ``where`` (``(column, value)``
    pairs), and ``measure_lists(where)``, the measure lists of those runs' fingerprints, newest run first."""
    where: list[tuple[str, str]] = []
    if retriever is not None:
        stored = distinct("retriever", where)
        if retriever not in stored:
            raise InputError(f"no run of retriever {retriever!r} is stored in the warehouse; "
                             f"stored retrievers: {_listing(stored, 'none (`evalops run` records them)')}")
        where.append(("retriever", retriever))
    of = f" of {retriever}" if retriever is not None else ""
    if dataset is not None:
        stored = distinct("dataset", where)
        if stored and dataset not in stored:
            raise InputError(f"no run{of} on dataset {dataset!r} is stored in the warehouse; "
                             f"stored datasets{of}: {_listing(stored)}")
        where.append(("dataset", dataset))
    on = f" on dataset {dataset}" if dataset is not None else ""
    if versions:
        stored = distinct("version", where)
        unknown = [v for v in versions if v not in stored]
        if stored and unknown:
            raise InputError(f"no run of version(s) {', '.join(map(repr, unknown))}{of}{on} is stored; "
                             f"stored versions: {_listing(stored)}")
    if measure is not None:
        stored = []
        for names in measure_lists(where):  # newest fingerprint first; duplicates dropped here
            stored += [m for m in names if m not in stored]
        if measure not in stored:
            raise InputError(f"measure {measure!r} is not stored{of.replace(' of ', ' for ')}{on}; "
                             f"stored measures: {_listing(stored)}")


def _listing(names: Sequence[str], none: str = "none") -> str:
    return ", ".join(names) if names else none


def check_fingerprint_prefix(prefix: str) -> str:
    """``prefix`` lower-cased, or an ``InputError`` when it is not hex."""
    if not prefix or not all(c in "0123456789abcdef" for c in prefix.lower()):
        raise InputError(f"fingerprint {prefix!r} is not a hex hash (or a prefix of one)")
    return prefix.lower()


def one_fingerprint(prefix: str, matches: Sequence[str]) -> str:
    """The one stored hash ``prefix`` matched, or an ``InputError`` saying there were none or several."""
    if len(matches) != 1:
        raise InputError(
            f"fingerprint {prefix!r} matches {len(matches)} stored fingerprints; "
            + ("give more digits" if matches else "see `evalops history RETRIEVER --baselines` for stored ones")
        )
    return matches[0]


# -- the reads (history.py's readers of the same name run them on a SQLAlchemy connection) --------------


def find_fingerprint_hash(reader: Reads, prefix: str) -> str:
    """:func:`evalops.warehouse.catalog.find_fingerprint_hash`."""
    low = check_fingerprint_prefix(prefix)
    found = reader.rows("SELECT hash FROM eval_fingerprints WHERE hash LIKE ? || '%'", [low],
                        "looking up a fingerprint")
    return one_fingerprint(prefix, [r[0] for r in found])


def check_history_query(
    reader: Reads,
    *,
    retriever: str | None = None,
    dataset: str | None = None,
    versions: Iterable[str] | None = None,
    measure: str | None = None,
) -> None:
    """Raise ``InputError`` when the warehouse holds no run (of any status) of ``retriever``, of it on
    ``dataset``, of one of ``versions``, or none scored for ``measure``; the message lists the stored values.

    Nothing is checked on a warehouse without runs when no retriever is asked for (an empty history is
    the truth there)."""
    what = "reading the stored retrievers, datasets and measures"

    def conditions(where: list[tuple[str, str]], prefix: str = "") -> tuple[str, list[str]]:
        if not where:
            return "", []
        return " WHERE " + " AND ".join(f"{prefix}{column} = ?" for column, _ in where), [v for _, v in where]

    def distinct(column: str, where: list[tuple[str, str]]) -> list[str]:
        sql, params = conditions(where)
        return sorted(r[0] for r in reader.rows(f"SELECT DISTINCT {column} FROM eval_runs{sql}", params, what))

    def measure_lists(where: list[tuple[str, str]]) -> Iterable[Sequence[str]]:
        sql, params = conditions(where, "eval_runs.")
        found = reader.rows("SELECT eval_fingerprints.measures FROM eval_fingerprints JOIN eval_runs ON "
                            f"eval_runs.fingerprint_hash = eval_fingerprints.hash{sql} "
                            "ORDER BY eval_runs.logical_date DESC, eval_runs.id DESC", params, what)
        return [json.loads(m) if isinstance(m, str) else m for (m,) in found]

    check_stored(retriever=retriever, dataset=dataset, versions=versions, measure=measure, distinct=distinct,
                 measure_lists=measure_lists)


def latest_run_rows(
    reader: Reads,
    *,
    retriever: str | None = None,
    dataset: str = "gold",
    fingerprint_hash: str | None = None,
    statuses: Sequence[str] = SCORED_STATUSES,
) -> list[dict[str, Any]]:
    """The latest run (by logical date, then id) of every (retriever, version), as dicts with
    ``RUN_COLUMNS`` (datetimes aware, in UTC)."""
    where, params = ["dataset = ?", f"status IN {_in(statuses)}"], [dataset, *statuses]
    if retriever is not None:
        where.append("retriever = ?")
        params.append(retriever)
    if fingerprint_hash is not None:
        where.append("fingerprint_hash = ?")
        params.append(fingerprint_hash)
    sql = (
        "SELECT eval_runs.id, eval_runs.dag_id, eval_runs.dag_run_id, eval_runs.retriever, eval_runs.version, "
        "eval_runs.dataset, eval_runs.logical_date, eval_runs.status, eval_runs.started_at, eval_runs.finished_at, "
        "eval_runs.fingerprint_hash, eval_fingerprints.gold_set_version, eval_fingerprints.kb_snapshot_id, "
        "eval_runs.n_queries, eval_runs.n_failed "
        "FROM eval_runs JOIN eval_fingerprints ON eval_fingerprints.hash = eval_runs.fingerprint_hash "
        "WHERE eval_runs.id IN (SELECT latest.id FROM (SELECT id, row_number() OVER (PARTITION BY retriever, "
        f"version ORDER BY logical_date DESC, id DESC) AS rank FROM eval_runs WHERE {' AND '.join(where)}) "
        "AS latest WHERE latest.rank = 1) ORDER BY eval_runs.retriever, eval_runs.version"
    )
    out = []
    for row in reader.rows(sql, params, "reading the latest runs"):
        record = dict(zip(RUN_COLUMNS, row, strict=True))
        for column in _DATETIMES:
            record[column] = _utc(record[column])
        out.append(record)
    return out


def run_mean_rows(reader: Reads, run_ids: Sequence[int]) -> dict[int, dict[str, float | None]]:
    """Each run's mean of every measure it scored (``run_aggregates``), measures in name order, in one
    query: ``{run_id: {measure: mean}}`` (a run with no aggregates is left out)."""
    if not run_ids:
        return {}
    ids = [int(r) for r in run_ids]
    out: dict[int, dict[str, float | None]] = {}
    for run_id, name, mean in reader.rows(
            "SELECT run_aggregates.run_id, measures.name, run_aggregates.mean FROM run_aggregates JOIN measures "
            f"ON measures.id = run_aggregates.measure_id WHERE run_aggregates.run_id IN {_in(ids)} "
            "ORDER BY run_aggregates.run_id, measures.name", ids, "reading the runs' means"):
        out.setdefault(int(run_id), {})[str(name)] = None if mean is None else float(mean)
    return out


def mark_superseded_rows(rows: list[dict[str, Any]], include_superseded: bool) -> list[dict[str, Any]]:
    """The window columns ``rank`` (1: the result for its version and logical date) and ``latest_id`` popped
    from each row into ``superseded`` and ``superseded_by``; superseded rows dropped unless asked for."""
    out = []
    for row in rows:
        rank, latest = row.pop("rank"), row.pop("latest_id")
        row["superseded"] = rank > 1
        row["superseded_by"] = latest if rank > 1 else None
        if include_superseded or rank == 1:
            out.append(row)
    return out


def _bound_datetime(reader: Reads, value: dt.datetime) -> Any:
    """A datetime parameter as the warehouse's column type binds it: naive UTC text on SQLite."""
    value = value.astimezone(dt.UTC)
    return value.replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f") if reader.dialect == "sqlite" else value


def measure_history_rows(
    reader: Reads,
    retriever: str,
    measure: str,
    *,
    dataset: str = "gold",
    versions: Iterable[str] | None = None,
    fingerprint_hash: str | None = None,
    since: dt.datetime | None = None,
    until: dt.datetime | None = None,
    statuses: Sequence[str] = SCORED_STATUSES,
    include_superseded: bool = False,
) -> list[dict[str, Any]]:
    """One row per version and logical date (the latest run for that date; ``include_superseded`` adds the
    earlier ones, ``superseded`` true), with ``HISTORY_COLUMNS`` (``None`` where the frame has NA)."""
    where = ["eval_runs.retriever = ?", "eval_runs.dataset = ?", f"eval_runs.status IN {_in(statuses)}",
             f"(run_aggregates.run_id IS NOT NULL OR eval_runs.status NOT IN {_in(SCORED_STATUSES)})"]
    params: list[Any] = [measure, retriever, dataset, *statuses, *SCORED_STATUSES]
    if versions is not None:
        chosen = list(versions)
        where.append(f"eval_runs.version IN {_in(chosen)}")
        params += chosen
    if fingerprint_hash is not None:
        where.append("eval_runs.fingerprint_hash = ?")
        params.append(fingerprint_hash)
    for op, bound in ((">=", since), ("<", until)):
        if bound is not None:
            where.append(f"eval_runs.logical_date {op} ?")
            params.append(_bound_datetime(reader, bound))
    window = ("OVER (PARTITION BY eval_runs.retriever, eval_runs.version, eval_runs.dataset, eval_runs.logical_date "
              "ORDER BY eval_runs.started_at DESC, eval_runs.id DESC)")
    sql = (
        "SELECT eval_runs.logical_date, eval_runs.retriever, eval_runs.version, eval_runs.dataset, eval_runs.id, "
        "eval_runs.dag_run_id, eval_runs.status, eval_runs.fingerprint_hash, run_aggregates.n, run_aggregates.mean, "
        "run_aggregates.ci_low, run_aggregates.ci_high, run_aggregates.ci_level, run_aggregates.ci_method, "
        f"row_number() {window}, first_value(eval_runs.id) {window} "
        "FROM eval_runs LEFT OUTER JOIN run_aggregates ON run_aggregates.run_id = eval_runs.id AND "
        "run_aggregates.measure_id = (SELECT measures.id FROM measures WHERE measures.name = ?) "
        f"WHERE {' AND '.join(where)} ORDER BY eval_runs.logical_date, eval_runs.version, eval_runs.id"
    )
    names = ("logical_date", "retriever", "version", "dataset", "run_id", "dag_run_id", "status", "fingerprint_hash",
             "n", "mean", "ci_low", "ci_high", "ci_level", "ci_method", "rank", "latest_id")
    rows = []
    for found in reader.rows(sql, params, f"reading the {measure} history of {retriever}"):
        row = dict(zip(names, found, strict=True))
        row["logical_date"] = _utc(row["logical_date"])
        for column in _FLOATS:  # SQLite keeps a NaN as the text 'NaN' (evalops.warehouse.types.NaNFloat)
            row[column] = None if row[column] is None else float(row[column])
        rows.append({**{c: row[c] for c in names[:8]}, "measure": measure, **{c: row[c] for c in names[8:]}})
    return mark_superseded_rows(rows, include_superseded)
