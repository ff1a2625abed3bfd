"""Evaluation runs: record one (upsert by its natural key) and read them back."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update
from sqlalchemy.engine import Connection, Engine

from evalops.errors import InputError, WarehouseError
from evalops.fingerprint import EvalFingerprint
from evalops.util.utc import as_utc
from evalops.warehouse._bulk import aggregate_rows, score_columns, write_aggregates, write_scores
from evalops.warehouse._db import insert_for, now_utc, transaction
from evalops.warehouse.catalog import ensure_fingerprint, fingerprint_from_row, fingerprints
from evalops.warehouse.domain import EvalRun, RunKey
from evalops.warehouse.statuses import RUN_STATUSES, UNFINISHED_STATUSES
from evalops.warehouse.tables import baselines, rankings, runs

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import pandas as pd

__all__ = ["DEFAULT_LEASE_SECONDS", "RunRanking", "find_run", "get_run", "load_ranking", "record_run"]

# Twice the default task timeout of the DAG's score and compare tasks (30 minutes).
DEFAULT_LEASE_SECONDS = 2 * 30 * 60

KEY_COLUMNS = ("dag_id", "dag_run_id", "retriever", "version", "dataset")


def record_run(
    engine: Engine,
    key: RunKey,
    *,
    fingerprint: EvalFingerprint,
    logical_date: dt.datetime,
    status: str,
    started_at: dt.datetime,
    finished_at: dt.datetime | None = None,
    n_queries: int = 0,
    n_failed: int = 0,
    failed_query_ids: Iterable[str] = (),
    error: str | None = None,
    scores: pd.DataFrame | None = None,
    aggregates: pd.DataFrame | None = None,
    ci_level: float | None = None,
    ci_method: str | None = None,
    contracts: Mapping[str, Any] | None = None,
    n_retries: int = 0,
    lease_seconds: float | None = None,
    ranking: RunRanking | None = None,
) -> EvalRun:
    """Insert or update the run with this key, and optionally its scores and aggregates, atomically.

    * The run row is an upsert on ``key``: the same key twice leaves one row holding the latest values.
    * ``scores`` (long frame ``query_id, measure, value``), when given, *replaces all* the run's
      per-query scores; when omitted the stored scores are left as they are (e.g. a "running" marker
      written before scoring starts).
    * ``aggregates`` (``measure, n, mean, ci_low, ci_high``) are upserted per measure and need
      ``ci_level`` and ``ci_method``.
    * ``contracts``, when given, records the data contracts' rules and outcomes the run was made under;
      when omitted the stored ones are kept.
    * ``ranking``, when given, replaces the run's kept ranking (``run_rankings``: what the bounds of a
      later comparison against this run read); when omitted the stored one is kept.
    * A ``running`` run gets a lease of ``lease_seconds`` (default :data:`DEFAULT_LEASE_SECONDS`) that
      :func:`~evalops.warehouse.leases.renew_lease` extends; a finished run has none. See
      :mod:`evalops.warehouse.leases`.
    * ``running`` for a run that already **finished** (a re-run of its day) is an *attempt*: the finished row
      keeps its status, times, counts, scores and contracts (readers go on seeing the finished result); only
      ``attempt_started_at``, ``attempt_contracts`` (``contracts``) and the lease are recorded, and the
      attempt's own final write (a finished ``status``) replaces the result and clears them, in one
      transaction. A running attempt cannot bring ``scores`` (:class:`WarehouseError`). Only a run that never
      finished (``running``, ``abandoned``) is marked ``running`` again.
    * A run that a baseline names (current or earlier: a rollback may restore it) is recorded only as
      ``succeeded``: any other final status is refused (:class:`WarehouseError`) and the stored run is kept,
      so a baseline never points at a run that did not succeed.

    Everything happens in one transaction: if any part fails, nothing of this call is stored. The
    fingerprint's gold-set version and KB snapshot must have been recorded first.
    """
    values = _run_values(
        key,
        fingerprint=fingerprint,
        logical_date=logical_date,
        status=status,
        started_at=started_at,
        finished_at=finished_at,
        n_queries=n_queries,
        n_failed=n_failed,
        failed_query_ids=failed_query_ids,
        error=error,
    )
    _add_run_state(values, status=status, contracts=contracts, n_retries=n_retries, lease_seconds=lease_seconds)
    # Validate the frames before opening a transaction: bad input never touches the database.
    score_arrays = score_columns(scores, fingerprint.measures) if scores is not None else None
    aggregate_list = _aggregate_list(aggregates, fingerprint, ci_level=ci_level, ci_method=ci_method)

    with transaction(engine, f"recording run {_describe(key)}") as conn:
        row = _write_run(conn, key, values, fingerprint, status=status, error=error, score_arrays=score_arrays,
                         aggregate_list=aggregate_list, ranking=ranking)
    return row


def _add_run_state(values: dict[str, Any], *, status: str, contracts: Mapping[str, Any] | None, n_retries: int,
                   lease_seconds: float | None) -> None:
    """Complete a run row's ``values`` with what :func:`record_run` sets beside the key and counts: the
    contracts (when given), the retries, no abandonment, and the lease of a ``running`` run."""
    if contracts is not None:
        values["contracts"] = dict(contracts)
    if int(n_retries) < 0:
        raise InputError(f"n_retries must be >= 0, got {n_retries}")
    values["n_retries"] = int(n_retries)
    values["abandoned_at"] = None
    values["lease_expires_at"] = None
    if status == "running":
        values["lease_expires_at"] = values["updated_at"] + dt.timedelta(seconds=lease_seconds or DEFAULT_LEASE_SECONDS)


def _aggregate_list(aggregates: pd.DataFrame | None, fingerprint: EvalFingerprint, *, ci_level: float | None,
                    ci_method: str | None) -> list[dict[str, Any]] | None:
    """The aggregate rows to write, validated against the fingerprint's measures (None: none given)."""
    if aggregates is None:
        return None
    if ci_level is None or ci_method is None:
        raise InputError("recording aggregates needs ci_level and ci_method (the CI policy)")
    return aggregate_rows(aggregates, fingerprint.measures, ci_level=ci_level, ci_method=ci_method)


