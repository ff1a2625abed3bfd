"""History queries: a measure over time per version, the latest run per version, runs under a fingerprint.

All return DataFrames with timezone-aware UTC timestamps; the ``*_rows`` twins return the same rows as plain
dicts without importing pandas (what ``evalops history`` prints: a command that answers in the time of its
imports): they are the reads of :mod:`evalops.warehouse.direct`, their SQL written once there, run here on
the engine's connection. Every read is of the runs and their aggregates (``run_aggregates``, one row per run and
measure), never of the per-query rows, so its cost grows with the runs, not with the queries per run. By default only runs that produced scores
(``succeeded`` and ``partial``) are included; pass ``statuses`` to widen or narrow that (``evalops history``
passes ``FINISHED_STATUSES``, so a failed version is listed, with empty measure cells).
:func:`check_history_query` refuses a retriever, dataset, version or measure the warehouse holds no run of,
naming the stored ones, so a typo is not mistaken for "no results". Every read is a reader's transaction
(no write lock: ``evalops history`` answers while a run writes on SQLite, and does not hold up its writes).

**One result per (version, logical date).** Two DAG runs can evaluate the same version for the same
logical date (``airflow dags test`` twice, a manual re-trigger). The latest of them (started last, then
the highest id) is *the* result for that date; the earlier ones are **superseded**: kept in the
warehouse, left out of the history by default, and shown with ``include_superseded=True`` with
``superseded = True`` and ``superseded_by`` (the run id that replaced them). A re-run or retry of the
*same* DAG run is not a second result: it rewrites its own rows.
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Unpack

from sqlalchemy import func, select

from evalops.util.utc import as_utc
from evalops.warehouse import direct
from evalops.warehouse._db import transaction
from evalops.warehouse.direct import HISTORY_COLUMNS, RUN_COLUMNS, HistoryFilters, LatestFilters, StoredQuery
from evalops.warehouse.statuses import SCORED_STATUSES
from evalops.warehouse.tables import runs

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from sqlalchemy.engine import Connection, Engine

    from evalops.warehouse.domain import EvalRun

__all__ = ["HISTORY_COLUMNS", "RUN_COLUMNS", "check_history_query", "latest_per_logical_date", "latest_run_rows",
           "latest_runs", "measure_history", "measure_history_rows", "run_mean_rows", "runs_frame", "runs_under_fingerprint"]

SCORED = SCORED_STATUSES
# The runs that compete for one (version, logical date), and which of them is the result.
_SAME_RESULT = (runs.c.retriever, runs.c.version, runs.c.dataset, runs.c.logical_date)
_NEWEST_FIRST = (runs.c.started_at.desc(), runs.c.id.desc())


def _supersession() -> tuple[Any, Any]:
    """Window columns: ``rank`` (1 = the result for its version and logical date) and ``latest_id``."""
    rank = func.row_number().over(partition_by=_SAME_RESULT, order_by=_NEWEST_FIRST).label("rank")
    latest = func.first_value(runs.c.id).over(partition_by=_SAME_RESULT, order_by=_NEWEST_FIRST).label("latest_id")
    return rank, latest


def _mark_superseded(frame: pd.DataFrame, include_superseded: bool) -> pd.DataFrame:
    """Turn the window columns into ``superseded`` / ``superseded_by``; drop superseded rows unless asked."""
    superseded = frame.pop("rank") > 1
    latest = frame.pop("latest_id")
    frame["superseded"] = superseded.astype(bool)
    frame["superseded_by"] = latest.where(superseded).astype("Int64")
    if not include_superseded:
        frame = frame[~frame["superseded"]].reset_index(drop=True)
    return frame


class _ConnectionReads:
    """The :class:`evalops.warehouse.direct.Reads` of a SQLAlchemy connection: the driver-level SQL of
    :mod:`evalops.warehouse.direct` run in the connection's transaction (which names the read in an error)."""

    def __init__(self, conn: Connection):
        self.conn = conn
        self.dialect = conn.dialect.name

    def rows(self, sql: str, params: Sequence[Any], what: str) -> Sequence[Sequence[Any]]:
        return self.conn.exec_driver_sql(direct.driver_sql(sql, self.dialect), tuple(params)).all()


