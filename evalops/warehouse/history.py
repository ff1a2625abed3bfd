"""History queries: a measure over time per version, the latest run per version, runs under a fingerprint.

All return DataFrames with timezone-aware UTC timestamps. By default only runs that produced scores
(``succeeded`` and ``partial``) are included; pass ``statuses`` to widen or narrow that.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Table, func, select

from evalops.warehouse._db import measures_table, transaction
from evalops.warehouse.models import EvalRunModel, RunAggregateModel
from evalops.warehouse.runs import select_runs
from evalops.warehouse.types import as_utc

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from sqlalchemy.engine import Engine

    from evalops.warehouse.domain import EvalRun

__all__ = ["RUN_COLUMNS", "latest_runs", "measure_history", "runs_frame", "runs_under_fingerprint"]

runs: Table = EvalRunModel.__table__  # type: ignore[assignment]
aggregates: Table = RunAggregateModel.__table__  # type: ignore[assignment]
SCORED = ("succeeded", "partial")
RUN_COLUMNS = (
    "run_id", "dag_id", "dag_run_id", "retriever", "version", "dataset", "logical_date", "status",
    "started_at", "finished_at", "fingerprint_hash", "gold_set_version", "kb_snapshot_id",
    "n_queries", "n_failed",
)
HISTORY_COLUMNS = (
    "logical_date", "retriever", "version", "dataset", "run_id", "dag_run_id", "status", "fingerprint_hash",
    "measure", "n", "mean", "ci_low", "ci_high", "ci_level", "ci_method",
)


def measure_history(
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
) -> pd.DataFrame:
    """One row per run and version: the measure's mean and CI over logical time (oldest first)."""
    import pandas as pd

    stmt = (
        select(
            runs.c.logical_date, runs.c.retriever, runs.c.version, runs.c.dataset, runs.c.id.label("run_id"),
            runs.c.dag_run_id, runs.c.status, runs.c.fingerprint_hash, measures_table.c.name.label("measure"),
            aggregates.c.n, aggregates.c.mean, aggregates.c.ci_low, aggregates.c.ci_high, aggregates.c.ci_level,
            aggregates.c.ci_method,
        )
        .join(aggregates, aggregates.c.run_id == runs.c.id)
        .join(measures_table, measures_table.c.id == aggregates.c.measure_id)
        .where(
            runs.c.retriever == retriever,
            measures_table.c.name == measure,
            runs.c.dataset == dataset,
            runs.c.status.in_(list(statuses)),
        )
        .order_by(runs.c.logical_date, runs.c.version, runs.c.id)
    )
    stmt = _filters(stmt, versions=versions, fingerprint_hash=fingerprint_hash, since=since, until=until)
    with transaction(engine, f"reading the {measure} history of {retriever}") as conn:
        rows = conn.execute(stmt).mappings().all()
    frame = pd.DataFrame([dict(r) for r in rows], columns=list(HISTORY_COLUMNS))
    frame["logical_date"] = pd.to_datetime(frame["logical_date"], utc=True)
    return frame


def latest_runs(
    engine: Engine,
    *,
    retriever: str | None = None,
    dataset: str = "gold",
    fingerprint_hash: str | None = None,
    statuses: Sequence[str] = SCORED,
) -> pd.DataFrame:
    """The latest run (by logical date, then id) of every (retriever, version)."""
    rank = (
        func.row_number()
        .over(partition_by=(runs.c.retriever, runs.c.version), order_by=(runs.c.logical_date.desc(), runs.c.id.desc()))
        .label("rank")
    )
    inner = select(runs.c.id, rank).where(runs.c.dataset == dataset, runs.c.status.in_(list(statuses)))
    if retriever is not None:
        inner = inner.where(runs.c.retriever == retriever)
    inner = _filters(inner, fingerprint_hash=fingerprint_hash).subquery()
    latest_ids = select(inner.c.id).where(inner.c.rank == 1)
    with transaction(engine, "reading the latest runs") as conn:
        found = select_runs(conn, runs.c.id.in_(latest_ids), order_by=[runs.c.retriever, runs.c.version])
    return runs_frame(found)


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
    with transaction(engine, "reading runs under a fingerprint") as conn:
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