def _write_run(conn: Connection, key: RunKey, values: dict[str, Any], fingerprint: EvalFingerprint, *,
               status: str, error: str | None, score_arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
               aggregate_list: list[dict[str, Any]] | None, ranking: RunRanking | None) -> EvalRun:
    """The writes of :func:`record_run` inside its transaction: the fingerprint, the run row (an attempt beside
    a finished run, or the result; a baseline's run refused unless it succeeded), then its scores, aggregates
    and ranking; returns the stored run."""
    ensure_fingerprint(conn, fingerprint)
    if status == "running":
        run_id = _open_attempt(conn, values, scores=score_arrays is not None)
    else:
        run_id = _upsert_run(conn, {**values, "attempt_started_at": None, "attempt_contracts": None})
        if status != "succeeded":
            _refuse_for_a_baseline(conn, run_id, key, status, error)
    if score_arrays is not None:
        write_scores(conn, run_id, *score_arrays, replace_all=True)
    if aggregate_list is not None:
        write_aggregates(conn, run_id, aggregate_list)
    if ranking is not None:
        _write_ranking(conn, run_id, ranking)
    return select_runs(conn, runs.c.id == run_id)[0]


@dataclass(frozen=True)
class RunRanking:
    """A run's kept ranking (``run_rankings``): ``data`` the Parquet bytes of ``query_id, doc_id, rank``
    (``evalops.judged.unjudged.docs_to_bytes``), ``n_rows`` its rows, ``depth`` the cutoff its unjudged documents
    reach (judged ones are kept at every rank)."""

    depth: int
    n_rows: int
    data: bytes


def _write_ranking(conn: Connection, run_id: int, ranking: RunRanking) -> None:
    stmt = insert_for(conn, rankings).values(run_id=run_id, depth=int(ranking.depth), n_rows=int(ranking.n_rows),
                                             data=bytes(ranking.data))
    conn.execute(stmt.on_conflict_do_update(index_elements=["run_id"], set_={
        "depth": stmt.excluded.depth, "n_rows": stmt.excluded.n_rows, "data": stmt.excluded.data}))