@contextlib.contextmanager
def _reading(engine: Engine | Connection, what: str) -> Iterator[_ConnectionReads]:
    """A reader's transaction on ``engine`` for the reads of :mod:`evalops.warehouse.direct`."""
    with transaction(engine, what, read_only=True) as conn:
        yield _ConnectionReads(conn)


def measure_history(engine: Engine, retriever: str, measure: str, **filters: Unpack[HistoryFilters]) -> pd.DataFrame:
    """One row per version and logical date: the measure's mean and CI over logical time (oldest first).
    The keyword filters are :func:`measure_history_rows`'s. With ``include_superseded``, also the earlier
    results for the same date (``superseded`` true).

    A run of a status in ``statuses`` that has no scores (``failed``) is a row with empty ``n``, ``mean``
    and CI: the version's result for that date is that it could not be scored. A scored run without the
    measure (another fingerprint's measure set) is left out."""
    import pandas as pd

    rows = measure_history_rows(engine, retriever, measure, **filters)
    frame = pd.DataFrame(rows, columns=list(HISTORY_COLUMNS))
    frame["logical_date"] = pd.to_datetime(frame["logical_date"], utc=True)
    frame["n"] = frame["n"].astype("Int64")  # empty for a failed run, not a float count
    frame["superseded"] = frame["superseded"].astype(bool)
    frame["superseded_by"] = frame["superseded_by"].astype("Int64")
    return frame


def measure_history_rows(engine: Engine, retriever: str, measure: str,
                         **filters: Unpack[HistoryFilters]) -> list[dict[str, Any]]:
    """:func:`measure_history` as plain dicts with ``HISTORY_COLUMNS``:
    :func:`evalops.warehouse.direct.measure_history_rows`."""
    with _reading(engine, f"reading the {measure} history of {retriever}") as reader:
        return direct.measure_history_rows(reader, retriever, measure, **filters)


def check_history_query(engine: Engine, **asked: Unpack[StoredQuery]) -> None:
    """:func:`evalops.warehouse.direct.check_history_query`: ``InputError`` naming the stored values when the
    warehouse holds no run of the retriever, dataset or versions asked for, or none scored for the measure."""
    with _reading(engine, "reading the stored retrievers, datasets and measures") as reader:
        direct.check_history_query(reader, **asked)


def latest_per_logical_date(
    engine: Engine,
    *,
    retriever: str | None = None,
    dataset: str = "gold",
    versions: Iterable[str] | None = None,
    since: dt.datetime | None = None,
    until: dt.datetime | None = None,
    statuses: Sequence[str] = SCORED,
    include_superseded: bool = False,
) -> pd.DataFrame:
    """The result run of every (retriever, version, logical date), oldest first (``RUN_COLUMNS`` plus
    ``superseded`` and ``superseded_by``); with ``include_superseded``, the earlier runs too."""
    rank, latest = _supersession()
    inner = select(runs.c.id, rank, latest).where(runs.c.dataset == dataset, runs.c.status.in_(list(statuses)))
    if retriever is not None:
        inner = inner.where(runs.c.retriever == retriever)
    inner = _filters(inner, versions=versions, since=since, until=until).subquery()
    from evalops.warehouse.runs import select_runs  # (imports the scores' numpy)

    with transaction(engine, "reading the runs per logical date", read_only=True) as conn:
        marks = {r.id: (r.rank, r.latest_id) for r in conn.execute(select(inner))}
        found = select_runs(conn, runs.c.id.in_(select(inner.c.id)),
                            order_by=[runs.c.logical_date, runs.c.retriever, runs.c.version, runs.c.id])
    frame = runs_frame(found)
    frame["rank"] = [marks[i][0] for i in frame["run_id"]]
    frame["latest_id"] = [marks[i][1] for i in frame["run_id"]]
    return _mark_superseded(frame, include_superseded)


