"""Run leases: a run in flight holds a lease its tasks renew; one whose lease expired is given up.

A run in flight is either a run that has never finished (status ``running``) or an *attempt*: a re-run of a
finished run, which leaves the finished row as it is (``runs.record_run``) and holds only the lease and
``attempt_started_at`` / ``attempt_contracts``. Giving one up:

* a ``running`` run becomes ``abandoned`` (with the time and the cause; it has no scores a reader sees);
* an attempt is dropped (its columns and lease cleared); the finished run, its status, scores and any
  baseline that names it stay exactly as they were. ``abandoned`` is only ever a run that never finished.

:func:`abandon_expired_runs` does it for every expired lease (the next run calls it: a killed process stops
renewing); :func:`release_runs` for given runs at once (a process that stops on an error gives up its own).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from sqlalchemy import and_, or_, select, update
from sqlalchemy.engine import Connection, Engine

from evalops.util.utc import as_utc
from evalops.warehouse._db import now_utc, transaction
from evalops.warehouse.runs import DEFAULT_LEASE_SECONDS
from evalops.warehouse.statuses import FINISHED_STATUSES
from evalops.warehouse.tables import runs

__all__ = ["abandon_expired_runs", "release_runs", "renew_lease"]


EXPIRED = "its lease expired before the run finished (the process was killed or lost)"


def renew_lease(engine: Engine, run_ids: Iterable[int], seconds: float = DEFAULT_LEASE_SECONDS) -> int:
    """Extend the lease of these runs that are still in flight (a task's heartbeat); returns how many.
    A finished run (its attempt's final write done, or the attempt dropped) is not revived."""
    ids = [int(i) for i in run_ids]
    if not ids:
        return 0
    now = now_utc()
    with transaction(engine, f"renewing the lease of runs {ids}") as conn:
        result = conn.execute(
            update(runs).where(runs.c.id.in_(ids), runs.c.lease_expires_at.is_not(None))
            .values(lease_expires_at=now + dt.timedelta(seconds=seconds))
        )
    return result.rowcount


def abandon_expired_runs(engine: Engine, *, now: dt.datetime | None = None) -> list[int]:
    """Give up every run in flight whose lease has expired (module docstring); returns the ids of the runs
    marked ``abandoned`` (dropped attempts of finished runs are not among them: those runs are unchanged).

    A run killed mid-way (SIGKILL, a lost worker) leaves its lease; the next run calls this, so such rows
    never linger and are never read as results (readers only see finished statuses).
    """
    when = as_utc(now) if now is not None else now_utc()
    expired = or_(runs.c.lease_expires_at < when,
                  and_(runs.c.status == "running", runs.c.lease_expires_at.is_(None),
                       runs.c.updated_at < when - dt.timedelta(seconds=DEFAULT_LEASE_SECONDS)))
    with transaction(engine, "marking abandoned runs") as conn:
        ids = conn.execute(select(runs.c.id).where(expired)).scalars().all()
        return _give_up(conn, ids, EXPIRED, when)


def release_runs(engine: Engine, run_ids: Iterable[int], cause: str) -> list[int]:
    """Give up these runs now, if still in flight (a process that stops before finishing them): each
    ``running`` one becomes ``abandoned`` with ``cause``, each attempt of a finished run is dropped. Returns
    the ids marked ``abandoned``. Runs already finished by their final write are left alone."""
    ids = sorted({int(i) for i in run_ids})
    if not ids:
        return []
    with transaction(engine, f"releasing runs {ids}") as conn:
        return _give_up(conn, ids, cause, now_utc())


def _give_up(conn: Connection, ids: Iterable[int], cause: str, when: dt.datetime) -> list[int]:
    ids = list(ids)
    if not ids:
        return []
    abandoned = conn.execute(
        update(runs).where(runs.c.id.in_(ids), runs.c.status == "running")
        .values(status="abandoned", abandoned_at=when, finished_at=when, lease_expires_at=None,
                attempt_started_at=None, attempt_contracts=None, error=f"abandoned: {cause}", updated_at=when)
        .returning(runs.c.id)
    ).scalars().all()
    conn.execute(  # an attempt of a finished run: only the attempt goes; the row is otherwise untouched
        update(runs).where(runs.c.id.in_(ids), runs.c.status.in_(FINISHED_STATUSES))
        .values(lease_expires_at=None, attempt_started_at=None, attempt_contracts=None)
    )
    return sorted(abandoned)
