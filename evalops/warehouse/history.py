"""History queries: a measure over time per version, the latest run per version, runs under a fingerprint.

All return DataFrames with timezone-aware UTC timestamps; the ``*_rows`` twins return the same rows as plain
dicts without importing pandas (what ``evalops history`` prints: a command that answers in the time of its
imports). Every read is of the runs and their aggregates (``run_aggregates``, one row per run and
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

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from sqlalchemy import and_, func, literal, or_, select

from evalops.utc import as_utc
from evalops.warehouse._db import measures_table, transaction
from evalops.warehouse.direct import HISTORY_COLUMNS, RUN_COLUMNS, check_stored, mark_superseded_rows
from evalops.warehouse.statuses import SCORED_STATUSES
from evalops.warehouse.tables import aggregates, fingerprints, runs

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from sqlalchemy.engine import Engine

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


class HistoryFilters(TypedDict, total=False):
    """The keyword filters of :func:`measure_history_rows` (its defaults apply to those not given)."""

    dataset: str
    versions: Iterable[str] | None
    fingerprint_hash: str | None
    since: dt.datetime | None
    until: dt.datetime | None
    statuses: Sequence[str]
    include_superseded: bool


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


def measure_history_rows(
    engine: Engine,
    retriever: str,
    measure: str,
    *,
    dataset: str = "gold",
    versions: Iterable[str] | None = None,
    fingerprint_hash: str | None = None,
    since: dt.datetime | None = None,
    until: dt.datetime | None = None,
    statuses: Sequence[str] = SCORED,
    include_superseded: bool = False,
) -> list[dict[str, Any]]:
    """:func:`measure_history` as plain dicts with ``HISTORY_COLUMNS`` (``None`` where the frame has NA)."""
    rank, latest = _supersession()
    measure_id = select(measures_table.c.id).where(measures_table.c.name == measure).scalar_subquery()
    stmt = (
        select(
            runs.c.logical_date, runs.c.retriever, runs.c.version, runs.c.dataset, runs.c.id.label("run_id"),
            runs.c.dag_run_id, runs.c.status, runs.c.fingerprint_hash, literal(measure).label("measure"),
            aggregates.c.n, aggregates.c.mean, aggregates.c.ci_low, aggregates.c.ci_high, aggregates.c.ci_level,
            aggregates.c.ci_method, rank, latest,
        )
        .select_from(runs)
        .outerjoin(aggregates, and_(aggregates.c.run_id == runs.c.id, aggregates.c.measure_id == measure_id))
        .where(
            runs.c.retriever == retriever,
            runs.c.dataset == dataset,
            runs.c.status.in_(list(statuses)),
            or_(aggregates.c.run_id.is_not(None), runs.c.status.not_in(SCORED)),
        )
        .order_by(runs.c.logical_date, runs.c.version, runs.c.id)
    )
    stmt = _filters(stmt, versions=versions, fingerprint_hash=fingerprint_hash, since=since, until=until)
    with transaction(engine, f"reading the {measure} history of {retriever}", read_only=True) as conn:
        rows = _dicts(conn.execute(stmt))
    return mark_superseded_rows(rows, include_superseded)


def _dicts(result: Any) -> list[dict[str, Any]]:
    keys = list(result.keys())
    return [dict(zip(keys, row)) for row in result]


def check_history_query(
    engine: Engine,
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
    def conditions(where: list[tuple[str, str]]) -> list[Any]:
        return [runs.c[column] == value for column, value in where]

    with transaction(engine, "reading the stored retrievers, datasets and measures", read_only=True) as conn:
        check_stored(
            retriever=retriever, dataset=dataset, versions=versions, measure=measure,
            distinct=lambda column, where: sorted(conn.execute(
                select(runs.c[column]).distinct().where(*conditions(where))).scalars()),
            measure_lists=lambda where: conn.execute(
                select(fingerprints.c.measures).join(runs, runs.c.fingerprint_hash == fingerprints.c.hash)
                .where(*conditions(where)).order_by(runs.c.logical_date.desc(), runs.c.id.desc())).scalars(),
        )


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


def latest_runs(
    engine: Engine,
    *,
    retriever: str | None = None,
    dataset: str = "gold",
    fingerprint_hash: str | None = None,
    statuses: Sequence[str] = SCORED,
) -> pd.DataFrame:
    """The latest run (by logical date, then id) of every (retriever, version)."""
    from evalops.warehouse.runs import select_runs  # (imports the scores' numpy)

    with transaction(engine, "reading the latest runs", read_only=True) as conn:
        found = select_runs(conn, runs.c.id.in_(_latest_ids(retriever, dataset, fingerprint_hash, statuses)),
                            order_by=[runs.c.retriever, runs.c.version])
    return runs_frame(found)


def latest_run_rows(
    engine: Engine,
    *,
    retriever: str | None = None,
    dataset: str = "gold",
    fingerprint_hash: str | None = None,
    statuses: Sequence[str] = SCORED,
) -> list[dict[str, Any]]:
    """:func:`latest_runs` as plain dicts with ``RUN_COLUMNS`` (datetimes aware, in UTC)."""
    stmt = (
        select(runs.c.id.label("run_id"), *(runs.c[c] for c in RUN_COLUMNS[1:11]),
               fingerprints.c.gold_set_version, fingerprints.c.kb_snapshot_id, runs.c.n_queries, runs.c.n_failed)
        .join(fingerprints, fingerprints.c.hash == runs.c.fingerprint_hash)
        .where(runs.c.id.in_(_latest_ids(retriever, dataset, fingerprint_hash, statuses)))
        .order_by(runs.c.retriever, runs.c.version)
    )
    with transaction(engine, "reading the latest runs", read_only=True) as conn:
        return _dicts(conn.execute(stmt))


def run_mean_rows(engine: Engine, run_ids: Sequence[int]) -> dict[int, dict[str, float | None]]:
    """Each run's mean of every measure it scored (``run_aggregates``), measures in name order, in one
    query and without pandas: ``{run_id: {measure: mean}}`` (a run with no aggregates is left out)."""
    if not run_ids:
        return {}
    stmt = (
        select(aggregates.c.run_id, measures_table.c.name, aggregates.c.mean)
        .join(measures_table, measures_table.c.id == aggregates.c.measure_id)
        .where(aggregates.c.run_id.in_([int(r) for r in run_ids]))
        .order_by(aggregates.c.run_id, measures_table.c.name)
    )
    out: dict[int, dict[str, float | None]] = {}
    with transaction(engine, "reading the runs' means", read_only=True) as conn:
        for run_id, name, mean in conn.execute(stmt):
            out.setdefault(int(run_id), {})[str(name)] = None if mean is None else float(mean)
    return out


def _latest_ids(retriever: str | None, dataset: str, fingerprint_hash: str | None, statuses: Sequence[str]) -> Any:
    rank = (
        func.row_number()
        .over(partition_by=(runs.c.retriever, runs.c.version), order_by=(runs.c.logical_date.desc(), runs.c.id.desc()))
        .label("rank")
    )
    inner = select(runs.c.id, rank).where(runs.c.dataset == dataset, runs.c.status.in_(list(statuses)))
    if retriever is not None:
        inner = inner.where(runs.c.retriever == retriever)
    inner = _filters(inner, fingerprint_hash=fingerprint_hash).subquery()
    return select(inner.c.id).where(inner.c.rank == 1)


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