def latest_runs(engine: Engine, **filters: Unpack[LatestFilters]) -> pd.DataFrame:
    """The latest run (by logical date, then id) of every (retriever, version): the runs
    :func:`latest_run_rows` finds, read whole."""
    from evalops.warehouse.runs import select_runs  # (imports the scores' numpy)

    with _reading(engine, "reading the latest runs") as reader:
        ids = [row["run_id"] for row in direct.latest_run_rows(reader, **filters)]
        found = select_runs(reader.conn, runs.c.id.in_(ids), order_by=[runs.c.retriever, runs.c.version])
    return runs_frame(found)


def latest_run_rows(engine: Engine, **filters: Unpack[LatestFilters]) -> list[dict[str, Any]]:
    """:func:`latest_runs` as plain dicts with ``RUN_COLUMNS``: :func:`evalops.warehouse.direct.latest_run_rows`."""
    with _reading(engine, "reading the latest runs") as reader:
        return direct.latest_run_rows(reader, **filters)


def run_mean_rows(engine: Engine, run_ids: Sequence[int]) -> dict[int, dict[str, float | None]]:
    """:func:`evalops.warehouse.direct.run_mean_rows`: each run's mean of every measure it scored, without pandas."""
    with _reading(engine, "reading the runs' means") as reader:
        return direct.run_mean_rows(reader, run_ids)


def runs_under_fingerprint(
    engine: Engine,
    fingerprint_hash: str,
    *,
    retriever: str | None = None,
    dataset: str | None = None,
    statuses: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Every run scored under ``fingerprint_hash`` (any status unless ``statuses``), oldest first."""
    conditions: list[Any] = [runs.c.fingerprint_hash == fingerprint_hash]
    if retriever is not None:
        conditions.append(runs.c.retriever == retriever)
    if dataset is not None:
        conditions.append(runs.c.dataset == dataset)
    if statuses is not None:
        conditions.append(runs.c.status.in_(list(statuses)))
    from evalops.warehouse.runs import select_runs  # (imports the scores' numpy)

    with transaction(engine, "reading runs under a fingerprint", read_only=True) as conn:
        found = select_runs(conn, *conditions, order_by=[runs.c.logical_date, runs.c.id])
    return runs_frame(found)


def runs_frame(found: Iterable[EvalRun]) -> pd.DataFrame:
    """Runs as a DataFrame with ``RUN_COLUMNS``."""
    import pandas as pd

    records = [
        {
            "run_id": r.id,
            **{c: getattr(r.key, c) for c in ("dag_id", "dag_run_id", "retriever", "version", "dataset")},
            "logical_date": r.logical_date,
            "status": r.status,
            "started_at": r.started_at,
            "finished_at": r.finished_at,
            "fingerprint_hash": r.fingerprint.hash,
            "gold_set_version": r.fingerprint.gold_set_version,
            "kb_snapshot_id": r.fingerprint.kb_snapshot_id,
            "n_queries": r.n_queries,
            "n_failed": r.n_failed,
        }
        for r in found
    ]
    frame = pd.DataFrame(records, columns=list(RUN_COLUMNS))
    for column in ("logical_date", "started_at", "finished_at"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return frame


def _filters(
    stmt: Any,
    *,
    versions: Iterable[str] | None = None,
    fingerprint_hash: str | None = None,
    since: dt.datetime | None = None,
    until: dt.datetime | None = None,
) -> Any:
    if versions is not None:
        stmt = stmt.where(runs.c.version.in_(list(versions)))
    if fingerprint_hash is not None:
        stmt = stmt.where(runs.c.fingerprint_hash == fingerprint_hash)
    if since is not None:
        stmt = stmt.where(runs.c.logical_date >= as_utc(since))
    if until is not None:
        stmt = stmt.where(runs.c.logical_date < as_utc(until))
    return stmt