def load_ranking(engine: Engine, run_id: int) -> RunRanking | None:
    """The kept ranking of run ``run_id``, or ``None`` (a run stored before rankings were kept, or failed)."""
    with transaction(engine, f"reading the ranking of run {run_id}") as conn:
        row = conn.execute(select(rankings.c.depth, rankings.c.n_rows, rankings.c.data)
                           .where(rankings.c.run_id == run_id)).first()
    return None if row is None else RunRanking(int(row.depth), int(row.n_rows), bytes(row.data))


def get_run(engine: Engine, run_id: int) -> EvalRun:
    """The run with this id; ``WarehouseError`` when there is none."""
    with transaction(engine, f"reading run {run_id}") as conn:
        found = select_runs(conn, runs.c.id == run_id)
    if not found:
        raise WarehouseError(f"there is no evaluation run with id {run_id}")
    return found[0]


def find_run(engine: Engine, key: RunKey) -> EvalRun | None:
    """The run with this natural key, or None."""
    condition = [runs.c[c] == getattr(key, c) for c in KEY_COLUMNS]
    with transaction(engine, f"looking up run {_describe(key)}") as conn:
        found = select_runs(conn, *condition)
    return found[0] if found else None


def select_runs(conn: Connection, *conditions: Any, order_by: Any = None, limit: int | None = None) -> list[EvalRun]:
    """Runs matching ``conditions`` (columns of ``eval_runs``), as domain objects."""
    stmt = (
        select(runs, *(fingerprints.c[c] for c in ("gold_set_version", "kb_snapshot_id", "measures", "policies")))
        .join(fingerprints, fingerprints.c.hash == runs.c.fingerprint_hash)
        .where(*conditions)
        .order_by(*(order_by if order_by is not None else [runs.c.id]))
    )
    if limit is not None:
        stmt = stmt.limit(limit)
    return [run_from_row(row) for row in conn.execute(stmt).mappings()]


