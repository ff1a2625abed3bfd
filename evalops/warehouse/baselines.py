"""Baselines: promotion, rollback, and the lookup "current baseline of retriever R under fingerprint F".

Every promotion and every rollback adds a row (who, when, why); the row in force has ``is_current``. A
partial unique index allows one current row per (retriever, fingerprint), so two simultaneous promotions
can never leave two current baselines. On PostgreSQL an advisory lock per (retriever, fingerprint) also
makes concurrent promotions queue instead of failing; on SQLite ``BEGIN IMMEDIATE`` does the same.

A rollback restores the baseline that the current one replaced; rolling back again goes one step further
back (``previous_id`` records what a rollback of a row restores).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update
from sqlalchemy.engine import Connection, Engine

from evalops.errors import InputError, UnusableBaselineError, WarehouseError
from evalops.fingerprint import EvalFingerprint
from evalops.util.utc import as_utc
from evalops.warehouse._db import advisory_lock, now_utc, transaction
from evalops.warehouse.catalog import fingerprint_from_row, fingerprints
from evalops.warehouse.domain import Baseline, BaselineLookup
from evalops.warehouse.tables import baselines, runs

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["BASELINE_COLUMNS", "baseline_history", "baseline_history_rows", "find_baseline", "promote_baseline",
           "rollback_baseline"]

PROMOTABLE_STATUSES = ("succeeded",)

BASELINE_COLUMNS = tuple(Baseline.__dataclass_fields__)  # what the baseline history lists, in this order


def promote_baseline(
    engine: Engine, run_id: int, *, by: str, reason: str, at: dt.datetime | None = None
) -> Baseline:
    """Make run ``run_id`` the current baseline of its retriever under its fingerprint.

    Promoting the run that is already current is a no-op that returns the current row. Only succeeded
    runs can be promoted.
    """
    from evalops.warehouse.runs import select_runs  # (the scores' numpy: not on `evalops history`'s path)

    _require_text(by=by, reason=reason)
    when = as_utc(at) if at is not None else now_utc()
    with transaction(engine, f"promoting run {run_id} to baseline") as conn:
        found = select_runs(conn, runs.c.id == run_id)
        if not found:
            raise WarehouseError(f"there is no evaluation run with id {run_id} to promote")
        run = found[0]
        if run.status not in PROMOTABLE_STATUSES:
            raise WarehouseError(
                f"run {run_id} ({run.retriever}@{run.version}) has status {run.status!r}; only a succeeded "
                "run can become a baseline"
            )
        fingerprint_hash = run.fingerprint.hash
        advisory_lock(conn, "baseline", run.retriever, fingerprint_hash)
        current = _current(conn, run.retriever, fingerprint_hash, for_update=True)
        if current is not None and current["run_id"] == run_id:
            return _baseline(current)
        return _replace_current(
            conn,
            current,
            retriever=run.retriever,
            fingerprint_hash=fingerprint_hash,
            run_id=run_id,
            action="promote",
            by=by,
            reason=reason,
            at=when,
            previous_id=current["id"] if current is not None else None,
        )


def rollback_baseline(
    engine: Engine, retriever: str, fingerprint_hash: str, *, by: str, reason: str, at: dt.datetime | None = None
) -> Baseline:
    """Restore the baseline that the current one replaced; returns the new current row."""
    _require_text(by=by, reason=reason)
    when = as_utc(at) if at is not None else now_utc()
    with transaction(engine, f"rolling back the baseline of {retriever}") as conn:
        advisory_lock(conn, "baseline", retriever, fingerprint_hash)
        current = _current(conn, retriever, fingerprint_hash, for_update=True)
        if current is None:
            raise WarehouseError(f"{retriever} has no current baseline under fingerprint {fingerprint_hash[:12]}")
        if current["previous_id"] is None:
            raise WarehouseError(
                f"the current baseline of {retriever} (run {current['run_id']}) replaced nothing; "
                "there is no earlier baseline to roll back to"
            )
        target = conn.execute(_baseline_select().where(baselines.c.id == current["previous_id"])).mappings().one()
        if target["run_status"] not in PROMOTABLE_STATUSES:
            raise WarehouseError(
                f"the baseline a rollback of {retriever} would restore names run {target['run_id']} "
                f"({retriever}@{target['version']}), whose status is {target['run_status']!r}; only a succeeded "
                "run can be a baseline: promote a succeeded run instead (`evalops promote`)"
            )
        return _replace_current(
            conn,
            current,
            retriever=retriever,
            fingerprint_hash=fingerprint_hash,
            run_id=target["run_id"],
            action="rollback",
            by=by,
            reason=reason,
            at=when,
            previous_id=target["previous_id"],
        )


def find_baseline(engine: Engine, retriever: str, fingerprint: EvalFingerprint) -> BaselineLookup:
    """The current baseline of ``retriever`` under ``fingerprint``, or why there is none.

    With none under ``fingerprint`` but one under another fingerprint, the answer is ``stale``: it carries
    the most recently promoted such baseline and names the fingerprint components that changed.

    A current baseline whose run is not ``succeeded`` (a warehouse damaged before re-runs kept finished runs,
    or edited by hand) fails closed: :class:`~evalops.errors.UnusableBaselineError` says which run and how to
    repair it (promote a succeeded run, or roll back); nothing is compared against it.
    """
    with transaction(engine, f"looking up the baseline of {retriever}") as conn:
        current = _current(conn, retriever, fingerprint.hash)
        if current is not None:
            if current["run_status"] not in PROMOTABLE_STATUSES:
                raise _unusable(current)
            return BaselineLookup("current", retriever, fingerprint.hash, _baseline(current))
        other = conn.execute(
            _baseline_select()
            .where(baselines.c.retriever == retriever, baselines.c.is_current)
            .order_by(baselines.c.promoted_at.desc(), baselines.c.id.desc())
            .limit(1)
        ).mappings().first()
        if other is None:
            return BaselineLookup("missing", retriever, fingerprint.hash)
        stored_row = conn.execute(
            select(fingerprints).where(fingerprints.c.hash == other["fingerprint_hash"])
        ).mappings().one()
    stored = fingerprint_from_row(stored_row)
    return BaselineLookup(
        "stale",
        retriever,
        fingerprint.hash,
        _baseline(other),
        changed=fingerprint.diff(stored),
        explanation=fingerprint.explain(stored),
    )


def baseline_history(engine: Engine, retriever: str | None = None, fingerprint_hash: str | None = None) -> pd.DataFrame:
    """Every promotion and rollback (oldest first), with the promoted run's version."""
    import pandas as pd

    frame = pd.DataFrame(baseline_history_rows(engine, retriever, fingerprint_hash), columns=list(BASELINE_COLUMNS))
    frame["previous_id"] = frame["previous_id"].astype("Int64")
    for column in ("promoted_at", "replaced_at"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return frame


def baseline_history_rows(
    engine: Engine, retriever: str | None = None, fingerprint_hash: str | None = None
) -> list[dict[str, Any]]:
    """:func:`baseline_history` as plain dicts (no pandas import)."""
    stmt = _baseline_select().order_by(baselines.c.promoted_at, baselines.c.id)
    if retriever is not None:
        stmt = stmt.where(baselines.c.retriever == retriever)
    if fingerprint_hash is not None:
        stmt = stmt.where(baselines.c.fingerprint_hash == fingerprint_hash)
    with transaction(engine, "reading the baseline history") as conn:
        rows = conn.execute(stmt).mappings().all()
    return [{c: row[c] for c in BASELINE_COLUMNS} for row in rows]


def _replace_current(
    conn: Connection,
    current: Mapping[str, Any] | None,
    *,
    retriever: str,
    fingerprint_hash: str,
    run_id: int,
    action: str,
    by: str,
    reason: str,
    at: dt.datetime,
    previous_id: int | None,
) -> Baseline:
    if current is not None:
        conn.execute(
            update(baselines).where(baselines.c.id == current["id"]).values(is_current=False, replaced_at=at)
        )
    new_id = conn.execute(
        baselines.insert()
        .values(
            retriever=retriever,
            fingerprint_hash=fingerprint_hash,
            run_id=run_id,
            action=action,
            is_current=True,
            promoted_by=by,
            promoted_at=at,
            reason=reason,
            replaced_at=None,
            previous_id=previous_id,
        )
        .returning(baselines.c.id)
    ).scalar_one()
    return _baseline(conn.execute(_baseline_select().where(baselines.c.id == new_id)).mappings().one())


def _baseline_select():
    return (select(baselines, runs.c.version, runs.c.status.label("run_status"))
            .join(runs, runs.c.id == baselines.c.run_id))


def _unusable(row: Mapping[str, Any]) -> UnusableBaselineError:
    retriever = row["retriever"]
    return UnusableBaselineError(
        f"the current baseline of {retriever} (fingerprint {row['fingerprint_hash'][:12]}) is run {row['run_id']} "
        f"({retriever}@{row['version']}, promoted {row['promoted_at']:%Y-%m-%d} by {row['promoted_by']}), whose "
        f"status is {row['run_status']!r}, not 'succeeded': its scores cannot be compared against. Promote a "
        f"succeeded run (`evalops promote {retriever} VERSION --reason ...`) or restore the previous baseline "
        f"(`evalops promote {retriever} --rollback --fingerprint {row['fingerprint_hash'][:12]} --reason ...`)",
        baseline=_baseline(row), run_status=row["run_status"],
    )


def _current(
    conn: Connection, retriever: str, fingerprint_hash: str, *, for_update: bool = False
) -> Mapping[str, Any] | None:
    stmt = _baseline_select().where(
        baselines.c.retriever == retriever, baselines.c.fingerprint_hash == fingerprint_hash, baselines.c.is_current
    )
    if for_update:
        stmt = stmt.with_for_update(of=baselines)
    return conn.execute(stmt).mappings().first()


def _baseline(row: Mapping[str, Any]) -> Baseline:
    """The one place a stored baseline row becomes a domain object."""
    return Baseline(**{name: row[name] for name in Baseline.__dataclass_fields__})


def _require_text(**fields: str) -> None:
    for name, value in fields.items():
        if not isinstance(value, str) or not value.strip():
            raise InputError(f"a baseline change needs a non-empty {name!r} (who and why are recorded)")