def run_from_row(row: Mapping[str, Any]) -> EvalRun:
    """The one place a stored run row becomes a domain object."""
    fingerprint = fingerprint_from_row({**row, "hash": row["fingerprint_hash"]})
    return EvalRun(
        id=row["id"],
        key=RunKey(*(row[c] for c in KEY_COLUMNS)),
        logical_date=row["logical_date"],
        status=row["status"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        fingerprint=fingerprint,
        n_queries=row["n_queries"],
        n_failed=row["n_failed"],
        failed_query_ids=tuple(row["failed_query_ids"]),
        error=row["error"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        contracts=row.get("contracts"),
        n_retries=row["n_retries"],
        lease_expires_at=row["lease_expires_at"],
        abandoned_at=row["abandoned_at"],
        attempt_started_at=row["attempt_started_at"],
        attempt_contracts=row["attempt_contracts"],
    )


def _upsert_run(conn: Connection, values: Mapping[str, Any]) -> int:
    """INSERT ... ON CONFLICT (key) DO UPDATE ... RETURNING id.

    On PostgreSQL the conflicting row stays locked until commit, so two writers of the same key take turns
    and the second one's delete-then-insert of scores sees the first one's rows.
    """
    stmt = insert_for(conn, runs).values(**values)
    update = {c: stmt.excluded[c] for c in values if c not in (*KEY_COLUMNS, "created_at")}
    stmt = stmt.on_conflict_do_update(index_elements=list(KEY_COLUMNS), set_=update).returning(runs.c.id)
    return conn.execute(stmt).scalar_one()


def _open_attempt(conn: Connection, values: Mapping[str, Any], *, scores: bool) -> int:
    """A ``running`` write: a new or unfinished run becomes ``running`` (an upsert that updates only an
    unfinished row); a finished one keeps its row and gets the attempt's start, contracts and lease."""
    stmt = insert_for(conn, runs).values(**values)
    changed = {c: stmt.excluded[c] for c in values if c not in (*KEY_COLUMNS, "created_at")}
    stmt = stmt.on_conflict_do_update(index_elements=list(KEY_COLUMNS), set_=changed,
                                      where=runs.c.status.in_(UNFINISHED_STATUSES)).returning(runs.c.id)
    run_id = conn.execute(stmt).scalar_one_or_none()
    if run_id is not None:
        return run_id
    at_key = [runs.c[c] == values[c] for c in KEY_COLUMNS]
    finished = conn.execute(select(runs.c.id, runs.c.status).where(*at_key)).one()
    if scores:
        raise WarehouseError(
            f"run {finished.id} already finished ({finished.status}); a re-run of it writes its scores with its "
            "final status, not while it is running (the finished scores are kept)"
        )
    conn.execute(update(runs).where(runs.c.id == finished.id).values(
        attempt_started_at=values["started_at"], attempt_contracts=values.get("contracts"),
        lease_expires_at=values["lease_expires_at"]))
    return finished.id


def _refuse_for_a_baseline(conn: Connection, run_id: int, key: RunKey, status: str, error: str | None) -> None:
    """Raise (rolling the write back) when a baseline names run ``run_id``: it must stay ``succeeded``."""
    named = conn.execute(
        select(baselines.c.retriever, baselines.c.promoted_at, baselines.c.promoted_by, baselines.c.is_current)
        .where(baselines.c.run_id == run_id).order_by(baselines.c.is_current.desc(), baselines.c.id.desc()).limit(1)
    ).first()
    if named is None:
        return
    which = "the current" if named.is_current else "an earlier"
    raise WarehouseError(
        f"run {run_id} ({_describe(key)}) is {which} baseline of {named.retriever} (promoted "
        f"{named.promoted_at:%Y-%m-%d} by {named.promoted_by}); this re-run of it ended {status!r}"
        + (f" ({error})" if error else "") + ", which would leave the baseline on a run that did not succeed. "
        "The succeeded run is kept and nothing of this re-run is stored: fix what failed and re-run the day, "
        "or promote another run first (`evalops promote`)"
    )


def _run_values(
    key: RunKey,
    *,
    fingerprint: EvalFingerprint,
    logical_date: dt.datetime,
    status: str,
    started_at: dt.datetime,
    finished_at: dt.datetime | None,
    n_queries: int,
    n_failed: int,
    failed_query_ids: Iterable[str],
    error: str | None,
) -> dict[str, Any]:
    if not isinstance(key, RunKey):
        raise InputError(f"key must be a RunKey, got {type(key).__name__}")
    for column in KEY_COLUMNS:
        value = getattr(key, column)
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"run key {column} must be a non-empty string, got {value!r}")
    if not isinstance(fingerprint, EvalFingerprint):
        raise InputError(f"fingerprint must be an EvalFingerprint, got {type(fingerprint).__name__}")
    if status not in RUN_STATUSES:
        raise InputError(f"run status {status!r} is not one of {list(RUN_STATUSES)}")
    if status == "abandoned":
        raise InputError("a run becomes 'abandoned' only when its lease expires or its process gives it up "
                         "(evalops.warehouse.leases), never by recording it")
    failed = [str(q) for q in failed_query_ids]
    if not 0 <= int(n_failed) <= int(n_queries) or (failed and len(failed) != int(n_failed)):
        raise InputError(
            f"run counts are inconsistent: n_queries={n_queries}, n_failed={n_failed}, "
            f"{len(failed)} failed query id(s); need 0 <= n_failed <= n_queries and one id per failure"
        )
    now = now_utc()
    return {
        **{c: getattr(key, c) for c in KEY_COLUMNS},
        "logical_date": as_utc(logical_date),
        "status": status,
        "started_at": as_utc(started_at),
        "finished_at": as_utc(finished_at) if finished_at is not None else None,
        "fingerprint_hash": fingerprint.hash,
        "n_queries": int(n_queries),
        "n_failed": int(n_failed),
        "failed_query_ids": failed,
        "error": error,
        "created_at": now,
        "updated_at": now,
    }


def _describe(key: RunKey) -> str:
    return f"{key.retriever}@{key.version} ({key.dataset}) of {key.dag_id}/{key.dag_run_id}"
